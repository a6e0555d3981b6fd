"""Debugging a query plan: edit its steps, re-run it from a step, and compare the two runs.

    plan = EditedPlan.from_trace(trace)                       # every step pinned to what it was run with
    plan = plan.edit(1, StepEdit("Compute", args={...}))      # step 2 changed (and pinned)
    plan = plan.rerun_from(1)                                 # steps after 2 re-instantiated as they run
    faults = check_plan(engine, plan)                         # every fault, each naming its step
    edited = replay(engine, plan)                             # a Trace, like QueryEngine.ask's
    diff = compare(trace, edited, gold="7.2 h", scorer=core.cases.scorer())

A step is *pinned* when it carries its arguments (`StepEdit.args`): it runs with exactly those, after
the same validation a planner's output gets (`Toolbox.validate`: names resolved against the metadata,
values cast, operators checked; a hostile value is refused with the validator's reason). A step
without arguments is instantiated when it runs, progressively, from the question and the results of
the steps before it (the rule planner's instantiation, paper 3.5.2), so a changed first step changes
what the later ones are given. The plan keeps the engine's limit of `config.max_steps` steps.

`EditedPlan.to_dict()` is the file `python -m core ask --plan FILE` runs; `from_dict` also reads the
output of `ask --json` (a whole trace: its steps with their arguments).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, replace as dc_replace
from typing import Any, Callable, Mapping, Sequence

from ..errors import InputError
from ..model import ImageRef
from .engine import ABLATIONS, QueryEngine
from .rule_planner import Instantiation
from .tools import TOOL_NAMES
from .trace import Plan, PlanStep, StepRecord, Trace
from .validate import ToolError

PINNED_NOTE = "arguments pinned by the user"


@dataclass(frozen=True)
class StepEdit:
    """One step of an edited plan: its tool, its goal, and its arguments when pinned (None: the step is
    instantiated when it runs)."""

    tool: str
    goal: str = ""
    args: Mapping[str, Any] | None = None

    @property
    def pinned(self) -> bool:
        return self.args is not None

    def to_dict(self) -> dict:
        return {"tool": self.tool, "goal": self.goal, "args": None if self.args is None else dict(self.args)}


@dataclass(frozen=True)
class EditedPlan:
    """A question with the steps to answer it as a person wants them run."""

    question: str
    steps: tuple[StepEdit, ...]
    ablation: str = "full"
    image_caption: str = ""

    # ---------------------------------------------------------------- making one
    @staticmethod
    def from_trace(trace: Trace | Mapping) -> "EditedPlan":
        """The plan a trace executed, every step pinned to the arguments it was run with (a step that was skipped
        or failed before it had arguments is left to be instantiated)."""
        tr = trace if isinstance(trace, Trace) else Trace.from_dict(dict(trace))
        steps = tuple(StepEdit(r.tool, r.goal, dict(r.args) if r.args and r.status in ("ok", "error", "refused")
                               else None) for r in tr.steps)
        if not steps:  # a plan that never executed a step: its outline, unpinned
            steps = tuple(StepEdit(s.tool, s.goal) for s in tr.plan.steps)
        return EditedPlan(tr.question, steps, tr.ablation, tr.image_caption)

    @staticmethod
    def from_dict(d: object, *, file: str = "plan") -> "EditedPlan":
        """An EditedPlan from `to_dict()` output or from a whole trace (`ask --json`). Raises InputError
        naming `file`, the place and every fault found."""
        if not isinstance(d, Mapping):
            raise InputError(file, "", f"expected a JSON object with \"question\" and \"steps\", got "
                                       f"{type(d).__name__}")
        faults: list[str] = []
        q = d.get("question")
        if not isinstance(q, str) or not q.strip():
            faults.append("\"question\": expected non-empty text")
        raw = d.get("steps")
        if not isinstance(raw, list) or not raw:
            faults.append("\"steps\": expected a non-empty list of {\"tool\", \"goal\", \"args\"}")
            raw = []
        steps: list[StepEdit] = []
        for i, s in enumerate(raw):
            where = f"steps[{i}]"
            if not isinstance(s, Mapping):
                faults.append(f"{where}: expected an object, got {type(s).__name__}")
                continue
            tool, goal, args = s.get("tool"), s.get("goal", ""), s.get("args")
            if not isinstance(tool, str) or tool.strip().lower() not in {t.lower() for t in TOOL_NAMES}:
                faults.append(f"{where}.tool: {str(tool)[:40]!r} is not a tool; expected one of "
                              f"{', '.join(TOOL_NAMES)}")
            if not isinstance(goal, str):
                faults.append(f"{where}.goal: expected text")
            if args is not None and not isinstance(args, Mapping):
                faults.append(f"{where}.args: expected an object or null, got {type(args).__name__}")
            # a trace's step that did not run has empty arguments: instantiated again when it runs
            if "status" in s and s.get("status") == "skipped" or args == {}:
                args = None
            steps.append(StepEdit(str(tool or ""), goal if isinstance(goal, str) else "",
                                  dict(args) if isinstance(args, Mapping) else None))
        ablation = d.get("ablation", "full")
        if ablation not in ABLATIONS:
            faults.append(f"\"ablation\": {ablation!r} is unknown; expected one of {', '.join(ABLATIONS)}")
        caption = d.get("image_caption") or ""
        if not isinstance(caption, str):
            faults.append("\"image_caption\": expected text")
        if faults:
            raise InputError(file, "", "; ".join(faults))
        return EditedPlan(q.strip(), tuple(steps), ablation, caption)

    def to_dict(self) -> dict:
        return {"question": self.question, "ablation": self.ablation, "image_caption": self.image_caption,
                "steps": [s.to_dict() for s in self.steps]}

    def to_json(self, **kw) -> str:
        return json.dumps(self.to_dict(), default=str, **kw)

    # ---------------------------------------------------------------- changing one
    def edit(self, index: int, step: StepEdit) -> "EditedPlan":
        """This plan with step `index` (0-based) replaced."""
        self._check_index(index)
        return dc_replace(self, steps=self.steps[:index] + (step,) + self.steps[index + 1:])

    def insert(self, index: int, step: StepEdit) -> "EditedPlan":
        """This plan with `step` added before step `index` (index = len(steps): at the end)."""
        if not 0 <= index <= len(self.steps):
            raise IndexError(f"a step can be added at 0..{len(self.steps)}, not {index}")
        return dc_replace(self, steps=self.steps[:index] + (step,) + self.steps[index:])

    def remove(self, index: int) -> "EditedPlan":
        """This plan without step `index`."""
        self._check_index(index)
        return dc_replace(self, steps=self.steps[:index] + self.steps[index + 1:])

    def rerun_from(self, index: int, *, keep_pinned: Sequence[int] = ()) -> "EditedPlan":
        """Steps before `index` keep their arguments; later ones lose theirs (instantiated when they run)
        except step `index` itself and those in `keep_pinned`, which stay as they are."""
        self._check_index(index)
        keep = set(keep_pinned) | {index}
        return dc_replace(self, steps=tuple(s if k <= index or k in keep else dc_replace(s, args=None)
                                            for k, s in enumerate(self.steps)))

    def _check_index(self, index: int) -> None:
        if not 0 <= index < len(self.steps):
            raise IndexError(f"the plan has steps 0..{len(self.steps) - 1}, not {index}")


# ---------------------------------------------------------------------- checking and running
def check_plan(engine: QueryEngine, plan: EditedPlan) -> tuple[str, ...]:
    """Every fault of `plan` against this memory, each naming its step ("step 2 (Compute): ..."); empty
    when it can run. Pinned arguments go through the validator planner output goes through."""
    faults: list[str] = []
    limit = engine.config.max_steps
    if not plan.steps:
        faults.append("the plan has no steps")
    if len(plan.steps) > limit:
        faults.append(f"the plan has {len(plan.steps)} steps; at most {limit} are allowed")
    if plan.ablation not in ABLATIONS:
        faults.append(f"ablation {plan.ablation!r} is unknown; expected one of {', '.join(ABLATIONS)}")
        return tuple(faults)
    box = engine.toolbox(plan.ablation)
    for k, s in enumerate(plan.steps):
        where = f"step {k + 1} ({s.tool or 'no tool'})"
        try:
            tool = box.check_tool(s.tool)
        except ToolError as e:
            faults.append(f"{where}: {e}")
            continue
        if s.args is not None:
            try:
                box.validate(tool, dict(s.args))
            except ToolError as e:
                faults.extend(f"{where}: {f}" for f in e.faults)
    return tuple(faults)


def replay(engine: QueryEngine, plan: EditedPlan, *, image: ImageRef | None = None) -> Trace:
    """Run `plan` over the engine's memory and answer, as `engine.ask` does with its own plan.

    Pinned steps run with their arguments (recorded with planner "user"); the others are instantiated
    by the rule planner as they run, from the question and the earlier steps' results. The answer,
    evidence budget and trace are computed afresh. Raises InputError listing every fault of the plan
    (`check_plan`); nothing in the memory is changed by a replay."""
    faults = check_plan(engine, plan)
    if faults:
        raise InputError("plan", "", "; ".join(faults))
    if image is None and plan.image_caption:
        image = ImageRef(image_id="question:image", caption=plan.image_caption)
    state = engine.start(plan.question, plan.ablation, image)
    base = state.plan if state.plan.planner == "rules" else engine.rules.outline(
        state.question, state.context, state.tools, state.now, state.first, state.catalog)
    box = engine.toolbox(plan.ablation)
    steps = tuple(PlanStep(s.goal or f"run {box.check_tool(s.tool)} as edited", box.check_tool(s.tool))
                  for s in plan.steps)
    pinned = [k + 1 for k, s in enumerate(plan.steps) if s.pinned]
    note = "edited by the user" + (f": step(s) {', '.join(map(str, pinned))} pinned" if pinned else "")
    # the rule planner's own composite answers (a comparison of two periods, a yes/no over rows) read
    # its decision; they still apply when only the arguments changed, not when the tools did
    same_tools = tuple(s.tool for s in steps) == tuple(s.tool for s in base.steps)
    edited = Plan(steps, "rules" if same_tools and base.planner == "rules" else "edited", base.intent,
                  base.notes + (note,), payload=base.payload)
    preset = tuple(Instantiation(dict(s.args), (PINNED_NOTE,), planner="user") if s.pinned else None
                   for s in plan.steps)
    state = dc_replace(state, plan=edited, rule_from=0, preset=preset)
    trace = engine.finish(state)
    return dc_replace(trace, planner="edited")


# ---------------------------------------------------------------------- comparing two runs
@dataclass(frozen=True)
class ArgChange:
    """One argument that differs between two runs of a step (None: absent there)."""

    name: str
    before: Any
    after: Any


@dataclass(frozen=True)
class StepDiff:
    """Step `index` of two runs: tools, status, result size, and the arguments that differ."""

    index: int
    tool_before: str | None
    tool_after: str | None
    status_before: str | None
    status_after: str | None
    rows_before: int
    rows_after: int
    changes: tuple[ArgChange, ...]
    summary_before: str = ""
    summary_after: str = ""

    @property
    def changed(self) -> bool:
        return bool(self.changes) or self.tool_before != self.tool_after or self.status_before != self.status_after


@dataclass(frozen=True)
class Comparison:
    """Two runs of a question side by side (`before` the original, `after` the edited one)."""

    question: str
    steps: tuple[StepDiff, ...]
    answer_before: str
    answer_after: str
    rounds_added: tuple[str, ...]
    rounds_removed: tuple[str, ...]
    rounds_kept: tuple[str, ...]
    tokens_before: int
    tokens_after: int
    ms_before: float
    ms_after: float
    budget_left_before: int
    budget_left_after: int
    gold: str | None = None
    score_before: float | None = None
    score_after: float | None = None

    @property
    def answer_changed(self) -> bool:
        return self.answer_before != self.answer_after

    def verdict(self) -> str:
        """One sentence: what the edit did to the answer (and to its score against the gold answer)."""
        if not self.answer_changed:
            what = "The edit did not change the answer"
        else:
            what = f"The answer changed from “{self.answer_before}” to “{self.answer_after}”"
        if self.gold is None or self.score_before is None or self.score_after is None:
            return what + "."
        if self.score_after > self.score_before:
            how = "better"
        elif self.score_after < self.score_before:
            how = "worse"
        else:
            how = "the same"
        return (f"{what}; against the expected answer “{self.gold}” it scores {self.score_after:.2f} "
                f"(was {self.score_before:.2f}): {how}.")


def _rows(r: StepRecord | None) -> int:
    if r is None:
        return 0
    return r.n_matched or len(r.rows) or len(r.units)


def arg_changes(before: Mapping | None, after: Mapping | None) -> tuple[ArgChange, ...]:
    """The arguments whose values differ (compared as JSON, so 5 and 5.0 or a reordered dict are equal)."""
    a, b = dict(before or {}), dict(after or {})
    out = []
    for k in list(dict.fromkeys(list(a) + list(b))):
        if _canon(a.get(k)) != _canon(b.get(k)):
            out.append(ArgChange(k, a.get(k), b.get(k)))
    return tuple(out)


def _canon(v: Any) -> str:
    def norm(x):
        if isinstance(x, float) and x.is_integer():
            return int(x)
        if isinstance(x, dict):
            return {str(k): norm(y) for k, y in x.items()}
        if isinstance(x, (list, tuple)):
            return [norm(y) for y in x]
        return x
    return json.dumps(norm(v), sort_keys=True, default=str)


def compare(before: Trace, after: Trace, *, gold: str | None = None,
            scorer: Callable[[str, str], float | None] | None = None) -> Comparison:
    """`before` and `after` step by step and as answers; with `gold` and `scorer` (prediction, gold ->
    0..1 or None when the gold cannot be scored), each answer's score."""
    n = max(len(before.steps), len(after.steps))
    diffs = []
    for k in range(n):
        a = before.steps[k] if k < len(before.steps) else None
        b = after.steps[k] if k < len(after.steps) else None
        diffs.append(StepDiff(k, a.tool if a else None, b.tool if b else None, a.status if a else None,
                              b.status if b else None, _rows(a), _rows(b),
                              arg_changes(a.args if a else None, b.args if b else None),
                              a.summary if a else "", b.summary if b else ""))
    ra, rb = before.evidence_rounds, after.evidence_rounds
    sa = sb = None
    if gold is not None and scorer is not None:
        sa, sb = scorer(before.answer.text, gold), scorer(after.answer.text, gold)
    return Comparison(before.question, tuple(diffs), before.answer.text, after.answer.text,
                      tuple(r for r in rb if r not in ra), tuple(r for r in ra if r not in rb),
                      tuple(r for r in rb if r in ra), before.prompt_tokens + before.completion_tokens,
                      after.prompt_tokens + after.completion_tokens, before.total_ms, after.total_ms,
                      before.budget_left, after.budget_left, gold, sa, sb)
