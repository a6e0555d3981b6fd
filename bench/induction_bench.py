"""Per-round cost of incremental schema induction vs recounting from scratch.

Synthetic attribute streams: several recurring record types (sleep, glucose,
workout, meals, cards, ...) of 4-7 attributes each, every attribute dropped
with probability 0.1, one of them gaining a new attribute halfway (so
evolution happens), plus noise attributes from a pool of 200 (one in 30% of
the rounds, two in 5%), and 15% of the rounds with noise only.

For each checkpoint N (default 1k, 10k, 100k) it prints:
- incremental: mean and median wall time of core.induction.Inducer.update over
  the `--window` rounds before N (the cost of processing round N);
- recount: wall time of mlxtend's fpgrowth over the first N rounds with
  min_support = θ_s / N (the cost of processing round N by recounting every
  frequent pattern from scratch, before any discovery/evolution logic);
- their ratio.
Targets: recount / incremental >= 100 at 10k; incremental at 100k <= 2x at 1k.

Run: OMP_NUM_THREADS=1 .venv/bin/python bench/induction_bench.py [--rounds 100000]
"""
from __future__ import annotations

import argparse
import gc
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.config import DEFAULT  # noqa: E402
from core.induction import Inducer  # noqa: E402

STREAMS = [
    ["sleep_duration", "deep_sleep", "sleep_score", "resting_heart_rate", "rem_sleep"],
    ["time_range", "meal_variability", "evening_drift", "morning_response", "late_window", "movement_goal"],
    ["workout_minutes", "workout_calories", "avg_heart_rate", "distance_km"],
    ["meal_name", "carbs_g", "protein_g", "fat_g", "meal_calories"],
    ["card_played", "card_rank", "opponent", "game_score"],
    ["weight_kg", "body_fat", "bmi", "muscle_mass"],
]
EVOLVING = 0  # this stream gains an attribute halfway through
NEW_ATTR = "sleep_efficiency"


def synthetic_stream(n: int, seed: int = 7) -> list[tuple[int, frozenset[str]]]:
    rng = random.Random(seed)
    noise = [f"noise_{i:03d}" for i in range(200)]
    out = []
    for t in range(1, n + 1):
        attrs: set[str] = set()
        if rng.random() >= 0.15:
            k = rng.randrange(len(STREAMS))
            base = list(STREAMS[k])
            if k == EVOLVING and t > n // 2:
                base.append(NEW_ATTR)
            attrs = {a for a in base if rng.random() >= 0.1}
        r = rng.random()
        if r < 0.05:
            attrs |= set(rng.sample(noise, 2))
        elif r < 0.35 or not attrs:
            attrs.add(rng.choice(noise))
        out.append((t, frozenset(attrs)))
    return out


def fpgrowth_recount(stream, n: int, theta_s: int, max_len: int) -> tuple[float, int]:
    import pandas as pd
    from mlxtend.frequent_patterns import fpgrowth
    from mlxtend.preprocessing import TransactionEncoder

    transactions = [sorted(a) for _, a in stream[:n]]
    t0 = time.perf_counter()
    te = TransactionEncoder()
    df = pd.DataFrame(te.fit(transactions).transform(transactions), columns=te.columns_)
    res = fpgrowth(df, min_support=theta_s / n, use_colnames=True, max_len=max_len)
    return time.perf_counter() - t0, len(res)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=100_000)
    ap.add_argument("--checkpoints", default="1000,10000,100000")
    ap.add_argument("--window", type=int, default=500)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--no-fpgrowth", action="store_true")
    ap.add_argument("--store-rounds", type=int, default=0,
                    help="also time InductionStore.update (induce + save, one transaction per round) "
                         "for this many rounds on a temporary DuckDB file")
    args = ap.parse_args(argv)
    checkpoints = [int(c) for c in args.checkpoints.split(",") if int(c) <= args.rounds]
    stream = synthetic_stream(args.rounds, args.seed)
    ind = Inducer(DEFAULT)
    times: list[float] = []
    events = {"candidate": 0, "discovered": 0, "evolved": 0}
    gc.disable()  # keep collector pauses out of the per-round figures
    t_all = time.perf_counter()
    for order, attrs in stream:
        t0 = time.perf_counter()
        u = ind.update(order, attrs)
        times.append(time.perf_counter() - t0)
        for e in u.events:
            events[e.kind] += 1
        if order % 20_000 == 0:
            gc.collect()
    total = time.perf_counter() - t_all
    gc.enable()
    print(f"stream: {args.rounds} rounds, {len(STREAMS)} recurring types + 200 noise attributes; "
          f"incremental total {total:.1f}s; patterns tracked {len(ind.state.supports)}; events {events}")
    print("schemas:")
    for sid, attrs in ind.schemas.items():
        print(f"  {sid}: {', '.join(attrs)}")
    print(f"{'rounds':>8} {'incr mean us':>13} {'incr median us':>15} {'recount s':>10} {'itemsets':>9} "
          f"{'recount/incr':>13}")
    base = None
    for n in checkpoints:
        w = times[max(0, n - args.window):n]
        mean, median = statistics.fmean(w), statistics.median(w)
        base = base or mean
        rec, ratio, nsets = float("nan"), float("nan"), 0
        if not args.no_fpgrowth:
            rec, nsets = fpgrowth_recount(stream, n, DEFAULT.theta_s, DEFAULT.max_pattern_attrs)
            ratio = rec / mean
        print(f"{n:>8} {mean * 1e6:>13.1f} {median * 1e6:>15.1f} {rec:>10.3f} {nsets:>9} {ratio:>13.0f}")
    if len(checkpoints) >= 2:
        first = statistics.fmean(times[max(0, checkpoints[0] - args.window):checkpoints[0]])
        last = statistics.fmean(times[max(0, checkpoints[-1] - args.window):checkpoints[-1]])
        print(f"per-round cost at {checkpoints[-1]} / at {checkpoints[0]}: {last / first:.2f}x (target <= 2)")
    if args.store_rounds:
        store_bench(stream[: args.store_rounds])


def store_bench(stream) -> None:
    import tempfile

    from core.induction import InductionStore
    from core.store import Store

    with tempfile.TemporaryDirectory() as d, Store(Path(d) / "bench.duckdb") as store:
        istore = InductionStore(store, DEFAULT)
        times = []
        for order, attrs in stream:
            t0 = time.perf_counter()
            with store.transaction():
                istore.update(order, attrs)
            times.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        InductionStore(store, DEFAULT).load()
        load = time.perf_counter() - t0
        n = len(stream)
        tail = times[-min(500, n):]
        print(f"persisted: {n} rounds, induce+save per round mean {statistics.fmean(times) * 1e3:.2f} ms "
              f"(last {len(tail)}: {statistics.fmean(tail) * 1e3:.2f} ms, median {statistics.median(tail) * 1e3:.2f} ms); "
              f"reload {load:.2f}s")


if __name__ == "__main__":
    main()
