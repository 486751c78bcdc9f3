/* MemeGauge report script: sortable tables and lazy browsers.
   Data reaches the page only from the JSON element #report-data (JSON.parse) and only as text
   (createTextNode / textContent): never as markup. Browsers render one page of rows at a time and a
   row's detail only when it is opened, so a run with thousands of battles opens at once. */
(function () {
  'use strict';
  var PAGE = 25;
  var images = {};

  function el(tag, cls, children) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    (children || []).forEach(function (child) {
      if (child === null || child === undefined || child === false) return;
      node.appendChild(typeof child === 'object' ? child : document.createTextNode(String(child)));
    });
    return node;
  }

  function shown(value) {
    if (value === null || value === undefined || value === '') return '–';
    return typeof value === 'object' ? JSON.stringify(value, null, 1) : String(value);
  }

  function clip(value, n) {
    var s = shown(value).replace(/\s+/g, ' ');
    return s.length > n ? s.slice(0, n - 1) + '…' : s;
  }

  function field(label, value) {
    return el('div', 'field', [el('div', 'label', [label]), el('div', 'pre', [shown(value)])]);
  }

  function memeView(id, lines) {
    var src = images[id];
    var picture;
    if (typeof src === 'string' && src.indexOf('data:image/') === 0) {
      picture = el('img');
      picture.src = src;
      picture.alt = 'meme ' + id;
    } else {
      picture = el('div', 'placeholder', ['no image']);
    }
    return el('div', 'meme', [picture, el('div', '', lines)]);
  }

  function lazy(summary, fill, cls) {
    var box = el('details', cls || '', [el('summary', '', summary)]);
    box.addEventListener('toggle', function () {
      if (box.open && !box.dataset.filled) {
        box.dataset.filled = '1';
        var body = el('div', 'item-body');
        fill(body);
        box.appendChild(body);
      }
    });
    return box;
  }

  function chooser(label, values, onChange) {
    var select = el('select', '', [el('option', '', ['all'])]);
    select.options[0].value = '';
    values.forEach(function (v) {
      var option = el('option', '', [v]);
      option.value = v;
      select.appendChild(option);
    });
    select.setAttribute('aria-label', label);
    select.addEventListener('change', onChange);
    return {node: el('label', '', [label + ' ', select]), select: select};
  }

  function distinct(items, key) {
    var seen = {};
    var out = [];
    items.forEach(function (item) {
      var v = String(key(item));
      if (!Object.prototype.hasOwnProperty.call(seen, v)) { seen[v] = true; out.push(v); }
    });
    return out;
  }

  /* A filtered, paginated list: `filters` are [label, key(item)] pairs shown as selects. */
  function pagedList(root, items, filters, render) {
    var controls = el('div', 'controls');
    var list = el('div', 'items');
    var page = 0;
    var status = el('span', 'page-status');
    var prev = el('button', 'prev', ['‹ previous']);
    var next = el('button', 'next', ['next ›']);
    var selects = filters.map(function (f) {
      var c = chooser(f[0], distinct(items, f[1]), function () { page = 0; draw(); });
      controls.appendChild(c.node);
      return c.select;
    });
    function matching() {
      return items.filter(function (item) {
        return filters.every(function (f, i) { return !selects[i].value || String(f[1](item)) === selects[i].value; });
      });
    }
    function draw() {
      var rows = matching();
      var pages = Math.max(1, Math.ceil(rows.length / PAGE));
      page = Math.min(page, pages - 1);
      list.textContent = '';
      rows.slice(page * PAGE, (page + 1) * PAGE).forEach(function (item) { list.appendChild(render(item)); });
      status.textContent = rows.length + ' shown of ' + items.length + ' · page ' + (page + 1) + ' of ' + pages;
      prev.disabled = page === 0;
      next.disabled = page >= pages - 1;
    }
    prev.addEventListener('click', function () { page -= 1; draw(); });
    next.addEventListener('click', function () { page += 1; draw(); });
    controls.appendChild(prev);
    controls.appendChild(status);
    controls.appendChild(next);
    root.textContent = '';
    root.appendChild(controls);
    root.appendChild(list);
    draw();
  }

  function grid(columns, rows) {
    var head = el('tr', '', columns.map(function (c) { return el('th', '', [c]); }));
    var body = rows.map(function (r) { return el('tr', '', r.map(function (c) { return el('td', '', [shown(c)]); })); });
    return el('table', 'verdicts', [el('thead', '', [head]), el('tbody', '', body)]);
  }

  /* ---- AdamMeme: refinement chains ---- */
  function scoreText(score) { return score === null || score === undefined ? 'failed' : String(score); }

  function adammeme(root, data) {
    pagedList(root, data.chains || [], [['target', function (c) { return c.target; }],
                                        ['category', function (c) { return c.category; }]], function (chain) {
      var original = chain.original || {};
      var trail = [scoreText(original.score)].concat(chain.steps.map(function (s) { return scoreText(s.score); }));
      return lazy([el('span', 'tag', [chain.target]), el('span', 'tag', [chain.category]),
                   'seed ' + chain.seed + ' · ' + chain.steps.length + ' step(s) · scores ' + trail.join(' → ')],
        function (body) {
          body.appendChild(el('div', 'label', ['original meme']));
          body.appendChild(memeView(chain.seed, [el('div', 'pre', [shown(original.text)]),
            el('div', '', ['misbelief: ' + shown(original.misbelief)]),
            el('div', 'score', ['score ' + scoreText(original.score)])]));
          body.appendChild(lazy(['original: reference, target answer and Scorer comment'], function (b) {
            b.appendChild(field('reference answer', original.reference));
            b.appendChild(field('target answer', original.answer));
            b.appendChild(field('Scorer comment', original.comparison));
          }));
          chain.steps.forEach(function (step) { body.appendChild(stepView(step)); });
        }, 'chain');
    });
  }

  function stepView(step) {
    var failed = step.score === null || step.score === undefined;
    return el('div', 'step', [
      el('div', 'label', ['step ' + (step.step + 1) + ' · rewriting ' + step.meme + ' (score ' + scoreText(step.parent_score) + ')']),
      field('text before', step.original_text),
      field('rewrite', step.rewrite),
      field('Refiner explanation', step.explanation),
      field('reference answer', step.reference),
      field('target answer', step.answer),
      field('Scorer comment', step.comparison),
      el('div', failed ? 'score bad' : 'score', [failed
        ? 'failed: ' + shown(step.status) + ' at ' + shown(step.failed_stage) + ' (' + shown(step.error_class) + ')'
        : 'score ' + step.score + (step.improved ? ' (lower than before: the chain goes on)' : '')])
    ]);
  }

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

  /* ---- MemeQA: questions ---- */
  function outcome(q) {
    if (q.correct === null || q.correct === undefined) return 'failed call';
    if (q.parse_error) return 'parse failure';
    return q.correct ? 'correct' : 'wrong';
  }

  function memeqa(root, data) {
    pagedList(root, data.questions || [], [['type', function (q) { return q.type; }], ['outcome', outcome]], function (q) {
      var result = outcome(q);
      return lazy([el('span', result === 'correct' ? 'tag ok' : 'tag bad', [result]), el('span', 'tag', [q.type]),
                   clip(q.question, 90) + ' · predicted ' + shown(q.prediction) + ' · gold ' + shown(q.gold)],
        function (body) {
          var meme = (data.question_memes || {})[q.id];
          if (meme) body.appendChild(memeView(meme, [field('meme', meme)]));
          body.appendChild(field('question', q.question));
          var gold = String(q.gold || '');
          var predicted = String(q.prediction || '');
          var options = (q.options || []).map(function (o, i) {
            var letter = String.fromCharCode(65 + i);
            var marks = (gold.indexOf(letter) >= 0 ? ' ✓ gold' : '') + (predicted.indexOf(letter) >= 0 ? ' ← predicted' : '');
            return el('li', gold.indexOf(letter) >= 0 ? 'ok' : '', [letter + '. ' + shown(o) + marks]);
          });
          body.appendChild(el('div', 'label', ['options']));
          body.appendChild(el('ol', 'options', options));
          body.appendChild(field('gold / predicted (N = none of the options)', shown(q.gold) + ' / ' + shown(q.prediction)));
          body.appendChild(field('raw output', q.raw));
          if (q.parse_error) body.appendChild(field('parse error', q.parse_error));
          if (q.error_class) body.appendChild(field('failed call', q.error_class));
        }, 'question-item');
    });
  }

  /* ---- sortable tables ---- */
  function sortKey(cell) {
    var raw = cell.getAttribute('data-sort');
    if (raw === null) return null;
    return /^-?\d+(\.\d+)?(e[+-]?\d+)?$/i.test(raw) ? parseFloat(raw) : raw.toLowerCase();
  }

  function sortBy(table, index, th) {
    var descending = th.classList.contains('sorted-asc');
    table.querySelectorAll('th').forEach(function (h) { h.classList.remove('sorted-asc', 'sorted-desc'); });
    th.classList.add(descending ? 'sorted-desc' : 'sorted-asc');
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = a.cells[index] ? sortKey(a.cells[index]) : null;
      var y = b.cells[index] ? sortKey(b.cells[index]) : null;
      if (x === null || y === null) return x === y ? 0 : (x === null ? 1 : -1);
      var order = typeof x === typeof y ? (x < y ? -1 : x > y ? 1 : 0) : (typeof x === 'number' ? -1 : 1);
      return descending ? -order : order;
    });
    rows.forEach(function (r) { body.appendChild(r); });
  }

  function sortable(table) {
    table.querySelectorAll('thead th').forEach(function (th, index) {
      th.addEventListener('click', function () { sortBy(table, index, th); });
      th.addEventListener('keydown', function (e) { if (e.key === 'Enter') sortBy(table, index, th); });
    });
  }

  var BROWSERS = {adammeme: adammeme, arena: arena, memeqa: memeqa};

  function main() {
    document.querySelectorAll('table.sortable').forEach(sortable);
    var data = JSON.parse(document.getElementById('report-data').textContent);
    images = data.images || {};
    document.querySelectorAll('[data-browser]').forEach(function (root) {
      var browse = BROWSERS[root.getAttribute('data-browser')];
      if (browse) browse(root, data);
    });
    document.body.setAttribute('data-ready', '1');
  }

  main();
}());
