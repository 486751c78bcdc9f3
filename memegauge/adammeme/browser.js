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
    var last = step.last_attempt || null;
    // a failed step shows what it has (the rejected rewrite, the raw reply of the call that failed, why),
    // not a dash for every field it never reached
    var shownField = function (label, value) {
      return failed && (value === null || value === undefined || value === '') ? null : field(label, value);
    };
    return el('div', 'step', [
      el('div', 'label', ['step ' + (step.step + 1) + ' · rewriting ' + step.meme + ' (score ' + scoreText(step.parent_score) + ')']),
      field('text before', step.original_text),
      last ? field('rewrite (not used)', last.rewrite) : field('rewrite', step.rewrite),
      last ? field('why not used', last.reason || last.error_class) : null,
      last ? field('raw reply (' + last.reply_of + ')', last.text) : null,
      shownField('Refiner explanation', step.explanation),
      shownField('reference answer', step.reference),
      shownField('target answer', step.answer),
      shownField('Scorer comment', step.comparison),
      el('div', failed ? 'score bad' : 'score', [failed
        ? 'failed: ' + shown(step.status) + ' at ' + shown(step.failed_stage) + ' (' + shown(step.error_class) + ')'
        : 'score ' + step.score + (step.improved ? ' (lower than before: the chain goes on)' : '')])
    ]);
  }

