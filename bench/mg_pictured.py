"""Mem-Gallery questions with their own picture: the rule answerer with and without the picture's caption.

For every QA of each file that carries an `image`, the engine (rules backend) answers twice over a copy of
the file's built store: "before" without the question's caption reaching the answerer (the search still
uses it), "after" with it (core.planning.pictured). Prints per file and question type: n, refusals and
Mem-Gallery token F1 (core.evaluation.benchmarks.mg_f1), before -> after.

    OMP_NUM_THREADS=1 python bench/mg_pictured.py DATA.json:STORE.duckdb [...] [--show]

STORE must be a built store of DATA (it is opened read-write: pass a copy).
"""
from __future__ import annotations

import collections
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.config import DEFAULT  # noqa: E402
from core.deps import make_build_deps  # noqa: E402
from core.evaluation.benchmarks import mg_f1  # noqa: E402
from core.evaluation.scoring import is_refusal  # noqa: E402
from core.formats import read_file  # noqa: E402
from core.query import make_engine  # noqa: E402
from core.store import Store  # noqa: E402


def run(data: str, store_path: str, show: bool = False) -> dict:
    hist = read_file(data, allow_missing_images=True)[0]
    qas = [qa for qa in hist.qas if qa.image is not None]
    stats: dict = collections.defaultdict(lambda: {"n": 0, "ref_b": 0, "ref_a": 0, "f1_b": 0.0, "f1_a": 0.0})
    with Store(store_path) as store:
        deps = make_build_deps(DEFAULT, cache_con=store.con)
        eng = make_engine(store, DEFAULT, text_encoder=deps.text_encoder, image_encoder=deps.image_encoder)
        ra = eng.rule_answerer
        with_caption = ra.answer

        def without_caption(*a, image_caption: str = "", **k):
            return with_caption(*a, **k)

        for qa in qas:
            preds = {}
            for mode, fn in (("b", without_caption), ("a", with_caption)):
                ra.answer = fn
                preds[mode] = eng.ask(qa.question, image=qa.image).answer.text
            ra.answer = with_caption
            for key in (Path(data).stem, f"  {qa.qtype}"):
                s = stats[key]
                s["n"] += 1
                for mode in "ba":
                    s[f"ref_{mode}"] += is_refusal(preds[mode])
                    s[f"f1_{mode}"] += mg_f1(preds[mode], str(qa.answer))
            if show:
                print(f"  [{qa.qtype}] {qa.question[:70]!r} gold={str(qa.answer)[:40]!r} "
                      f"before={preds['b'][:40]!r} after={preds['a'][:40]!r}")
    return stats


def main(argv: list[str]) -> None:
    show = "--show" in argv
    total = {"n": 0, "ref_b": 0, "ref_a": 0, "f1_b": 0.0, "f1_a": 0.0}
    for arg in (a for a in argv if not a.startswith("--")):
        data, store_path = arg.rsplit(":", 1)
        stats = run(data, store_path, show)
        for key, s in stats.items():
            n = s["n"]
            print(f"{key:45s} n={n:3d} refused {s['ref_b']:3d} -> {s['ref_a']:3d}  "
                  f"F1 {s['f1_b'] / n:.3f} -> {s['f1_a'] / n:.3f}")
            if not key.startswith(" "):
                for k in total:
                    total[k] += s[k]
    if total["n"]:
        n = total["n"]
        print(f"{'ALL':45s} n={n:3d} refused {total['ref_b']:3d} -> {total['ref_a']:3d}  "
              f"F1 {total['f1_b'] / n:.3f} -> {total['f1_a'] / n:.3f}")


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    main(sys.argv[1:])
