"""Compute a catalogue entry's manifest from local clones of its GitHub sources.

    python scripts/data_manifest.py memeqa SOURCE_ID=GIT_DIR ...

For each GitHub source of the entry: every file of the repository at the pinned commit that the source
keeps (`include`), with its size and sha256, read from the git objects (`git cat-file`), written to the
entry's ``manifest.json``. A blob the clone lacks is reported and the manifest is not written.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys


def files_at(git_dir: str, commit: str, include: tuple[str, ...]) -> dict[str, list]:
    listing = subprocess.run(["git", "--git-dir", git_dir, "ls-tree", "-r", "-z", commit],
                             check=True, capture_output=True).stdout.decode().split("\0")
    found: dict[str, list] = {}
    for line in filter(None, listing):
        meta, path = line.split("\t", 1)
        mode, kind, blob = meta.split()
        if kind != "blob" or (include and not path.startswith(include)):
            continue
        if mode == "120000":
            raise SystemExit(f"{path}: a symbolic link; the installer does not keep links")
        data = subprocess.run(["git", "--git-dir", git_dir, "cat-file", "blob", blob],
                              capture_output=True).stdout
        if subprocess.run(["git", "--git-dir", git_dir, "cat-file", "-e", blob]).returncode:
            raise SystemExit(f"{path}: blob {blob} is missing from {git_dir}")
        found[path] = [len(data), hashlib.sha256(data).hexdigest()]
    return found


def main(name: str, pairs: list[str]) -> None:
    from memegauge.data.catalogue import entry

    described = entry(name)
    dirs = dict(pair.split("=", 1) for pair in pairs)
    manifest = {s.id: files_at(dirs[s.id], s.commit, s.include) for s in described.sources if s.kind == "github"}
    path = described.folder / "manifest.json"
    path.write_text(json.dumps(manifest, indent=0, sort_keys=True) + "\n", encoding="utf-8")
    print(f"{path}: " + ", ".join(f"{k}: {len(v)} files, {sum(s for s, _ in v.values())} bytes"
                                  for k, v in manifest.items()))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
