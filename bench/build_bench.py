"""Build throughput: rounds per second, time per stage, and the ratio to the unavoidable floor.

    OMP_NUM_THREADS=1 .venv/bin/python bench/build_bench.py [--rounds 1000 10000] [--images]
        [--runs 3] [--encoder minilm|hash] [--compare description centroid]

Builds synthetic histories (bench/synthetic.py: the demo tiled, texts varied per
copy) into fresh memory files with the real MiniLM text encoder and rapidocr
(--images keeps the screenshots; every copy's images differ, so each is OCR'd).
The floor is the work no build can avoid, measured inside the same run: the
encoder's batched call over every distinct round text (the embed stage's model
call) plus the OCR engine's time reading each distinct image once. The ratio
build/floor includes everything else: store, extraction, induction,
materialization and the hierarchy with its description embeddings.
A second floor adds the work the paper's method itself cannot avoid: every
episode and topic description the hierarchy compared with, embedded once in
batches (re-embedded after the build with the bare encoder). Its ratio
(`ratio+d`) is the build's overhead over the model work the method asks for;
in the paper-exact mode those descriptions are ~0.7 per round and about twice
as long as a round text, so they alone cost more than the round-text floor.
Each size is built once per `hierarchy_compare` mode given by --compare
("description", the paper-exact default, re-embeds the open episode's
description after each insertion; "centroid" compares with running means),
runs of the modes interleaved so that load changes hit both alike.
Prints medians over --runs runs, the process's CPU seconds beside the wall
time (the machine is shared: CPU time is the steadier figure), and its peak
resident memory. The last line, build_floor_ratio=, is the worst ratio of the
first mode given.
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from synthetic import HashTextEncoder, synthetic_history  # noqa: E402

from core.build import STAGES, build  # noqa: E402
from core.config import DEFAULT, Config  # noqa: E402
from core.deps import make_build_deps  # noqa: E402
from core.store import Store  # noqa: E402


class TimedEncoder:
    """Wraps a text encoder and records (number of texts, seconds) of every call, and the texts after the first."""

    def __init__(self, inner):
        self.inner, self.name, self.dim = inner, inner.name, inner.dim
        self.calls: list[tuple[int, float]] = []
        self.later_texts: list[str] = []  # texts of every call after the first (the round texts' call)

    def encode(self, texts):
        t0 = time.perf_counter()
        out = self.inner.encode(texts)
        if self.calls:
            self.later_texts.extend(texts)
        self.calls.append((len(texts), time.perf_counter() - t0))
        return out


def batched_seconds(encoder, texts: list[str], batch: int = 64) -> float:
    """Seconds the bare encoder takes over the distinct `texts` in batches (the descriptions' floor)."""
    todo = list(dict.fromkeys(texts))
    t0 = time.perf_counter()
    for k in range(0, len(todo), batch):
        encoder.encode(todo[k : k + batch])
    return time.perf_counter() - t0


class TimedOCR:
    def __init__(self, inner):
        self.inner, self.name = inner, inner.name
        self.seconds = 0.0
        self.images = 0

    def read(self, image, **kw):
        t0 = time.perf_counter()
        try:
            return self.inner.read(image, **kw)
        finally:
            self.seconds += time.perf_counter() - t0
            self.images += 1


def text_encoder(kind: str):
    if kind == "hash":
        return HashTextEncoder()
    import torch

    from core.encoders import MiniLMEncoder, load_minilm

    torch.set_num_threads(1)
    enc = MiniLMEncoder(load_minilm())
    enc.encode(["warm up"])
    return enc


def one_build(n_rounds: int, images: bool, encoder, ocr_engine=None, folder: Path | None = None,
              keep: Path | None = None, config: Config = DEFAULT) -> dict:
    """Build n_rounds synthetic rounds into a fresh memory; returns seconds, stages and the floor parts.

    keep: copy the built memory file there."""
    from core.encoders import RapidOcr

    history = synthetic_history(n_rounds, images=images)
    timed = TimedEncoder(encoder)
    ocr = TimedOCR(ocr_engine or RapidOcr())
    with tempfile.TemporaryDirectory(dir=folder) as tmp:
        with Store(Path(tmp) / "m.duckdb") as store:
            deps = make_build_deps(config, cache_con=store.con, text_encoder=timed, ocr=ocr)
            t0, c0 = time.perf_counter(), time.process_time()
            report = build(store, [history], deps, config)
            total, cpu = time.perf_counter() - t0, time.process_time() - c0
            counts = store.con.execute(
                "SELECT count(*) FILTER (WHERE level = 'episode'), count(*) FILTER (WHERE level = 'topic') FROM nodes"
            ).fetchone()
            store.con.execute("CHECKPOINT")
        if keep is not None:
            import shutil

            keep.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(Path(tmp) / "m.duckdb", keep)
    stages = dict(report.stage_seconds)
    desc_floor = batched_seconds(encoder, timed.later_texts)
    embed_floor = timed.calls[0][1] if timed.calls else 0.0  # the embed stage's one call over the round texts
    return {
        "rounds": n_rounds, "seconds": total, "cpu": cpu, "stages": stages, "floor_embed": embed_floor,
        "floor_ocr": ocr.seconds, "floor": embed_floor + ocr.seconds, "texts": timed.calls[0][0] if timed.calls else 0,
        "images": ocr.images, "description_texts": sum(n for n, _ in timed.calls[1:]),
        "description_seconds": sum(s for _, s in timed.calls[1:]), "episodes": counts[0], "topics": counts[1],
        "desc_floor": desc_floor, "exact_ratio": total / (embed_floor + ocr.seconds + desc_floor),
    }


def median_runs(runs: list[dict]) -> dict:
    out = {k: statistics.median(r[k] for r in runs) for k in runs[0] if isinstance(runs[0][k], (int, float))}
    out["stages"] = {s: statistics.median(r["stages"].get(s, 0.0) for r in runs) for s in STAGES}
    out["ratio"] = statistics.median(r["seconds"] / r["floor"] for r in runs if r["floor"] > 0)
    out["exact_ratio"] = statistics.median(r["exact_ratio"] for r in runs)
    return out


def print_row(label: str, m: dict, runs: int) -> None:
    st = m["stages"]
    print(f"{label:28s} {runs:>4d} {m['seconds']:>8.1f} {m['rounds'] / m['seconds']:>7.1f} "
          + " ".join(f"{st[s]:>7.1f}" for s in STAGES)
          + f" {m['floor']:>7.1f} {m['ratio']:>6.2f} {m['floor'] + m['desc_floor']:>7.1f} {m['exact_ratio']:>7.2f}"
          f" {m['cpu']:>6.1f}  (desc texts {m['description_texts']:.0f} in {m['description_seconds']:.1f} s, "
          f"{m['desc_floor']:.1f} s batched; {m['episodes']:.0f} episodes, {m['topics']:.0f} topics)")


def header() -> None:
    print(f"{'build':28s} {'runs':>4s} {'total s':>8s} {'rnd/s':>7s} "
          + " ".join(f"{s[:7]:>7s}" for s in STAGES) + f" {'floor s':>7s} {'ratio':>6s} {'floor+d':>7s} {'ratio+d':>7s} {'cpu s':>6s}")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, nargs="*", default=[1000, 10_000])
    ap.add_argument("--images", action="store_true", help="keep the screenshots (each copy's OCR'd)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--encoder", choices=["minilm", "hash"], default="minilm")
    ap.add_argument("--keep", type=Path, help="keep the last memory built, as KEEP/build_<rounds>.duckdb")
    ap.add_argument("--compare", nargs="*", choices=["description", "centroid"], default=["description", "centroid"],
                    help="hierarchy_compare modes to build with (the first one is reported last)")
    a = ap.parse_args(argv)
    enc = text_encoder(a.encoder)
    header()
    ratios: dict[str, list[float]] = {c: [] for c in a.compare}
    exact: dict[str, list[float]] = {c: [] for c in a.compare}
    for n in a.rounds:
        runs: dict[str, list[dict]] = {c: [] for c in a.compare}
        for k in range(a.runs):
            for c in a.compare:
                last = k == a.runs - 1 and c == a.compare[0]
                runs[c].append(one_build(n, a.images, enc, config=DEFAULT.with_(hierarchy_compare=c),
                                         keep=a.keep / f"build_{n}.duckdb" if a.keep and last else None))
        for c in a.compare:
            m = median_runs(runs[c])
            ratios[c].append(m["ratio"])
            exact[c].append(m["exact_ratio"])
            print_row(f"{n} {'screenshots' if a.images else 'text-only'} {c[:5]}", m, a.runs)
    for c in a.compare:
        print(f"build_floor_ratio_with_descriptions[{c}]={max(exact[c]):.2f}")
    for c in a.compare[1:]:
        print(f"build_floor_ratio[{c}]={max(ratios[c]):.2f}")
    print(f"build_floor_ratio={max(ratios[a.compare[0]]):.2f}")
    print(f"peak resident memory of this process: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


if __name__ == "__main__":
    main()
