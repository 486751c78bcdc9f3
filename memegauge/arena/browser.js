  /* ---- MemeArena: memes → personas → tasks → rounds → battles ---- */
  function winnerName(battle, winner) {
    if (winner === 'model_a') return battle.model_a;
    if (winner === 'model_b') return battle.model_b;
    return winner;
  }

  var dimensionOrder = [];

  function byDimensionOrder(a, b) {
    var x = dimensionOrder.indexOf(a), y = dimensionOrder.indexOf(b);
    return (x < 0 ? dimensionOrder.length : x) - (y < 0 ? dimensionOrder.length : y);
  }

  function arena(root, data) {
    dimensionOrder = data.dimensions || [];
    pagedList(root, data.memes || [], [], function (meme) {
      var battles = meme.tasks.reduce(function (n, t) { return n + t.battles.length; }, 0);
      return lazy([el('span', 'tag', [meme.id]), clip(meme.text, 90) + ' · ' + meme.tasks.length + ' task(s) · ' +
                   battles + ' battle(s)'], function (body) {
        body.appendChild(memeView(meme.id, [el('div', 'pre', [shown(meme.text)]),
          el('div', '', ['caption: ' + shown(meme.caption)]), el('div', '', ['labels: ' + shown((meme.labels || []).join(', '))])]));
        if (meme.context_error) body.appendChild(el('div', 'bad', ['context simulation failed: ' + meme.context_error]));
        (meme.personas || []).forEach(function (p, i) { body.appendChild(field('persona ' + (i + 1), p)); });
        meme.tasks.forEach(function (task) { body.appendChild(taskView(task)); });
      }, 'meme-item');
    });
  }

  function taskView(task) {
    return lazy([el('span', 'tag', ['task ' + task.index]), clip(task.prompt, 100) + ' · ' + task.battles.length + ' battle(s)'],
      function (body) {
        body.appendChild(field('persona', task.persona));
        body.appendChild(field('task prompt', task.prompt));
        body.appendChild(lazy(['answers (' + Object.keys(task.answers).length + ')'], function (b) {
          Object.keys(task.answers).forEach(function (model) {
            var a = task.answers[model];
            b.appendChild(field(model + (a.ok ? '' : ' — failed: ' + shown(a.error_class)), a.text));
          });
        }));
        body.appendChild(field('guideline (fused)', task.guideline ? task.guideline.text : null));
        body.appendChild(lazy(['guideline rounds (' + task.rounds.length + ')'], function (b) {
          task.rounds.forEach(function (r) {
            b.appendChild(field('round ' + r.round + ' · judge ' + shown(r.judge) + ' · answer of ' + shown(r.author) +
              (r.ok ? '' : ' — failed: ' + shown(r.error_class)), r.guideline));
          });
        }));
        task.battles.forEach(function (battle) { body.appendChild(battleView(battle, task.answers)); });
      }, 'task-item');
  }

  function answerText(answers, model) {
    var answer = answers[model];
    return answer ? answer.text : null;
  }

  function battleView(battle, answers) {
    var overall = battle.joint ? battle.joint.overall : null;
    return lazy([el('span', 'tag', [battle.setting]), battle.model_a + ' vs ' + battle.model_b + ' → ' +
                 (battle.judged ? shown(winnerName(battle, overall)) : 'no verdict')], function (body) {
      body.appendChild(el('div', 'two', [field('A: ' + battle.model_a, answerText(answers, battle.model_a)),
                                         field('B: ' + battle.model_b, answerText(answers, battle.model_b))]));
      var judges = Object.keys(battle.judges || {});
      var dims = [];
      judges.concat(['joint']).forEach(function (j) {
        Object.keys(j === 'joint' ? battle.joint || {} : battle.judges[j]).forEach(function (d) {
          if (dims.indexOf(d) < 0) dims.push(d);
        });
      });
      dims.sort(byDimensionOrder);  /* the paper's order, overall last */
      var rows = judges.map(function (j) {
        return [j + (battle.flips && battle.flips[j] ? ' (flipped)' : '')].concat(
          dims.map(function (d) { return winnerName(battle, battle.judges[j][d]); }));
      });
      rows.push(['panel (joint)'].concat(dims.map(function (d) { return winnerName(battle, (battle.joint || {})[d]); })));
      body.appendChild(grid(['judge'].concat(dims), rows));
      if ((battle.failed_judgments || []).length) {
        body.appendChild(field('failed judgments', battle.failed_judgments));
      }
    }, 'battle-item');
  }

