"""Did induction turn every recurring record stream into a table? (issue target, demo ground truth)

For each ground-truth stream (each recurring record kind of a history) the
table holding most of the stream's rounds is its table; a round counts as
found with the right values when its row holds every ground-truth value of
that round (numbers within 1% or 0.01, durations in hours also accepted in
minutes; text values case-insensitively, "me"/"I" accepted for the user).
A table none of whose rows belongs to any stream is a distractor table.

    python -m core.evaluation.tables --store data/demo.duckdb --truth data/demo/truth.json
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict

import duckdb

SELF_WORDS = {"i", "me", "my", "myself", "user", "you"}


def _num_match(truth: float, got: object, unit: str) -> bool:
    if not isinstance(got, (int, float)):
        return False
    candidates = [float(truth)] + ([float(truth) * 60.0] if unit == "h" else [])
    return any(abs(float(got) - c) <= max(0.01, 0.01 * abs(c)) for c in candidates)


def _text_match(truth: str, got: object) -> bool:
    if not isinstance(got, str):
        return False
    t, g = truth.strip().lower(), got.strip().lower()
    if t == g or (t in SELF_WORDS and g in SELF_WORDS):
        return True
    return t.rstrip("s") == g.rstrip("s")


def _value_found(obs: dict, row: dict) -> bool:
    values = [v for k, v in row.items() if k not in ("source", "round_order", "time", "captions", "_obs")]
    if isinstance(obs["value"], (int, float)):
        return any(_num_match(obs["value"], v, obs.get("unit", "")) for v in values)
    return any(_text_match(str(obs["value"]), v) for v in values)


def stream_coverage(con: duckdb.DuckDBPyConnection, truth: dict) -> dict:
    """Per stream: its table, rows found, rows with every value right, coverage; plus distractor tables."""
    tables = [r[0] for r in con.execute("SELECT table_name FROM memory_tables ORDER BY table_name").fetchall()]
    rows_by_table: dict[str, dict[str, dict]] = {}
    for t in tables:
        cur = con.execute(f'SELECT * FROM "{t}"')  # names come from memory_tables, not from input
        cols = [d[0] for d in cur.description]
        rows_by_table[t] = {r[0]: dict(zip(cols, r)) for r in cur.fetchall()}
    obs_by_round: dict[str, list[dict]] = defaultdict(list)
    for o in truth["observations"]:
        obs_by_round[o["round"]].append(o)
    out: dict = {"streams": {}, "distractor_tables": []}
    stream_rounds = {s: set(rs) for s, rs in truth["streams"].items()}
    for stream, rounds in sorted(stream_rounds.items()):
        best = max(tables, key=lambda t: len(rounds & set(rows_by_table[t])), default=None)
        found = rounds & set(rows_by_table[best]) if best else set()
        right = sum(all(_value_found(o, rows_by_table[best][r]) for o in obs_by_round[r]) for r in found)
        out["streams"][stream] = {
            "table": best, "rounds": len(rounds), "rows_found": len(found), "rows_right": right,
            "coverage": round(right / len(rounds), 4) if rounds else None,
        }
    all_stream_rounds = set().union(*stream_rounds.values()) if stream_rounds else set()
    out["distractor_tables"] = [t for t in tables if not (set(rows_by_table[t]) & all_stream_rounds)]
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m core.evaluation.tables", description=__doc__.splitlines()[0])
    p.add_argument("--store", required=True)
    p.add_argument("--truth", default="data/demo/truth.json")
    args = p.parse_args(argv)
    truth = json.load(open(args.truth))
    con = duckdb.connect(args.store, read_only=True)
    try:
        res = stream_coverage(con, truth)
    finally:
        con.close()
    for s, r in res["streams"].items():
        print(f"{s:>8}: table {r['table']}  rows {r['rows_found']}/{r['rounds']}  right values "
              f"{r['rows_right']}/{r['rounds']}  coverage {r['coverage']:.3f}")
    print("distractor tables:", ", ".join(res["distractor_tables"]) or "none")
    ok = all((r["coverage"] or 0) >= 0.95 for r in res["streams"].values()) and not res["distractor_tables"]
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
