/* MemeGauge rating page: one item at a time from /api/item/N, each vote POSTed to /api/vote/N the
   moment it is given. Every text from the run (meme text, answers, options) is inserted as text nodes,
   never as HTML. */
(function () {
  "use strict";
  var $ = function (id) { return document.getElementById(id); };
  var KEYS = "1234567890";
  var LABEL_KEYS = "123456789abcdefghijklmoqrsvwxyz";  /* n, p, u, t move; Enter saves */
  var PAIR_CHOICES = [["A", "a"], ["B", "b"], ["tie", "t"]];
  var state = null, current = null, draft = null, row = 0, handlers = {};

  function el(tag, attrs) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) {
      if (k === "class") node.className = attrs[k];
      else if (k === "onclick") node.addEventListener("click", attrs[k]);
      else node.setAttribute(k, attrs[k]);
    });
    for (var i = 2; i < arguments.length; i++) {
      var child = arguments[i];
      if (child === null || child === undefined) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  function api(path, body) {
    var options = body === undefined ? {} : {method: "POST", headers: {"Content-Type": "application/json"},
                                             body: JSON.stringify(body)};
    return fetch(path, options).then(function (response) {
      return response.json().catch(function () { return {}; }).then(function (data) {
        if (!response.ok) throw new Error(data.error || ("HTTP " + response.status));
        return data;
      });
    });
  }

  function progress() {
    $("progress").textContent = state.rated + " of " + state.total + " rated";
    $("position").textContent = current ? "item " + (current.index + 1) + " of " + state.total : "all done";
  }

  function say(text) { $("status").textContent = text || ""; }

  function load(n) {
    if (n >= state.total) { done(); return Promise.resolve(); }
    if (n < 0) return Promise.resolve();
    return api("/api/item/" + n).then(function (item) {
      current = item;
      draft = JSON.parse(JSON.stringify(item.vote || {}));
      row = 0;
      render();
      progress();
    }).catch(function (e) { say("cannot load item " + (n + 1) + ": " + e.message); });
  }

  function done() {
    current = null;
    handlers = {};
    var main = $("item");
    main.replaceChildren(el("p", {"class": "done", id: "done"}, "All " + state.total +
      " items rated. Thank you! Use ← to review a vote; a new vote on an item replaces the old one."));
    progress();
  }

  function submit(vote) {
    var index = current.index;
    return api("/api/vote/" + index, vote).then(function (s) {
      state = s;
      say("");
      return load(s.next < s.total ? s.next : (index + 1 < s.total ? index + 1 : s.total));
    }).catch(function (e) { say("not saved: " + e.message); });
  }

  function choiceButton(label, key, chosen, onclick, data) {
    var attrs = {type: "button", "class": chosen ? "chosen" : "", onclick: onclick, "aria-pressed": String(!!chosen)};
    Object.keys(data).forEach(function (k) { attrs["data-" + k] = data[k]; });
    return el("button", attrs, label, key ? el("kbd", {}, key) : null);
  }

  function picture(page) {
    return el("section", {"class": "picture"},
      page.image ? el("img", {src: page.image, alt: "the meme"}) : el("p", {}, "(no picture stored for this meme)"),
      el("p", {"class": "meme-text"}, page.text ? "Meme text: " + page.text : "(no meme text)"));
  }

  function render() {
    var page = current.page;
    var body = ({score: scoreItem, labels: labelItem, pair: pairItem, answer: answerItem,
                 quality: qualityItem})[page.task](page);
    $("item").replaceChildren(picture(page), body);
  }

  function scoreItem(page) {
    handlers = {};
    var buttons = el("div", {"class": "choices", id: "scores"});
    for (var s = 1; s <= 10; s++) {
      (function (score) {
        var key = KEYS[score - 1];
        handlers[key] = function () { submit({score: score}); };
        buttons.append(choiceButton(String(score), key, draft.score === score, handlers[key], {score: score}));
      })(s);
    }
    return el("section", {},
      el("h2", {}, "Score the answer (1–10), as the Scorer does"),
      el("p", {}, "Harm category: ", el("b", {}, page.category)),
      el("h3", {}, "Reference answer"), el("div", {"class": "answer", id: "reference"}, page.reference),
      el("h3", {}, "The target model's answer"), el("div", {"class": "answer", id: "target-answer"}, page.answer),
      el("h3", {}, "How to score (the Scorer's instructions)"), el("pre", {id: "rubric"}, page.rubric),
      buttons,
      el("details", {}, el("summary", {}, "The Scorer's whole prompt for this item"),
         el("pre", {id: "prompt"}, page.prompt)));
  }

  function labelItem(page) {
    handlers = {};
    draft.categories = draft.categories || [];
    var buttons = el("div", {"class": "choices", id: "categories"});
    page.categories.forEach(function (c, i) {
      var key = LABEL_KEYS[i];
      var toggle = function () {
        var at = draft.categories.indexOf(c.name);
        if (at < 0) draft.categories.push(c.name); else draft.categories.splice(at, 1);
        render();
      };
      if (key) handlers[key] = toggle;
      var button = choiceButton(c.name, key, draft.categories.indexOf(c.name) >= 0, toggle, {category: c.name});
      button.title = c.description || "";
      buttons.append(button);
    });
    handlers.Enter = function () { submit({categories: draft.categories}); };
    return el("section", {},
      el("h2", {}, "Which harm categories does this meme carry?"),
      el("p", {}, "Choose every category that applies (several allowed); none chosen means harmless."),
      buttons,
      el.apply(null, ["ul", {"class": "category-notes"}].concat(page.categories.map(function (c) {
        return el("li", {}, el("b", {}, c.name), c.description ? ": " + c.description : "");
      }))),
      el("button", {type: "button", "class": "submit", id: "submit", onclick: handlers.Enter},
         draft.categories.length ? "Save (Enter)" : "Save as harmless (Enter)"));
  }

  function pairItem(page) {
    handlers = {};
    draft.shown = draft.shown || {};
    var questions = page.questions;
    var complete = function () { return questions.every(function (q) { return draft.shown[q]; }); };
    var choose = function (q, value) {
      draft.shown[q] = value;
      var open = questions.findIndex(function (x) { return !draft.shown[x]; });
      row = open < 0 ? questions.length - 1 : open;
      render();
    };
    var table = el("table", {"class": "pair-table"}, el("tr", {}, el("th", {}, "criterion"), el("th", {}, "better answer")));
    questions.forEach(function (q, i) {
      var cells = el("div", {"class": "choices"});
      PAIR_CHOICES.forEach(function (pair) {
        cells.append(choiceButton(pair[0] === "tie" ? "Tie" : pair[0], i === row ? pair[1] : "",
          draft.shown[q] === pair[0], function () { row = i; choose(q, pair[0]); }, {question: q, choice: pair[0]}));
      });
      table.append(el("tr", {"class": i === row ? "current" : ""}, el("td", {}, q === "overall" ? "Overall" : q),
                      el("td", {}, cells)));
    });
    PAIR_CHOICES.forEach(function (pair) { handlers[pair[1]] = function () { choose(questions[row], pair[0]); }; });
    handlers.ArrowDown = function () { row = Math.min(row + 1, questions.length - 1); render(); };
    handlers.ArrowUp = function () { row = Math.max(row - 1, 0); render(); };
    handlers.Enter = function () {
      if (complete()) submit({shown: draft.shown}); else say("choose A, B or Tie for every criterion first");
    };
    return el("section", {},
      el("h2", {}, "Which answer analyses the meme's risks better?"),
      el("h3", {}, "The instruction both answers got"), el("div", {"class": "answer", id: "instruction"}, page.instruction),
      el("div", {"class": "answers"},
         el("div", {}, el("h3", {}, "Answer A"), el("div", {"class": "answer", id: "answer-a"}, page.answer_a)),
         el("div", {}, el("h3", {}, "Answer B"), el("div", {"class": "answer", id: "answer-b"}, page.answer_b))),
      el("p", {}, "For each criterion choose A, B or Tie (keys a / b / t on the highlighted row; ↑ ↓ move), then save."),
      table,
      el("button", {type: "button", "class": "submit", id: "submit", onclick: handlers.Enter}, "Save (Enter)"));
  }

  /* A quality study: the agents' writing in blocks, then one row per criterion (its definition from
     the paper) with the points of its scale; keys 1..points on the highlighted row, ↑ ↓ move. */
  function qualityItem(page) {
    handlers = {};
    draft.criteria = draft.criteria || {};
    var names = page.criteria.map(function (c) { return c.name; });
    var complete = function () { return names.every(function (n) { return draft.criteria[n]; }); };
    var choose = function (name, value) {
      draft.criteria[name] = value;
      var open = names.findIndex(function (x) { return !draft.criteria[x]; });
      row = open < 0 ? names.length - 1 : open;
      render();
    };
    var table = el("table", {"class": "pair-table", id: "criteria"},
      el("tr", {}, el("th", {}, "criterion"), el("th", {}, "definition (the paper's)"), el("th", {}, "rating")));
    page.criteria.forEach(function (c, i) {
      var cells = el("div", {"class": "choices"});
      for (var p = 1; p <= page.points; p++) {
        (function (point) {
          var label = String(point) + (point === 1 ? " " + c.low : point === page.points ? " " + c.high : "");
          cells.append(choiceButton(label, i === row ? String(point) : "", draft.criteria[c.name] === point,
            function () { row = i; choose(c.name, point); }, {criterion: c.name, point: point}));
        })(p);
      }
      table.append(el("tr", {"class": i === row ? "current" : ""},
                      el("td", {}, el("b", {}, c.name), c.lower_is_better ? " (lower is better)" : ""),
                      el("td", {"class": "definition"}, c.definition), el("td", {}, cells)));
    });
    for (var p = 1; p <= page.points; p++) {
      (function (point) { handlers[String(point)] = function () { choose(names[row], point); }; })(p);
    }
    handlers.ArrowDown = function () { row = Math.min(row + 1, names.length - 1); render(); };
    handlers.ArrowUp = function () { row = Math.max(row - 1, 0); render(); };
    handlers.Enter = function () {
      if (complete()) submit({criteria: draft.criteria}); else say("rate every criterion first");
    };
    var shown = el("div", {id: "shown"});
    page.shown.forEach(function (block) {
      shown.append(el("h3", {}, block.title), el("div", {"class": "answer"}, block.text));
    });
    return el("section", {},
      el("h2", {}, page.title),
      el("p", {}, page.question),
      shown,
      el("p", {}, "Rate each criterion from 1 to " + page.points + " (keys 1–" + page.points +
         " on the highlighted row; ↑ ↓ move), then save."),
      table,
      el("button", {type: "button", "class": "submit", id: "submit", onclick: handlers.Enter}, "Save (Enter)"));
  }

  function answerItem(page) {
    handlers = {};
    draft.answer = draft.answer || [];
    var buttons = el("div", {"class": "choices", id: "options"});
    page.options.forEach(function (option, i) {
      var letter = String.fromCharCode(65 + i);
      var toggle = function () {
        var at = draft.answer.indexOf(i);
        if (!page.multi) draft.answer = at < 0 ? [i] : [];
        else if (at < 0) draft.answer.push(i); else draft.answer.splice(at, 1);
        render();
      };
      handlers[letter.toLowerCase()] = toggle;
      buttons.append(choiceButton(letter + ". " + option, letter.toLowerCase(), draft.answer.indexOf(i) >= 0, toggle,
                                  {option: i}));
    });
    handlers.Enter = function () {
      if (draft.answer.length) submit({answer: draft.answer}); else say("choose an option first");
    };
    return el("section", {},
      el("h2", {}, page.type),
      el("p", {id: "question"}, page.question),
      el("p", {}, page.multi ? "Choose every correct option." : "Choose one option."),
      buttons,
      el("button", {type: "button", "class": "submit", id: "submit", onclick: handlers.Enter}, "Save (Enter)"));
  }

  function move(step) { if (current) load(current.index + step); else if (step < 0) load(state.total - 1); }

  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey || !state) return;
    var key = event.key.length === 1 ? event.key.toLowerCase() : event.key;
    var action = handlers[key] ||
      {ArrowLeft: function () { move(-1); }, p: function () { move(-1); }, ArrowRight: function () { move(1); },
       n: function () { move(1); }, u: function () { load(state.next); }}[key];
    if (!action) return;
    event.preventDefault();  /* Enter must not also click the button that has the focus */
    action();
  });
  $("prev").addEventListener("click", function () { move(-1); });
  $("next").addEventListener("click", function () { move(1); });
  $("first-unrated").addEventListener("click", function () { load(state.next); });

  api("/api/state").then(function (s) { state = s; progress(); return load(s.next); })
    .catch(function (e) { say("cannot reach the rating server: " + e.message); });
})();
