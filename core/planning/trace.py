"""Plans and traces: frozen, JSON-serializable records of one question's processing.

A `Plan` is the high-level plan [(goal, tool)] (paper 3.5.2); a `StepRecord`
is one instantiated and executed step; a `Trace` is everything about one
`ask`: the question, every planning-context candidate with its scores, the
plan, each step (goal, tool, arguments, result summary, evidence units with
round ids, budget left, tokens, ms), the answer, backend, LLM mode (rules,
guided or free), ablation and every fallback. `Trace.to_dict()` is plain JSON; `Trace.from_dict(d)` rebuilds an
equal Trace.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ..model import EvidenceUnit
from .context import Candidate


@dataclass(frozen=True)
class PlanStep:
    goal: str
    tool: str


@dataclass(frozen=True)
class Plan:
    steps: tuple[PlanStep, ...]
    planner: str  # "rules" | "llm"
    intent: str = ""
    notes: tuple[str, ...] = ()
    prompt_tokens: int = 0
    completion_tokens: int = 0
    payload: Any = field(default=None, compare=False, repr=False)  # planner-private, not serialized

    def to_dict(self) -> dict:
        return {"steps": [{"goal": s.goal, "tool": s.tool} for s in self.steps], "planner": self.planner,
                "intent": self.intent, "notes": list(self.notes), "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens}

    @staticmethod
    def from_dict(d: dict) -> "Plan":
        return Plan(steps=tuple(PlanStep(s["goal"], s["tool"]) for s in d["steps"]), planner=d["planner"],
                    intent=d.get("intent", ""), notes=tuple(d.get("notes", ())),
                    prompt_tokens=d.get("prompt_tokens", 0), completion_tokens=d.get("completion_tokens", 0))


def unit_to_dict(u: EvidenceUnit) -> dict:
    return {"unit_id": u.unit_id, "kind": u.kind, "text": u.text, "rounds": list(u.rounds), "score": u.score,
            "time": u.time, "data": [[k, v] for k, v in u.data]}


def unit_from_dict(d: dict) -> EvidenceUnit:
    return EvidenceUnit(unit_id=d["unit_id"], kind=d["kind"], text=d["text"], rounds=tuple(d["rounds"]),
                        score=d["score"], time=d["time"], data=tuple((k, v) for k, v in d["data"]))


@dataclass(frozen=True)
class StepRecord:
    index: int
    goal: str
    tool: str
    args: dict
    status: str  # "ok" | "error" | "refused" | "skipped"
    planner: str  # who instantiated it: "rules" | "llm"
    summary: str = ""
    error: str | None = None
    units: tuple[EvidenceUnit, ...] = ()
    value: Any = None
    sql: str = ""
    params: tuple = ()
    budget_before: int = 0
    budget_after: int = 0
    ms: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    notes: tuple[str, ...] = ()
    table: str | None = None
    unit: str | None = None
    n_matched: int = 0
    rows: tuple[tuple, ...] = ()
    columns: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        d = {k: getattr(self, k) for k in (
            "index", "goal", "tool", "args", "status", "planner", "summary", "error", "value", "sql",
            "budget_before", "budget_after", "ms", "prompt_tokens", "completion_tokens", "table", "unit",
            "n_matched")}
        d["params"] = list(self.params)
        d["notes"] = list(self.notes)
        d["units"] = [unit_to_dict(u) for u in self.units]
        d["rows"] = [list(r) for r in self.rows]
        d["columns"] = list(self.columns)
        return d

    @staticmethod
    def from_dict(d: dict) -> "StepRecord":
        kw = dict(d)
        kw["params"] = tuple(d.get("params", ()))
        kw["notes"] = tuple(d.get("notes", ()))
        kw["units"] = tuple(unit_from_dict(u) for u in d.get("units", ()))
        kw["rows"] = tuple(tuple(r) for r in d.get("rows", ()))
        kw["columns"] = tuple(d.get("columns", ()))
        return StepRecord(**kw)


@dataclass(frozen=True)
class Answer:
    text: str
    kind: str  # "computed" | "ranked" | "rows" | "extractive" | "refusal" | "llm"
    support: float = 0.0  # how strongly the evidence supports it (0..1)
    unit_ids: tuple[str, ...] = ()  # the evidence units it rests on
    rounds: tuple[str, ...] = ()
    prompt_tokens: int = 0
    completion_tokens: int = 0
    refused: bool = False
    notes: tuple[str, ...] = ()  # why: e.g. the reason of a refusal (the answer text is the standard phrase alone)
    cited: tuple[str, ...] = ()  # a model's answer: the evidence units it says it rests on (validated ids)
    span: bool = False  # the text is a span picked from a round (no tool computed it)

    def to_dict(self) -> dict:
        return {"text": self.text, "kind": self.kind, "support": self.support, "unit_ids": list(self.unit_ids),
                "rounds": list(self.rounds), "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens, "refused": self.refused, "notes": list(self.notes),
                "cited": list(self.cited), "span": self.span}

    @staticmethod
    def from_dict(d: dict) -> "Answer":
        return Answer(text=d["text"], kind=d["kind"], support=d.get("support", 0.0),
                      unit_ids=tuple(d.get("unit_ids", ())), rounds=tuple(d.get("rounds", ())),
                      prompt_tokens=d.get("prompt_tokens", 0), completion_tokens=d.get("completion_tokens", 0),
                      refused=d.get("refused", False), notes=tuple(d.get("notes", ())),
                      cited=tuple(d.get("cited", ())), span=bool(d.get("span", False)))


@dataclass(frozen=True)
class Trace:
    question: str
    ablation: str
    backend: str
    planner: str
    context: tuple[Candidate, ...]
    plan: Plan
    steps: tuple[StepRecord, ...]
    answer: Answer
    fallbacks: tuple[str, ...] = ()
    budget_total: int = 10
    budget_left: int = 10
    ms: tuple[tuple[str, float], ...] = ()  # per stage: context, plan, steps, answer, total
    now: str | None = None  # the history's "now" (latest round time) used for relative dates
    mode: str = "rules"  # "rules" (no model) | "guided" | "free" (Config.llm_mode with a model)
    image_caption: str = ""  # the question's own image, by its caption (searched with the question)

    @property
    def evidence(self) -> tuple[EvidenceUnit, ...]:
        """Every evidence unit returned by the steps, in order."""
        return tuple(u for s in self.steps for u in s.units)

    @property
    def evidence_rounds(self) -> tuple[str, ...]:
        """Every round of the evidence, the round that decided the answer first (the latest or first
        record, the extreme row) when the answer names one."""
        rounds = tuple(dict.fromkeys(r for u in self.evidence for r in u.rounds))
        lead = self.answer.rounds[0] if self.answer.rounds else None
        if lead is not None and lead in rounds and rounds[0] != lead:
            return tuple(dict.fromkeys((lead,) + rounds))
        return rounds

    @property
    def prompt_tokens(self) -> int:
        return self.plan.prompt_tokens + sum(s.prompt_tokens for s in self.steps) + self.answer.prompt_tokens

    @property
    def completion_tokens(self) -> int:
        return (self.plan.completion_tokens + sum(s.completion_tokens for s in self.steps)
                + self.answer.completion_tokens)

    @property
    def total_ms(self) -> float:
        return dict(self.ms).get("total", 0.0)

    def to_dict(self) -> dict:
        return {
            "question": self.question, "ablation": self.ablation, "backend": self.backend, "planner": self.planner,
            "context": [c.to_dict() for c in self.context], "plan": self.plan.to_dict(),
            "steps": [s.to_dict() for s in self.steps], "answer": self.answer.to_dict(),
            "fallbacks": list(self.fallbacks), "budget_total": self.budget_total, "budget_left": self.budget_left,
            "ms": [[k, v] for k, v in self.ms], "now": self.now, "mode": self.mode,
            "image_caption": self.image_caption,
            "tokens": {"prompt": self.prompt_tokens, "completion": self.completion_tokens},
            "evidence_rounds": list(self.evidence_rounds),
        }

    def to_json(self, **kw) -> str:
        return json.dumps(self.to_dict(), **kw)

    @staticmethod
    def from_dict(d: dict) -> "Trace":
        return Trace(
            question=d["question"], ablation=d["ablation"], backend=d["backend"], planner=d["planner"],
            context=tuple(Candidate.from_dict(c) for c in d["context"]), plan=Plan.from_dict(d["plan"]),
            steps=tuple(StepRecord.from_dict(s) for s in d["steps"]), answer=Answer.from_dict(d["answer"]),
            fallbacks=tuple(d.get("fallbacks", ())), budget_total=d.get("budget_total", 10),
            budget_left=d.get("budget_left", 10), ms=tuple((k, v) for k, v in d.get("ms", ())), now=d.get("now"),
            mode=d.get("mode", "rules"), image_caption=d.get("image_caption", ""))
