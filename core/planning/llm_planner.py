"""The LLM planner: a high-level plan [(goal, tool)], then progressive instantiation (paper eq. 10).

Prompts and JSON schemas come from core.prompts (plan, instantiate). Every
model output is validated against the tool schemas by the Toolbox. Invalid
output is first repaired where the intent is clear (names resolved to the
catalog spelling, unknown keys dropped, operator aliases, missing
result_budget filled, null-valued filters dropped); each repair is a note in
the trace. When repair is impossible, or the call fails, the step reports a
fallback and the engine replaces the rest of the plan with the rule-based
plan, also visibly in the trace.
"""
from __future__ import annotations

from datetime import date, datetime
from typing import Sequence

from .. import prompts
from ..config import Config
from ..errors import LLMError
from ..protocols import LLM
from .context import PlanningContext
from .rule_planner import Instantiation
from .tools import TOOL_ARGS, TOOL_NAMES, Toolbox, ToolResult
from .trace import Plan, PlanStep
from .validate import ToolError


def result_text(r: ToolResult | None, max_units: int = 5) -> str:
    """An earlier step's result as the instantiation prompt shows it."""
    if r is None:
        return "(failed or skipped)"
    parts = [r.summary]
    for u in r.units[:max_units]:
        parts.append(f"[{u.kind} {u.unit_id} time={u.time} rounds={','.join(u.rounds[:3])}] {u.text[:300]}")
    return "\n".join(parts)


class LLMPlanner:
    """Plans with `llm`; `toolbox` validates the instantiated arguments."""

    name = "llm"

    def __init__(self, llm: LLM, config: Config, toolbox: Toolbox):
        self.llm = llm
        self.config = config
        self.toolbox = toolbox

    def outline(self, question: str, context: PlanningContext, tools: Sequence[str],
                now: datetime | date, first=None) -> Plan:
        """The model's plan; raises LLMError (call failed) or ToolError (unusable plan) for the fallback."""
        msgs, schema = prompts.plan(question, context.render(tuple(tools)), max_steps=self.config.max_steps,
                                    tools=tuple(tools))
        if isinstance(now, (date, datetime)):
            msgs[-1] = dict(msgs[-1], content=msgs[-1]["content"] + f"\n(Today is {now.isoformat()[:10]}.)")
        res = self.llm.complete_json(prompts.PLAN, msgs, schema, prompt_version=prompts.PROMPT_VERSION[prompts.PLAN])
        data = res.data if isinstance(res.data, dict) else {}
        raw = data.get("steps")
        if not isinstance(raw, list) or not raw:
            raise ToolError("the plan has no steps")
        steps, notes = [], []
        for i, s in enumerate(raw):
            if not isinstance(s, dict):
                raise ToolError(f"plan step {i + 1} is not an object")
            tool = s.get("tool")
            canon = next((t for t in TOOL_NAMES if isinstance(tool, str) and t.lower() == tool.strip().lower()), None)
            if canon is None or canon not in tools:
                raise ToolError(f"plan step {i + 1} uses unavailable tool {str(tool)[:30]!r}; "
                                f"allowed: {', '.join(tools)}")
            if canon != tool:
                notes.append(f"step {i + 1}: tool {tool!r} read as {canon}")
            steps.append(PlanStep(str(s.get("goal") or canon)[:300], canon))
        if len(steps) > self.config.max_steps:
            notes.append(f"plan had {len(steps)} steps; cut to {self.config.max_steps}")
            steps = steps[: self.config.max_steps]
        return Plan(tuple(steps), "llm", "llm", tuple(notes), res.prompt_tokens, res.completion_tokens)

    def _repair(self, tool: str, args: dict, budget_left: int) -> tuple[dict, list[str]]:
        notes = []
        args = dict(args)
        for k in list(args):
            if k not in TOOL_ARGS[tool]:
                notes.append(f"dropped unknown argument {k!r}")
                args.pop(k)
        if "result_budget" in TOOL_ARGS[tool] and not isinstance(args.get("result_budget"), int):
            args["result_budget"] = budget_left
            notes.append(f"result_budget set to {budget_left}")
        if tool == "Compute" and args.get("operator") == "diff":
            args["operator"] = "change"
        for key in ("column_filters", "optional_column_filters"):
            fl = args.get(key)
            if isinstance(fl, list):
                kept = [f for f in fl if not (isinstance(f, dict) and f.get("value") is None)]
                if len(kept) != len(fl):
                    notes.append(f"dropped {len(fl) - len(kept)} filter(s) without a value")
                args[key] = kept
        if tool == "SemanticMatch" and not args.get("retrieval_scope"):
            args["retrieval_scope"] = "event"
        return args, notes

    def instantiate(self, question: str, context: PlanningContext, plan: Plan, index: int,
                    results: Sequence[ToolResult | None], budget_left: int, *, progressive: bool = True,
                    now=None, first=None) -> Instantiation:
        """Arguments for step `index`; on failure an Instantiation with args None and `fallback` set."""
        step = plan.steps[index]
        cat = self.toolbox.catalog()
        tables = [t for t in context.tables if t in cat]
        columns = sorted({c for t in tables for c in cat[t].column_names})
        previous = [result_text(r) for r in results] if progressive else []
        ctx = context.render(self.toolbox.allowed_tools)
        if isinstance(now, (date, datetime)):
            ctx += f"\nToday (the latest time in the history) is {now.isoformat()[:10]}."
        msgs, schema = prompts.instantiate(question, ctx, step.goal, step.tool, previous,
                                           tables=tables or None, columns=columns or None,
                                           budget=max(1, budget_left))
        try:
            res = self.llm.complete_json(prompts.INSTANTIATE, msgs, schema,
                                         prompt_version=prompts.PROMPT_VERSION[prompts.INSTANTIATE])
        except LLMError as e:
            return Instantiation(None, planner="llm", fallback=f"step {index + 1}: LLM call failed ({str(e)[:150]})")
        data = res.data if isinstance(res.data, dict) else {}
        args = data.get("args", data)
        tok = dict(prompt_tokens=res.prompt_tokens, completion_tokens=res.completion_tokens, planner="llm")
        if not isinstance(args, dict):
            return Instantiation(None, fallback=f"step {index + 1}: arguments are not an object", **tok)
        args, notes = self._repair(step.tool, args, budget_left)
        try:
            _, clean = self.toolbox.validate(step.tool, args, budget_left)
        except ToolError as e:
            return Instantiation(None, tuple(notes), fallback=f"step {index + 1}: invalid arguments: {e}", **tok)
        for k in ("table", "target_column_expression"):
            if k in args and isinstance(args[k], str) and clean.get(k) != args[k]:
                notes.append(f"repaired {k}: {args[k][:40]!r} -> {clean[k]!r}")
        for key in ("column_filters", "optional_column_filters"):
            for f_in, f_out in zip(args.get(key) or [], clean.get(key) or []):
                if isinstance(f_in, dict) and f_in.get("column") != f_out["column"]:
                    notes.append(f"repaired filter column: {str(f_in.get('column'))[:40]!r} -> {f_out['column']!r}")
        return Instantiation(clean, tuple(notes), **tok)
