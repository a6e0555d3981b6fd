"""Generalization suite: histories from bench/histgen built with the real engine, scored per domain.

    OMP_NUM_THREADS=1 .venv/bin/python bench/generalization.py --domains 4 --seed 1
    .venv/bin/python bench/generalization.py --domain aquarium fuel --rounds 80 --images 10 --out /tmp/gen
    .venv/bin/python bench/generalization.py --domains 2 --questions --json /tmp/gen.json
    .venv/bin/python bench/generalization.py --mem-gallery [DIR]

Each history is generated into DIR/<domain>-<seed>/ and built exactly as a user would:
`python -m core build history.json --store memory.duckdb` (a subprocess, once per history).
The score reads only the public contract of the memory file: the view
`memory_tables(table_name, description, n_rows)` and, in each analytic table, `source` (round
id) beside one column per attribute (contract columns such as round_order, time, captions,
modality and `_`-prefixed columns are not attributes). Figures per history:

- values_in_table: share of truth record values found in a row whose source is the record's
  round (numbers within 1 % or 0.01 after a unit factor of the value's dimension: min/h/s,
  g/kg, ml/L/m3, %/fraction; text case-insensitively, equal or contained);
- stream_coherence: per stream, the largest share of its records with a row in ONE table,
  averaged over streams weighted by records;
- field_coherence: per (stream, quantity), the largest share of its values found in ONE
  (table, column), weighted by values;
- recordless_rows: share of all analytic rows whose source round holds no truth record;
- tables / streams: counts, and every table's name and description.
With --questions: the engine's own `python -m core eval` over the generated questions
(accuracy per query type and per domain, from summary.json).
"""
from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.histgen import DOMAIN_NAMES, generate  # noqa: E402

NON_ATTRIBUTES = {"source", "round_order", "time", "captions", "modality"}
TIME_UNITS = {"min", "h", "s", "days"}
MASS_VOLUME = {"g", "kg", "ml", "L", "m3"}
MEM_GALLERY = ROOT.parent / "shared" / "data" / "mem-gallery"
ENGINE = {"root": Path(os.environ.get("GENERALIZATION_ENGINE") or ROOT), "build_args": []}  # where `python -m core` runs from (--engine: another checkout, e.g. a clean HEAD)


def factors(unit: str) -> tuple[float, ...]:
    """Unit factors a stored number may carry relative to the canonical value."""
    if unit in ("min", "h", "s"):
        return (1.0, 60.0, 1 / 60, 3600.0, 1 / 3600)
    if unit in MASS_VOLUME:
        return (1.0, 1000.0, 0.001, 1e6, 1e-6)
    if unit == "%":
        return (1.0, 0.01)
    return (1.0,)


def number_matches(stored, value: float, unit: str) -> bool:
    if isinstance(stored, bool) or stored is None:
        return False
    if not isinstance(stored, (int, float)):
        try:
            stored = float(str(stored).strip().replace(",", ""))
        except ValueError:
            return False
    for f in factors(unit):
        want = value * f
        if abs(float(stored) - want) <= max(0.01, 0.01 * abs(want)):
            return True
    return False


def _norm(s: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", str(s).lower()).split())


def text_matches(stored, value: str) -> bool:
    if stored is None or isinstance(stored, (int, float)):
        return False
    a, b = _norm(stored), _norm(value)
    return bool(b) and (a == b or f" {b} " in f" {a} ")


def value_matches(stored, obs: dict) -> bool:
    v = obs["value"]
    if isinstance(v, str):
        return text_matches(stored, v)
    return number_matches(stored, float(v), obs.get("unit", ""))


# ------------------------------------------------------------------ reading the memory

def read_tables(con) -> list[dict]:
    """[{name, description, n_rows, columns: [attribute names], rows: [{column: value}]}] via the contract."""
    out = []
    for name, desc, n in con.execute("SELECT table_name, description, n_rows FROM memory_tables ORDER BY table_name").fetchall():
        cur = con.execute(f'SELECT * FROM "{name}"')
        cols = [c[0] for c in cur.description]
        rows = [dict(zip(cols, r)) for r in cur.fetchall()]
        attrs = [c for c in cols if c not in NON_ATTRIBUTES and not c.startswith("_")]
        out.append({"name": name, "description": desc, "n_rows": n, "columns": attrs, "rows": rows})
    return out


def score_tables(tables: list[dict], truth: dict) -> dict:
    """The figures of one memory against its truth (pure; `tables` as read_tables returns them)."""
    by_source: dict[str, list[tuple[str, dict]]] = defaultdict(list)
    for t in tables:
        for row in t["rows"]:
            by_source[str(row.get("source"))].append((t["name"], {c: row.get(c) for c in t["columns"]}))
    obs = truth["observations"]
    found = 0
    field_hits: dict[tuple[str, str], dict[tuple[str, str], int]] = defaultdict(lambda: defaultdict(int))
    field_n: dict[tuple[str, str], int] = defaultdict(int)
    missed = []
    for o in obs:
        key = (o["stream"], o["quantity"])
        field_n[key] += 1
        hit = False
        for tname, vals in by_source.get(o["round"], ()):
            for col, v in vals.items():
                if value_matches(v, o):
                    field_hits[key][(tname, col)] += 1
                    hit = True
        found += hit
        if not hit:
            missed.append(o)
    stream_best, stream_n, stream_table = 0, 0, {}
    for s, rounds in truth["streams"].items():
        if not rounds:
            continue
        per = defaultdict(int)
        for r in rounds:
            for tname in {t for t, _ in by_source.get(r, ())}:
                per[tname] += 1
        best = max(per.items(), key=lambda kv: kv[1]) if per else (None, 0)
        noun = truth.get("plans", {}).get(s, {}).get("noun", "")
        stream_table[s] = {"table": best[0], "share": best[1] / len(rounds), "records": len(rounds),
                           "named": names_record(best[0], noun) if noun else None}
        stream_best += best[1]
        stream_n += len(rounds)
    field_best, field_total, field_col = 0, 0, {}
    for key, n in field_n.items():
        hits = field_hits.get(key, {})
        best = max(hits.items(), key=lambda kv: kv[1]) if hits else (None, 0)
        field_col[f"{key[0]}.{key[1]}"] = {"column": f"{best[0][0]}.{best[0][1]}" if best[0] else None,
                                           "share": best[1] / n, "values": n}
        field_best += best[1]
        field_total += n
    record_rounds = {r for r, m in truth["rounds"].items() if m.get("kind") == "record"}
    all_rows = [(t["name"], str(row.get("source"))) for t in tables for row in t["rows"]]
    recordless = [x for x in all_rows if x[1] not in record_rounds]
    # a table holding two streams (one kind of record joined with another): its rows of the streams it
    # mostly does not hold are mixed in; stream coherence cannot see this (both streams land in one table)
    stream_of = {r: m.get("stream") for r, m in truth["rounds"].items() if m.get("kind") == "record"}
    per_table: dict[str, Counter] = defaultdict(Counter)
    for tname, src in all_rows:
        if stream_of.get(src):
            per_table[tname][stream_of[src]] += 1
    kept = sum(sum(c.values()) for c in per_table.values())
    mixed = sum(sum(c.values()) - max(c.values()) for c in per_table.values())
    named = [st["named"] for st in stream_table.values() if st["named"] is not None]
    return {
        "values_in_table": found / len(obs) if obs else 0.0,
        "named": sum(named) / len(named) if named else None,
        "stream_coherence": stream_best / stream_n if stream_n else 0.0,
        "field_coherence": field_best / field_total if field_total else 0.0,
        "recordless_rows": len(recordless) / len(all_rows) if all_rows else 0.0,
        "mixed_rows": mixed / kept if kept else 0.0, "n_kept": kept,
        "tables": len(tables),
        "streams": len([s for s, r in truth["streams"].items() if r]),
        "n_values": len(obs), "n_found": found, "n_rows": len(all_rows), "n_recordless": len(recordless),
        "table_list": [{"name": t["name"], "description": t["description"], "n_rows": t["n_rows"],
                        "columns": t["columns"]} for t in tables],
        "stream_table": stream_table,
        "field_column": field_col,
        "missed": missed,
        "recordless_sources": sorted({s for _, s in recordless}),
    }


def extraction_diagnostics(con, truth: dict, missed: list[dict]) -> dict | None:
    """Beyond the contract, for diagnosis only: the engine's internal `observations` table (skipped
    when its layout differs). Share of truth values extracted at all (any attribute of the round),
    identifiers that became numbers, and what was extracted in the rounds of missed values."""
    try:
        rows = con.execute("SELECT round_id, attribute, raw_value, number, unit, text_value FROM observations "
                           "ORDER BY round_id, seq").fetchall()
    except Exception:
        return None
    by_round: dict[str, list[tuple]] = defaultdict(list)
    for rid, attr, raw, num, unit, text in rows:
        by_round[rid].append((attr, raw, num, unit, text))

    def seen(o: dict) -> bool:
        for attr, raw, num, unit, text in by_round.get(o["round"], ()):
            if isinstance(o["value"], str):
                if text_matches(text or raw or "", o["value"]):
                    return True
            elif num is not None and number_matches(num, float(o["value"]), o.get("unit", "")):
                return True
        return False

    obs = truth["observations"]
    extracted = sum(seen(o) for o in obs)
    by_where = {w: [o for o in obs if o["where"] == w] for w in ("text", "image")}
    ident_numbers = []
    for ident in truth.get("identifiers", []):
        digits = [int(x) for x in re.findall(r"\d{4,}", ident["text"])]
        for attr, raw, num, unit, text in by_round.get(ident["round"], ()):
            if num is not None and any(abs(num - d) < 0.5 for d in digits):
                ident_numbers.append(f"{ident['round']} {ident['text']!r} -> {attr}={raw}")
    record_rounds = {r for r, m in truth["rounds"].items() if m.get("kind") == "record"}
    return {
        "extracted": extracted / len(obs) if obs else 0.0,
        "extracted_text": (sum(seen(o) for o in by_where["text"]) / len(by_where["text"])) if by_where["text"] else None,
        "extracted_image": (sum(seen(o) for o in by_where["image"]) / len(by_where["image"])) if by_where["image"] else None,
        "attributes": len({a for rid in by_round for a, *_ in by_round[rid]}),
        "observations_outside_records": sum(len(v) for r, v in by_round.items() if r not in record_rounds),
        "identifiers_as_numbers": ident_numbers,
        "at_missed": {o["round"]: [f"{a}={raw}" for a, raw, *_ in by_round.get(o["round"], ())] for o in missed},
    }


def score_store(store: str | Path, truth: dict) -> dict:
    import duckdb

    con = duckdb.connect(str(store), read_only=True)
    try:
        m = score_tables(read_tables(con), truth)
        m["diagnostics"] = extraction_diagnostics(con, truth, m["missed"])
        return m
    finally:
        con.close()


# ------------------------------------------------------------------ running the engine

def _env() -> dict:
    env = dict(os.environ)
    env.setdefault("OMP_NUM_THREADS", "1")
    env.setdefault("HF_HUB_OFFLINE", "1")
    env.setdefault("TRANSFORMERS_OFFLINE", "1")
    root = str(ENGINE["root"])
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def run_core(args: list[str], timeout: float = 3600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "core", *args], cwd=ENGINE["root"], env=_env(), capture_output=True,
                          text=True, timeout=timeout)


def build(history: str | Path, store: str | Path) -> tuple[float, str]:
    """`python -m core build HISTORY --store STORE --quiet`; (seconds, summary line). Raises on failure."""
    t0 = time.perf_counter()
    p = run_core(["build", str(history), "--store", str(store), "--quiet", *ENGINE["build_args"]],
                 timeout=6 * 3600)
    if p.returncode != 0:
        raise RuntimeError(f"build of {history} failed (exit {p.returncode}): {(p.stderr or p.stdout).strip()[-2000:]}")
    return time.perf_counter() - t0, p.stdout.strip().splitlines()[-1] if p.stdout.strip() else ""


def evaluate(history: str | Path, store: str | Path, out: str | Path) -> dict:
    p = run_core(["eval", str(history), "--out", str(out), "--store", str(store), "--quiet"])
    if p.returncode != 0:
        raise RuntimeError(f"eval of {history} failed (exit {p.returncode}): {(p.stderr or p.stdout).strip()[-2000:]}")
    summary = json.loads((Path(out) / "summary.json").read_text())
    preds = []
    pred_path = Path(out) / "predictions.jsonl"
    if pred_path.exists():
        preds = [json.loads(x) for x in pred_path.read_text().splitlines() if x.strip()]
    return {"summary": summary, "predictions": preds}


# ------------------------------------------------------------------ printing

def fmt_line(name: str, m: dict) -> str:
    named = f" named={m['named']:.2f}" if m.get("named") is not None else ""
    return (f"domain={name} values_in_table={m['values_in_table']:.2f} stream_coherence={m['stream_coherence']:.2f} "
            f"field_coherence={m['field_coherence']:.2f} recordless_rows={m['recordless_rows']:.2f} "
            f"mixed_rows={m.get('mixed_rows', 0.0):.2f} "
            f"tables={m['tables']} streams={m['streams']}{named}")


# Heads of the generator's record nouns that say what kind of occasion, not what about ("light reading",
# "tyre check"): a table name needs another word of the noun to count as named for the stream.
_OCCASION_HEADS = {"reading", "check", "session", "report", "count", "day", "exercise", "feed", "refill",
                   "test", "change", "cycle", "purchase", "job"}


def names_record(table: str | None, noun: str) -> bool:
    """Whether a table's name says a word of what the history's owner calls one record ("lake survey"
    -> lake_survey_log, lake_log; "tyre check" -> tyre_log, not check_log). Words match on their first
    five letters ("fertilizing"/"fertilizer" no, "tyres"/"tyre" yes)."""
    if not table:
        return False

    def key(w: str) -> str:
        return w.lower().rstrip("s")[:5]
    words = [w for w in re.split(r"[^a-z]+", noun.lower()) if len(w) >= 3]
    heads = [w for w in words if w not in _OCCASION_HEADS] or words
    mine = {key(w) for w in table.lower().split("_") if len(w) >= 3 and w != "log"}
    return any(key(w) in mine for w in heads)


def pooled(results: list[dict]) -> dict:
    def wsum(key, n_key):
        n = sum(r["metrics"][n_key] for r in results)
        return sum(r["metrics"][key] * r["metrics"][n_key] for r in results) / n if n else 0.0
    recs = [sum(s["records"] for s in r["metrics"]["stream_table"].values()) for r in results]
    vals = [sum(f["values"] for f in r["metrics"]["field_column"].values()) for r in results]
    return {
        "values_in_table": wsum("values_in_table", "n_values"),
        "stream_coherence": (sum(r["metrics"]["stream_coherence"] * n for r, n in zip(results, recs)) / sum(recs)) if sum(recs) else 0.0,
        "field_coherence": (sum(r["metrics"]["field_coherence"] * n for r, n in zip(results, vals)) / sum(vals)) if sum(vals) else 0.0,
        "recordless_rows": wsum("recordless_rows", "n_rows"),
        "mixed_rows": wsum("mixed_rows", "n_kept"),
        "tables": sum(r["metrics"]["tables"] for r in results),
        "streams": sum(r["metrics"]["streams"] for r in results),
        "named": _named_share(results),
    }


def _named_share(results: list[dict]) -> float | None:
    flags = [st["named"] for r in results for st in r["metrics"]["stream_table"].values()
             if st.get("named") is not None]
    return sum(flags) / len(flags) if flags else None


def print_details(r: dict, out=None, max_missed: int = 8) -> None:
    out = out or sys.stdout
    m = r["metrics"]
    p = lambda *a: print(*a, file=out)  # noqa: E731
    p(f"  {r['domain']} seed={r['seed']} rounds={r['rounds']} images={r['images']} build={r['build_s']:.0f}s")
    for t in m["table_list"]:
        p(f"    table {t['name']} ({t['n_rows']} rows) [{', '.join(t['columns'])}]: {t['description']}")
    for s, st in m["stream_table"].items():
        plan = r["plans"].get(s, {})
        p(f"    stream {s} ({st['records']} records, {plan.get('modality')}, {plan.get('policy')}) -> "
          f"{st['table']} {st['share']:.2f}")
    for f, fc in m["field_column"].items():
        p(f"      field {f} ({fc['values']}) -> {fc['column']} {fc['share']:.2f}")
    dg = m.get("diagnostics")
    if dg:
        f = lambda x: "-" if x is None else f"{x:.2f}"  # noqa: E731
        p(f"    extracted at all (internal observations): {f(dg['extracted'])} (text {f(dg['extracted_text'])}, "
          f"image {f(dg['extracted_image'])}); {dg['attributes']} attributes; "
          f"{dg['observations_outside_records']} observations in record-less rounds")
        for x in dg["identifiers_as_numbers"][:5]:
            p(f"    identifier became a number: {x}")
    if m["missed"]:
        p(f"    missed values ({len(m['missed'])}), e.g.:")
        step = max(1, len(m["missed"]) // max_missed)
        for o in m["missed"][::step][:max_missed]:
            got = (dg or {}).get("at_missed", {}).get(o["round"])
            p(f"      {o['round']} {o['where']} {o['stream']}.{o['quantity']}: label {o['label']!r} display {o['display']!r}"
              + (f"  | extracted: {', '.join(got[:6]) or 'nothing'}" if got is not None else ""))
    if m["recordless_sources"]:
        p(f"    rows from record-less rounds: {', '.join(m['recordless_sources'][:12])}"
          f"{' ...' if len(m['recordless_sources']) > 12 else ''}")


# ------------------------------------------------------------------ suites

def run_history(domain: str, seed: int, out: Path, rounds: int | None, images: int | None,
                questions: bool, log=None) -> dict:
    hdir = out / f"{domain}-{seed}"
    if hdir.exists():
        shutil.rmtree(hdir)
    truth = generate(hdir, seed=seed, domain=domain, rounds=rounds, images=images, questions=questions)
    store = hdir / "memory.duckdb"
    secs, summary = build(truth["path"], store)
    res = {"domain": domain, "seed": seed, "dir": str(hdir), "store": str(store), "build_s": secs,
           "build_summary": summary, "rounds": len(truth["rounds"]), "images": len(truth["renders"])
           + sum(1 for m in truth["rounds"].values() if m["kind"] == "photo"),
           "plans": truth["plans"], "metrics": score_store(store, truth)}
    if questions:
        ev = evaluate(truth["path"], store, hdir / "eval")
        s = ev["summary"]
        res["questions"] = {"n": s.get("n"), "accuracy": s.get("accuracy"), "by_type": s.get("by_type", {}),
                            "errors": s.get("errors", 0), "error_questions": s.get("error_questions", [])}
    return res


def pick_domains(args) -> list[str]:
    if args.domain:
        return list(args.domain)
    names = list(DOMAIN_NAMES)
    random.Random(args.seed).shuffle(names)
    return names[: max(1, min(args.domains, len(names)))]


def run_suite(args, log=None) -> list[dict]:
    log = log or sys.stdout
    out = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="generalization-"))
    out.mkdir(parents=True, exist_ok=True)
    results = []
    for i, d in enumerate(pick_domains(args)):
        seed = args.seed * 1000 + i
        try:
            r = run_history(d, seed, out, args.rounds, args.images, args.questions, log)
        except Exception as e:  # a crash in the engine is a result too
            print(f"domain={d} seed={seed} FAILED: {e}", file=log, flush=True)
            results.append({"domain": d, "seed": seed, "error": str(e)})
            continue
        results.append(r)
        print(fmt_line(d, r["metrics"]), file=log, flush=True)
        if args.details:
            print_details(r, log)
    ok = [r for r in results if "metrics" in r]
    if ok:
        print(fmt_line("pooled", pooled(ok)), file=log)
    if args.questions and ok:
        by_type: dict[str, list[float]] = defaultdict(lambda: [0.0, 0])
        for r in ok:
            q = r.get("questions") or {}
            print(f"questions domain={r['domain']} n={q.get('n')} accuracy={(q.get('accuracy') or 0):.2f}"
                  + (f" ENGINE ERRORS={q['errors']} (scored as unanswered; see error_questions in --json)"
                     if q.get("errors") else ""), file=log)
            for t, v in (q.get("by_type") or {}).items():
                by_type[t][0] += (v.get("accuracy") or 0) * v.get("n", 0)
                by_type[t][1] += v.get("n", 0)
        n = sum(v[1] for v in by_type.values())
        acc = sum(v[0] for v in by_type.values()) / n if n else 0
        print(f"questions pooled n={n} accuracy={acc:.2f} " + " ".join(
            f"{t}={v[0] / v[1]:.2f}" for t, v in sorted(by_type.items()) if v[1]), file=log)
    print(f"histories in {out}", file=log)
    if args.json:
        slim = [{k: v for k, v in r.items()} for r in results]
        Path(args.json).write_text(json.dumps({"results": slim, "pooled": pooled(ok) if ok else None},
                                              indent=1, default=str))
    return results


def strip_images(doc: dict) -> dict:
    """A copy of a MemEye document whose rounds keep captions but no image files."""
    doc = json.loads(json.dumps(doc))
    for s in doc.get("multi_session_dialogues", []):
        for d in s.get("dialogues", []):
            if isinstance(d, dict) and d.get("input_image"):
                d.pop("input_image", None)
    return doc


def run_mem_gallery(folder: Path, out: Path | None, log=None, limit: int | None = None) -> list[dict] | None:
    log = log or sys.stdout
    folder = Path(folder)
    files = sorted(folder.glob("*.json")) if folder.is_dir() else []
    if not files:
        print(f"mem-gallery: {folder} is absent or holds no JSON files; skipped", file=log)
        return None
    out = Path(out) if out else Path(tempfile.mkdtemp(prefix="memgallery-"))
    out.mkdir(parents=True, exist_ok=True)
    results = []
    for f in files[:limit]:
        store = out / (f.stem + ".duckdb")
        if store.exists():
            store.unlink()
        note = ""
        try:
            secs, _ = build(f, store)
        except RuntimeError as e:
            msg = str(e).split("): ", 1)[-1].splitlines()[-1]
            note = f"plain build failed: {msg[:400]}; built a copy with images stripped (captions kept)"
            if store.exists():
                store.unlink()
            copy = out / (f.stem + ".noimages.json")
            copy.write_text(json.dumps(strip_images(json.loads(f.read_text())), ensure_ascii=False))
            try:
                secs, _ = build(copy, store)
            except RuntimeError as e2:
                print(f"mem-gallery file={f.name} FAILED: {e2}", file=log, flush=True)
                results.append({"file": f.name, "error": str(e2), "note": note})
                continue
        import duckdb

        con = duckdb.connect(str(store), read_only=True)
        try:
            tabs = con.execute("SELECT table_name, n_rows FROM memory_tables ORDER BY table_name").fetchall()
            rounds = con.execute("SELECT count(*) FROM rounds").fetchone()[0] if _has(con, "rounds") else None
        finally:
            con.close()
        r = {"file": f.name, "tables": len(tabs), "names": {n: k for n, k in tabs}, "rounds": rounds,
             "build_s": secs, "note": note}
        results.append(r)
        print(f"mem-gallery file={f.name} tables={len(tabs)} rounds={rounds} build={secs:.0f}s "
              + " ".join(f"{n}({k})" for n, k in tabs) + (f"  [{note}]" if note else ""), file=log, flush=True)
    return results


def _has(con, table: str) -> bool:
    return bool(con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = ?", [table]).fetchone()[0])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--domains", type=int, default=4, help="number of domains (a seeded pick; default 4)")
    p.add_argument("--domain", nargs="+", choices=DOMAIN_NAMES, help="these domains instead")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--rounds", type=int, help="rounds per history (default 200-280)")
    p.add_argument("--images", type=int, help="images per history (default 30-45)")
    p.add_argument("--out", help="folder for the histories and memories (default a temp dir)")
    p.add_argument("--json", help="write every figure to this JSON file")
    p.add_argument("--questions", action="store_true", help="also run `python -m core eval` on the generated questions")
    p.add_argument("--details", action="store_true", help="tables, stream -> table, field -> column, missed values")
    p.add_argument("--mem-gallery", nargs="?", const=str(MEM_GALLERY), metavar="DIR",
                   help=f"build each Mem-Gallery file instead (default {MEM_GALLERY})")
    p.add_argument("--limit", type=int, help="with --mem-gallery: at most N files")
    p.add_argument("--build-args", help="more arguments for every `python -m core build`, e.g. a model: "
                   "\"--backend local --model-path M.gguf --set llm_steps=extract\"")
    p.add_argument("--engine", help="run `python -m core` from this checkout instead of this repo "
                   "(e.g. `git archive HEAD core | tar -x -C /tmp/head` while core/ is being edited)")
    args = p.parse_args(argv)
    ENGINE["root"] = Path(os.environ.get("GENERALIZATION_ENGINE") or ROOT)
    if args.engine:
        ENGINE["root"] = Path(args.engine).resolve()
    if args.build_args:
        import shlex

        ENGINE["build_args"] = shlex.split(args.build_args)
    if args.mem_gallery:
        res = run_mem_gallery(Path(args.mem_gallery), Path(args.out) if args.out else None, limit=args.limit)
        if args.json and res is not None:
            Path(args.json).write_text(json.dumps(res, indent=1, default=str))
        return 0
    results = run_suite(args)
    return 0 if any("metrics" in r for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
