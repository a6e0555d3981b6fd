"""Query-engine latency: p50/p95 per question type, and tool calls vs hand-written DuckDB SQL.

    .venv/bin/python bench/query_bench.py                 # 10k and 100k rows, hashing text encoder
    .venv/bin/python bench/query_bench.py --rows 10000 --minilm   # real MiniLM encoder
    .venv/bin/python bench/query_bench.py --memory M.duckdb [M2.duckdb]   # a built memory, demo questions

Builds a generated memory per size (one analytic table `activity_log` over
two years, one round per row, 2,000 event nodes), then
1. asks questions of each type (aggregate, extreme, count, latest, trend, list,
   event+aggregate, retrieval) several times and prints p50/p95 of `ask`;
2. times each analytic tool call against the same query written directly in
   DuckDB SQL and prints the ratio (tool / direct; validation, evidence units
   and the contributing rows are the overhead). For Compute it also times the
   hand-written SQL that returns what the tool returns (the aggregate with its
   row count, time span and distinct days, plus the first 100 contributing
   rows) and prints that ratio too.
With --memory, instead asks the demo benchmark's questions (data/demo, 130
questions in 16 types) --reps times each against each given built memory
(e.g. a 100k-round synthetic build from build_bench.py --keep, opened
read-only) through the app's engine: MiniLM for the questions, embedding
cache in the file, the hierarchy as retrieval memory; prints p50/p95 per
question type, the first (cold) question apart, and the peak resident memory.
Prints figures only; asserts nothing.
"""
from __future__ import annotations

import argparse
import hashlib
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import duckdb  # noqa: E402

from core.config import DEFAULT  # noqa: E402
from core.planning import QueryEngine  # noqa: E402
from core.planning.context import ContextBuilder  # noqa: E402
from core.planning.retrieval import NodeTableRetrieval  # noqa: E402
from core.planning.tools import Toolbox  # noqa: E402
from core.store import Store  # noqa: E402

N_EVENTS = 2000


class HashEncoder:
    """Bag of hashed words (the same idea as the tests' fake): no model, deterministic."""

    name = "hash"
    dim = 64

    def __init__(self):
        self._cache: dict[str, np.ndarray] = {}

    def _w(self, w: str) -> np.ndarray:
        v = self._cache.get(w)
        if v is None:
            seed = int.from_bytes(hashlib.sha256(w.encode()).digest()[:8], "little")
            v = self._cache[w] = np.random.default_rng(seed).standard_normal(self.dim).astype(np.float32)
        return v

    def encode(self, texts):
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            for w in re.findall(r"[a-z0-9]+", t.lower()):
                out[i] += self._w(w)
            n = np.linalg.norm(out[i])
            out[i] = out[i] / n if n else self._w("<empty>") / np.linalg.norm(self._w("<empty>"))
        return out


def build(path: Path, n: int, encoder) -> None:
    store = Store(path)
    con = store.con
    minutes = max(1, (2 * 365 * 24 * 60) // n)
    con.execute(f"""
        CREATE TABLE activity_log AS SELECT 'S' || (i // 20) || ':R' || (i % 20) AS source, i AS round_order,
            TIMESTAMP '2024-05-01 06:00' + to_minutes(CAST(i * {minutes} AS BIGINT)) AS time,
            NULL::VARCHAR AS captions,
            CAST(55 + (hash(i) % 70) AS DOUBLE) AS heart_rate,
            CAST(hash(i * 7) % 20000 AS DOUBLE) AS steps,
            round(CAST(hash(i * 13) % 1000 AS DOUBLE) / 100, 2) AS distance_km,
            ['walk', 'run', 'bike', 'swim'][1 + CAST(i % 4 AS INTEGER)] AS activity
        FROM range(1, {n} + 1) t(i)""")
    con.execute("""INSERT INTO rounds (round_id, session_id, round_order, index_in_session, time, dialogue, text,
                   content_hash, source)
                   SELECT source, 'S' || (round_order // 20), round_order, 0, time, '[]',
                          'user: ' || activity || ' logged, heart rate ' || heart_rate || ' bpm, '
                          || steps || ' steps', 'h', 'bench' FROM activity_log""")
    con.execute("""INSERT INTO schemas VALUES (1, '["heart_rate","steps","distance_km","activity"]', 'activity_log',
        'Activity tracker records: heart rate, steps, distance and activity type.',
        '[{"name":"heart_rate","dtype":"DOUBLE","unit":"bpm","description":"average heart rate"},
          {"name":"steps","dtype":"DOUBLE","unit":"steps","description":"step count"},
          {"name":"distance_km","dtype":"DOUBLE","unit":"km","description":"distance covered"},
          {"name":"activity","dtype":"VARCHAR","unit":null,"description":"activity type"}]', 1, 1)""")
    con.execute("CREATE VIEW memory_tables AS SELECT table_name, description, "
                "(SELECT count(*) FROM activity_log) AS n_rows FROM schemas")
    # a retrieval memory of N_EVENTS events (a few story rounds among them)
    rows = con.execute(f"SELECT round_id, text, time, round_order FROM rounds ORDER BY round_order "
                       f"LIMIT {N_EVENTS}").fetchall()
    stories = {50: "I ran the city half marathon today with my brother.",
               900: "We adopted a dog called Pepper from the shelter."}
    texts = [stories.get(i, r[1]) for i, r in enumerate(rows)]
    embs = encoder.encode(texts)
    con.executemany(
        "INSERT INTO nodes (node_id, level, description, text_emb, t_start, t_end, first_order, last_order, "
        "n_members, closed, round_id) VALUES (?, 'event', ?, ?, ?, ?, ?, ?, 1, true, ?)",
        [(f"ev{i}", texts[i], embs[i].tolist(), r[2], r[2], r[3], r[3], r[0]) for i, r in enumerate(rows)])
    store.close()


QUESTIONS = {
    "aggregate": ["What was my average heart rate in March?", "How many steps did I take in total last month?",
                  "What was my mean distance in the first two weeks of February?"],
    "extreme": ["Which day did I walk the most steps?", "When was my highest heart rate?",
                "What was my longest distance?"],
    "count": ["How many times did I go swimming?", "How many runs did I log in January?",
              "How many days did I walk more than 15000 steps?"],
    "latest": ["What was my most recent heart rate?", "What was my latest step count?"],
    "trend": ["How has my heart rate changed over time?", "Is my step count trending up since March?"],
    "list": ["Which days did I run more than 9 km in April?"],
    "event+aggregate": ["What was my heart rate on the day I ran the half marathon?",
                        "How many steps did I take on the day we adopted the dog?"],
    "retrieval": ["What is the name of the dog we adopted?", "Who did I run the half marathon with?"],
}


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def time_ms(fn, reps):
    out = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t0) * 1000)
    return out


def bench(n: int, encoder, reps: int) -> None:
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "bench.duckdb"
        t0 = time.perf_counter()
        build(path, n, encoder)
        print(f"\n== {n:,} rows (built in {time.perf_counter() - t0:.1f} s), encoder {encoder.name}")
        con = duckdb.connect(str(path))
        eng = QueryEngine(con, encoder, DEFAULT)
        eng.ask("warm up the caches")
        print(f"{'question type':18s} {'n':>4s} {'p50 ms':>8s} {'p95 ms':>8s}  example answer")
        for kind, qs in QUESTIONS.items():
            lat, example = [], ""
            for q in qs:
                for _ in range(reps):
                    t = eng.ask(q)
                    lat.append(t.total_ms)
                example = example or f"{q} -> {t.answer.text[:60]}"
            print(f"{kind:18s} {len(lat):4d} {pct(lat, 50):8.1f} {pct(lat, 95):8.1f}  {example}")
        ctx = ContextBuilder(con, encoder, DEFAULT)
        snapshot = ctx.catalog()  # as in the engine: one metadata snapshot per question
        box = Toolbox(con, lambda: snapshot, NodeTableRetrieval(con, encoder), DEFAULT)
        day = ["2025-03-01", "2025-03-31"]
        cases = [
            ("Compute avg + time filter",
             ("Compute", {"table": "activity_log", "target_column_expression": "heart_rate", "operator": "avg",
                          "optional_column_filters": [{"column": "time", "op": "between", "value": day}]}),
             ("SELECT avg(heart_rate) FROM activity_log WHERE CAST(time AS DATE) BETWEEN ? AND ?", day)),
            ("Compute count + category",
             ("Compute", {"table": "activity_log", "target_column_expression": "*", "operator": "count",
                          "optional_column_filters": [{"column": "activity", "op": "=", "value": "swim"}]}),
             ("SELECT count(*) FROM activity_log WHERE activity = ?", ["swim"])),
            ("Compute change",
             ("Compute", {"table": "activity_log", "target_column_expression": "steps", "operator": "change"}),
             ("SELECT last(steps ORDER BY time) - first(steps ORDER BY time) FROM activity_log", [])),
            ("Rank top 5",
             ("Rank", {"table": "activity_log", "target_column_expression": "steps", "order": "desc",
                       "result_budget": 5}),
             ("SELECT * FROM activity_log ORDER BY steps DESC LIMIT 5", [])),
            ("Filter 2 predicates",
             ("Filter", {"table": "activity_log", "result_budget": 10, "column_filters": [
                 {"column": "distance_km", "op": ">", "value": 9}, {"column": "time", "op": "between", "value": day}]}),
             ("SELECT * FROM activity_log WHERE distance_km > ? AND CAST(time AS DATE) BETWEEN ? AND ? "
              "ORDER BY time LIMIT 10", [9] + day)),
            ("Lookup by key",
             ("Lookup", {"table": "activity_log", "key_values": {"activity": "bike"}, "result_budget": 10}),
             ("SELECT * FROM activity_log WHERE activity = ? ORDER BY time LIMIT 10", ["bike"])),
        ]
        # What Compute returns beyond the bare aggregate (row count, time span, distinct days and up to
        # 100 contributing rows), written by hand: the aggregate query plus the rows query.
        def same_outputs(agg: str, where: str, params: list, order: str = "time, round_order"):
            return [(f"SELECT {agg}, count(*), min(time), max(time), count(DISTINCT CAST(time AS DATE)) "
                     f"FROM activity_log{where}", params),
                    (f"SELECT source, time, steps FROM activity_log{where} ORDER BY {order} LIMIT 100", params)]

        between = " WHERE CAST(time AS DATE) BETWEEN ? AND ?"
        full = {"Compute avg + time filter": same_outputs("avg(heart_rate)", between, day),
                "Compute count + category": same_outputs("count(*)", " WHERE activity = ?", ["swim"]),
                "Compute change": same_outputs("last(steps ORDER BY time) - first(steps ORDER BY time)", "", [])}
        reps_t = max(reps * 20, 40)
        print(f"{'tool call':28s} {'tool p50':>9s} {'SQL p50':>9s} {'ratio':>6s} {'same-output SQL':>16s} {'ratio':>6s}")
        for name, (tool, args), (sql, params) in cases:
            box.call(tool, args, 10)
            # interleaved, so that a load change hits the tool and the SQL alike
            tool_ms, sql_ms, full_ms = [], [], []
            for _ in range(reps_t):
                tool_ms += time_ms(lambda: box.call(tool, args, 10), 1)
                sql_ms += time_ms(lambda: con.execute(sql, params).fetchall(), 1)
                if name in full:
                    full_ms += time_ms(lambda: [con.execute(q, p).fetchall() for q, p in full[name]], 1)
            a, b = statistics.median(tool_ms), statistics.median(sql_ms)
            extra = f" {statistics.median(full_ms):14.2f}ms {a / statistics.median(full_ms):6.2f}" if full_ms else ""
            print(f"{name:28s} {a:8.2f}ms {b:8.2f}ms {a / b:6.2f}{extra}")
        con.close()


def bench_memory(path: Path, reps: int, per_type: int | None = None) -> None:
    """p50/p95 of `ask` per demo question type on a built memory (MiniLM, read-only)."""
    import os
    import resource
    from collections import defaultdict

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import torch

    from core.encoders import CachedTextEncoder, MiniLMEncoder, image_encoder_from_config, load_minilm
    from core.formats import read_file
    from core.query import make_engine

    torch.set_num_threads(1)
    qas = read_file(ROOT / "data" / "demo" / "demo.json")[0].qas
    if per_type:
        seen: dict[str, int] = defaultdict(int)
        keep = []
        for qa in qas:
            seen[qa.qtype] += 1
            if seen[qa.qtype] <= per_type:
                keep.append(qa)
        qas = keep
    store = Store(path, read_only=True)
    try:
        t0 = time.perf_counter()
        text = CachedTextEncoder(MiniLMEncoder(load_minilm()), store.con)
        eng = make_engine(store, DEFAULT, text_encoder=text, image_encoder=image_encoder_from_config(None, None))
        meta = dict(store.con.execute("SELECT key, value FROM meta WHERE key = 'text_encoder'").fetchall())
        rounds = store.con.execute("SELECT count(*) FROM rounds").fetchone()[0]
        cold = eng.ask(qas[0].question).total_ms
        print(f"\n== {path.name}: {rounds:,} rounds, stored embeddings from {meta.get('text_encoder', '?')}; "
              f"engine ready in {time.perf_counter() - t0:.1f} s, first question {cold:.0f} ms")
        lat: dict[str, list[float]] = defaultdict(list)
        for _ in range(reps):
            for qa in qas:
                lat[qa.qtype or "other"].append(eng.ask(qa.question).total_ms)
        print(f"{'question type':18s} {'n':>4s} {'p50 ms':>8s} {'p95 ms':>8s}")
        for kind, xs in sorted(lat.items()):
            print(f"{kind:18s} {len(xs):4d} {pct(xs, 50):8.1f} {pct(xs, 95):8.1f}")
        every = [x for xs in lat.values() for x in xs]
        print(f"{'all':18s} {len(every):4d} {pct(every, 50):8.1f} {pct(every, 95):8.1f}")
        print(f"text encoder: {text.calls} MiniLM call(s), {text.hits} cache hit(s)")
    finally:
        store.close()
    print(f"peak resident memory of this process: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, nargs="*", default=[10_000, 100_000])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--minilm", action="store_true", help="use the real MiniLM text encoder")
    ap.add_argument("--memory", type=Path, nargs="*", help="built memories to ask the demo questions of")
    ap.add_argument("--per-type", type=int, help="with --memory: at most this many questions per type")
    a = ap.parse_args()
    if a.memory:
        for m in a.memory:
            bench_memory(m, a.reps, a.per_type)
        return
    if a.minilm:
        import torch

        torch.set_num_threads(1)
        from core.encoders.text import MiniLMEncoder, load_minilm

        encoder = MiniLMEncoder(load_minilm())
    else:
        encoder = HashEncoder()
    for n in a.rows:
        bench(n, encoder, a.reps)


if __name__ == "__main__":
    main()
