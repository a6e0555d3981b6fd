"""The LLM planner: a high-level plan [(goal, tool)], then progressive instantiation (paper eq. 10).

Prompts and JSON schemas come from core.prompts (plan, instantiate). Every
model output is validated against the tool schemas by the Toolbox. Invalid
output is first repaired where the intent is clear (names resolved to the
catalog spelling, unknown keys dropped, operator aliases, missing
result_budget filled, null-valued filters dropped, a category the question
names but the call does not filter on added); each repair is a note in the
trace. When repair is impossible, or the call fails, the step reports a
fallback and the engine replaces the rest of the plan with the rule-based
plan, also visibly in the trace.

Prompts are kept small (tokens are the cost of a query, and on a CPU the
time): the plan sees the selected tables as one line each (name, short
description, columns with units, the values of small categorical columns)
and the best few episodes cut short; an analytic step's instantiation sees
only the selected tables, a retrieval step's none (its arguments are the
query text).
"""
from __future__ import annotations

from datetime import date, datetime
from typing import Sequence

from .. import prompts
from ..config import Config
from ..errors import LLMError
from ..protocols import LLM
from .columns import match_categories
from .context import PlanningContext
from .dates import find_time_range
from .intent import analyze
from .metadata import TableMeta
from .rule_planner import Instantiation
from .tools import ANALYTIC_TOOLS, TOOL_ARGS, TOOL_NAMES, Toolbox, ToolResult
from .trace import Plan, PlanStep
from .validate import ToolError


def result_text(r: ToolResult | None, max_units: int = 3, max_chars: int = 200) -> str:
    """An earlier step's result as the instantiation prompt shows it."""
    if r is None:
        return "(failed or skipped)"
    parts = [r.summary]
    for u in r.units[:max_units]:
        parts.append(f"[{u.kind} {u.unit_id} time={u.time} rounds={','.join(u.rounds[:3])}] {u.text[:max_chars]}")
    return "\n".join(parts)


PLAN_EPISODES = 3  # episodes shown to the planner (best first)
EPISODE_CHARS = 140  # characters of each episode description shown
TABLE_DESC_CHARS = 110  # characters of a table description shown
MAX_CATEGORIES = 6  # values listed for a small categorical column
HIDDEN_COLUMNS = frozenset({"source", "round_order", "captions"})  # bookkeeping, never asked about


def _visible(c) -> bool:
    return c.name not in HIDDEN_COLUMNS and not c.name.startswith("_")


def table_line(t: TableMeta) -> str:
    """One table for a prompt: 'harvest_log: <description>. Columns: time, weight (g), ...'."""
    desc = (t.description or "").split(";")[0].strip()
    if len(desc) > TABLE_DESC_CHARS:
        desc = desc[: TABLE_DESC_CHARS - 3] + "..."
    cols = []
    for c in t.columns:
        if not _visible(c):
            continue
        s = c.name + (f" ({c.unit})" if c.unit else "")
        if c.categories and len(c.categories) <= MAX_CATEGORIES:
            s += " [" + "|".join(dict.fromkeys(x.lower() for x in c.categories)) + "]"
        cols.append(s)
    return f"{t.table_name}: {desc}. Columns: {', '.join(cols)}"


def tables_text(context: PlanningContext, catalog: dict[str, TableMeta]) -> str:
    """The selected tables, one line each ('' when none)."""
    lines = [table_line(catalog[n]) for n in context.tables if n in catalog]
    return "Tables:\n" + "\n".join(f"- {ln}" for ln in lines) if lines else ""


def plan_context(context: PlanningContext, catalog: dict[str, TableMeta], *, episodes: int = PLAN_EPISODES) -> str:
    """The planner's view of the planning context: selected tables and the best few episodes, cut short."""
    parts = [tables_text(context, catalog) or "Tables: (none)"]
    eps = [c for c in context.candidates if c.kind == "episode" and c.selected][:episodes]
    if eps:
        parts.append("Episodes:\n" + "\n".join(
            "- " + " ".join(c.text.split())[:EPISODE_CHARS] for c in eps))
    return "\n".join(parts)


def period_note(question: str, now, first=None, *, for_args: bool = False) -> str:
    """The question's period resolved to dates (small models get date arithmetic wrong), or, when it
    names none, a note that no time filter is wanted (models otherwise filter on today's date)."""
    if not isinstance(now, (date, datetime)):
        return ""
    try:
        tr = find_time_range(question, now, first if isinstance(first, (date, datetime)) else None)
    except (ValueError, TypeError, OverflowError):  # an odd date in the question: no hint rather than none
        tr = None
    if tr is None:
        return "(The question names no date or period: no time filter unless an earlier result gives a date.)" \
            if for_args else ""
    return (f"(The question's period '{tr.phrase}' is {tr.start.isoformat()} to {tr.end.isoformat()}"
            + (": filter time >= start and time <= end.)" if for_args else ".)"))


class LLMPlanner:
    """Plans with `llm`; `toolbox` validates the instantiated arguments."""

    name = "llm"

    def __init__(self, llm: LLM, config: Config, toolbox: Toolbox):
        self.llm = llm
        self.config = config
        self.toolbox = toolbox

    def outline(self, question: str, context: PlanningContext, tools: Sequence[str],
                now: datetime | date, first=None, draft: Plan | None = None) -> Plan:
        """The model's plan; raises LLMError (call failed) or ToolError (unusable plan) for the fallback.

        `draft` (optional): the rule-based plan, shown to the model as a suggestion. When the
        model answers with the draft's tools in the draft's order, the draft itself is returned
        (planner "rules", with the model's tokens and a note), so its steps are instantiated by
        the rule planner without further calls; any other plan is the model's own.
        """
        msgs, schema = prompts.plan(question, plan_context(context, self.toolbox.catalog()),
                                    max_steps=self.config.max_steps, tools=tuple(tools),
                                    draft=[(s.tool, s.goal) for s in draft.steps] if draft is not None else None)
        note = period_note(question, now, first)
        if note:
            msgs[-1] = dict(msgs[-1], content=msgs[-1]["content"] + "\n" + note)
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
        if draft is not None and [s.tool for s in steps] == [s.tool for s in draft.steps]:
            return Plan(draft.steps, draft.planner, draft.intent,
                        draft.notes + tuple(notes) + ("the LLM kept the rule-based plan",),
                        res.prompt_tokens, res.completion_tokens, payload=draft.payload)
        return Plan(tuple(steps), "llm", "llm", tuple(notes), res.prompt_tokens, res.completion_tokens)

    def _repair(self, tool: str, args: dict, budget_left: int) -> tuple[dict, list[str]]:
        notes = []
        args = dict(args)
        for k in list(args):
            if k not in TOOL_ARGS[tool]:
                notes.append(f"dropped unknown argument {k!r}")
                args.pop(k)
        rb = args.get("result_budget")
        if "result_budget" in TOOL_ARGS[tool] and (not isinstance(rb, int) or isinstance(rb, bool)):
            args["result_budget"] = budget_left
            notes.append(f"result_budget set to {budget_left}")
        elif "result_budget" in TOOL_ARGS[tool] and rb > budget_left:
            args["result_budget"] = budget_left
            notes.append(f"result_budget {rb} cut to {budget_left} (budget left for this step)")
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
        columns = sorted({c.name for t in tables for c in cat[t].columns if _visible(c)})
        previous = [result_text(r) for r in results] if progressive else []
        ctx = tables_text(context, cat) if step.tool not in ("SemanticMatch", "EventLocate") else ""
        note = period_note(question, now, first, for_args=True)
        if note:
            ctx = (ctx + "\n" + note).strip()
        # leave one evidence unit for each later step: a first step that spends the whole shared
        # budget would end the plan before the step that needed its result
        later = len(plan.steps) - index - 1
        budget = max(1, budget_left - later)
        msgs, schema = prompts.instantiate(question, ctx, step.goal, step.tool, previous,
                                           tables=tables or None, columns=columns or None, budget=budget)
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
        args, notes = self._repair(step.tool, args, budget)
        try:
            _, clean = self.toolbox.validate(step.tool, args, budget)
        except ToolError as e:
            return Instantiation(None, tuple(notes), fallback=f"step {index + 1}: invalid arguments: {e}", **tok)
        for k in ("table", "target_column_expression"):
            if k in args and isinstance(args[k], str) and clean.get(k) != args[k]:
                notes.append(f"repaired {k}: {args[k][:40]!r} -> {clean[k]!r}")
        for key in ("column_filters", "optional_column_filters"):
            for f_in, f_out in zip(args.get(key) or [], clean.get(key) or []):
                if isinstance(f_in, dict) and f_in.get("column") != f_out["column"]:
                    notes.append(f"repaired filter column: {str(f_in.get('column'))[:40]!r} -> {f_out['column']!r}")
        clean = self._stated_conditions(question, step.tool, clean, budget, notes, now, first)
        return Instantiation(clean, tuple(notes), **tok)

    def _stated_conditions(self, question: str, tool: str, clean: dict, budget: int, notes: list[str],
                           now=None, first=None) -> dict:
        """`clean` plus a filter for each value of a categorical column of its table that the question
        names and the call leaves unfiltered ("my longest run" -> activity = run): a model that drops
        the question's condition computes over the wrong rows. The values are found as the rule planner
        finds them (columns.match_categories on the question's target words). Returns `clean` unchanged
        when nothing is missing or the completed call does not validate; each added filter is a note."""
        if tool not in ANALYTIC_TOOLS or not isinstance(clean.get("table"), str):
            return clean
        meta = self.toolbox.catalog().get(clean["table"])
        if meta is None:
            return clean
        ref = now if isinstance(now, (date, datetime)) else date.today()
        try:
            a = analyze(question, ref, first if isinstance(first, (date, datetime)) else None)
        except (ValueError, TypeError, OverflowError):
            return clean
        text = a.question if a.kind == "compare" else a.target_text
        key = {"Lookup": "key_values", "Filter": "column_filters"}.get(tool, "optional_column_filters")
        have = clean.get(key) or ({} if key == "key_values" else [])
        filtered = set(have) if isinstance(have, dict) else {f.get("column") for f in have if isinstance(f, dict)}
        missing = [m for m in match_categories(text, [meta]) if m.column not in filtered]
        if not missing:
            return clean
        args = dict(clean)
        if key == "key_values":
            args[key] = {**have, **{m.column: m.filter()["value"] for m in missing}}
        else:
            args[key] = list(have) + [m.filter() for m in missing]
        try:
            _, fixed = self.toolbox.validate(tool, args, budget)
        except ToolError:
            return clean
        for m in missing:
            f = m.filter()
            shown = ", ".join(map(str, f["value"])) if isinstance(f["value"], list) else f["value"]
            notes.append(f"added filter {m.column} {f['op']} {shown}: the question names it and the call had none")
        return fixed
