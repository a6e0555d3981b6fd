"""The command line of batch runs: `build --store-dir`, `eval --workers/--ray-address`, sweeps.

Progress is per file: a bar over the files with the figures so far (files done, failed, the
pooled accuracy) when Ray workers run them, a line per finished file otherwise (the stages of the
file being built draw their own bars then).
"""
from __future__ import annotations

import sys
from contextlib import contextmanager, nullcontext
from pathlib import Path

from .errors import InputError


def check_model_path(args) -> None:
    """A missing GGUF file is an argument error before any worker starts (else every file fails)."""
    if getattr(args, "backend", "rules") == "local" and (not args.model_path or not Path(args.model_path).is_file()):
        raise InputError("--model-path", "", f"no GGUF file at {args.model_path!r} (needed for --backend local)")


@contextmanager
def batch_pool(args):
    """A core.batch.RayPool when --workers or --ray-address is given (stopped on exit), else None."""
    if args.workers is None and not args.ray_address:
        with nullcontext(None) as none:
            yield none
        return
    from .batch import RayPool

    if not args.quiet:
        where = f"the Ray cluster at {args.ray_address}" if args.ray_address else "a local Ray instance"
        print(f"starting {args.workers or 'one per CPU of'} worker(s) on {where}", file=sys.stderr, flush=True)
    with RayPool(args.workers, args.ray_address, clip_checkpoint=args.clip_checkpoint,
                 clip_model=args.clip_model) as pool:
        yield pool


def _figures(state: dict) -> dict:
    acc = round(state["correct"] / state["questions"], 3) if state["questions"] else None
    return {"done": state["done"], "reused": state["reused"], "failed": state["failed"], "accuracy": acc}


def outcome_bar(enabled: bool, as_bar: bool):
    """An on_outcome(outcome, finished, n) callback for an eval: a tqdm bar over the files with the
    pooled figures so far (`as_bar`), or one line per finished file; failures are always named."""
    state = {"done": 0, "reused": 0, "failed": 0, "correct": 0, "questions": 0, "bar": None}

    def on_outcome(oc, finished: int, n: int) -> None:
        state[oc.status] = state.get(oc.status, 0) + 1
        state["correct"] += sum(1 for r in oc.records if r.get("correct"))
        state["questions"] += len(oc.records)
        if oc.status == "failed":
            print(f"failed: {oc.task.path}: {oc.error}", file=sys.stderr, flush=True)
        if not enabled:
            return
        if as_bar:
            from tqdm import tqdm

            if state["bar"] is None:
                state["bar"] = tqdm(total=n, desc="   files", unit="file", file=sys.stderr)
            state["bar"].set_postfix(_figures(state), refresh=False)
            state["bar"].update(1)
            if finished >= n:
                state["bar"].close()
        else:
            figs = ", ".join(f"{k} {v}" for k, v in _figures(state).items())
            print(f"  {oc.task.path.name}: {oc.status} ({finished}/{n}; {figs})", file=sys.stderr, flush=True)

    return on_outcome


def variant_line(enabled: bool):
    """An on_variant(k, n, variant) callback printing "variant k/N name" before each variant of a sweep."""
    def on_variant(k: int, n: int, variant) -> None:
        if enabled:
            print(f"variant {k}/{n} {variant.name}", file=sys.stderr, flush=True)

    return on_variant


def cmd_build_many(args, config) -> int:
    """`build INPUTS --store-dir OUT`: OUT/<stem>.duckdb per file; exit 1 when a file failed."""
    from .batch_work import FileWorker
    from .build_many import BuildSettings, run_builds, summary_line
    from .evaluation.runner import expand_inputs

    files, _ = expand_inputs(args.inputs)
    check_model_path(args)
    settings = BuildSettings(config, args.format, args.images, args.allow_missing_images, args.backend,
                             args.model_path)
    parallel = args.workers is not None or bool(args.ray_address)
    state = {"bar": None}

    def on_outcome(oc, finished: int, n: int) -> None:
        if oc.status == "failed":
            print(f"failed: {oc.task.path}: {oc.error}", file=sys.stderr, flush=True)
        if args.quiet:
            return
        if parallel:
            from tqdm import tqdm

            if state["bar"] is None:
                state["bar"] = tqdm(total=n, desc="   files", unit="file", file=sys.stderr)
            state["bar"].update(1)
            if finished >= n:
                state["bar"].close()
        elif oc.status != "failed":
            print(f"  {oc.task.path.name}: {oc.status} -> {oc.task.store} ({finished}/{n})", file=sys.stderr)

    with batch_pool(args) as pool:
        if pool is not None:
            outcomes = run_builds(settings, files, Path(args.store_dir), execute=lambda ts: pool.build(settings, ts),
                                  on_outcome=on_outcome)
        else:
            from .cli_commands import progress_bar

            worker = FileWorker(args.clip_checkpoint, args.clip_model)
            bar = progress_bar(not args.quiet)

            def execute(tasks):
                for t in tasks:
                    getattr(bar, "reset", lambda: None)()
                    if not args.quiet:
                        print(f"file {t.index}/{len(files)} {t.path.name}", file=sys.stderr, flush=True)
                    yield worker.build(settings, t, progress=bar)

            try:
                outcomes = run_builds(settings, files, Path(args.store_dir), execute=execute, on_outcome=on_outcome)
            finally:
                worker.close()
    for oc in outcomes:
        if oc.status == "built":
            r = oc.report
            print(f"built {oc.task.store}: {r.get('sessions')} sessions, {r.get('rounds')} rounds, "
                  f"{r.get('images')} images, {r.get('schemas')} schemas; {r.get('seconds', 0):.1f} s")
        elif oc.status == "skipped":
            print(f"skipped {oc.task.store}: already built from the same input")
    print(f"{len(outcomes)} file(s): {summary_line(outcomes)}")
    return 1 if any(o.status == "failed" for o in outcomes) else 0
