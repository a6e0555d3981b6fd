"""The rule-based planner: question intent -> a plan of at most 3 tool steps, instantiated progressively.

`outline()` analyses the question (intent.py), picks the table and columns
from the planning context (columns.py: embedding + BM25 over metadata) and
writes the high-level plan [(goal, tool)]. `instantiate()` fills in one step's
Table 4 arguments from the question and the results of the earlier steps:
for "... on the day I ran the half marathon", step 1 is EventLocate and step
2's time filter is the date step 1 found (paper eq. 10). With
progressive=False every step is instantiated before any runs, so such a
constraint is unavailable (the no-progressive ablation); the trace says so.
When no column supports the question, the plan falls back to retrieval;
when no tool can help, the plan is empty and the answer is a refusal.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Callable, Sequence

import numpy as np

from ..config import Config
from .columns import SCAFFOLD, ColumnChoice, match_categories, match_columns, unit_tokens
from .context import PlanningContext
from .intent import Analysis, Condition, analyze
from .metadata import TableMeta
from .scoring import stem, tokens
from .tools import ANALYTIC_TOOLS, ToolResult
from .trace import Plan, PlanStep

EVENT_MIN_OVERLAP = 0.34  # share of the event clause's words an located event must contain ...
EVENT_MIN_SCORE = 0.55  # ... unless its relevance is at least this


@dataclass(frozen=True)
class Instantiation:
    """One step's arguments (None: skip the step) and how they were obtained."""

    args: dict | None
    notes: tuple[str, ...] = ()
    prompt_tokens: int = 0
    completion_tokens: int = 0
    planner: str = "rules"
    fallback: str | None = None


@dataclass(frozen=True)
class Decision:
    """What the rule planner decided for the analytic part of a question."""

    analysis: Analysis
    tool: str | None = None  # analytic tool, None when retrieval only
    table: str | None = None
    column: str | None = None
    op: str | None = None
    order: str | None = None
    budget: int | None = None
    filters: tuple[dict, ...] = ()  # condition and category filters (time is added per step)
    choices: tuple[ColumnChoice, ...] = ()
    notes: tuple[str, ...] = ()
    retrieval: str | None = None  # "semantic" | "locate" when the plan retrieves instead


def event_supported(unit_text: str, score: float | None, event_text: str) -> bool:
    """Does a located event plausibly match the event clause (shared words or a high score)?"""
    want = set(tokens(event_text))
    if not want:
        return True
    have = set(tokens(unit_text))
    return len(want & have) / len(want) >= EVENT_MIN_OVERLAP or (score or 0.0) >= EVENT_MIN_SCORE


def _as_date(value) -> date | None:
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value).date()
        except ValueError:
            return None
    return None


def event_range(relation: str, d: date, now: date, first: date | None) -> tuple[date, date]:
    """The time window an event clause means once its date is known."""
    if relation == "day_after":
        return d + timedelta(days=1), d + timedelta(days=1)
    if relation == "day_before":
        return d - timedelta(days=1), d - timedelta(days=1)
    if relation == "week":
        return d - timedelta(days=3), d + timedelta(days=3)
    if relation == "since":
        return d, max(d, now)
    if relation == "after":
        return d + timedelta(days=1), max(d + timedelta(days=1), now)
    if relation == "before":
        return (first or d - timedelta(days=3650)), d - timedelta(days=1)
    return d, d


class RulePlanner:
    """Deterministic planner; `embed`/`encode_query` give metadata and question embeddings."""

    name = "rules"

    def __init__(self, config: Config, embed: Callable[[list[str]], np.ndarray],
                 encode_query: Callable[[str], np.ndarray], catalog: Callable[[], dict[str, TableMeta]]):
        self.config = config
        self.embed = embed
        self.encode_query = encode_query
        self.catalog = catalog

    # ------------------------------------------------------------------ outline
    def outline(self, question: str, context: PlanningContext, tools: Sequence[str],
                now: datetime | date, first: datetime | date | None,
                catalog: dict[str, TableMeta] | None = None) -> Plan:
        """The high-level plan [(goal, tool)] (at most config.max_steps steps)."""
        a = analyze(question, now, first)
        analytic = [t for t in tools if t in ANALYTIC_TOOLS]
        cat = catalog if catalog is not None else self.catalog()
        tables = [cat[n] for n in context.tables if n in cat] if analytic else []
        d = self._decide(a, tables, context) if tables and a.kind != "retrieval" else Decision(
            a, notes=("no analytic tables available",) if not tables else ())
        steps: list[PlanStep] = []
        if a.event and "EventLocate" in tools and (d.tool or a.kind != "when"):
            steps.append(PlanStep(f"locate when: {a.event.text}", "EventLocate"))
        if d.tool:
            steps.append(PlanStep(self._goal(d), d.tool))
        elif a.kind == "when" and "EventLocate" in tools:
            steps.append(PlanStep("locate the event the question asks about", "EventLocate"))
            d = Decision(a, notes=d.notes, retrieval="locate")
        elif "SemanticMatch" in tools:
            steps.append(PlanStep("retrieve memories relevant to the question", "SemanticMatch"))
            d = Decision(a, notes=d.notes, retrieval="semantic")
        elif "EventLocate" in tools and not steps:
            steps.append(PlanStep("locate events relevant to the question", "EventLocate"))
            d = Decision(a, notes=d.notes, retrieval="locate")
        intent = a.kind if d.tool or not d.retrieval else f"{a.kind}->retrieval" if a.kind not in (
            "retrieval", "when") else a.kind
        if a.event and d.tool:
            intent = f"event+{a.kind}"
        if not steps:
            intent = "refuse"
        notes = list(d.notes)
        if len(steps) > self.config.max_steps:
            notes.append(f"plan cut to {self.config.max_steps} steps")
            steps = steps[: self.config.max_steps]
        return Plan(tuple(steps), "rules", intent, tuple(notes), payload=d)

    def _goal(self, d: Decision) -> str:
        col = d.column or "rows"
        if d.tool == "Compute":
            return f"compute {d.op} of {col} in {d.table}"
        if d.tool == "Rank":
            return f"rank {d.table} rows by {col} ({d.order})"
        return f"select matching rows of {d.table}"

    def _condition_filters(self, a: Analysis, tables: list[TableMeta], prior: dict) -> list[tuple[str, dict]]:
        out = []
        for c in a.conditions:
            choice = self._condition_column(c, tables, prior)
            if choice is not None:
                out.append((choice.table, {"column": choice.column, "op": c.op, "value": c.number}))
        return out

    def _condition_column(self, c: Condition, tables: list[TableMeta], prior: dict) -> ColumnChoice | None:
        if c.unit:
            u = stem(c.unit.lower())
            by_unit = [(t, col) for t in tables for col in t.attribute_columns()
                       if col.dtype == "DOUBLE" and (u in unit_tokens(col.unit) or u in set(tokens(col.name)))]
            if len(by_unit) == 1:
                t, col = by_unit[0]
                return ColumnChoice(t.table_name, col.name, 1.0, 1.0, 1.0, 1, True)
            if by_unit:
                names = {(t.table_name, col.name) for t, col in by_unit}
                ranked = [ch for ch in match_columns(f"{c.context} {c.unit}", tables, self.embed, self.encode_query,
                                                     self.config.lambda_meta, table_prior=prior) if
                          (ch.table, ch.column) in names]
                return ranked[0] if ranked else None
        ranked = match_columns(f"{c.context} {c.unit or ''}", tables, self.embed, self.encode_query,
                               self.config.lambda_meta, table_prior=prior)
        return ranked[0] if ranked and ranked[0].supported else None

    def _decide(self, a: Analysis, tables: list[TableMeta], context: PlanningContext) -> Decision:
        prior = {t.table_name: context.table_score(t.table_name) for t in tables}
        notes: list[str] = []
        cond = self._condition_filters(a, tables, prior)
        if len(cond) < len(a.conditions):
            notes.append("a numeric condition matched no column")
        cats = match_categories(a.target_text, tables)
        cat_filters = [(m.table, {"column": m.column, "op": "=", "value": m.value}) for m in cats]
        kind = a.kind
        numeric: list[ColumnChoice] = []
        if kind == "how_many":
            noun = stem((a.how_many_noun or "").lower())
            unitish = any(noun in unit_tokens(c.unit) or noun in set(tokens(c.name))
                          for t in tables for c in t.attribute_columns() if c.dtype == "DOUBLE")
            kind = "value_sum" if unitish else "count"
        if kind in ("aggregate", "trend", "extreme", "value", "value_sum", "latest", "first"):
            dtypes = {"latest": ("DOUBLE", "VARCHAR", "DATE", "TIMESTAMP"), "first": ("DOUBLE", "VARCHAR", "DATE", "TIMESTAMP"),
                      "value": ("DOUBLE", "VARCHAR")}.get(kind, ("DOUBLE",))
            text = a.target_text
            for _, f in cat_filters:  # the category words name the rows, not the measured quantity
                text = re.sub(r"\b" + re.escape(str(f["value"]).lower()) + r"\w*", " ", text)
            numeric = match_columns(text, tables, self.embed, self.encode_query, self.config.lambda_meta,
                                    dtypes=dtypes, table_prior=prior)
        best = next((c for c in numeric if c.supported), None)
        if kind in ("latest", "first") and best is None and (cat_filters or cond) and a.asks_date:
            table = (cat_filters or cond)[0][0]
            filters = tuple(f for t, f in cat_filters + cond if t == table)
            return Decision(a, "Rank", table, "time", order="desc" if kind == "latest" else "asc", budget=1,
                            filters=filters, notes=tuple(notes))
        if kind in ("count", "list", "yesno"):
            table = None
            if cond or cat_filters:
                table = (cond or cat_filters)[0][0]
            else:
                # what is counted names the table: its words against each table's name, description, columns
                noun_text = " ".join(filter(None, [a.how_many_noun, a.target_text]))
                qt = set(tokens(noun_text)) - SCAFFOLD
                noun = stem((a.how_many_noun or "").lower())
                best_key = None
                for t in tables:
                    words_t = set(tokens(t.table_name)) | set(tokens(t.description)) | {
                        w for c in t.attribute_columns() for w in tokens(c.name)}
                    lex = len(qt & words_t) + (2 if noun and noun in set(tokens(t.table_name)) else 0)
                    key = (lex, prior.get(t.table_name, 0.0))
                    if lex > 0 and (best_key is None or key > best_key):
                        best_key, table = key, t.table_name
            if table is None:
                return Decision(a, notes=tuple(notes + ["no table matches what is counted"]))
            filters = tuple(f for t, f in cond + cat_filters if t == table)
            if kind == "count":
                return Decision(a, "Compute", table, "*", op="count", filters=filters, notes=tuple(notes))
            if not filters:
                return Decision(a, notes=tuple(notes + ["no condition to filter on"]))
            return Decision(a, "Filter", table, None, filters=filters, notes=tuple(notes))
        if best is None:
            if numeric:
                notes.append(f"no column supports the question (best: {numeric[0].table}.{numeric[0].column}, "
                             f"cos {numeric[0].cos:.2f}, no shared word)")
            return Decision(a, choices=tuple(numeric[:5]), notes=tuple(notes))
        table, column = best.table, best.column
        filters = tuple(f for t, f in cond + cat_filters if t == table)
        dropped = [f for t, f in cond + cat_filters if t != table]
        if dropped:
            notes.append(f"{len(dropped)} filter(s) on other tables ignored")
        common = dict(table=table, column=column, filters=filters, choices=tuple(numeric[:5]), notes=tuple(notes))
        single_day = (a.time_range is not None and a.time_range.days() == 1) or (
            a.event is not None and a.event.relation.startswith("day"))
        if kind == "aggregate":
            return Decision(a, "Compute", op=a.op, **common)
        if kind == "trend":
            return Decision(a, "Compute", op="change", **common)
        if kind == "extreme":
            return Decision(a, "Rank", order=a.order, budget=a.top_n, **common)
        if kind in ("latest", "first"):
            return Decision(a, "Compute", op=a.op, **common)
        additive = kind == "value_sum" or bool(re.search(r"\bhow\s+(?:much|far|many)\b|\btotal\b", a.target_text))
        scoped = a.time_range is not None or a.event is not None
        if next(c for t in tables if t.table_name == table for c in t.columns if c.name == column).dtype != "DOUBLE":
            # a text value: what it was on that day / most recently; over a longer scope, the rows
            if scoped and not single_day:
                return Decision(a, "Filter", **common)
            return Decision(a, "Compute", op="latest", **common)
        if single_day:
            return Decision(a, "Compute", op="sum" if additive else "avg", **common)
        if scoped:
            return Decision(a, "Compute", op="sum" if additive else "avg", **common)
        if filters and kind == "value":
            return Decision(a, "Filter", **common)
        return Decision(a, "Compute", op="sum" if kind == "value_sum" else "latest", **common)

    # ------------------------------------------------------------------ instantiate
    def instantiate(self, question: str, context: PlanningContext, plan: Plan, index: int,
                    results: Sequence[ToolResult | None], budget_left: int, *, progressive: bool = True,
                    now: datetime | date | None = None, first: datetime | date | None = None) -> Instantiation:
        """Step `index`'s arguments from the question and earlier results (None results = failed steps)."""
        d: Decision = plan.payload
        a = d.analysis
        step = plan.steps[index]
        if step.tool == "EventLocate":
            if d.retrieval == "locate":
                query = a.event.text if a.event else re.sub(r"^\s*when\s+(?:did|was|were|is|do|does)\s+", "",
                                                            question, flags=re.IGNORECASE)
                return Instantiation({"query_content": query, "result_budget": min(5, budget_left)})
            return Instantiation({"query_content": a.event.text, "result_budget": 1})
        if step.tool == "SemanticMatch":
            return Instantiation({"query_content": question, "retrieval_scope": "event",
                                  "result_budget": budget_left})
        notes: list[str] = []
        filters = [dict(f) for f in d.filters]
        nowd = _as_date(now) or date.today()
        firstd = _as_date(first)
        if a.event is not None and index > 0:
            if not progressive:
                notes.append("no-progressive: the event's date from step 1 is not available; "
                             "no time constraint")
            else:
                prev = results[0] if results else None
                if prev is None or not prev.units:
                    return Instantiation(None, ("the event was not found; nothing to compute",))
                u = prev.units[0]
                if not event_supported(u.text, u.score, a.event.text):
                    return Instantiation(None, (f"the best event ({u.rounds[0] if u.rounds else u.unit_id}) does not "
                                                f"match {a.event.text!r}; nothing to compute",))
                ed = _as_date(u.time)
                if ed is None:
                    return Instantiation(None, ("the located event has no time",))
                lo, hi = event_range(a.event.relation, ed, nowd, firstd)
                filters.append({"column": "time", "op": "between", "value": [lo.isoformat(), hi.isoformat()]})
                notes.append(f"time constraint from step 1: {lo.isoformat()}..{hi.isoformat()} "
                             f"({a.event.relation} of event {u.rounds[0] if u.rounds else u.unit_id})")
        elif a.time_range is not None:
            filters.append({"column": "time", "op": "between",
                            "value": [a.time_range.start.isoformat(), a.time_range.end.isoformat()]})
        args: dict = {"table": d.table}
        if step.tool == "Compute":
            args.update({"target_column_expression": d.column or "*", "operator": d.op or "latest",
                         "optional_column_filters": filters})
        elif step.tool == "Rank":
            args.update({"target_column_expression": d.column, "order": d.order or "desc",
                         "optional_column_filters": filters, "result_budget": min(d.budget or 1, budget_left)})
        elif step.tool == "Filter":
            if not filters:
                return Instantiation(None, ("no filter to apply",))
            args.update({"column_filters": filters, "result_budget": budget_left})
        else:  # Lookup
            args.update({"key_values": {f["column"]: f["value"] for f in filters if f["op"] == "="},
                         "result_budget": budget_left})
        return Instantiation(args, tuple(notes))
