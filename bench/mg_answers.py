"""Answer shapes on Mem-Gallery (MemEye format), rule backend: per question type (`point`).

    python bench/mg_answers.py FILE.json [FILE.json ...] [--rebuild] [--hooks] [--out report.json]

Builds each file into /tmp/mg-<stem>.duckdb (`python -m core build --allow-missing-images`, kept between
runs unless --rebuild), asks every QA with the rule backend and prints, per point type: questions,
refusals on answerable questions, AR (unanswerable) refused, VS answers naming the gold image id,
yes/no golds answered yes/no (and the right one), "YYYY-MM-DD" questions answered with that date shape
(and the right date), mean token F1 (lower-cased, punctuation stripped, token multiset overlap).

--hooks gives the rule answerer what the engine is to pass it (issue 18): the profile's name as
`people` and the store's images per round (core.planning.images.round_images). Without --hooks the
engine is used as it is.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

ISO = re.compile(r"\d{4}-\d{2}-\d{2}")
REFUSAL_GOLD = re.compile(r"^\s*not mentioned\.?\s*$", re.IGNORECASE)


def norm_tokens(text: str) -> list[str]:
    return re.sub(r"[^\w\s]", " ", str(text).lower()).split()


def token_f1(pred: str, gold: str) -> float:
    p, g = norm_tokens(pred), norm_tokens(gold)
    if not p or not g:
        return float(p == g)
    common = sum((Counter(p) & Counter(g)).values())
    if not common:
        return 0.0
    prec, rec = common / len(p), common / len(g)
    return 2 * prec * rec / (prec + rec)


def build(path: Path, store: Path, rebuild: bool) -> None:
    if store.exists() and not rebuild:
        return
    if store.exists():
        store.unlink()
    subprocess.run([sys.executable, "-m", "core", "build", str(path), "--store", str(store),
                    "--allow-missing-images", "--quiet"], cwd=ROOT, check=True)


def run_file(path: Path, rebuild: bool, hooks: bool, limit: int | None) -> list[dict]:
    from core.config import DEFAULT
    from core.query import open_engine

    doc = json.loads(path.read_text())
    qas = doc.get("human-annotated QAs") or []
    if limit:
        qas = qas[:limit]
    name = str((doc.get("character_profile") or {}).get("name") or "").strip()
    store = Path("/tmp") / f"mg-{path.stem}.duckdb"
    build(path, store, rebuild)
    rows = []
    with open_engine(str(store), DEFAULT) as eng:
        if hooks:
            from core.planning.images import round_images

            eng.rule_answerer.people = (name,) if name else ()
            eng.rule_answerer.round_images = lambda rounds, con=eng.con: round_images(con, rounds)
        for qa in qas:
            q, gold = str(qa["question"]), str(qa["answer"])
            t0 = time.perf_counter()
            try:
                tr = eng.ask(q)
                ans, refused = tr.answer.text, tr.answer.refused
            except Exception as e:  # noqa: BLE001 - a bench records failures
                ans, refused = f"ERROR {type(e).__name__}: {e}", False
            rows.append({"file": path.stem, "point": str(qa.get("point")), "question": q, "gold": gold,
                         "answer": ans, "refused": bool(refused) or ans.lower().startswith("not mentioned"),
                         "ms": (time.perf_counter() - t0) * 1000})
    return rows


def summarize(rows: list[dict]) -> dict:
    by = defaultdict(list)
    for r in rows:
        by[r["point"]].append(r)
    by["ALL"] = rows
    out = {}
    for point, rs in sorted(by.items()):
        ans = [r for r in rs if not REFUSAL_GOLD.match(r["gold"])]
        unans = [r for r in rs if REFUSAL_GOLD.match(r["gold"])]
        vs = [r for r in rs if re.fullmatch(r"\s*[\w-]+:IMG_\d+\.?\s*", r["gold"])]
        yn = [r for r in rs if re.match(r"\s*(yes|no)\b", r["gold"], re.IGNORECASE)]
        iso = [r for r in rs if "yyyy-mm-dd" in r["question"].lower()]
        first = lambda s: (norm_tokens(s) or [""])[0]  # noqa: E731
        out[point] = {
            "n": len(rs),
            "answerable_refused": f"{sum(r['refused'] for r in ans)}/{len(ans)}",
            "AR_refused": f"{sum(r['refused'] for r in unans)}/{len(unans)}" if unans else "-",
            "exact_refusal_phrase": f"{sum(r['answer'].strip() == 'Not mentioned.' for r in unans)}/{len(unans)}"
            if unans else "-",
            "VS_right_id": f"{sum(r['gold'].strip().rstrip('.') in r['answer'] for r in vs)}/{len(vs)}" if vs else "-",
            "yesno_answered": f"{sum(first(r['answer']) in ('yes', 'no') for r in yn)}/{len(yn)}" if yn else "-",
            "yesno_right": f"{sum(first(r['answer']) == first(r['gold']) for r in yn)}/{len(yn)}" if yn else "-",
            "iso_shape": f"{sum(bool(ISO.search(r['answer'])) for r in iso)}/{len(iso)}" if iso else "-",
            "iso_right": f"{sum(r['gold'].strip() in r['answer'] for r in iso)}/{len(iso)}" if iso else "-",
            "token_f1": round(sum(token_f1(r["answer"], r["gold"]) for r in rs) / max(1, len(rs)), 3),
        }
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("files", nargs="+")
    p.add_argument("--rebuild", action="store_true")
    p.add_argument("--hooks", action="store_true")
    p.add_argument("--limit", type=int)
    p.add_argument("--out")
    a = p.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    rows = []
    for f in a.files:
        rows += run_file(Path(f), a.rebuild, a.hooks, a.limit)
    summary = summarize(rows)
    cols = ["n", "answerable_refused", "AR_refused", "exact_refusal_phrase", "VS_right_id", "yesno_answered",
            "yesno_right", "iso_shape", "iso_right", "token_f1"]
    print("point " + " ".join(f"{c:>12}" for c in cols))
    for point, s in summary.items():
        print(f"{point:5} " + " ".join(f"{str(s[c]):>12}" for c in cols))
    if a.out:
        Path(a.out).write_text(json.dumps({"summary": summary, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
