"""Saved debugging cases: a question, the plan a person edited for it, and the answer expected.

A case is kept in the memory (table `plan_cases`, migration 6). `replay_cases(engine, cases)` answers
each case twice, with the planner's own plan and with the saved (pinned) plan, and scores both against
the expected answer with the engine's scorer; a case *broke* when an answer that met the expectation
when it was saved no longer does (a change of thresholds, code or model did it). `python -m core eval
--cases --store M` prints the report; the Evaluate page lists the cases.

This module owns the statements over `plan_cases`; nothing else reads or writes that table.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Callable, Sequence

import duckdb

from .errors import InputError
from .evaluation.scoring import score_answer
from .planning.replay import EditedPlan, replay

PASS = 0.5  # a score at least this is a right answer (the evaluation's rule)
MAX_TEXT = 2000


def scorer(kind: str | None = None, tolerance: float | None = None) -> Callable[[str, str], float | None]:
    """(prediction, gold) -> the engine's score in 0..1, None when the gold cannot be scored as `kind`."""
    def score(prediction: str, gold: str) -> float | None:
        try:
            return score_answer(prediction, gold, kind or None, tolerance)
        except ValueError:
            return None
    return score


@dataclass(frozen=True)
class Case:
    case_id: int
    question: str
    plan: EditedPlan
    expected: str
    answer_kind: str | None = None
    tolerance: float | None = None
    saved_answer: str = ""  # what the saved plan answered when it was saved
    note: str = ""
    created: datetime | None = None

    def score(self, prediction: str) -> float | None:
        return scorer(self.answer_kind, self.tolerance)(prediction, self.expected)


def save_case(con: duckdb.DuckDBPyConnection, plan: EditedPlan, expected: str, *, saved_answer: str = "",
              note: str = "", answer_kind: str | None = None, tolerance: float | None = None) -> Case:
    """Store a case and return it. Raises InputError when the expected answer is empty or too long, or
    cannot be scored as `answer_kind`."""
    expected = (expected or "").strip()
    faults = []
    if not expected:
        faults.append("the expected answer is empty")
    if len(expected) > MAX_TEXT or len(note or "") > MAX_TEXT:
        faults.append(f"the expected answer and the note are limited to {MAX_TEXT} characters")
    if expected and answer_kind and scorer(answer_kind, tolerance)(expected, expected) is None:
        faults.append(f"the expected answer {expected[:60]!r} cannot be scored as a {answer_kind}")
    if faults:
        raise InputError("case", plan.question[:60], "; ".join(faults))
    row = con.execute("SELECT coalesce(max(case_id), 0) + 1 FROM plan_cases").fetchone()
    case = Case(int(row[0]), plan.question, plan, expected, answer_kind or None, tolerance, saved_answer or "",
                note or "", datetime.now().replace(microsecond=0))
    con.execute("INSERT INTO plan_cases VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [case.case_id, case.question, plan.to_json(), case.expected, case.answer_kind, case.tolerance,
                 case.saved_answer, case.note, case.created])
    return case


def list_cases(con: duckdb.DuckDBPyConnection) -> tuple[Case, ...]:
    """Every saved case, oldest first (none in a memory without the table, e.g. opened read-only before
    migration 6)."""
    try:
        rows = con.execute("SELECT case_id, question, plan, expected, answer_kind, tolerance, saved_answer, note, "
                           "created FROM plan_cases ORDER BY case_id").fetchall()
    except duckdb.CatalogException:
        return ()
    return tuple(Case(int(r[0]), r[1], EditedPlan.from_dict(json.loads(r[2]), file=f"case {r[0]}"), r[3], r[4],
                      r[5], r[6] or "", r[7] or "", r[8]) for r in rows)


def delete_case(con: duckdb.DuckDBPyConnection, case_id: int) -> bool:
    """Remove a case; False when there was none with that id."""
    n = con.execute("SELECT count(*) FROM plan_cases WHERE case_id = ?", [int(case_id)]).fetchone()[0]
    con.execute("DELETE FROM plan_cases WHERE case_id = ?", [int(case_id)])
    return bool(n)


@dataclass(frozen=True)
class CaseResult:
    """One case replayed: the planner's own answer and the saved plan's, each with its score."""

    case: Case
    planner_answer: str
    planner_score: float | None
    pinned_answer: str
    pinned_score: float | None
    pinned_error: str = ""  # the saved plan no longer runs here (a table or column is gone)

    @property
    def planner_passed(self) -> bool:
        return self.planner_score is not None and self.planner_score >= PASS

    @property
    def pinned_passed(self) -> bool:
        return not self.pinned_error and self.pinned_score is not None and self.pinned_score >= PASS

    @property
    def saved_passed(self) -> bool:
        s = self.case.score(self.case.saved_answer) if self.case.saved_answer else None
        return s is not None and s >= PASS

    @property
    def broke(self) -> bool:
        """The saved plan met the expectation when it was saved and does not any more."""
        return self.saved_passed and not self.pinned_passed

    def status(self) -> str:
        if self.broke:
            return "broken"
        if self.pinned_passed and self.planner_passed:
            return "passes"
        if self.pinned_passed:
            return "the planner's own plan fails"
        return "fails"

    def to_dict(self) -> dict:
        return {"case_id": self.case.case_id, "question": self.case.question, "expected": self.case.expected,
                "saved_answer": self.case.saved_answer, "planner_answer": self.planner_answer,
                "planner_score": self.planner_score, "pinned_answer": self.pinned_answer,
                "pinned_score": self.pinned_score, "pinned_error": self.pinned_error, "status": self.status(),
                "broke": self.broke, "note": self.case.note}


def replay_case(engine, case: Case) -> CaseResult:
    """Answer `case` with the planner's own plan and with its saved plan (InputError of the saved plan,
    e.g. a column that is gone, is recorded, not raised)."""
    own = engine.ask(case.question, ablation=case.plan.ablation).answer.text
    try:
        pinned, err = replay(engine, case.plan).answer.text, ""
    except InputError as e:
        pinned, err = "", str(e)
    return CaseResult(case, own, case.score(own), pinned, None if err else case.score(pinned), err)


def replay_cases(engine, cases: Sequence[Case], progress: Callable[[int, int], None] | None = None
                 ) -> tuple[CaseResult, ...]:
    """Every case replayed (`progress(done, total)` after each)."""
    out = []
    for k, c in enumerate(cases, start=1):
        out.append(replay_case(engine, c))
        if progress is not None:
            progress(k, len(cases))
    return tuple(out)
