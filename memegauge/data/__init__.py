"""Benchmark data in one command: the catalogue (`catalogue`), where copies live (`installed_dir`,
`data_dir`), fetching and checking (`install`), and the `memegauge data` commands (`cli`).

An installed copy of entry NAME is the folder ``data_dir()/NAME``: one subfolder per source, named by
the source's id, holding that source's files in the release's own layout (a GitHub archive's top
folder stripped), ``converted/`` with the layouts MemeGauge reads (when the entry has a converter),
``ABOUT.txt`` (licence and citation) and ``memegauge-data.json`` (what was installed, from where, and
the sha256 of every file). docs/data.md gives each entry's layout.
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what type checkers see; at run time `__getattr__` imports them
    from memegauge.data.store import data_dir, data_paths, installed_dir, is_data_name, resolve_data

_STORE = ("data_dir", "data_paths", "installed_dir", "is_data_name", "resolve_data")


def __getattr__(name: str) -> Any:
    """`memegauge.data.store`'s names, imported when first asked for: `memegauge --help` imports this package
    for the `data` command's descriptor (`memegauge.data.commands`) alone."""
    if name in _STORE:
        from memegauge.data import store

        return getattr(store, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["data_dir", "data_paths", "installed_dir", "is_data_name", "resolve_data"]
