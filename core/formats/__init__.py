"""Input-format readers: MemEye / Mem-Gallery and LoCoMo JSON -> History.

Public API:
- `read_file(path, images=..., fmt=...)` parses one JSON file on disk;
- `read_upload(files)` parses a browser upload (JSON files, images, zips) into
  an UploadReport with one FileResult per JSON file, so one bad file never
  affects the others;
- `detect_format(obj)` names the format of a parsed JSON document.

The faults of a file are one InputError(file, place, fault) naming the first,
carrying the next ones (up to 20 listed, the rest counted; see
core.errors.InputError.faults); a place is a JSON path
(`multi_session_dialogues[3].dialogues[2].time`), a line/column for
malformed JSON, or a zip entry. Content that is not JSON text (an image, a
PDF, a zip, binary data) is named as such; a file without any round is a
fault ("nothing to build"); a round without user text is a warning. Images are validated with Pillow and
come back as ImageRef with data, sha256, mime, width and height.
"""
from __future__ import annotations

import posixpath
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Sequence

from ..config import DEFAULT, Config
from ..errors import InputError
from ..model import History, ImageRef, Session
from . import locomo, memeye
from .decode import load_json
from .images import ImageFault, ImageInfo, inspect_image
from .jsonpath import TOP, Reader, kind
from .sources import Ambiguous, Entry, FolderSource, IndexSource, LoadFault, NotFound, clean_relative, open_zip

__all__ = ["FORMATS", "FileResult", "UploadReport", "detect_format", "read_file", "read_upload", "INTERNAL_FAULT"]

FORMATS = (memeye.FORMAT, locomo.FORMAT)
# Prefix of the fault recorded when a reader bug (not the input) failed on a file.
INTERNAL_FAULT = "internal error while reading this file (please report it)"


@dataclass(frozen=True)
class FileResult:
    """What became of one JSON file of an upload (or of an unusable zip): histories or an error.

    `warnings` are about an accepted file (e.g. rounds without user text):
    up to 20, then "... and N more warning(s)"."""

    name: str
    histories: tuple[History, ...] = ()
    error: InputError | None = None
    warnings: tuple[str, ...] = ()
    sessions: int = 0
    rounds: int = 0
    images: int = 0
    images_loaded: int = 0
    qas: int = 0

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass(frozen=True)
class UploadReport:
    """One FileResult per JSON file (and per unreadable zip); `error` is an upload-wide fault."""

    files: tuple[FileResult, ...]
    error: InputError | None = None

    @property
    def histories(self) -> list[History]:
        return [h for f in self.files for h in f.histories]

    @property
    def errors(self) -> list[InputError]:
        return ([self.error] if self.error else []) + [f.error for f in self.files if f.error]

    @property
    def ok(self) -> bool:
        return not self.errors


def detect_format(obj: object, *, file: str = "<input>") -> str:
    """"memeye" or "locomo" for a parsed JSON document; InputError(file, "", ...) otherwise."""
    if memeye.looks_like(obj):
        return memeye.FORMAT
    if locomo.looks_like(obj):
        return locomo.FORMAT
    raise InputError(
        file, TOP,
        f"unknown format: found {kind(obj)} at the top level; expected a MemEye object with "
        f"'{memeye.DIALOGUES}' or a LoCoMo sample ('speaker_a', 'session_1', 'qa', ...) or a list of samples",
    )


def read_file(path: str | Path, *, images: str | Path | None = None, fmt: str | None = None,
              config: Config = DEFAULT, allow_missing_images: bool = False) -> list[History]:
    """Parse one JSON file (fmt None = detect) into its histories (LoCoMo lists give several).

    Images are looked up relative to the JSON file's folder, or in `images`
    (a folder or a zip file) when given: by relative path, then by file name.
    A missing image is an error unless `allow_missing_images`, when its
    ImageRef keeps the reference in `path` and has no data.
    Raises InputError(file, place, fault) for any fault in the file or its images.
    """
    _check_fmt(fmt)
    p = Path(path)
    file = str(path)
    data = _read_disk(p, file, config, "file")
    if images is None:
        source: FolderSource | IndexSource = FolderSource(p.parent, p.parent, config)
    else:
        ip = Path(images)
        if ip.is_dir():
            source = FolderSource(ip, None, config)
        else:
            source = IndexSource(open_zip(_read_disk(ip, str(images), config, "image folder or zip"), str(images), config))
    reader = _ImageResolver(source, config, allow_missing_images)
    histories, _ = _read_document(data, file, p.name, p.stem, "", fmt, config, config.max_rounds_per_upload, reader)
    return histories


def read_upload(files: Sequence[tuple[str, bytes]], *, fmt: str | None = None, config: Config = DEFAULT,
                allow_missing_images: bool = False) -> UploadReport:
    """Parse a browser upload: JSON files plus image files and/or zips (which may hold the JSON too).

    Never raises for bad content: each JSON file gets a FileResult with its
    histories or its InputError; an unreadable or unsafe zip gets a FileResult
    with the error; an upload over config.max_upload_bytes or without any JSON
    file sets UploadReport.error. Rounds count against
    config.max_rounds_per_upload across the whole upload in file order.
    """
    _check_fmt(fmt)
    total = sum(len(data) for _, data in files)
    if total > config.max_upload_bytes:
        return UploadReport((), InputError("upload", "", f"{total} bytes, more than max_upload_bytes ({config.max_upload_bytes})"))
    index = IndexSource()
    docs: list[tuple[str, str, Entry]] = []  # (display name, folder inside the upload, entry)
    results: list[FileResult] = []
    expanded = total  # what the upload holds once its zips are expanded, bounded like the upload
    seen_names: dict[str, int] = {}
    for name, data in files:
        key = clean_relative(name) or posixpath.basename(name.replace("\\", "/")) or "unnamed"
        lower = key.lower()
        # Two uploaded files with one name stay distinct (so an image matching both is ambiguous).
        seen_names[name] = seen_names.get(name, 0) + 1
        label = name if seen_names[name] == 1 else f"{name} (#{seen_names[name]})"
        if lower.endswith(".zip"):
            try:
                members = open_zip(data, label, config, limit=config.max_upload_bytes - expanded + len(data))
            except InputError as e:
                results.append(FileResult(name=label, error=e))
                continue
            expanded += sum(m.size for m in members) - len(data)
            for m in members:
                if m.key.lower().endswith(".json"):
                    docs.append((f"{label}!{m.key}", posixpath.dirname(m.key), m))
                else:
                    index.add(m)
            continue
        display = f"upload:{key}" if label == name else f"upload:{key} (#{seen_names[name]})"
        entry = Entry(key=key, display=display, size=len(data), load=lambda data=data: data)
        if lower.endswith(".json"):
            docs.append((label, posixpath.dirname(key), entry))
        else:
            index.add(entry)
    if not docs and not results:
        return UploadReport((), InputError("upload", "", "no JSON file in the upload (expected a MemEye or LoCoMo .json, alone or in a zip)"))
    reader = _ImageResolver(index, config, allow_missing_images)
    used = 0
    for display, json_dir, entry in docs:
        try:
            try:
                data = entry.load()
            except LoadFault as e:
                raise InputError(display, "", str(e)) from None
            stem = posixpath.splitext(posixpath.basename(entry.key))[0]
            budget = config.max_rounds_per_upload - used
            read, warnings = _read_document(data, display, display, stem, json_dir, fmt, config, budget, reader)
            histories = tuple(read)
        except InputError as e:
            results.append(FileResult(name=display, error=e))
            continue
        except Exception as e:  # a reader bug must not sink the other files of the upload
            results.append(FileResult(name=display, error=InputError(display, "", f"{INTERNAL_FAULT}: {type(e).__name__}: {e}")))
            continue
        rounds = [r for h in histories for r in h.rounds]
        used += len(rounds)
        imgs = [i for r in rounds for i in r.images]
        results.append(FileResult(
            name=display, histories=histories, sessions=sum(len(h.sessions) for h in histories),
            rounds=len(rounds), images=len(imgs), images_loaded=sum(i.data is not None for i in imgs),
            qas=sum(len(h.qas) for h in histories), warnings=warnings,
        ))
    return UploadReport(tuple(results))


# ---------------------------------------------------------------------- internals
def _check_fmt(fmt: str | None) -> None:
    if fmt is not None and fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)} or None")


def _read_disk(p: Path, file: str, config: Config, what: str) -> bytes:
    try:
        if not p.exists():
            raise InputError(file, "", f"{what} not found")
        if p.is_dir():
            raise InputError(file, "", "is a folder, not a file")
        size = p.stat().st_size
        if size > config.max_upload_bytes:
            raise InputError(file, "", f"{size} bytes, more than max_upload_bytes ({config.max_upload_bytes})")
        return p.read_bytes()
    except OSError as e:
        raise InputError(file, "", f"cannot read: {e.strerror or e}") from None


def _read_document(data: bytes, file: str, source: str, stem: str, json_dir: str, fmt: str | None,
                   config: Config, max_rounds: int, resolver: "_ImageResolver") -> tuple[list[History], tuple[str, ...]]:
    """The histories of one JSON document and its warnings; InputError carrying all its faults."""
    obj = load_json(data, file)
    r = Reader(file)
    try:
        f = fmt or detect_format(obj, file=file)
        module = memeye if f == memeye.FORMAT else locomo
        n = module.count_rounds(obj)
        if n > max_rounds:
            left = "" if max_rounds == config.max_rounds_per_upload else f" left of the upload's {config.max_rounds_per_upload}"
            raise InputError(file, "", f"{n} rounds, more than max_rounds_per_upload ({max(max_rounds, 0)}{left})")
        if module is memeye:
            history, places = memeye.parse(obj, r, source, stem)
            histories = [resolver.attach(history, places, r, json_dir)]
        else:
            histories = locomo.parse(obj, r, source, stem)
    except RecursionError:
        raise InputError(file, "", "JSON nested too deeply to read") from None
    r.raise_faults()
    if not any(h.rounds for h in histories):
        # An empty conversation would "build" as +0 rounds without a word: say so instead.
        raise InputError(file, memeye.DIALOGUES if module is memeye else TOP, "no rounds: nothing to build")
    return histories, r.warning_lines()


class _ImageResolver:
    """Finds, reads and validates the image files of histories; each file once per read."""

    def __init__(self, source: FolderSource | IndexSource, config: Config, allow_missing: bool):
        self.source, self.config, self.allow_missing = source, config, allow_missing
        self.cache: dict[str, tuple[bytes, ImageInfo] | str] = {}

    def attach(self, history: History, places: dict[str, str], r: Reader, json_dir: str) -> History:
        """The history with every referenced image replaced by a validated ImageRef.

        The fault of an image (missing, ambiguous, not an image) is recorded in `r`
        and the image kept unresolved, so every image of the file is checked."""
        if not places:
            return history
        sessions = []
        for s in history.sessions:
            rounds = []
            for rnd in s.rounds:
                if any(i.image_id in places for i in rnd.images):
                    imgs = tuple(self._checked(i, places[i.image_id], r, json_dir) if i.image_id in places else i
                                 for i in rnd.images)
                    rnd = replace(rnd, images=imgs)
                rounds.append(rnd)
            sessions.append(Session(session_id=s.session_id, date=s.date, rounds=tuple(rounds)))
        return replace(history, sessions=tuple(sessions))

    def _checked(self, img: ImageRef, place: str, r: Reader, json_dir: str) -> ImageRef:
        """The resolved image, or `img` as it was with the fault recorded in `r`."""
        with r.guard():
            return self._resolve(img, place, r.file, json_dir)
        return img

    def _resolve(self, img: ImageRef, place: str, file: str, json_dir: str) -> ImageRef:
        ref = img.path or ""
        try:
            entry = self.source.find(ref, json_dir)
        except NotFound as e:
            if self.allow_missing:
                return img
            raise InputError(file, place, f"image {ref!r} not found: {e}") from None
        except Ambiguous as e:
            raise InputError(file, place, f"image {ref!r} is ambiguous: {e}") from None
        got = self.cache.get(entry.display)
        if got is None:
            try:
                data = entry.load()
                got = (data, inspect_image(data, entry.key, self.config.max_image_pixels))
            except (LoadFault, ImageFault) as e:
                got = str(e)
            self.cache[entry.display] = got
        if isinstance(got, str):
            raise InputError(file, place, f"image {ref!r} ({entry.display}): {got}")
        data, info = got
        return replace(img, path=entry.display, data=data, sha256=info.sha256, mime=info.mime,
                       width=info.width, height=info.height)
