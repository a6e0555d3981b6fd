"""Re-ask a generalization run's questions against the memories it built, with this checkout's planner.

    OMP_NUM_THREADS=1 .venv/bin/python bench/reask.py /tmp/gen            # a run of bench/generalization.py --out
    .venv/bin/python bench/reask.py /tmp/gen541 /tmp/gen547 --changes     # and every question whose verdict moved

A change to the planner (core/planning/) needs no rebuild to be measured: each DIR/<domain>-<seed>/ of a
run holds `history.json` (the questions and their gold) and `memory.duckdb` (the memory built from it).
Each memory is copied (the run stays as it was), every question is asked again and scored by the engine's
own scorer (`core.evaluation.runner.answer_all`), and the accuracy is printed per history and pooled.
With `--changes`, a question whose verdict differs from the run's own `eval/predictions.jsonl` (written by
`--questions`) is printed with both answers. Extraction, alignment or materialization changes do need the
rebuild: this reads the tables as they were built.
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


@dataclass(frozen=True)
class Reasked:
    """One history asked again: its name, the verdict and answer per question id, and the questions whose
    verdict moved against the run's own predictions (qa_id, question, gold, before, after, correct now)."""
    name: str
    answers: dict[str, tuple[bool, str]]
    moved: tuple[tuple[str, str, str, str, str, bool], ...]

    @property
    def accuracy(self) -> float:
        return sum(ok for ok, _ in self.answers.values()) / len(self.answers) if self.answers else 0.0


def histories(run: Path) -> list[Path]:
    """The history folders of a run (those with both history.json and memory.duckdb), sorted.

    Raises FileNotFoundError naming the run when it holds none."""
    found = sorted(d for d in run.iterdir() if d.is_dir() and (d / "history.json").is_file()
                   and (d / "memory.duckdb").is_file()) if run.is_dir() else []
    if not found:
        raise FileNotFoundError(f"{run}: no <domain>-<seed>/ folder with history.json and memory.duckdb "
                                f"(a run of bench/generalization.py --out {run})")
    return found


def _before(folder: Path) -> dict[str, tuple[bool, str]]:
    path = folder / "eval" / "predictions.jsonl"
    if not path.is_file():
        return {}
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            r = json.loads(line)
            out[r["qa_id"]] = (bool(r["correct"]), str(r["prediction"]))
    return out


def reask(folder: Path, encoder) -> Reasked:
    """Ask every question of `folder`'s history against a copy of its memory with `encoder` (a TextEncoder);
    the verdicts, and those that moved against the folder's eval/predictions.jsonl."""
    import duckdb

    from core.evaluation.runner import answer_all
    from core.formats import read_file
    from core.planning.engine import QueryEngine

    (history,) = read_file(folder / "history.json")
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "memory.duckdb"
        shutil.copy(folder / "memory.duckdb", copy)
        con = duckdb.connect(str(copy))
        try:
            records = answer_all(QueryEngine(con, encoder), history, ablation="full", limit=None, fmt="generic")
        finally:
            con.close()
    answers = {r["qa_id"]: (bool(r["correct"]), str(r["prediction"])) for r in records}
    before = _before(folder)
    moved = tuple((r["qa_id"], r["question"], str(r["gold"]), before[r["qa_id"]][1], str(r["prediction"]),
                   bool(r["correct"])) for r in records
                  if r["qa_id"] in before and before[r["qa_id"]][0] != bool(r["correct"]))
    return Reasked(folder.name, answers, moved)


def main(argv: list[str] | None = None, encoder=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("runs", nargs="+", type=Path, help="folders written by bench/generalization.py --out")
    p.add_argument("--changes", action="store_true", help="print every question whose verdict moved")
    args = p.parse_args(argv)
    try:
        folders = [f for run in args.runs for f in histories(run)]
    except FileNotFoundError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if encoder is None:
        from core.encoders import MiniLMEncoder, load_minilm
        encoder = MiniLMEncoder(load_minilm())
    right = total = 0
    for folder in folders:
        r = reask(folder, encoder)
        right += sum(ok for ok, _ in r.answers.values())
        total += len(r.answers)
        gained = sum(m[5] for m in r.moved)
        print(f"history={r.name} n={len(r.answers)} accuracy={r.accuracy:.2f} gained={gained} "
              f"lost={len(r.moved) - gained}", flush=True)
        if args.changes:
            for qa_id, question, gold, old, new, ok in r.moved:
                print(f"  {'+' if ok else '-'} {qa_id} | {question} | gold {gold} | was {old[:60]!r} | now {new[:60]!r}")
    print(f"pooled n={total} accuracy={right / total:.2f}" if total else "pooled n=0")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
