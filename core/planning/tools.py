"""The six memory-access tools of paper Table 4, under a shared evidence budget.

`Toolbox.call(tool, args, budget_left)` validates the arguments (exact
Table 4 keys; names resolved against the metadata; values cast; operators
checked), runs read-only SQL built only from validated identifiers and bound
parameters on a cursor of the memory's connection, and returns a frozen
`ToolResult` whose evidence units never exceed `budget_left`:
one row or memory unit = 1 unit; a computed result with its rows = 1 unit.
Invalid arguments raise `ToolError`; a call with no budget left is refused
with `ToolError` too.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any, Callable

import duckdb

from ..config import Config
from ..model import EvidenceUnit
from .dates import TimeRange
from .metadata import TableMeta
from .retrieval import LEVELS, RetrievalMemory, node_time
from .validate import (
    FILTER_OPS, CompiledExpr, CompiledFilter, ToolError, check_int, compile_expression, compile_filters,
    quote_ident, resolve_name,
)

ANALYTIC_TOOLS = ("Lookup", "Filter", "Compute", "Rank")
RETRIEVAL_TOOLS = ("SemanticMatch", "EventLocate")
TOOL_NAMES = ANALYTIC_TOOLS + RETRIEVAL_TOOLS
TOOL_ARGS: dict[str, tuple[str, ...]] = {
    "Lookup": ("table", "key_values", "result_budget"),
    "Filter": ("table", "column_filters", "result_budget"),
    "Compute": ("table", "target_column_expression", "operator", "optional_column_filters"),
    "Rank": ("table", "target_column_expression", "order", "optional_column_filters", "result_budget"),
    "SemanticMatch": ("query_content", "retrieval_scope", "result_budget"),
    "EventLocate": ("query_content", "result_budget"),
}
REQUIRED_ARGS: dict[str, tuple[str, ...]] = {
    "Lookup": ("table", "key_values"),
    "Filter": ("table", "column_filters"),
    "Compute": ("table", "target_column_expression", "operator"),
    "Rank": ("table", "target_column_expression", "order"),
    "SemanticMatch": ("query_content",),
    "EventLocate": ("query_content",),
}
TOOL_DESCRIPTIONS = {
    "Lookup": "Retrieves records of an analytic table whose columns equal the given key values.",
    "Filter": "Selects records of an analytic table satisfying column predicates "
              "(=, !=, <, <=, >, >=, between, in, contains; dates as YYYY-MM-DD on the `time` column).",
    "Compute": "Deterministic computation over a table scope: avg, sum, min, max, count, first, latest "
               "(by time), change (last minus first) or mode (the most frequent value); returns the result and "
               "its contributing rows.",
    "Rank": "Returns the top (order=desc) or bottom (order=asc) records by a column expression.",
    "SemanticMatch": "Retrieves semantically relevant memory units (events, episodes or topics).",
    "EventLocate": "Locates event occurrences with their surrounding context and time.",
}
COMPUTE_OPS = ("avg", "sum", "min", "max", "count", "first", "latest", "change", "mode")
OP_ALIASES = {"average": "avg", "mean": "avg", "total": "sum", "minimum": "min", "maximum": "max",
              "last": "latest", "most_recent": "latest", "earliest": "first", "difference": "change",
              "delta": "change", "trend": "change", "number": "count", "most_common": "mode",
              "most_frequent": "mode"}
ORDER_ALIASES = {"desc": "desc", "descending": "desc", "highest": "desc", "top": "desc", "max": "desc",
                 "largest": "desc", "asc": "asc", "ascending": "asc", "lowest": "asc", "bottom": "asc",
                 "min": "asc", "smallest": "asc"}
MAX_QUERY_CHARS = 2000
# the most frequent value; ties go to the value seen first (deterministic, unlike DuckDB's mode())
MODE_SQL = "(SELECT v FROM s WHERE v IS NOT NULL GROUP BY v ORDER BY count(*) DESC, min(time), v LIMIT 1)"
MAX_ROUNDS_PER_UNIT = 100
PERIOD_POOL = 10  # a search about a named time looks this many times deeper for that time's events
ALL_EVENTS = 10 ** 9  # a search's k that keeps every event (when the deeper look finds none of the period)


def _filter_schema() -> dict:
    return {"type": "array", "maxItems": 20, "items": {
        "type": "object", "required": ["column", "op", "value"],
        "properties": {"column": {"type": "string"}, "op": {"type": "string", "enum": list(FILTER_OPS)},
                       "value": {}}}}


TOOL_SCHEMAS: dict[str, dict] = {
    "Lookup": {"type": "object", "required": ["table", "key_values"], "additionalProperties": False,
               "properties": {"table": {"type": "string"}, "key_values": {"type": "object"},
                              "result_budget": {"type": "integer", "minimum": 1}}},
    "Filter": {"type": "object", "required": ["table", "column_filters"], "additionalProperties": False,
               "properties": {"table": {"type": "string"}, "column_filters": _filter_schema(),
                              "result_budget": {"type": "integer", "minimum": 1}}},
    "Compute": {"type": "object", "required": ["table", "target_column_expression", "operator"],
                "additionalProperties": False,
                "properties": {"table": {"type": "string"}, "target_column_expression": {"type": "string"},
                               "operator": {"type": "string", "enum": list(COMPUTE_OPS)},
                               "optional_column_filters": _filter_schema()}},
    "Rank": {"type": "object", "required": ["table", "target_column_expression", "order"],
             "additionalProperties": False,
             "properties": {"table": {"type": "string"}, "target_column_expression": {"type": "string"},
                            "order": {"type": "string", "enum": ["desc", "asc"]},
                            "optional_column_filters": _filter_schema(),
                            "result_budget": {"type": "integer", "minimum": 1}}},
    "SemanticMatch": {"type": "object", "required": ["query_content"], "additionalProperties": False,
                      "properties": {"query_content": {"type": "string"},
                                     "retrieval_scope": {"type": "string"},
                                     "result_budget": {"type": "integer", "minimum": 1}}},
    "EventLocate": {"type": "object", "required": ["query_content"], "additionalProperties": False,
                    "properties": {"query_content": {"type": "string"},
                                   "result_budget": {"type": "integer", "minimum": 1}}},
}


_EPOCH = datetime(1970, 1, 1)


def _iso_from_epoch_us(us: int | None) -> str | None:
    """jsonable() of the naive datetime `us` microseconds after 1970-01-01."""
    return None if us is None else (_EPOCH + timedelta(microseconds=us)).isoformat()


def _timestamp_time(t: TableMeta) -> bool:
    """The table's `time` column is a TIMESTAMP (its rows can travel as epoch microseconds)."""
    return any(c.name == "time" and c.dtype == "TIMESTAMP" for c in t.columns)


def jsonable(v: Any) -> Any:
    """A value as plain JSON (datetimes as ISO strings, non-finite floats as None)."""
    if isinstance(v, (datetime, date)):
        return v.isoformat()
    if isinstance(v, float):
        return v if math.isfinite(v) else None
    if isinstance(v, (list, tuple)):
        return [jsonable(x) for x in v]
    if isinstance(v, dict):
        return {str(k): jsonable(x) for k, x in v.items()}
    if v is None or isinstance(v, (str, int, bool)):
        return v
    return str(v)


@dataclass(frozen=True)
class ToolResult:
    """What one tool call returned. `units` is what counts against the budget."""

    tool: str
    args: dict  # validated arguments, names resolved, JSON-able
    units: tuple[EvidenceUnit, ...]
    columns: tuple[str, ...] = ()
    rows: tuple[tuple, ...] = ()  # JSON-able values (display; may exceed units for Compute)
    value: Any = None  # Compute: {"operator", "value", "n_rows", "unit", ...}
    sql: str = ""
    params: tuple = ()
    ms: float = 0.0
    summary: str = ""
    n_matched: int = 0
    notes: tuple[str, ...] = ()
    table: str | None = None
    unit: str | None = None  # the target column's unit, when there is one

    @property
    def budget_used(self) -> int:
        return len(self.units)


@dataclass
class _Query:
    """A validated analytic call ready to run."""

    table: TableMeta
    args: dict
    filters: list[CompiledFilter] = field(default_factory=list)
    expr: CompiledExpr | None = None
    budget: int = 0
    notes: list[str] = field(default_factory=list)


class Toolbox:
    """Runs tools against one memory. `catalog()` returns the current analytic-table metadata."""

    def __init__(self, con: duckdb.DuckDBPyConnection, catalog: Callable[[], dict[str, TableMeta]],
                 retrieval: RetrievalMemory | None, config: Config, *,
                 allowed_tools: tuple[str, ...] = TOOL_NAMES, image_caption: str = "",
                 period: TimeRange | None = None):
        self.con = con
        # the time the question names ("in May 2024"): a search puts the events of that time first
        self.period = period
        # the question's own image, by its caption: retrieval searches for what the picture shows too
        self.image_caption = " ".join(image_caption.split())[:MAX_QUERY_CHARS // 2]
        self.catalog = catalog
        self.retrieval = retrieval
        self.config = config
        self.allowed_tools = tuple(t for t in allowed_tools if t in TOOL_NAMES and
                                   (retrieval is not None or t not in RETRIEVAL_TOOLS))

    # ------------------------------------------------------------------ validation
    def check_tool(self, tool: object) -> str:
        """The canonical tool name (case-insensitive) or ToolError naming the allowed tools."""
        if isinstance(tool, str):
            for t in TOOL_NAMES:
                if tool.strip().lower() == t.lower():
                    if t not in self.allowed_tools:
                        raise ToolError(f"tool {t} is not available here; allowed: {', '.join(self.allowed_tools)}")
                    return t
        shown = str(tool)[:40]
        raise ToolError(f"unknown tool {shown!r}; allowed: {', '.join(self.allowed_tools)}")

    def _check_keys(self, tool: str, args: object) -> dict:
        if not isinstance(args, dict):
            raise ToolError(f"{tool}: arguments must be an object with keys {', '.join(TOOL_ARGS[tool])}")
        extra = [k for k in args if k not in TOOL_ARGS[tool]]
        if extra:
            raise ToolError(f"{tool}: unknown argument(s) {', '.join(repr(str(k)[:30]) for k in extra)}; "
                            f"allowed: {', '.join(TOOL_ARGS[tool])}")
        missing = [k for k in REQUIRED_ARGS[tool] if args.get(k) in (None, "")]
        if missing:
            raise ToolError(f"{tool}: missing argument(s) {', '.join(missing)}")
        return args

    def _table(self, raw: object, where: str) -> TableMeta:
        cat = self.catalog()
        if not cat:
            raise ToolError(f"{where}: the memory has no analytic tables")
        return cat[resolve_name(raw, sorted(cat), where)]

    def _budget(self, raw: object, left: int, notes: list[str], where: str) -> int:
        want = check_int(raw, where, default=left)
        if want > left:
            notes.append(f"result_budget {want} truncated to the {left} unit(s) left")
        return min(want, left)

    def prepare(self, tool: str, args: object, budget_left: int) -> tuple[str, _Query | dict]:
        """Validate a call without running it; returns the canonical tool and prepared arguments."""
        tool = self.check_tool(tool)
        args = self._check_keys(tool, args)
        if budget_left <= 0:
            raise ToolError(f"{tool}: refused, the evidence budget is used up")
        notes: list[str] = []
        if tool in RETRIEVAL_TOOLS:
            q = args.get("query_content")
            if not isinstance(q, str) or not q.strip():
                raise ToolError(f"{tool}.query_content: expected non-empty text")
            if len(q) > MAX_QUERY_CHARS:
                raise ToolError(f"{tool}.query_content: too long ({len(q)} characters, max {MAX_QUERY_CHARS})")
            out = {"query_content": q.strip(),
                   "result_budget": self._budget(args.get("result_budget"), budget_left, notes,
                                                 f"{tool}.result_budget")}
            if tool == "SemanticMatch":
                out["retrieval_scope"] = self._scope(args.get("retrieval_scope"))
            out["_notes"] = notes
            return tool, out
        table = self._table(args.get("table"), f"{tool}.table")
        q = _Query(table=table, args={"table": table.table_name}, notes=notes)
        errors: list[ToolError] = []  # every faulty argument is named, not only the first

        def part(fn, *a, **kw):
            try:
                return fn(*a, **kw)
            except ToolError as e:
                errors.append(e)
                return None

        if tool == "Lookup":
            kv = args.get("key_values")
            if isinstance(kv, list):
                kv = {str(d.get("column")): d.get("value") for d in kv if isinstance(d, dict)} or None
            if not isinstance(kv, dict) or not kv:
                raise ToolError("Lookup.key_values: expected an object {column: value}")
            q.filters = part(compile_filters, [{"column": k, "op": "in" if isinstance(v, list) else "=", "value": v}
                                               for k, v in kv.items()], table, "Lookup.key_values") or []
            q.args["key_values"] = {f.column: f.value for f in q.filters}
        elif tool == "Filter":
            q.filters = part(compile_filters, args.get("column_filters"), table, "Filter.column_filters")
            if q.filters == []:
                raise ToolError("Filter.column_filters: at least one filter is required")
            q.filters = q.filters or []
            q.args["column_filters"] = [{"column": f.column, "op": f.op, "value": f.value} for f in q.filters]
        else:
            q.filters = part(compile_filters, args.get("optional_column_filters"), table,
                             f"{tool}.optional_column_filters") or []
            q.args["optional_column_filters"] = [{"column": f.column, "op": f.op, "value": f.value}
                                                 for f in q.filters]
        if tool == "Compute":
            op = args.get("operator")
            op = OP_ALIASES.get(str(op).strip().lower(), str(op).strip().lower()) if isinstance(op, str) else op
            if op not in COMPUTE_OPS:
                errors.append(ToolError(f"Compute.operator {str(op)[:20]!r} is unknown; "
                                        f"allowed: {', '.join(COMPUTE_OPS)}"))
            q.expr = part(compile_expression, args.get("target_column_expression"), table,
                          "Compute.target_column_expression", allow_star=op == "count")
            if q.expr is not None and op in ("avg", "sum", "change") and q.expr.dtype != "DOUBLE":
                errors.append(ToolError(f"Compute: operator {op!r} needs a numeric column; "
                                        f"{q.expr.text!r} is {q.expr.dtype}"))
            if q.expr is not None and op in ("min", "max") and q.expr.dtype not in ("DOUBLE", "DATE", "TIMESTAMP"):
                errors.append(ToolError(f"Compute: operator {op!r} needs a numeric or date column; "
                                        f"{q.expr.text!r} is {q.expr.dtype}"))
            if q.expr is not None:
                q.args["target_column_expression"] = q.expr.text
            q.args["operator"] = op
            q.budget = 1
        if tool == "Rank":
            q.expr = part(compile_expression, args.get("target_column_expression"), table,
                          "Rank.target_column_expression")
            if q.expr is not None and q.expr.dtype not in ("DOUBLE", "DATE", "TIMESTAMP", "VARCHAR"):
                errors.append(ToolError(f"Rank: cannot order by {q.expr.text!r} ({q.expr.dtype})"))
            order = args.get("order")
            order = ORDER_ALIASES.get(order.strip().lower()) if isinstance(order, str) else None
            if order is None:
                errors.append(ToolError("Rank.order: expected 'desc' (highest first) or 'asc' (lowest first)"))
            if q.expr is not None:
                q.args["target_column_expression"] = q.expr.text
            q.args["order"] = order
        if tool in ("Lookup", "Filter", "Rank"):
            q.budget = part(self._budget, args.get("result_budget"), budget_left, notes, f"{tool}.result_budget")
            q.args["result_budget"] = q.budget
        if errors:
            raise ToolError.of(errors)
        return tool, q

    def validate(self, tool: str, args: object, budget_left: int | None = None) -> tuple[str, dict]:
        """Canonical tool name and normalized arguments (names resolved), or ToolError."""
        left = self.config.evidence_budget if budget_left is None else budget_left
        tool, prepared = self.prepare(tool, args, max(left, 1))
        if isinstance(prepared, dict):
            return tool, {k: v for k, v in prepared.items() if not k.startswith("_")}
        return tool, dict(prepared.args)

    def _scope(self, raw: object) -> str:
        if raw is None or raw == "" or raw == []:
            return "event"
        if isinstance(raw, list) and len(raw) == 1:
            raw = raw[0]
        if not isinstance(raw, str):
            raise ToolError("SemanticMatch.retrieval_scope: expected 'event', 'episode', 'topic', 'all' or a node id")
        s = raw.strip()
        low = s.lower().rstrip("s")
        if low in LEVELS or low == "all":
            return low
        if low in ("memory", "round", "interaction", "dialogue"):
            return "event" if low != "memory" else "all"
        try:
            self.retrieval.node(s)
        except (KeyError, LookupError):
            raise ToolError(f"SemanticMatch.retrieval_scope {s[:40]!r} is neither a level "
                            "(event, episode, topic, all) nor a known node id") from None
        return s

    # ------------------------------------------------------------------ running
    def call(self, tool: str, args: object, budget_left: int) -> ToolResult:
        """Validate and run one tool call; never returns more than `budget_left` units."""
        tool, prepared = self.prepare(tool, args, budget_left)
        t0 = time.perf_counter()
        if tool == "SemanticMatch":
            res = self._semantic(prepared)
        elif tool == "EventLocate":
            res = self._locate(prepared)
        else:
            res = {"Lookup": self._rows, "Filter": self._rows, "Rank": self._rank,
                   "Compute": self._compute}[tool](tool, prepared)
        ms = (time.perf_counter() - t0) * 1000
        assert len(res["units"]) <= budget_left, "a tool returned more units than the budget allows"
        notes = tuple(prepared["_notes"] if isinstance(prepared, dict) else prepared.notes)
        args_out = ({k: v for k, v in prepared.items() if not k.startswith("_")}
                    if isinstance(prepared, dict) else prepared.args)
        return ToolResult(tool=tool, args=jsonable(args_out), ms=ms, notes=notes, **res)

    def _run(self, sql: str, params: list) -> list[tuple]:
        # Only SELECTs built in this module reach here; run on a separate cursor.
        assert sql.lstrip().upper().startswith(("SELECT", "WITH")), sql
        cur = self.con.cursor()
        try:
            return cur.execute(sql, params).fetchall()
        finally:
            cur.close()

    @staticmethod
    def _where(filters: list[CompiledFilter], extra: list[str] = ()) -> tuple[str, list]:
        parts = [f.sql for f in filters] + list(extra)
        params = [p for f in filters for p in f.params]
        return (" WHERE " + " AND ".join(parts)) if parts else "", params

    def _row_units(self, table: TableMeta, cols: list[str], rows: list[tuple], scores=None) -> tuple:
        units = []
        for i, r in enumerate(rows):
            d = dict(zip(cols, r))
            src = str(d.get("source"))
            t = d.get("time")
            shown = []
            for c in table.attribute_columns():
                v = d.get(c.name)
                if v is None:
                    continue
                v = f"{v:g}" if isinstance(v, float) else str(v)
                shown.append(f"{c.name}={v}{' ' + c.unit if c.unit else ''}")
            when = t.isoformat(sep=" ", timespec="minutes") if isinstance(t, datetime) else str(t)
            text = f"{table.table_name} row {src} ({when}): " + ", ".join(shown)
            cap = d.get("captions")
            if cap:
                text += f" | captions: {str(cap)[:160]}"
            units.append(EvidenceUnit(
                unit_id=f"{table.table_name}:{src}", kind="row", text=text, rounds=(src,),
                score=None if scores is None else scores[i], time=jsonable(t),
                data=tuple((k, jsonable(v)) for k, v in d.items())))
        return tuple(units)

    def _rows(self, tool: str, q: _Query) -> dict:
        t = q.table
        where, params = self._where(q.filters)
        sql = (f"SELECT *, count(*) OVER () AS __n FROM {quote_ident(t.table_name)}{where} "
               f"ORDER BY time, round_order LIMIT ?")
        rows = self._run(sql, params + [q.budget])
        cols = t.column_names
        n = rows[0][-1] if rows else 0
        rows = [r[:-1] for r in rows]
        units = self._row_units(t, cols, rows)
        summary = f"{n} matching row(s) in {t.table_name}" + (f", {len(rows)} returned" if n > len(rows) else "")
        return {"units": units, "columns": tuple(cols), "rows": tuple(tuple(jsonable(v) for v in r) for r in rows),
                "sql": sql, "params": tuple(jsonable(params + [q.budget])), "summary": summary,
                "n_matched": int(n), "table": t.table_name}

    def _rank(self, tool: str, q: _Query) -> dict:
        t, e = q.table, q.expr
        where, fparams = self._where(q.filters)
        order = "DESC" if q.args["order"] == "desc" else "ASC"
        # the expression is computed once in a subquery, so its bound numbers appear once
        sql = (f"SELECT *, count(*) OVER () AS __n FROM (SELECT *, {e.sql} AS __v FROM "
               f"{quote_ident(t.table_name)}{where}) AS s WHERE __v IS NOT NULL "
               f"ORDER BY __v {order}, time, round_order LIMIT ?")
        all_params = list(e.params) + fparams + [q.budget]
        rows = self._run(sql, all_params)
        n = rows[0][-1] if rows else 0
        vals = [r[-2] for r in rows]
        rows = [r[:-2] for r in rows]
        units = self._row_units(t, t.column_names, rows)
        summary = (f"{len(rows)} of {n} row(s) of {t.table_name} ranked by {e.text} {order.lower()}"
                   + (f"; top value {jsonable(vals[0])}" if vals else ""))
        return {"units": units, "columns": tuple(t.column_names) + ("__value",),
                "rows": tuple(tuple(jsonable(v) for v in r) + (jsonable(v),) for r, v in zip(rows, vals)),
                "sql": sql, "params": tuple(jsonable(all_params)), "summary": summary, "n_matched": int(n),
                "table": t.table_name, "unit": e.unit,
                "value": {"order": q.args["order"], "values": jsonable(vals), "unit": e.unit,
                          "column": e.text}}

    def _compute(self, tool: str, q: _Query) -> dict:
        t, e, op = q.table, q.expr, q.args["operator"]
        star = e.sql == "*"
        where, fparams = self._where(q.filters)
        base = (f"SELECT source, time, round_order, {'NULL' if star else e.sql} AS v "
                f"FROM {quote_ident(t.table_name)}{where}")
        params = list(e.params) + fparams
        cond = "" if star else " WHERE v IS NOT NULL"
        order = "ORDER BY time, round_order"
        agg = {"avg": "avg(v)", "sum": "sum(v)", "min": "min(v)", "max": "max(v)", "count": "count(*)",
               "first": f"first(v {order})", "latest": f"last(v {order})",
               "change": f"last(v {order}) - first(v {order})", "mode": MODE_SQL}[op]
        # first/last values and their rounds need ordered aggregates (a sort); only those operators pay for them
        ends = (f"first(v {order}), last(v {order}), first(source {order}), last(source {order})"
                if op in ("first", "latest", "change") else "NULL, NULL, NULL, NULL")
        head = f"{agg}, count(*), {ends}, min(time), max(time), count(DISTINCT CAST(time AS DATE))"
        sql = f"WITH s AS ({base}) SELECT {head} FROM s{cond}"
        if op not in ("avg", "sum", "count"):
            # min/max/mode: the extreme rows come first, so the rows query needs the value; first/latest/
            # change already sort for their ordered aggregates. A second query is cheaper for these
            # (measured: one scan with arg_min was up to 2x slower at 100k rows)
            row = self._run(sql, params)[0]
            raw_value = row[0]
            extreme = op in ("min", "max", "mode") and bool(row[1]) and raw_value is not None
            ts = _timestamp_time(t)
            rsql = (f"WITH s AS ({base}) SELECT source, {'epoch_us(time)' if ts else 'time'}, v FROM s{cond} "
                    + ("ORDER BY (v = ?) DESC, time, round_order" if extreme else order)
                    + f" LIMIT {MAX_ROUNDS_PER_UNIT}")
            contributing = self._run(rsql, params + ([raw_value] if extreme else []))
            if ts:
                contributing = [(c[0], _iso_from_epoch_us(c[1]), c[2]) for c in contributing]
        else:
            extreme = False
            sql, row, contributing = self._compute_one_pass(t, base, head, cond, params)
        raw_value, n, first_v, last_v, first_src, last_src, tmin, tmax, n_days = row
        value = jsonable(raw_value)
        result = {"operator": op, "value": value, "n_rows": int(n), "n_days": int(n_days or 0),
                  "unit": e.unit, "column": e.text, "first_time": jsonable(tmin), "last_time": jsonable(tmax)}
        if op in ("first", "latest", "change"):
            result.update({"first_value": jsonable(first_v), "last_value": jsonable(last_v),
                           "first_source": first_src, "last_source": last_src})
        if op == "change" and isinstance(value, (int, float)):
            result["direction"] = "up" if value > 0 else "down" if value < 0 else "unchanged"
        if extreme and contributing and op != "mode":
            result["at_source"], result["at_time"] = contributing[0][0], jsonable(contributing[0][1])
        if op == "mode" and n:
            result["n_mode"] = sum(1 for c in contributing if c[2] == raw_value)
        scope = " and ".join(f.text for f in q.filters) or "all rows"
        shown_value = f"{value:g}" if isinstance(value, float) else str(value)
        text = (f"{op}({e.text}) over {t.table_name} where {scope} = {shown_value}"
                f"{' ' + e.unit if e.unit and op != 'count' else ''} ({n} row(s))")
        if "direction" in result:
            text += f"; from {jsonable(first_v)} to {jsonable(last_v)} ({result['direction']})"
        if "at_time" in result:
            text += f"; at {result['at_time']} ({result['at_source']})"
        rounds = tuple(dict.fromkeys(str(c[0]) for c in contributing))[:MAX_ROUNDS_PER_UNIT]
        unit = EvidenceUnit(unit_id=f"{t.table_name}:{op}({e.text})", kind="computed", text=text, rounds=rounds,
                            time=jsonable(tmax), data=tuple((k, jsonable(v)) for k, v in result.items()))
        return {"units": (unit,), "columns": ("source", "time", "value"),
                "rows": tuple(tuple(jsonable(v) for v in c) for c in contributing),
                "sql": sql, "params": tuple(jsonable(params)), "summary": text, "n_matched": int(n),
                "value": result, "table": t.table_name, "unit": e.unit}

    def _compute_one_pass(self, t: TableMeta, base: str, head: str, cond: str,
                          params: list) -> tuple[str, tuple, list[tuple]]:
        """The SQL, the aggregate row and the contributing rows of a Compute call in ONE scan
        (avg, sum, count: their contributing rows are simply the first ones by time).

        Same rows as `SELECT source, time, v ... ORDER BY time, round_order LIMIT 100`:
        arg_min(row, (time IS NULL, time, round_order), 100) keeps them in the aggregate's
        pass instead of a second query. TIMESTAMPs travel as microseconds (DuckDB's
        conversion to Python datetimes cost more than the scan) and come back as the ISO
        text jsonable() makes of them.
        """
        ts = _timestamp_time(t)
        rec = f"struct_pack(s := source, t := {'epoch_us(time)' if ts else 'time'}, v := v)"
        sql = (f"WITH s AS ({base}) SELECT {head}, "
               f"arg_min({rec}, (time IS NULL, time, round_order), {MAX_ROUNDS_PER_UNIT}) FROM s{cond}")
        row = self._run(sql, params)[0]
        when = _iso_from_epoch_us if ts else (lambda x: x)
        return sql, row[:9], [(r["s"], when(r["t"]), r["v"]) for r in row[9] or ()]

    # ------------------------------------------------------------------ retrieval
    def _node_rounds(self, node_id: str, limit: int = MAX_ROUNDS_PER_UNIT) -> tuple[str, ...]:
        out: list[str] = []
        stack = [node_id]
        while stack and len(out) < limit:
            nid = stack.pop(0)
            node = self.retrieval.node(nid)
            if node.get("level") == "event" and node.get("round_id"):
                out.append(node["round_id"])
            else:
                stack.extend(self.retrieval.members(nid))
        return tuple(dict.fromkeys(out))

    def _query(self, text: str) -> str:
        """What retrieval searches for: the step's query and, when the question came with an image, its caption."""
        return f"{text}\n{self.image_caption}" if self.image_caption else text

    def _search(self, query: str, scope: str, k: int) -> tuple[list[tuple[str, float]], str]:
        """Best-first hits of a search and a note; with a period and event scope, the events of the period
        come first (by score), then the others (by score): a question about "May" reads May first."""
        if self.period is None or scope != "event":
            return self.retrieval.search(self._query(query), scope, k), ""
        hits = self.retrieval.search(self._query(query), scope, max(k * PERIOD_POOL, k))
        within = [self._in_period(h[0]) for h in hits]
        inside = [h for h, w in zip(hits, within) if w]
        if not inside and len(hits) >= max(k * PERIOD_POOL, k):
            # the period's events score low for this query ("the picture I sent on 18 June" says nothing of
            # what it shows): read every event's time once rather than answer from other days
            hits = self.retrieval.search(self._query(query), scope, ALL_EVENTS)
            within = [self._in_period(h[0]) for h in hits]
            inside = [h for h, w in zip(hits, within) if w]
        if not inside:
            return hits[:k], f"; no event is {self.period.label}"
        rest = [h for h, w in zip(hits, within) if not w]
        return (inside + rest)[:k], f"; {min(len(inside), k)} {self.period.label} first"

    def _in_period(self, node_id: str) -> bool:
        t = node_time(self.retrieval.node(node_id))
        return t is not None and self.period.start <= t.date() <= self.period.end

    def _semantic(self, a: dict) -> dict:
        try:
            hits, note = self._search(a["query_content"], a["retrieval_scope"], a["result_budget"])
        except (KeyError, ValueError) as e:  # e.g. a retrieval memory that searches levels only
            raise ToolError(f"SemanticMatch.retrieval_scope {a['retrieval_scope']!r}: {e}") from None
        units = []
        for nid, score in hits[: a["result_budget"]]:
            node = self.retrieval.node(nid)
            t = node_time(node)
            units.append(EvidenceUnit(
                unit_id=nid, kind=node.get("level", "event"), text=node.get("description", ""),
                rounds=self._node_rounds(nid), score=float(score), time=jsonable(t),
                data=(("level", node.get("level")),)))
        summary = f"{len(units)} memory unit(s) for {a['query_content'][:60]!r} in scope {a['retrieval_scope']}"
        if self.image_caption:
            summary += f" and the question's image ({self.image_caption[:60]!r})"
        summary += note
        return {"units": tuple(units), "summary": summary, "n_matched": len(hits),
                "columns": ("node_id", "score"), "rows": tuple((u.unit_id, u.score) for u in units)}

    def _locate(self, a: dict) -> dict:
        hits, note = self._search(a["query_content"], "event", a["result_budget"])
        w = max(0, int(self.config.event_window))
        units = []
        cur = self.con.cursor()
        try:
            for nid, score in hits[: a["result_budget"]]:
                node = self.retrieval.node(nid)
                rid = node.get("round_id")
                t = node_time(node)
                text = node.get("description", "")
                rounds: tuple[str, ...] = (rid,) if rid else ()
                order = node.get("order", node.get("first_order"))  # the event's round order, loaded with it
                if rid and w:
                    ctx = cur.execute(
                        "SELECT c.round_id, c.text, c.round_order - r.round_order FROM rounds r "
                        "JOIN rounds c ON c.session_id = r.session_id "
                        "AND c.round_order BETWEEN r.round_order - ? AND r.round_order + ? "
                        "WHERE r.round_id = ? ORDER BY c.round_order", [w, w, rid]).fetchall()
                    before = [c[1] for c in ctx if c[2] < 0]
                    after = [c[1] for c in ctx if c[2] > 0]
                    if before:
                        text = "[before] " + " ".join(b[:200] for b in before) + "\n[event] " + text
                    if after:
                        text += "\n[after] " + " ".join(x[:200] for x in after)
                    rounds = (rid,) + tuple(c[0] for c in ctx if c[0] != rid)
                units.append(EvidenceUnit(unit_id=nid, kind="event", text=text, rounds=rounds, score=float(score),
                                          time=jsonable(t), data=(("round_id", rid),) + (
                                              (("round_order", int(order)),) if order is not None else ())))
        finally:
            cur.close()
        summary = (f"{len(units)} event(s) for {a['query_content'][:60]!r}"
                   + (f" and the question's image ({self.image_caption[:60]!r})" if self.image_caption else "")
                   + note
                   + (f"; best at {units[0].time} ({units[0].rounds[0] if units[0].rounds else '?'})" if units else ""))
        return {"units": tuple(units), "summary": summary, "n_matched": len(hits),
                "columns": ("node_id", "score", "time"), "rows": tuple((u.unit_id, u.score, u.time) for u in units)}
