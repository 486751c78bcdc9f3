"""Small file-system helpers shared across MemeGauge: the user cache root, atomic text writes and the
one way a user's text file is read (`read_user_text`: UTF-8, a BOM allowed, or the `--encoding` given)."""

from __future__ import annotations

import codecs
import csv
import hashlib
import io
import json
import os
import re
import secrets
import shlex
from pathlib import Path
from typing import Any
from collections.abc import Callable, Iterator

from memegauge.errors import InputError, printable  # noqa: F401  (printable: shared from here too)

#: Environment variable that moves MemeGauge's cache (joined weights, demo inputs).
ENV_CACHE_DIR = "MEMEGAUGE_CACHE_DIR"


def canonical_json(value: Any) -> str:
    """The one serialisation used for keys and stored JSON: sorted keys, no whitespace (the store's; here at
    the bottom so that a run name's hash needs no store)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def shell_command(*words: object) -> str:
    """A command line to print for the user to paste: each word shell-quoted, so a run name or path
    such as `a/b;rm -rf x` is one argument in the shell, never a second command."""
    return " ".join(shlex.quote(str(word)) for word in words)


def user_cache_root() -> Path:
    """``$MEMEGAUGE_CACHE_DIR``, else the user cache directory (``platformdirs.user_cache_dir("memegauge")``)."""
    base = os.environ.get(ENV_CACHE_DIR)
    if not base:
        import platformdirs

        base = platformdirs.user_cache_dir("memegauge")
    return Path(base).expanduser()


def sha256_file(path: str | Path) -> str:
    """sha256 of a file's bytes (`hashlib.file_digest`: read in blocks, never whole): the data sets' checks
    (`memegauge.data.download`, `memegauge.data.install`); `memegauge.types.file_sha256` memoises it for
    pictures."""
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def write_text_atomic(path: Path, text: str) -> Path:
    """Write `text` (UTF-8) to `path` atomically (see `write_atomic`)."""
    return write_atomic(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))


def write_bytes_atomic(path: Path, data: bytes) -> Path:
    """Write `data` to `path` atomically (see `write_atomic`): plots, PDF and SVG files."""
    return write_atomic(path, lambda tmp: tmp.write_bytes(data))


def write_atomic(path: Path, write: Callable[[Path], object]) -> Path:
    """`write(temporary path)` beside `path`, then renamed onto it: the whole file or none (any format:
    `write_text_atomic`, Parquet exports)."""
    path = Path(path)
    if path.is_dir():
        raise InputError("is a folder, not a file", where=str(path),
                         fix=f"give a file path, e.g. {path / 'report.html'}")
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write(tmp)
        os.replace(tmp, path)
    except OSError as exc:
        raise InputError(f"cannot write the file ({exc.strerror or exc})", where=str(path),
                         fix="choose a path in a writable folder with free space") from None
    finally:
        tmp.unlink(missing_ok=True)
    return path


#: The encoding user text files are read in; `--encoding` (or `set_text_encoding`) changes it.
_TEXT_ENCODING = ["utf-8"]


def set_text_encoding(name: str | None) -> str:
    """Read every user text file in `name` from now on (None: UTF-8); returns the codec's name."""
    try:
        codec = codecs.lookup(name or "utf-8").name
    except LookupError:
        raise InputError(f"unknown text encoding {name!r}", where="--encoding",
                         fix="name a Python codec, e.g. --encoding cp1252 or --encoding latin-1") from None
    _TEXT_ENCODING[0] = codec
    return codec


def text_encoding() -> str:
    return _TEXT_ENCODING[0]


def read_user_text(path: Path | str) -> str:
    """A user's text file as a string: UTF-8 (a leading BOM dropped); a file that is not valid UTF-8 is
    decoded with the codec `--encoding` names. UTF-8 comes first even then, because one command reads
    several files (a MemeQA split is UTF-8 JSON beside a cp1252 texts file), and a legacy-encoded file
    with any non-ASCII byte is practically never valid UTF-8, while a UTF-8 file read as latin-1 would
    be garbled without a word. Unreadable or undecodable, it is one `InputError` naming the file, the
    line and the byte, and how to fix it (re-save as UTF-8, or pass --encoding)."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except IsADirectoryError:
        raise InputError("is a folder, not a file", str(path), "give the path of the file") from None
    except OSError as exc:
        raise InputError(f"cannot read the file ({exc.strerror or exc})", str(path),
                         "check the path and the file's permissions") from None
    codec = text_encoding()
    if codecs.lookup(codec).name.startswith(("utf-16", "utf-32")):  # their ASCII would pass as UTF-8 with NULs
        try:
            return data.decode(codec)
        except UnicodeDecodeError as exc:
            raise _undecodable(path, data, exc, codec) from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        if codec == "utf-8":
            raise _undecodable(path, data, exc, codec) from None
    try:
        return data.decode(codec)
    except UnicodeDecodeError as exc:
        raise _undecodable(path, data, exc, codec) from None


def _undecodable(path: Path, data: bytes, exc: UnicodeDecodeError, codec: str) -> InputError:
    """The message for a file `codec` cannot decode: file:line, the byte, and the two ways out."""
    line = data.count(b"\n", 0, exc.start) + 1
    column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
    return InputError(
        f"not {codec.upper()} text: byte 0x{data[exc.start]:02x} (offset {exc.start}, column {column}) "
        "cannot be decoded", f"{path}:{line}",
        f"re-save the file as UTF-8 (e.g. {shell_command('iconv', '-f', 'cp1252', '-t', 'utf-8', path)}), "
        "or pass its encoding: memegauge --encoding cp1252 ...")


def parse_json(text: str, where: str, fix: str) -> Any:
    """`json.loads`, with every way a user's text can fail to be JSON as one `InputError`: a syntax
    error, nesting too deep for the parser (RecursionError) and an integer of more digits than
    Python converts (ValueError)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"invalid JSON: {exc.msg} (column {exc.colno})", where, fix) from None
    except RecursionError:
        raise InputError("invalid JSON: nested too deeply", where, fix) from None
    except ValueError as exc:  # e.g. an integer of more than 4,300 digits
        raise InputError(f"invalid JSON: {exc}", where, fix) from None


def jsonl_rows(path: Path | str, fix: str) -> Iterator[tuple[str, Any]]:
    """(FILE:LINE, value) for every non-blank line of a user's JSONL file (`read_user_text`), each line
    parsed by `parse_json` with `fix` as the fix of a bad one. Split on "\n" only: str.splitlines() would
    also break at U+2028 and friends, which JSON strings may legally contain unescaped."""
    for where, value, problem in jsonl_lines(read_user_text(path), str(path)):
        if problem:
            raise InputError(problem, where, fix)
        yield where, value


def jsonl_lines(text: str, name: str) -> Iterator[tuple[str, Any, str]]:
    """(NAME:LINE, value, problem) for every non-blank line of JSONL `text`: problem is "" for a line that
    parsed, else what `parse_json` says is wrong with it (value None), so a reader may count a bad line
    instead of stopping at it (`memegauge.data.memesets.release_jsonl`)."""
    for number, line in enumerate(text.split("\n"), start=1):
        if line.strip():
            where = f"{name}:{number}"
            try:
                yield where, parse_json(line, where, ""), ""
            except InputError as exc:
                yield where, None, exc.what


class Row(dict):
    """One JSON object read from a line of a file, knowing its FILE:LINE (`where`): a key it lacks is one
    `InputError` naming the file, the line and the key, not a KeyError from deep inside a reader."""

    where: str = ""

    def __missing__(self, key: Any) -> Any:
        raise InputError(f"the row has no {printable(key)!r}", self.where,
                         f"give every row of {printable(self.where.rsplit(':', 1)[0])} a {printable(key)!r}, "
                         "or fix the file from the release")


def jsonl_objects(path: Path | str, fix: str) -> list[Row]:
    """Every non-blank line of a JSONL file as a `Row` (`jsonl_rows`): a line that is not JSON or not an
    object is one `InputError` naming FILE:LINE."""
    rows = []
    for where, value in jsonl_rows(path, fix):
        if not isinstance(value, dict):
            raise InputError(f"the line is {type(value).__name__}, not a JSON object", where, fix)
        row = Row(value)
        row.where = where
        rows.append(row)
    return rows


_TERMINAL_UNSAFE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def terminal_text(text: str) -> str:
    """Text for a terminal with its lines kept: every other control character (ESC and its sequences,
    carriage returns, bells) shown as its escape instead of acting on the terminal."""
    return _TERMINAL_UNSAFE.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


def confined(root: Path | str, given: str | Path, where: str, what: str = "picture") -> Path:
    """`given` (a path written in a release's file, relative to `root`) as a path inside `root`: one that
    leaves it (``../``, an absolute path, a NUL byte), or a link whose target lies outside it (a picture linked
    to /etc/passwd would be sent to the model), is refused with one `InputError` naming `where`. A link inside
    the folder, or a release folder that is itself a link, is followed."""
    text = str(given).strip()
    base = Path(os.path.abspath(root))
    if "\0" in text or not text:
        raise InputError(f"the {what} path {printable(text)!r} is not a path", where, "fix the row")
    path = Path(os.path.normpath(base / text))
    if not path.is_relative_to(base):
        raise InputError(f"the {what} path {printable(text)!r} leaves the release's folder {printable(base)}",
                         where, f"a release's {what}s are read from inside its own folder; fix the row")
    real = Path(os.path.realpath(path))
    if not real.is_relative_to(Path(os.path.realpath(base))):
        raise InputError(f"the {what} path {printable(text)!r} is a link that leaves the release's folder "
                         f"{printable(base)} (to {printable(real)})", where,
                         f"copy the {what}s themselves into the release's folder (or `memegauge data import` it: "
                         "links inside a copy are kept as their content)")
    return path


MAX_YAML_NODES = 100_000
"""The most values a YAML document may hold once its aliases are expanded (docs/models.md): a real
registry, config or benchmark file holds hundreds; a billion-laughs alias bomb, billions."""


def parse_yaml(text: str, where: str, *, packaged: bool = False) -> Any:
    """The one way MemeGauge reads YAML: PyYAML's safe loader (no Python objects), with the document's
    size counted as if every alias were expanded before anything is built from it. A document past
    `MAX_YAML_NODES`, or an alias that contains itself, is one `InputError`; a syntax error raises
    `yaml.YAMLError` as `yaml.safe_load` does (callers word it with the line).

    `packaged`: the text is a file shipped inside an installed package beside its code (a benchmark's
    `benchmark.yaml`), read with libyaml's parser (`CSafeLoader`) where PyYAML has it, as its wheels do:
    the pure-Python parser took ~0.4 s of CPU to read the six built-in benchmark YAMLs, a third of a
    command's start. A file a user gives is always read by the pure-Python parser: libyaml recurses on
    the C stack, so a hostile file (`a: [[[[…` 50,000 deep) would crash the process instead of being
    refused with a message (tests/test_reliability.py `test_found_by_fuzzing_yaml`)."""
    import yaml

    loader = (getattr(yaml, "CSafeLoader", yaml.SafeLoader) if packaged else yaml.SafeLoader)(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _expanded_size(node, where)
        return loader.construct_document(node)
    finally:
        loader.dispose()


def _expanded_size(root: Any, where: str) -> int:
    """Values in the document with aliases expanded, counted over the node graph (each node once, its
    size remembered), so a bomb is measured without being built."""
    import yaml

    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()

    def size(node: Any) -> int:
        key = id(node)
        if key in sizes:
            return sizes[key]
        if key in open_nodes:
            raise InputError("the YAML has an alias that contains itself", where,
                             "write the value out instead of referring to the anchor inside itself")
        open_nodes.add(key)
        if isinstance(node, yaml.SequenceNode):
            total = 1 + sum(size(child) for child in node.value)
        elif isinstance(node, yaml.MappingNode):
            total = 1 + sum(size(k) + size(v) for k, v in node.value)
        else:
            total = 1
        open_nodes.discard(key)
        if total > MAX_YAML_NODES:
            raise InputError(f"the YAML expands to more than {MAX_YAML_NODES} values through its aliases "
                             "(an alias bomb?)", where, "write the file without nesting anchors in anchors")
        sizes[key] = total
        return total

    return size(root)


def read_csv_rows(path: Path | str) -> list[tuple[int, list[str]]]:
    """A user's CSV file as (line where the row starts, cells) pairs, read with `read_user_text`;
    a malformed file (a stray quote, a line break inside an unquoted cell) is one `InputError`."""
    reader = csv.reader(io.StringIO(read_user_text(path), newline=""))
    rows, start = [], 1
    try:
        for row in reader:
            rows.append((start, row))
            start = reader.line_num + 1
    except csv.Error as exc:
        raise InputError(f"malformed CSV: {exc}", f"{path}:{start}",
                         'quote cells that hold commas, quotes or line breaks ("...")') from None
    return rows


def find_file(base: Path, given: str | Path) -> tuple[Path, bool]:
    """`given` (relative to `base`, `~` expanded) resolved, and whether it names a file. A path no file
    system takes (a NUL byte, a name too long, an unknown ~user) is (as given, False): not found."""
    path = Path(base) / given
    try:
        path = (Path(base) / Path(given).expanduser()).resolve()
        return path, path.is_file()
    except (OSError, ValueError, RuntimeError):
        return path, False


# ---- meme text size ---------------------------------------------------------------------------------

MAX_MEME_TEXT = 20_000
"""The most characters a meme's text (or caption) may have by default: real meme texts are a few hundred
(the longest of SemEval-2021 Task 6's 950 has 378); a text thousands of times longer is a wrong file or
field, and would be sent whole in every prompt that shows the meme (a 50 MB text: 550 MB of store)."""
ENV_MAX_MEME_TEXT = "MEMEGAUGE_MAX_MEME_TEXT"
_MEME_TEXT_LIMIT: list[int | None] = [None]  # `memegauge --max-meme-text`, over the variable


def set_max_meme_text(chars: int | None) -> None:
    """The meme text limit of what this process reads from now on (None: the variable, else the default)."""
    _MEME_TEXT_LIMIT[0] = chars


def max_meme_text() -> int:
    """The meme text limit in force: `--max-meme-text`, else `MEMEGAUGE_MAX_MEME_TEXT`, else `MAX_MEME_TEXT`."""
    if _MEME_TEXT_LIMIT[0] is not None:
        return _MEME_TEXT_LIMIT[0]
    value = os.environ.get(ENV_MAX_MEME_TEXT, "").strip()
    if not value:
        return MAX_MEME_TEXT
    if not (value.isascii() and value.isdigit()) or int(value) < 1:
        raise InputError(f"{ENV_MAX_MEME_TEXT}={value!r} is not a positive whole number", where=ENV_MAX_MEME_TEXT,
                         fix=f"export {ENV_MAX_MEME_TEXT}=<characters>, or unset it for {MAX_MEME_TEXT:,}")
    return int(value)


def check_meme_text(text: str, where: str, what: str = "meme text") -> str:
    """`text` when within the limit; else one message naming its size, the limit and both settings."""
    limit = max_meme_text()
    if len(text) > limit:
        raise InputError(f"the {what} is {len(text):,} characters, over the limit of {limit:,}", where=where,
                         fix="check that this is the meme's text (a wrong file or field?); to send it "
                             f"anyway, raise the limit: memegauge --max-meme-text {len(text)} … or "
                             f"export {ENV_MAX_MEME_TEXT}={len(text)}")
    return text
