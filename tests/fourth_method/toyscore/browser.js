  /* ---- Toyscore: one row per meme ---- */
  function toyscore(root, data) {
    pagedList(root, data.rows, [['answer', function (r) { return r.ok ? String(r.funny) : 'failed'; }]],
      function (r) {
        return el('div', 'row', [r.meme + ': ' + (r.ok ? (r.funny ? 'funny' : 'not funny') : r.error)]);
      });
  }

