"""`memegauge rate`'s web app: one page and a small JSON API on the local server of `view`
(`memegauge.localserver`: 127.0.0.1, Host header checked).

    GET  /                the page (self-contained; its script is allowed by hash, it may only
                          talk to this server)
    GET  /api/state       {rater, method, total, rated, next}: `next` is the first unrated item
    GET  /api/item/N      item N as the page shows it ({index, id, page, vote}); `vote` is the rater's
                          earlier vote on it, as clicked
    POST /api/vote/N      the rater's vote on item N (JSON, see `parse_vote`) → {total, rated, next}

Every vote is stored the moment it arrives (one transaction), so closing the tab loses nothing and
reopening the page resumes at `next`. A POST must be `application/json` from this page's origin: a
form on another site can send neither, so it cannot vote in the rater's name.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import threading
import time
from http import HTTPStatus
from pathlib import Path
from typing import Any
from collections.abc import Mapping
from urllib.parse import urlsplit

import jinja2
from markupsafe import Markup

from memegauge.engine.store import Store
from memegauge.rating.items import Item
from memegauge.rating.quality import QUALITY_PAGE, CriteriaError, parse_criteria
from memegauge.rating.records import HumanRating
from memegauge.records import read_record, write_records
from memegauge.localserver import LOCAL_HOSTS, Response, same_origin

HERE = Path(__file__).parent / "static"
JSON = "application/json; charset=utf-8"
SHOWN_TO_BATTLE = {False: {"A": "model_a", "B": "model_b", "tie": "tie"},
                   True: {"A": "model_b", "B": "model_a", "tie": "tie"}}


class VoteError(ValueError):
    """A vote the page should not have sent; answered 400 with the reason."""


class RatingApp:
    """The rating page of one rater on one run's sampled items."""

    def __init__(self, store: Store, run: dict[str, Any], items: list[Item], rater: str,
                 hosts: tuple[str, ...] = LOCAL_HOSTS) -> None:
        self.store, self.run, self.items, self.rater, self.hosts = store, run, items, rater, hosts
        self.lock = threading.Lock()  # the server's threads share one store connection
        self.page = render_page(run, rater).encode("utf-8")

    # ---- state ----------------------------------------------------------------------------------
    def vote_of(self, item: Item) -> HumanRating | None:
        return read_record(self.store, self.run["id"], HumanRating, HumanRating.key_of(rater=self.rater, item=item.id))

    def state(self) -> dict[str, Any]:
        rated = [self.vote_of(i) is not None for i in self.items]
        return {"rater": self.rater, "method": self.run["method"], "total": len(self.items), "rated": sum(rated),
                "next": next((n for n, done in enumerate(rated) if not done), len(self.items))}

    def item(self, n: int) -> dict[str, Any]:
        item = self.items[n]
        vote = self.vote_of(item)
        return {"index": n, "id": item.id, "page": item.page, "vote": shown_vote(vote) if vote else None}

    def vote(self, n: int, body: dict[str, Any]) -> dict[str, Any]:
        rating = parse_vote(self.items[n], self.rater, body)
        write_records(self.store, self.run["id"], [rating])
        return self.state()

    # ---- HTTP -----------------------------------------------------------------------------------
    def respond(self, method: str, path: str, headers: Mapping[str, str], body: bytes) -> Response:
        route = urlsplit(path).path
        if method == "GET" and route in ("/", "/index.html"):
            return HTTPStatus.OK, "text/html; charset=utf-8", self.page
        if method == "GET" and route == "/api/state":
            return self._json(self.state)
        if (found := re.fullmatch(r"/api/(item|vote)/(\d+)", route)) and int(found[2]) < len(self.items):
            n = int(found[2])
            if method == "GET" and found[1] == "item":
                return self._json(lambda: self.item(n))
            if method == "POST" and found[1] == "vote":
                refused = self._refuse_post(headers)
                return refused or self._json(lambda: self.vote(n, _body(body)))
        return HTTPStatus.NOT_FOUND, "", b""

    def _refuse_post(self, headers: Mapping[str, str]) -> Response | None:
        if (headers.get("Content-Type") or "").split(";")[0].strip().lower() != "application/json":
            return HTTPStatus.UNSUPPORTED_MEDIA_TYPE, "", b""
        origin = headers.get("Origin")
        if origin is not None and not same_origin(origin, headers.get("Host"), self.hosts):
            return HTTPStatus.FORBIDDEN, "", b""  # another site, or another local server (other port)
        return None

    def _json(self, make) -> Response:
        try:
            with self.lock:
                payload = make()
        except VoteError as exc:
            return HTTPStatus.BAD_REQUEST, JSON, json.dumps({"error": str(exc)}).encode()
        return HTTPStatus.OK, JSON, json.dumps(payload, ensure_ascii=False).encode("utf-8")


def _body(raw: bytes) -> dict[str, Any]:
    try:
        body = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise VoteError("the vote is not JSON") from None
    except RecursionError:  # nested thousands deep: no vote is
        raise VoteError("the vote is nested too deeply") from None
    if not isinstance(body, dict):
        raise VoteError("the vote is not a JSON object")
    return body


def parse_vote(item: Item, rater: str, body: dict[str, Any]) -> HumanRating:
    """The record of `body` ({score} | {categories} | {shown} | {answer} | {criteria}, by the item's task)."""
    common = {"rater": rater, "item": item.id, "task": item.task, "source": item.source, "created": time.time()}
    if item.page.get("task") == QUALITY_PAGE:
        try:
            return HumanRating(**common, criteria=parse_criteria(item.page, body))
        except CriteriaError as exc:
            raise VoteError(str(exc)) from None
    if item.task == "score":
        score = body.get("score")
        if not isinstance(score, int) or isinstance(score, bool) or not 1 <= score <= 10:
            raise VoteError("a score is a whole number from 1 to 10")
        return HumanRating(**common, score=score)
    if item.task == "labels":
        names = {c["name"] for c in item.page["categories"]}
        chosen = body.get("categories")
        if not isinstance(chosen, list) or not set(map(str, chosen)) <= names:
            raise VoteError("categories must be a list of the run's categories")
        return HumanRating(**common, categories=[c for c in (x["name"] for x in item.page["categories"])
                                                  if c in chosen])
    if item.task == "pair":
        shown, questions = body.get("shown"), item.page["questions"]
        if not isinstance(shown, dict) or set(shown) != set(questions) or \
                not set(shown.values()) <= {"A", "B", "tie"}:
            raise VoteError(f"a pair vote gives A, B or tie for each of {', '.join(questions)}")
        to_battle = SHOWN_TO_BATTLE[item.swapped]
        return HumanRating(**common, shown=shown, swapped=item.swapped,
                           choices={q: to_battle[v] for q, v in shown.items()})
    answer = body.get("answer")
    options = len(item.page["options"])
    if not isinstance(answer, list) or not answer or not all(isinstance(a, int) and 0 <= a < options
                                                             for a in answer) \
            or len(set(answer)) != len(answer) or (not item.page["multi"] and len(answer) != 1):
        raise VoteError("an answer is a list of option indices (exactly one for a single-answer question)")
    return HumanRating(**common, answer=sorted(answer))


def shown_vote(vote: HumanRating) -> dict[str, Any]:
    """A stored vote as the page clicked it (never in the battle's orientation)."""
    return {k: v for k, v in {"score": vote.score, "categories": vote.categories, "shown": vote.shown,
                              "answer": vote.answer, "criteria": vote.criteria}.items() if v is not None}


def render_page(run: dict[str, Any], rater: str) -> str:
    script = (HERE / "rate.js").read_text(encoding="utf-8")
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    csp = (f"default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'sha256-{digest}'; "
           "connect-src 'self'; base-uri 'none'; form-action 'none'")
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(HERE), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    style = (Path(__file__).parents[1] / "report" / "static" / "report.css").read_text(encoding="utf-8")
    return env.get_template("rate.html.j2").render(
        run=run["name"], method=run["method"], rater=rater, csp=csp, script=Markup(script),
        style=Markup(style + (HERE / "rate.css").read_text(encoding="utf-8")))
