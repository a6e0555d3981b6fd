"""Validation of tool arguments: names, values, operators, expressions -> safe SQL pieces.

Everything a planner (rule or LLM) passes to an analytic tool goes through
here before any SQL exists. Identifiers are only ever taken from the
metadata (the caller's spelling is *resolved* to a catalog name, never
pasted), values become bound parameters cast to the column type, and each
operator is checked against the column type. Every failure raises
`ToolError` with a message that names the argument and the allowed choices.
"""
from __future__ import annotations

import difflib
import math
import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from .dates import parse_datetime_value
from .metadata import ColumnMeta, TableMeta

MAX_STRING = 500
MAX_FILTERS = 20
MAX_IN_VALUES = 100
MAX_EXPR_TOKENS = 40
FUZZY_MIN = 0.82
FILTER_OPS = ("=", "!=", "<", "<=", ">", ">=", "between", "in", "contains")
OP_ALIASES = {
    "==": "=", "eq": "=", "equals": "=", "is": "=", "<>": "!=", "ne": "!=", "neq": "!=", "not": "!=",
    "lt": "<", "lte": "<=", "le": "<=", "gt": ">", "gte": ">=", "ge": ">=", "like": "contains",
    "includes": "contains", "range": "between", "in_list": "in",
}
ORDERED_TYPES = ("DOUBLE", "DATE", "TIMESTAMP")


class ToolError(ValueError):
    """A tool call that cannot run as given: names the argument, the fault and the allowed values.

    `faults` holds every fault found (one per argument or filter); the message joins them."""

    def __init__(self, *faults: str):
        self.faults = tuple(str(f) for f in faults) or ("invalid tool call",)
        super().__init__("; ".join(self.faults))

    @classmethod
    def of(cls, errors: list["ToolError"]) -> "ToolError":
        """One error holding every fault of `errors`."""
        return cls(*(f for e in errors for f in e.faults))


def quote_ident(name: str) -> str:
    """Double-quote an identifier that already came from the metadata."""
    return '"' + name.replace('"', '""') + '"'


def _norm(s: str) -> str:
    return re.sub(r"[\s_\-]+", "", s.casefold())


def resolve_name(given: object, allowed: list[str], what: str) -> str:
    """The catalog name `given` refers to: exact, then case/underscore-insensitive, then fuzzy.

    Fuzzy matching applies only to plain ASCII words (letters, digits, space,
    '_' and '-') so that quoting, comments, statement separators and unicode
    look-alikes never resolve to a real name. Raises ToolError naming the
    allowed names when nothing matches.
    """
    if not isinstance(given, str) or not given.strip():
        raise ToolError(f"{what}: expected a name, got {given!r}; allowed: {', '.join(allowed)}")
    if given in allowed:
        return given
    g = given.strip()
    plain = bool(re.fullmatch(r"[A-Za-z0-9 _\-]{1,80}", g))
    if plain:
        by_norm = {_norm(a): a for a in allowed}
        if _norm(g) in by_norm:
            return by_norm[_norm(g)]
        scored = sorted(((difflib.SequenceMatcher(None, _norm(g), _norm(a)).ratio(), a) for a in allowed),
                        reverse=True)
        if scored and scored[0][0] >= FUZZY_MIN and (len(scored) == 1 or scored[0][0] > scored[1][0]):
            return scored[0][1]
    shown = given if len(given) <= 60 else given[:57] + "..."
    if not g.isascii():
        fault = "contains non-ASCII characters (look-alike letters are not accepted)"
    elif not plain:
        fault = "contains characters not allowed in a name"
    else:
        fault = "is unknown"
    raise ToolError(f"{what} {shown!r} {fault}; allowed: {', '.join(allowed)}")


# ---------------------------------------------------------------------- values
def cast_value(value: object, col: ColumnMeta, where: str) -> object:
    """`value` as a Python value of the column's type (bound later as a parameter).

    DOUBLE: finite numbers or numeric strings (a trailing unit is allowed);
    DATE/TIMESTAMP: date or datetime strings/objects; VARCHAR: strings
    (numbers are turned into text). Raises ToolError otherwise.
    """
    if value is None:
        raise ToolError(f"{where}: a value is required for column {col.name!r}")
    if isinstance(value, (list, dict, tuple, set)):
        raise ToolError(f"{where}: expected one value for column {col.name!r}, got {type(value).__name__}")
    if isinstance(value, str) and len(value) > MAX_STRING:
        raise ToolError(f"{where}: value for {col.name!r} is too long ({len(value)} characters, max {MAX_STRING})")
    if col.dtype == "DOUBLE":
        if isinstance(value, bool):
            raise ToolError(f"{where}: column {col.name!r} is numeric; got a boolean")
        if isinstance(value, (int, float)):
            try:
                x = float(value)
            except OverflowError:
                raise ToolError(f"{where}: number for {col.name!r} is too large") from None
        elif isinstance(value, str):
            m = re.fullmatch(r"\s*([-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)\s*([A-Za-z%/°]{0,12})\s*", value)
            if not m:
                raise ToolError(f"{where}: column {col.name!r} is numeric; {value[:40]!r} is not a number")
            x = float(m[1])
        else:
            raise ToolError(f"{where}: column {col.name!r} is numeric; got {type(value).__name__}")
        if not math.isfinite(x):
            raise ToolError(f"{where}: value for {col.name!r} must be a finite number, got {value!r}")
        return x
    if col.dtype in ("DATE", "TIMESTAMP"):
        d = parse_datetime_value(value)
        if d is None:
            raise ToolError(f"{where}: column {col.name!r} holds dates; {str(value)[:40]!r} is not a date "
                            "(use YYYY-MM-DD)")
        if col.dtype == "DATE" and isinstance(d, datetime):
            return d.date()
        return d
    if col.dtype == "VARCHAR":
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            raise ToolError(f"{where}: column {col.name!r} holds text; got {type(value).__name__}")
        return str(value)
    raise ToolError(f"{where}: column {col.name!r} has a type tools cannot compare ({col.dtype})")


# ---------------------------------------------------------------------- filters
@dataclass(frozen=True)
class CompiledFilter:
    sql: str
    params: tuple
    column: str
    op: str
    value: object  # the cast value(s), JSON-friendly
    text: str  # human-readable, e.g. "time between 2026-03-01 and 2026-03-31"


def _json_value(v):
    if isinstance(v, (date, datetime)):
        return v.isoformat()
    if isinstance(v, (list, tuple)):
        return [_json_value(x) for x in v]
    return v


def _day_only(v) -> bool:
    return isinstance(v, date) and not isinstance(v, datetime)


def compile_filter(raw: object, table: TableMeta, where: str) -> CompiledFilter:
    """One filter {column, op, value} -> SQL with bound parameters (ToolError when invalid)."""
    if not isinstance(raw, dict):
        raise ToolError(f"{where}: a filter must be an object {{column, op, value}}, got {type(raw).__name__}")
    col_name = raw.get("column", raw.get("col", raw.get("name")))
    op = raw.get("op", raw.get("operator", "="))
    value = raw.get("value", raw.get("values"))
    colname = resolve_name(col_name, table.column_names, f"{where}.column")
    col = table.column(colname)
    if not isinstance(op, str):
        raise ToolError(f"{where}.op: expected one of {', '.join(FILTER_OPS)}, got {op!r}")
    op = OP_ALIASES.get(op.strip().lower(), op.strip().lower())
    if op not in FILTER_OPS:
        raise ToolError(f"{where}.op {op[:20]!r} is unknown; allowed: {', '.join(FILTER_OPS)}")
    ident = quote_ident(colname)
    if op in ("<", "<=", ">", ">=", "between") and col.dtype not in ORDERED_TYPES:
        raise ToolError(f"{where}: operator {op!r} needs a numeric or date column; {colname!r} is {col.dtype}")
    if op == "contains" and col.dtype != "VARCHAR":
        raise ToolError(f"{where}: operator 'contains' needs a text column; {colname!r} is {col.dtype}")
    if op == "between":
        if isinstance(value, dict):
            value = [value.get("from", value.get("start", value.get("min"))),
                     value.get("to", value.get("end", value.get("max")))]
        if not isinstance(value, (list, tuple)) or len(value) != 2:
            raise ToolError(f"{where}: 'between' needs a list of two values [low, high], got {str(value)[:60]}")
        lo, hi = (cast_value(v, col, f"{where}.value") for v in value)
        if lo > hi if type(lo) is type(hi) else False:
            lo, hi = hi, lo
        if col.dtype == "TIMESTAMP" and _day_only(lo) and _day_only(hi):
            sql = f"CAST({ident} AS DATE) BETWEEN ? AND ?"
        elif col.dtype == "TIMESTAMP":
            lo = lo if isinstance(lo, datetime) else datetime.combine(lo, datetime.min.time())
            hi = hi if isinstance(hi, datetime) else datetime.combine(hi, datetime.min.time()) + timedelta(days=1, microseconds=-1)
            sql = f"{ident} BETWEEN ? AND ?"
        else:
            sql = f"{ident} BETWEEN ? AND ?"
        return CompiledFilter(sql, (lo, hi), colname, op, _json_value([lo, hi]),
                              f"{colname} between {_json_value(lo)} and {_json_value(hi)}")
    if op == "in":
        if not isinstance(value, (list, tuple)) or not value:
            raise ToolError(f"{where}: 'in' needs a non-empty list of values")
        if len(value) > MAX_IN_VALUES:
            raise ToolError(f"{where}: 'in' takes at most {MAX_IN_VALUES} values, got {len(value)}")
        vals = [cast_value(v, col, f"{where}.value") for v in value]
        if col.dtype == "VARCHAR":
            sql = f"lower({ident}) IN ({', '.join('lower(?)' for _ in vals)})"
        elif col.dtype == "TIMESTAMP" and all(_day_only(v) for v in vals):
            sql = f"CAST({ident} AS DATE) IN ({', '.join('?' for _ in vals)})"
        else:
            sql = f"{ident} IN ({', '.join('?' for _ in vals)})"
        return CompiledFilter(sql, tuple(vals), colname, op, _json_value(vals),
                              f"{colname} in {', '.join(str(_json_value(v)) for v in vals)}")
    v = cast_value(value, col, f"{where}.value")
    if op == "contains":
        escaped = v.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        return CompiledFilter(f"{ident} ILIKE ? ESCAPE '\\'", (f"%{escaped}%",), colname, op, v,
                              f"{colname} contains {v!r}")
    if col.dtype == "VARCHAR" and op in ("=", "!="):
        sql = f"lower({ident}) {op} lower(?)"
    elif col.dtype == "TIMESTAMP" and _day_only(v):
        sql = f"CAST({ident} AS DATE) {op} ?"
    else:
        sql = f"{ident} {op} ?"
    return CompiledFilter(sql, (v,), colname, op, _json_value(v), f"{colname} {op} {_json_value(v)}")


def compile_filters(raw: object, table: TableMeta, where: str) -> list[CompiledFilter]:
    """A list of filters (None or [] means no filter). A {column: value} mapping means equalities."""
    if raw is None or raw == [] or raw == {}:
        return []
    if isinstance(raw, dict):
        if "column" in raw or "col" in raw:
            raw = [raw]
        else:
            raw = [{"column": k, "op": "=", "value": v} for k, v in raw.items()]
    if not isinstance(raw, (list, tuple)):
        raise ToolError(f"{where}: expected a list of filters, got {type(raw).__name__}")
    if len(raw) > MAX_FILTERS:
        raise ToolError(f"{where}: at most {MAX_FILTERS} filters, got {len(raw)}")
    out, errors = [], []
    for i, f in enumerate(raw):  # every faulty filter is named, not only the first
        try:
            out.append(compile_filter(f, table, f"{where}[{i}]"))
        except ToolError as e:
            errors.append(e)
    if errors:
        raise ToolError.of(errors)
    return out


# ---------------------------------------------------------------------- expressions
@dataclass(frozen=True)
class CompiledExpr:
    sql: str
    params: tuple
    dtype: str
    columns: tuple[str, ...]
    unit: str | None
    text: str  # the expression with resolved names


_TOKEN = re.compile(r"\s*(?:(\d+(?:\.\d+)?)|([A-Za-z_][A-Za-z0-9_]*)|([-+*/()]))")


def compile_expression(raw: object, table: TableMeta, where: str, *, allow_star: bool = False) -> CompiledExpr:
    """A column, or arithmetic (+ - * / parentheses, numbers) over numeric columns, as safe SQL.

    Column names are resolved against the table; numbers are bound
    parameters; division by zero yields NULL. Raises ToolError on anything else.
    """
    if allow_star and (raw is None or (isinstance(raw, str) and raw.strip() in ("*", "", "rows", "row", "records"))):
        return CompiledExpr("*", (), "ROWS", (), None, "*")
    if not isinstance(raw, str) or not raw.strip():
        raise ToolError(f"{where}: expected a column name or expression, got {raw!r}; "
                        f"columns: {', '.join(table.column_names)}")
    if len(raw) > MAX_STRING:
        raise ToolError(f"{where}: expression too long ({len(raw)} characters)")
    text = raw.strip()
    # A whole-string column name first (it may contain spaces: "soil moisture")
    if not re.search(r"[-+*/()]", text) or text in table.column_names:
        name = resolve_name(text, table.column_names, f"{where} (column)")
        col = table.column(name)
        return CompiledExpr(quote_ident(name), (), col.dtype, (name,), col.unit, name)
    tokens: list[tuple[str, str]] = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            rest = text[pos:].strip()
            if not rest:
                break
            raise ToolError(f"{where}: unexpected {rest[:20]!r} in expression; use column names, numbers, + - * / ( )")
        if m[1]:
            tokens.append(("num", m[1]))
        elif m[2]:
            tokens.append(("id", m[2]))
        else:
            tokens.append(("op", m[3]))
        pos = m.end()
    if len(tokens) > MAX_EXPR_TOKENS:
        raise ToolError(f"{where}: expression too long ({len(tokens)} tokens, max {MAX_EXPR_TOKENS})")
    params: list = []
    used: list[str] = []
    i = 0

    def peek():
        return tokens[i] if i < len(tokens) else ("end", "")

    def take():
        nonlocal i
        t = peek()
        i += 1
        return t

    def factor() -> str:
        kind, val = take()
        if kind == "num":
            params.append(float(val))
            return "CAST(? AS DOUBLE)"
        if kind == "id":
            name = resolve_name(val, table.column_names, f"{where} (column)")
            if table.column(name).dtype != "DOUBLE":
                raise ToolError(f"{where}: arithmetic needs numeric columns; {name!r} is {table.column(name).dtype}")
            used.append(name)
            return quote_ident(name)
        if (kind, val) == ("op", "("):
            inner = expr()
            if take() != ("op", ")"):
                raise ToolError(f"{where}: unbalanced parentheses in expression")
            return f"({inner})"
        if (kind, val) == ("op", "-"):
            return f"(-{factor()})"
        raise ToolError(f"{where}: unexpected {val or 'end'!r} in expression")

    def term() -> str:
        left = factor()
        while peek() in (("op", "*"), ("op", "/")):
            _, o = take()
            right = factor()
            left = f"({left} * {right})" if o == "*" else f"({left} / NULLIF({right}, 0))"
        return left

    def expr() -> str:
        left = term()
        while peek() in (("op", "+"), ("op", "-")):
            _, o = take()
            left = f"({left} {o} {term()})"
        return left

    sql = expr()
    if i != len(tokens):
        raise ToolError(f"{where}: unexpected {tokens[i][1]!r} in expression")
    if not used:
        raise ToolError(f"{where}: the expression uses no column")
    units = {table.column(c).unit for c in used}
    unit = units.pop() if len(units) == 1 and re.fullmatch(r"[^*/]*", text) else None
    if unit is None and len(used) == 1:
        unit = _scaled_unit(text, table.column(used[0]).unit)
    shown = " ".join(v if k != "id" else resolve_name(v, table.column_names, where) for k, v in tokens)
    return CompiledExpr(sql, tuple(params), "DOUBLE", tuple(dict.fromkeys(used)), unit, shown)


_SCALE_UNITS = ("h", "min", "s", "km", "m", "mi", "kg", "g", "lb")


def _scaled_unit(text: str, unit: str | None) -> str | None:
    """The unit of 'column / 60' or 'column * 0.001' when the factor converts the column's unit into
    another unit of its dimension (min / 60 -> h, m / 1000 -> km); None otherwise."""
    m = re.fullmatch(r"\s*[A-Za-z_][A-Za-z0-9_]*\s*([*/])\s*(\d+(?:\.\d+)?)\s*", text)
    if not m or not unit:
        return None
    from .columns import convert

    k = float(m[2]) if m[1] == "*" else 1.0 / float(m[2]) if float(m[2]) else None
    if k is None:
        return None
    for u in _SCALE_UNITS:
        c = convert(1.0, unit, u)
        if c is not None and abs(c - k) <= 1e-6 * max(1.0, abs(k)):
            return u
    return None


def check_int(value: object, where: str, *, default: int | None = None, minimum: int = 1) -> int:
    """A positive integer argument (result_budget...); numeric strings allowed."""
    if value is None:
        if default is None:
            raise ToolError(f"{where}: required")
        return default
    if isinstance(value, bool):
        raise ToolError(f"{where}: expected an integer, got a boolean")
    if isinstance(value, float):
        if not math.isfinite(value) or value != int(value):
            raise ToolError(f"{where}: expected an integer, got {value!r}")
        value = int(value)
    if isinstance(value, str) and re.fullmatch(r"\s*\d{1,9}\s*", value):
        value = int(value)
    if not isinstance(value, int):
        raise ToolError(f"{where}: expected an integer, got {str(value)[:30]!r}")
    if value < minimum:
        raise ToolError(f"{where}: must be at least {minimum}, got {value}")
    return value
