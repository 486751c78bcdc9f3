"""The errors MemeGauge raises on purpose, and the classes of a failed model call.

Apart from `memegauge.types` (which re-exports every name here) so that importing them costs no pydantic: the
command line, the registry and every command's module import them at start-up (bench/startup.py).
"""

from __future__ import annotations

import enum
import math
import re


class ErrorClass(str, enum.Enum):
    """Why a model call failed; decides whether the engine retries."""

    RATE_LIMIT = "rate_limit"  # 429: retried after Retry-After / backoff
    SERVER = "server"  # 5xx, connection refused or reset: retried
    TIMEOUT = "timeout"  # no answer in time: retried
    CONNECTION = "connection"  # the server closed the connection without an answer: retried
    BAD_REQUEST = "bad_request"  # 4xx other than 429, context too long: not retried
    REFUSAL = "refusal"  # the model declined to answer: retried within the bound, then recorded
    UNPARSEABLE = "unparseable"  # answer does not parse into what the stage needs: retried, recorded
    TRUNCATED = "truncated"  # cut at max_tokens before it could be read: retried as content, recorded
    NO_VISION = "no_vision"  # the endpoint refuses image input: the run stops, the registry is wrong

    @property
    def retryable(self) -> bool:
        return self not in (ErrorClass.BAD_REQUEST, ErrorClass.NO_VISION)

    @property
    def fix(self) -> str:
        """What to check when calls still fail with this class after their retries ('' : nothing
        beyond rerunning)."""
        return {
            ErrorClass.TIMEOUT: "the model took longer than its timeout_s: raise timeout_s in the registry "
                                "or lower max_concurrency",
            ErrorClass.CONNECTION: "the server closed the connection without answering (not a timeout: "
                                   "raising timeout_s will not help): check the server's log (a crash, a "
                                   "restart, a request-size limit) or a proxy between",
            ErrorClass.RATE_LIMIT: "the provider's rate limit: lower max_concurrency or set rpm",
        }.get(self, "")


class MemeGaugeError(Exception):
    """Base of every error MemeGauge raises on purpose. `exit_code` is what the CLI exits with."""

    exit_code = 1


_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def printable(name: object) -> str:
    """A name (a file, a member of an archive, a data set, a key, an error's location) fit for one line of
    output: every control character, newline and escape sequence shown as its escape (``\\n``,
    ``\\x1b``), so a name can never forge a status line or move the cursor."""
    return _UNPRINTABLE.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), str(name))


class ActionableError(MemeGaugeError):
    """A failure that says what is wrong, where (one printable line: `printable`), and how to fix it (exit
    code 1 unless overridden)."""

    def __init__(self, what: str, where: str = "", fix: str = "") -> None:
        where = printable(where)
        self.what, self.where, self.fix = what, where, fix
        message = what
        if where:
            message = f"{where}: {message}"
        if fix:
            message = f"{message}\n  fix: {fix}"
        super().__init__(message)


class InputError(ActionableError):
    """Bad input or configuration: says what is wrong, where, and how to fix it. Exit code 2."""

    exit_code = 2


MAX_PAUSE_S = 60.0
"""The longest pause a server's `Retry-After` imposes (docs/reliability.md): a longer, infinite or
unreadable value is clamped to it, the call failing as a classified rate-limit error retried within its
bounds; no run waits on a server's word for ever."""


def clamp_pause(seconds: float | None) -> float | None:
    """A server's requested pause within [0, `MAX_PAUSE_S`]; None when it asked for none. A value that
    is not a finite number (``inf``, ``nan``) counts as the maximum."""
    if seconds is None:
        return None
    if not math.isfinite(seconds):
        return 0.0 if seconds < 0 else MAX_PAUSE_S
    return min(MAX_PAUSE_S, max(0.0, seconds))


class ModelCallError(MemeGaugeError):
    """A model call failed. `error_class` decides retrying; `retry_after` honours a server's hint (clamped
    to `MAX_PAUSE_S`)."""

    def __init__(self, error_class: ErrorClass, message: str, retry_after: float | None = None):
        self.error_class = error_class
        self.retry_after = clamp_pause(retry_after)
        super().__init__(f"{error_class.value}: {message}")
