"""A step's arguments as the plan editor's form fields and back (no Streamlit: tested on its own).

The form holds plain values: a table, a target expression, an operator or order, a result budget, a
list of (column, op, text) filters, and for retrieval a query text and a scope. `args_from_form` turns
them into the tool's arguments (paper Table 4) without judging them: the engine's validator does that
when the step is checked, exactly as for planner output.
"""
from __future__ import annotations

import json
from typing import Any, Mapping

ANALYTIC = ("Lookup", "Filter", "Compute", "Rank")
SCOPES = ("event", "episode", "topic", "all")


def value_text(value: Any) -> str:
    """A filter value as the text a person edits: lists joined by ", " (between: "a, b")."""
    if isinstance(value, (list, tuple)):
        return ", ".join(value_text(v) for v in value)
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def parse_value(text: str, op: str) -> Any:
    """The value of a filter typed as `text`: a list of two for "between" ("a, b" or "a .. b"), a list
    for "in" (comma-separated), else the text itself (the validator casts it to the column's type)."""
    t = (text or "").strip()
    if op == "between":
        parts = [p.strip() for p in (t.split("..") if ".." in t else t.split(","))]
        return [p for p in parts if p]
    if op == "in":
        return [p.strip() for p in t.split(",") if p.strip()]
    return t


def form_from_args(tool: str, args: Mapping | None) -> dict:
    """The form's fields for a step that ran with `args` (empty fields where it had none)."""
    a = dict(args or {})
    if tool == "Lookup":
        filters = [(str(k), "in" if isinstance(v, list) else "=", value_text(v))
                   for k, v in (a.get("key_values") or {}).items()]
    else:
        raw = a.get("column_filters") if tool == "Filter" else a.get("optional_column_filters")
        filters = [(str(f.get("column", "")), str(f.get("op", "=")), value_text(f.get("value")))
                   for f in raw or () if isinstance(f, Mapping)]
    return {"table": a.get("table") or "", "target": a.get("target_column_expression") or "",
            "operator": a.get("operator") or "avg", "order": a.get("order") or "desc",
            "budget": a.get("result_budget"), "filters": filters, "query": a.get("query_content") or "",
            "scope": a.get("retrieval_scope") or "event"}


def args_from_form(tool: str, form: Mapping) -> dict:
    """The tool's arguments from the form's fields (keys of Table 4 only; empty ones left out)."""
    budget = form.get("budget")
    budget = int(budget) if isinstance(budget, (int, float)) and budget else None
    if tool in ("SemanticMatch", "EventLocate"):
        out: dict = {"query_content": (form.get("query") or "").strip()}
        if tool == "SemanticMatch":
            out["retrieval_scope"] = form.get("scope") or "event"
    else:
        out = {"table": form.get("table") or ""}
        filters = [{"column": c, "op": op, "value": parse_value(text, op)}
                   for c, op, text in form.get("filters") or () if c]
        if tool == "Lookup":
            out["key_values"] = {f["column"]: f["value"] for f in filters}
        elif tool == "Filter":
            out["column_filters"] = filters
        else:
            out["target_column_expression"] = (form.get("target") or "").strip()
            out["optional_column_filters"] = filters
            if tool == "Compute":
                out["operator"] = form.get("operator") or "avg"
            else:
                out["order"] = form.get("order") or "desc"
    if budget is not None and tool != "Compute":
        out["result_budget"] = budget
    return out


def shown(value: Any, limit: int = 120) -> str:
    """An argument's value as one short line of JSON."""
    text = json.dumps(value, default=str, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"
