"""Top-10 rounds' recall of the gold rounds: each round alone (a flat top-10) vs read in its conversation.

    OMP_NUM_THREADS=1 .venv/bin/python bench/retrieval_context.py [FILE_OR_DIR ...] [--grid]

Defaults to the shared Mem-Gallery and LoCoMo folders. For every question with gold rounds (`clue`,
`evidence`), rounds are scored by h = 0.7·cos(MiniLM) + 0.3·BM25 (max-min normalised) over their
text and captions, with the question image's caption joined to the question; "flat" takes the
top 10 by h, "context" by `EventContext.rescore(h)` with the engine's defaults (Config:
event_context_window, event_neighbour_weight, event_session_weight). Prints the mean recall per
file and pooled per benchmark. `--grid` also prints a small grid of window/weights (to see that
the defaults sit on a plateau, not a peak). This measures the scoring mechanism alone; the
engine's own evidence recall (its plans, the hierarchy's fused scores) is what `core eval` reports.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

from core.config import DEFAULT  # noqa: E402
from core.evaluation.scoring import evidence_recall  # noqa: E402
from core.formats import read_file  # noqa: E402
from core.hierarchy import event_text  # noqa: E402
from core.planning.event_context import EventContext  # noqa: E402
from core.planning.scoring import BM25Index, minmax, tokens  # noqa: E402

DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data"
GRID = [(w, b, g) for w in (1, 2, 3) for b in (0.2, 0.35, 0.5) for g in (0.0, 0.2, 0.35)]


def _unit(m: np.ndarray) -> np.ndarray:
    m = np.asarray(m, dtype=np.float32)
    return m / np.maximum(np.linalg.norm(m, axis=1, keepdims=True), 1e-9)


def file_recalls(path: Path, encoder, contexts: dict[str, EventContext]) -> dict[str, list[float]]:
    """Per scoring name ("flat" and each context), the top-10 recall of every question with gold rounds."""
    [history] = read_file(path, allow_missing_images=True)
    rounds = history.rounds
    ids = [r.round_id for r in rounds]
    numbers: dict[str, int] = {}
    session = np.array([numbers.setdefault(r.session_id, len(numbers)) for r in rounds])
    order = np.arange(len(rounds))
    texts = [event_text(r) for r in rounds]
    mat = _unit(encoder.encode(texts))
    index = BM25Index([tokens(t) for t in texts])
    out: dict[str, list[float]] = {"flat": [], **{k: [] for k in contexts}}
    for qa in history.qas:
        if not qa.clues:
            continue
        query = qa.question + (f"\n{qa.image.caption}" if qa.image is not None and qa.image.caption else "")
        qv = _unit(encoder.encode([query]))[0]
        h = 0.7 * (mat @ qv) + 0.3 * minmax(index.scores(tokens(query)))
        for name, scores in [("flat", h)] + [(k, c.rescore(h, session, order)) for k, c in contexts.items()]:
            top = [ids[i] for i in np.argsort(-scores, kind="stable")[:10]]
            out[name].append(evidence_recall(top, qa.clues))
    return out


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("inputs", nargs="*", help="files or folders (default: the shared Mem-Gallery and LoCoMo data)")
    p.add_argument("--grid", action="store_true", help="also score a grid of windows and weights")
    args = p.parse_args(argv)
    import torch

    from core.encoders import MiniLMEncoder, load_minilm

    torch.set_num_threads(1)
    paths = []
    for item in args.inputs or [str(DATA / "mem-gallery"), str(DATA / "locomo")]:
        q = Path(item)
        paths += sorted(q.glob("*.json")) if q.is_dir() else [q] if q.exists() else []
    if not paths:
        print(f"no input files (looked in {args.inputs or [DATA]}); nothing to measure")
        return 0
    contexts = {"context": EventContext(DEFAULT.event_context_window, DEFAULT.event_neighbour_weight,
                                        DEFAULT.event_session_weight)}
    if args.grid:
        contexts |= {f"w{w}_b{b}_g{g}": EventContext(w, b, g) for w, b, g in GRID}
    encoder = MiniLMEncoder(load_minilm())
    pooled: dict[str, dict[str, list[float]]] = {}
    for path in paths:
        got = file_recalls(path, encoder, contexts)
        bench = path.parent.name
        for k, v in got.items():
            pooled.setdefault(bench, {}).setdefault(k, []).extend(v)
        print(f"{bench:12s} {path.stem[:40]:40s} n={len(got['flat']):4d} flat={statistics.mean(got['flat']):.3f} "
              f"context={statistics.mean(got['context']):.3f}", flush=True)
    for bench, got in pooled.items():
        print(f"POOLED {bench}: n={len(got['flat'])} " + " ".join(
            f"{k}={statistics.mean(v):.3f}" for k, v in got.items() if k in ("flat", "context")))
        if args.grid:
            for k, v in sorted(got.items(), key=lambda kv: -statistics.mean(kv[1]))[:8]:
                print(f"   {k:16s} {statistics.mean(v):.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
