"""Where image files come from: a folder on disk, or an index of uploaded files and zip members.

A reference from a history file (`input_image`, relative to the JSON file) is
matched in three steps: the exact relative path, then the path with leading
`./` and `../` removed as a suffix of a known path, then the bare file name.
More than one candidate at a step is an ambiguity, never a guess.

Zip archives are checked before anything in them is used: entry count,
total expanded size, absolute or escaping (`..`) entry names, symbolic links
and duplicate names are refused.
"""
from __future__ import annotations

import io
import os
import posixpath
import re
import stat
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

from ..config import Config
from ..errors import InputError


class NotFound(LookupError):
    """No file matches a reference; the message says where we looked."""


class Ambiguous(LookupError):
    """Several files match a reference; the message names two of them."""


class LoadFault(OSError):
    """A matched file could not be read."""


@dataclass(frozen=True)
class Entry:
    """One readable file: `key` is its relative posix path, `display` says where it is."""

    key: str
    display: str
    size: int
    load: Callable[[], bytes] = field(repr=False, compare=False)


def clean_relative(name: str) -> str | None:
    """A posix relative path without `.` parts, or None if it is absolute or escapes upward."""
    name = name.replace("\\", "/")
    if name.startswith("/") or re.match(r"[A-Za-z]:", name):
        return None
    norm = posixpath.normpath(name)
    if norm == ".." or norm.startswith("../"):
        return None
    return "" if norm == "." else norm


def tail_of(ref: str) -> str:
    """The reference without leading `/`, `./` and `../` parts (what a suffix match uses)."""
    parts = [p for p in ref.replace("\\", "/").split("/") if p not in ("", ".")]
    while parts and parts[0] == "..":
        parts.pop(0)
    return "/".join(p for p in parts if p != "..")


class IndexSource:
    """Files known by relative path: uploaded files and members of uploaded zips."""

    def __init__(self, entries: Iterable[Entry] = ()):
        self.by_key: dict[str, list[Entry]] = {}
        self.by_name: dict[str, list[Entry]] = {}
        for e in entries:
            self.add(e)

    def add(self, e: Entry) -> None:
        self.by_key.setdefault(e.key, []).append(e)
        self.by_name.setdefault(posixpath.basename(e.key), []).append(e)

    def describe(self) -> str:
        return f"{len(self.by_key)} uploaded file(s)"

    def find(self, ref: str, json_dir: str) -> Entry:
        """The single entry matching `ref` (seen from the folder `json_dir`), else NotFound/Ambiguous."""
        exact = clean_relative(posixpath.join(json_dir, ref.replace("\\", "/")))
        if exact:
            hit = _one(self.by_key.get(exact, []), ref)
            if hit:
                return hit
        tail = tail_of(ref)
        if tail:
            hit = _one([e for k, es in self.by_key.items() if k == tail or k.endswith("/" + tail) for e in es], ref)
            if hit:
                return hit
            hit = _one(self.by_name.get(posixpath.basename(tail), []), ref)
            if hit:
                return hit
        raise NotFound(f"no file with this path or name among {self.describe()}")


class FolderSource:
    """Files on disk under `root`; references may also be resolved from the JSON file's folder."""

    def __init__(self, root: Path, json_dir: Path | None, config: Config):
        self.root = root
        self.json_dir = json_dir
        self.config = config
        self._index: IndexSource | None = None
        self._truncated = False

    def find(self, ref: str, json_dir: str = "") -> Entry:
        ref_path = ref.replace("\\", "/")
        candidates = []
        if self.json_dir is not None:
            candidates.append(self.json_dir / ref_path)  # the user's own disk: ../ is allowed
        tail = tail_of(ref_path)
        if tail:
            candidates.append(self.root / tail)
        for p in candidates:
            if p.is_file():
                return self._entry(p)
        index = self._build_index()
        try:
            return index.find(ref_path, "")
        except NotFound:
            more = f" (searched only the first {self.config.max_zip_entries} files)" if self._truncated else ""
            tried = f"at {candidates[0]} " if candidates else ""
            raise NotFound(f"not found {tried}nor by name under {self.root}{more}") from None

    def _entry(self, p: Path) -> Entry:
        size = p.stat().st_size
        return Entry(key=p.name, display=str(p.resolve()), size=size, load=lambda: _read_file(p, self.config))

    def _build_index(self) -> IndexSource:
        # Built only when a direct lookup fails, and bounded so a huge folder cannot stall a read.
        if self._index is None:
            self._index = IndexSource()
            count = 0
            for dirpath, dirnames, filenames in os.walk(self.root):
                dirnames.sort()
                for fn in sorted(filenames):
                    count += 1
                    if count > self.config.max_zip_entries:
                        self._truncated = True
                        return self._index
                    p = Path(dirpath) / fn
                    rel = p.relative_to(self.root).as_posix()
                    self._index.add(Entry(key=rel, display=str(p), size=0,
                                          load=lambda p=p: _read_file(p, self.config)))
        return self._index


def _read_file(p: Path, config: Config) -> bytes:
    try:
        size = p.stat().st_size
        if size > config.max_upload_bytes:
            raise LoadFault(f"{size} bytes, more than max_upload_bytes ({config.max_upload_bytes})")
        return p.read_bytes()
    except OSError as e:
        if isinstance(e, LoadFault):
            raise
        raise LoadFault(f"cannot read {p}: {e.strerror or e}") from None


def _one(entries: list[Entry], ref: str) -> Entry | None:
    distinct = list({e.display: e for e in entries}.values())
    if len(distinct) > 1:
        a, b = sorted(e.display for e in distinct)[:2]
        raise Ambiguous(f"both {a} and {b} match")
    return distinct[0] if distinct else None


# ---------------------------------------------------------------------- zips
def _skipped(name: str) -> bool:
    """macOS archive litter that is never user content."""
    base = posixpath.basename(name)
    return name.startswith("__MACOSX/") or base.startswith("._") or base == ".DS_Store"


def open_zip(data: bytes, name: str, config: Config, limit: int | None = None) -> list[Entry]:
    """The file entries of a zip archive held in memory, after checking the whole archive.

    Raises InputError(name, place, fault) when the archive is unreadable, has
    more than config.max_zip_entries entries, would expand beyond
    `limit` bytes (default config.max_upload_bytes; an upload passes what is
    left of its budget), or has an entry that is absolute, escapes its
    folder, is a symbolic link or is duplicated. Reading an entry later may
    raise LoadFault (bad CRC, encryption, unsupported compression).
    """
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
        infos = zf.infolist()
    except Exception as e:  # BadZipFile, but also struct/EOF/value errors on hostile bytes
        raise InputError(name, "", f"not a readable zip archive ({type(e).__name__}: {e})") from None
    if len(infos) > config.max_zip_entries:
        raise InputError(name, "", f"{len(infos)} entries, more than max_zip_entries ({config.max_zip_entries})")
    total = sum(i.file_size for i in infos)
    limit = config.max_upload_bytes if limit is None else limit
    if total > limit:
        left = "" if limit == config.max_upload_bytes else f", {max(limit, 0)} left of"
        raise InputError(name, "", f"expands to {total} bytes, more than{left} max_upload_bytes ({config.max_upload_bytes})")
    entries: list[Entry] = []
    seen: set[str] = set()
    for info in infos:
        place = f"entry {info.filename!r}"
        mode = info.external_attr >> 16
        if stat.S_ISLNK(mode):
            raise InputError(name, place, "is a symbolic link; links are not allowed in archives")
        raw = info.filename.replace("\\", "/")
        if not raw:  # zipfile cuts names at NUL, so a hostile name can come out empty
            raise InputError(name, place, "entry with an empty name")
        if raw.startswith("/") or re.match(r"[A-Za-z]:", raw):
            raise InputError(name, place, "absolute path; entries must stay inside the archive")
        if ".." in raw.split("/"):
            raise InputError(name, place, "escapes its folder ('..' in the path)")
        key = clean_relative(raw)
        if raw.endswith("/") or not key or _skipped(key):
            continue
        if key in seen:
            raise InputError(name, place, "duplicate entry name")
        seen.add(key)
        entries.append(Entry(key=key, display=f"zip:{name}!{key}", size=info.file_size,
                             load=lambda info=info: _read_member(zf, info)))
    return entries


def _read_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo) -> bytes:
    try:
        return zf.read(info)
    except Exception as e:  # bad CRC, zlib errors, encrypted or unsupported entries
        raise LoadFault(f"cannot read the archive entry ({type(e).__name__}: {e})") from None
