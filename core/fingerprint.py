"""What makes a finished file's result reusable: the input file's identity and the run's settings.

Used by `eval` over several files (a file's summary.json records it) and by `build --store-dir`
(a memory's <stem>.build.json records it): a rerun skips a file whose record is the same.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

FILE_KEYS = ("path", "size", "mtime", "sha256")


def fingerprint(path: Path, settings: dict) -> dict:
    """The file's resolved path, size, mtime and sha256, with `settings` (made JSON-plain, as they
    are read back from disk)."""
    st = path.stat()
    return {"path": str(path.resolve()), "size": st.st_size, "mtime": st.st_mtime,
            "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
            **json.loads(json.dumps(settings, default=str))}


def same_fingerprint(done: dict | None, now: dict) -> bool:
    """True when a recorded fingerprint is the same file (size+mtime, or sha256: a copy or a touched
    file still counts) with the same settings. A record without `config` was made with the defaults."""
    if not isinstance(done, dict):
        return False
    same_file = (done.get("size"), done.get("mtime")) == (now["size"], now["mtime"]) or \
        done.get("sha256") == now["sha256"]
    settings = [k for k in now if k not in FILE_KEYS]
    return same_file and all((done.get(k) or {}) == (now[k] or {}) if k == "config" else done.get(k) == now[k]
                             for k in settings)
