"""Growth: the cost of adding 100 rounds to a small memory and to a large one.

    OMP_NUM_THREADS=1 .venv/bin/python bench/growth_bench.py [--sizes 1000 10000 100000] [--add 100] [--reps 3]

For each size, builds a base memory of that many synthetic rounds once
(bench/synthetic.py, text-only, the 384-d hashing encoder so that large bases
build in minutes), then --reps times copies it and times one build call that
adds the next --add rounds (a new process state each time: the hierarchy,
induction and materializer reload what they need from the file). Prints the
median time per size, its ratio to the smallest size (target <= 2: nothing is
rebuilt) and the per-round induction and hierarchy cost, and the peak resident
memory of the process. The encoder is the hashing one on purpose: the model's
cost per added round is the same at every size, so leaving it out makes the
ratio stricter.
"""
from __future__ import annotations

import argparse
import resource
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from synthetic import HashTextEncoder, synthetic_history  # noqa: E402

from core.build import BuildDeps, build  # noqa: E402
from core.config import DEFAULT  # noqa: E402
from core.encoders.descriptor import DescriptorImageEncoder  # noqa: E402
from core.extract import RuleExtractor  # noqa: E402
from core.store import Store  # noqa: E402


class NoOCR:
    name = "none"

    def read(self, image, **kw):
        raise AssertionError("text-only histories have no images")


def deps(encoder) -> BuildDeps:
    return BuildDeps(text_encoder=encoder, image_encoder=DescriptorImageEncoder(), ocr=NoOCR(),
                     extractor=RuleExtractor(DEFAULT))


def base_memory(folder: Path, n: int, encoder) -> tuple[Path, float]:
    path = folder / f"base{n}.duckdb"
    t0 = time.perf_counter()
    with Store(path) as s:
        build(s, [synthetic_history(n, name="growth")], deps(encoder), DEFAULT)
    return path, time.perf_counter() - t0


def add_rounds(base: Path, n_base: int, add: int, encoder, folder: Path) -> dict:
    path = folder / "grow.duckdb"
    for p in (path, Path(str(path) + ".wal")):
        p.unlink(missing_ok=True)
    shutil.copy(base, path)
    history = synthetic_history(add, skip=n_base, name="growth")
    t0 = time.perf_counter()
    with Store(path) as s:
        report = build(s, [history], deps(encoder), DEFAULT)
    seconds = time.perf_counter() - t0
    assert report.rounds_added == add, report
    return {"seconds": seconds, **dict(report.stage_seconds)}


def run(sizes: list[int], add: int, reps: int, folder: Path | None = None) -> dict[int, dict]:
    """Median figures per base size: seconds, induce_ms (per round), hierarchy_ms, base_build_s."""
    encoder = HashTextEncoder()
    out: dict[int, dict] = {}
    with tempfile.TemporaryDirectory(dir=folder) as tmp:
        tmp = Path(tmp)
        for n in sizes:
            base, built = base_memory(tmp, n, encoder)
            runs = [add_rounds(base, n, add, encoder, tmp) for _ in range(reps)]
            out[n] = {
                "seconds": statistics.median(r["seconds"] for r in runs),
                "induce_ms": 1000 * statistics.median(r["induce"] for r in runs) / add,
                "hierarchy_ms": 1000 * statistics.median(r["hierarchy"] for r in runs) / add,
                "materialize_ms": 1000 * statistics.median(r["materialize"] for r in runs) / add,
                "base_build_s": built,
            }
            base.unlink()
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", type=int, nargs="*", default=[1000, 10_000])
    ap.add_argument("--add", type=int, default=100)
    ap.add_argument("--reps", type=int, default=3)
    a = ap.parse_args(argv)
    res = run(a.sizes, a.add, a.reps)
    first = res[a.sizes[0]]["seconds"]
    print(f"{'base rounds':>11s} {'base build s':>12s} {'+' + str(a.add) + ' rounds s':>14s} {'ratio':>6s} "
          f"{'induce ms/rnd':>13s} {'hier ms/rnd':>11s} {'mater ms/rnd':>12s}")
    for n, m in res.items():
        print(f"{n:>11d} {m['base_build_s']:>12.1f} {m['seconds']:>14.2f} {m['seconds'] / first:>6.2f} "
              f"{m['induce_ms']:>13.2f} {m['hierarchy_ms']:>11.2f} {m['materialize_ms']:>12.2f}")
    print(f"growth_ratio={res[max(res)]['seconds'] / res[min(res)]['seconds']:.2f}")
    print(f"peak resident memory of this process: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


if __name__ == "__main__":
    main()
