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

  /*@METHOD-BROWSERS@*/
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

  /*@BROWSER-TABLE@*/

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
