"""Benchmark data in one command: the catalogue (`catalogue`), where copies live (`installed_dir`,
`data_dir`), fetching and checking (`install`), and the `memegauge data` commands (`cli`).

An installed copy of entry NAME is the folder ``data_dir()/NAME``: one subfolder per source, named by
the source's id, holding that source's files in the release's own layout (a GitHub archive's top
folder stripped), ``converted/`` with the layouts MemeGauge reads (when the entry has a converter),
``ABOUT.txt`` (licence and citation) and ``memegauge-data.json`` (what was installed, from where, and
the sha256 of every file). docs/data.md gives each entry's layout.
"""

from memegauge.data.store import data_dir, data_paths, installed_dir, is_data_name, resolve_data

__all__ = ["data_dir", "data_paths", "installed_dir", "is_data_name", "resolve_data"]
