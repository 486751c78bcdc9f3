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

