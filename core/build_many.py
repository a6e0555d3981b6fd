"""`python -m core build DIR_OR_GLOB --store-dir OUT`: one memory (one DuckDB file) per input file.

Each input file becomes OUT/<stem>.duckdb beside OUT/<stem>.build.json (what it was built from and
the build's report). A file is built into a temporary memory and its bytes sent back to the driver,
which writes them under a temporary name and renames it, so OUT never holds half a memory, even when
the build was done on another machine of a Ray cluster. A rerun skips the files whose sidecar records the
same input and settings; a failing file is reported and the others still built.
"""
from __future__ import annotations

import json
import os
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Sequence

from .config import DEFAULT, Config
from .fingerprint import fingerprint, same_fingerprint


@dataclass(frozen=True)
class BuildSettings:
    """What every worker needs to build a file as the command line asked (plain values)."""
    config: Config = DEFAULT
    fmt: str | None = None
    images: str | None = None
    allow_missing_images: bool = False
    backend: str = "rules"
    model_path: str | None = None


@dataclass(frozen=True)
class BuildTask:
    """One input file: its place (1-based), the memory it becomes and its input fingerprint."""
    index: int
    path: Path
    store: Path
    fingerprint: dict


@dataclass(frozen=True)
class BuildOutcome:
    """"built" (`data`: the memory file's bytes, `report`: the BuildReport as a dict), "skipped"
    (already built from the same input), or "failed" (`error` says why)."""
    task: BuildTask
    status: str
    data: bytes | None = None
    report: dict = field(default_factory=dict)
    error: str | None = None


def build_fingerprint(path: Path, settings: BuildSettings) -> dict:
    """The input file (core/fingerprint.py) with the settings that change what is built."""
    return fingerprint(path, {"format": settings.fmt, "images": settings.images,
                              "allow_missing_images": settings.allow_missing_images, "backend": settings.backend,
                              "config": settings.config.changes()})


def build_tasks(files: Sequence[Path], store_dir: Path, settings: BuildSettings) -> list[BuildTask]:
    """A task per file, in order; a second file of the same stem becomes `<stem>-2.duckdb`."""
    tasks, stems = [], {}
    for k, path in enumerate(files, start=1):
        stems[path.stem] = stems.get(path.stem, 0) + 1
        name = path.stem if stems[path.stem] == 1 else f"{path.stem}-{stems[path.stem]}"
        tasks.append(BuildTask(k, path, store_dir / f"{name}.duckdb", build_fingerprint(path, settings)))
    return tasks


def sidecar(task: BuildTask) -> Path:
    return task.store.with_suffix(".build.json")


def already_built(task: BuildTask) -> bool:
    """True when the task's memory exists and its sidecar records the same input and settings."""
    try:
        done = json.loads(sidecar(task).read_text()).get("input")
    except (OSError, ValueError, AttributeError):
        return False
    return task.store.is_file() and same_fingerprint(done, task.fingerprint)


def build_file(settings: BuildSettings, task: BuildTask, *, models: dict, llm=None,
               progress: Callable[[str, int, int], None] = lambda *a: None) -> BuildOutcome:
    """Build one file into a temporary memory; the outcome carries its bytes. Never raises: bad
    input or any error is a "failed" outcome naming it."""
    from .build import build
    from .deps import make_build_deps
    from .formats import read_file
    from .store import Store

    try:
        histories = read_file(task.path, images=settings.images, fmt=settings.fmt, config=settings.config,
                              allow_missing_images=settings.allow_missing_images)
        with tempfile.TemporaryDirectory(prefix="adamm-build-") as tmp:
            path = Path(tmp) / "memory.duckdb"
            with Store(str(path)) as store:
                if llm is not None and hasattr(llm, "set_cache"):
                    from .llm import DuckDBLLMCache

                    llm.set_cache(DuckDBLLMCache(store.con))
                try:
                    deps = make_build_deps(settings.config, cache_con=store.con, llm=llm, **models)
                    report = build(store, histories, deps, settings.config, progress=progress)
                finally:
                    if llm is not None and hasattr(llm, "set_cache"):
                        llm.set_cache(None)  # the store closes: no reply may go to a closed connection
            data = path.read_bytes()
    except Exception as e:  # one bad file must not stop the others; it is reported
        return BuildOutcome(task, "failed", error=f"{type(e).__name__}: {e}")
    return BuildOutcome(task, "built", data, asdict(report))


def write_outcome(outcome: BuildOutcome) -> None:
    """Put a built memory in place (temporary name, then rename) and its sidecar after it."""
    task = outcome.task
    task.store.parent.mkdir(parents=True, exist_ok=True)
    tmp = task.store.with_name(task.store.name + ".part")
    tmp.write_bytes(outcome.data or b"")
    os.replace(tmp, task.store)
    sidecar(task).write_text(json.dumps({"input": task.fingerprint, "report": outcome.report}, indent=1,
                                        default=str))


Executor = Callable[[Sequence[BuildTask]], Iterable[BuildOutcome]]


def run_builds(settings: BuildSettings, files: Sequence[Path], store_dir: Path, *, execute: Executor,
               on_outcome: Callable[[BuildOutcome, int, int], None] = lambda *a: None) -> list[BuildOutcome]:
    """Build every file not already built with `execute` (yielding outcomes as they finish, in any
    order), writing each memory as it arrives. Returns the outcomes in file order."""
    tasks = build_tasks(files, store_dir, settings)
    done: dict[int, BuildOutcome] = {}

    def arrive(oc: BuildOutcome) -> None:
        if oc.status == "built":
            write_outcome(oc)
        done[oc.task.index] = oc
        on_outcome(oc, len(done), len(tasks))

    pending = []
    for t in tasks:
        if already_built(t):
            arrive(BuildOutcome(t, "skipped"))
        else:
            pending.append(t)
    for oc in execute(pending):
        arrive(oc)
    return [done.get(t.index) or BuildOutcome(t, "failed", error="no result came back") for t in tasks]


def summary_line(outcomes: Sequence[BuildOutcome]) -> str:
    """"built N, skipped M, failed K" for the end of the command."""
    count = {s: sum(1 for o in outcomes if o.status == s) for s in ("built", "skipped", "failed")}
    return ", ".join(f"{k} {v}" for k, v in count.items())
