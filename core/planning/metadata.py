"""What the planner may know about the analytic tables: names, columns, types, units, samples.

The catalog reads the `schemas` table (table name, description, typed columns
with units) and the `memory_tables` view, then checks every table against the
DuckDB catalog, which is the authority on column types. Only tables listed in
both are analytic tables; internal tables (rounds, nodes, schemas, ...) are
never exposed to tools.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Mapping

import duckdb

BASE_COLUMNS = ("source", "round_order", "time", "captions", "modality")  # contract columns, not attributes
NUMERIC_TYPES = ("DOUBLE", "FLOAT", "REAL", "INTEGER", "BIGINT", "SMALLINT", "TINYINT", "HUGEINT",
                 "DECIMAL", "UBIGINT", "UINTEGER", "USMALLINT", "UTINYINT", "NUMERIC")
CATEGORY_LIMIT = 30  # a text column with at most this many distinct values is categorical


def normalize_dtype(duck_type: str) -> str:
    """DuckDB type name -> DOUBLE | DATE | TIMESTAMP | VARCHAR | OTHER."""
    t = duck_type.upper()
    if t.startswith(NUMERIC_TYPES):
        return "DOUBLE"
    if t == "DATE":
        return "DATE"
    if t.startswith("TIMESTAMP"):
        return "TIMESTAMP"
    if t.startswith("VARCHAR") or t in ("TEXT", "STRING"):
        return "VARCHAR"
    return "OTHER"


def words(name: str) -> str:
    """'soil_moisture' -> 'soil moisture' (what people and encoders read)."""
    return re.sub(r"[_\W]+", " ", name).strip()


@dataclass(frozen=True)
class ColumnMeta:
    name: str
    dtype: str  # DOUBLE | DATE | TIMESTAMP | VARCHAR | OTHER (from the DuckDB catalog)
    unit: str | None = None
    description: str = ""
    samples: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()  # every distinct value, for small categorical text columns
    category_counts: tuple[int, ...] = ()  # rows holding each category (same order)
    base: bool = False  # source / round_order / time / captions
    # other names of this column's field: raw attributes merged into it by field alignment
    # (`field_aliases`) and the labels as written in the rounds (`observations.label`), most used first
    aliases: tuple[str, ...] = ()
    n_values: int | None = None  # rows where the column is not null
    # the field the table would be named after by its fields alone (the materializer's `main` flag): its
    # main quantity, also where the table is named by what its rounds are about ("hop_purchase_log")
    main: bool = False
    median: float | None = None  # the typical value of a number column (None: text, or no values)
    low: float | None = None  # its smallest and largest values
    high: float | None = None

    def text(self) -> str:
        """Column metadata as one line of text (for matching a question to a column)."""
        parts = [words(self.name)]
        if self.unit:
            parts.append(f"({self.unit})")
        if self.description:
            parts.append(self.description)
        return " ".join(parts)


@dataclass(frozen=True)
class TableMeta:
    table_name: str
    description: str
    columns: tuple[ColumnMeta, ...]
    n_rows: int
    schema_id: int | None = None
    _by_name: dict = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self):
        self._by_name.update({c.name: c for c in self.columns})

    def column(self, name: str) -> ColumnMeta:
        return self._by_name[name]

    @property
    def column_names(self) -> list[str]:
        return [c.name for c in self.columns]

    def attribute_columns(self) -> list[ColumnMeta]:
        return [c for c in self.columns if not c.base]

    def text(self) -> str:
        """Metadata text μ_T: name, description, columns with units and sampled values."""
        cols = []
        for c in self.attribute_columns():
            s = f"{c.name} ({c.dtype.lower()}{', ' + c.unit if c.unit else ''})"
            if c.description:
                s += f": {c.description}"
            if c.samples:
                s += f"; e.g. {', '.join(c.samples)}"
            cols.append(s)
        return (f"table {self.table_name} ({words(self.table_name)}): {self.description} "
                f"Rows: {self.n_rows}. Columns: " + "; ".join(cols))


def table_names(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Analytic table names: in `memory_tables` (or `schemas` without the view) and in the catalog."""
    existing = {r[0] for r in con.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main'").fetchall()}
    names: list[str] = []
    if "memory_tables" in existing:
        names = [r[0] for r in con.execute("SELECT table_name FROM memory_tables ORDER BY table_name").fetchall()]
    elif "schemas" in existing:
        names = [r[0] for r in con.execute("SELECT table_name FROM schemas ORDER BY schema_id").fetchall()]
    return [n for n in names if n in existing and n is not None]


def signature(con: duckdb.DuckDBPyConnection) -> tuple:
    """Changes whenever a table is created, altered, grown, or a schema evolves (metadata queries only,
    so it is cheap enough to check on every call; used to invalidate caches)."""
    tables = con.execute("SELECT table_name, estimated_size, column_count FROM duckdb_tables() "
                         "WHERE schema_name = 'main' ORDER BY table_name").fetchall()
    views = con.execute("SELECT view_name, sql FROM duckdb_views() WHERE schema_name = 'main' "
                        "AND view_name = 'memory_tables'").fetchall()
    try:
        sch = con.execute("SELECT count(*), max(updated_order), sum(length(CAST(columns AS VARCHAR))), "
                          "max(length(description)) FROM schemas").fetchone()
    except duckdb.CatalogException:
        sch = None
    return (tuple(tables), tuple(views), sch)


def _schema_rows(con) -> dict[str, tuple]:
    try:
        rows = con.execute("SELECT table_name, schema_id, description, columns FROM schemas").fetchall()
    except duckdb.CatalogException:
        return {}
    return {r[0]: r for r in rows}


MAX_ALIASES = 8  # names kept per field (most used first)


def field_aliases(con: duckdb.DuckDBPyConnection) -> dict[str, tuple[str, ...]]:
    """field -> its other names: raw attributes aligned into it (`field_aliases`) and the labels as
    written for its observations (`observations.label`), most frequent first. Empty when the memory
    predates field alignment. One grouped scan; the catalog caches it with the tables."""
    names: dict[str, dict[str, int]] = {}

    def add(field_name, name, n):
        if not field_name or not name:
            return
        name = " ".join(str(name).split())
        if name and name.lower() != str(field_name).lower():
            d = names.setdefault(str(field_name), {})
            d[name] = d.get(name, 0) + int(n or 0)
    try:
        for raw, fld in con.execute("SELECT raw_attribute, field FROM field_aliases").fetchall():
            add(fld, raw, 1)
    except duckdb.Error:
        pass
    try:
        for attr, label, n in con.execute(
                "SELECT attribute, label, count(*) FROM observations WHERE label IS NOT NULL AND label <> '' "
                "GROUP BY ALL").fetchall():
            add(attr, label, n)
    except duckdb.Error:
        pass
    return {f: tuple(k for k, _ in sorted(d.items(), key=lambda kv: -kv[1])[:MAX_ALIASES])
            for f, d in names.items()}


def table_labels(con: duckdb.DuckDBPyConnection, ident: str) -> dict[str, tuple[str, ...]]:
    """field -> the labels as written for its observations in the rounds of one table's rows (`ident`, a
    quoted table name), most frequent first: two logs print one field "Temp", one of them "dough temp"
    too, and only that one is the dough's. Empty when the table or the observations are not there."""
    names: dict[str, dict[str, int]] = {}
    try:
        rows = con.execute(
            "SELECT o.attribute, o.label, count(*) FROM observations o JOIN rounds r ON r.round_id = o.round_id "
            f"WHERE r.round_order IN (SELECT round_order FROM {ident}) AND o.label IS NOT NULL AND o.label <> '' "
            "GROUP BY ALL").fetchall()
    except duckdb.Error:
        return {}
    for attr, label, n in rows:
        label = " ".join(str(label).split())
        if not attr:
            continue
        d = names.setdefault(str(attr), {})  # (a field printed only under its own name has no other)
        if label and label.lower() != str(attr).lower():
            d[label] = d.get(label, 0) + int(n or 0)
    return {f: tuple(k for k, _ in sorted(d.items(), key=lambda kv: -kv[1])[:MAX_ALIASES]) for f, d in names.items()}


def _column_aliases(field_name: str, own: Mapping[str, tuple[str, ...]], every: Mapping[str, tuple[str, ...]],
                    shared: bool) -> tuple[str, ...]:
    """A column's other names: for a field several tables hold, the labels its own rows were written with
    (else every name of the field); for a field of one table, every name."""
    if shared and field_name in own:
        return own[field_name]
    return every.get(field_name, ())


def _declared(cols_json: str | None) -> dict[str, dict]:
    """A schema's declared columns by name (from `schemas.columns`); empty when unreadable."""
    try:
        return {c["name"]: c for c in json.loads(cols_json or "[]") if isinstance(c, dict) and "name" in c}
    except (TypeError, ValueError):
        return {}


def load_catalog(con: duckdb.DuckDBPyConnection, samples: int = 3) -> dict[str, TableMeta]:
    """Every analytic table's metadata (types from the DuckDB catalog, units from `schemas`, other
    names of each column's field from field alignment and the labels as written)."""
    out: dict[str, TableMeta] = {}
    schema_rows = _schema_rows(con)
    aliases = field_aliases(con)
    declared_by = {name: _declared(r[3]) for name, r in schema_rows.items()}
    # fields two tables or more hold: their names are read per table
    held: dict[str, int] = {}
    for cols in declared_by.values():
        for cname, c in cols.items():
            if cname not in BASE_COLUMNS:
                f = str(c.get("attribute") or cname)
                held[f] = held.get(f, 0) + 1
    for name in table_names(con):
        ident = '"' + name.replace('"', '""') + '"'
        sid, desc = (schema_rows.get(name) or (name, None, ""))[1:3]
        declared = declared_by.get(name, {})
        catalog = con.execute(
            "SELECT column_name, data_type FROM information_schema.columns "
            "WHERE table_schema = 'main' AND table_name = ? ORDER BY ordinal_position", [name]).fetchall()
        n_rows = con.execute(f"SELECT count(*) FROM {ident}").fetchone()[0]
        keep = [c for c, _ in catalog if not c.startswith("_")]
        filled = dict(zip(keep, con.execute(
            "SELECT " + ", ".join('count("' + c.replace('"', '""') + '")' for c in keep) + f" FROM {ident}"
        ).fetchone())) if keep else {}
        # the typical, smallest and largest value of each number column, in one pass over the table
        numbers = [c for c, t in catalog if c in keep and c not in BASE_COLUMNS and normalize_dtype(t) == "DOUBLE"]
        sizes: dict[str, tuple] = {}
        if numbers:
            got = con.execute("SELECT " + ", ".join(
                f'median("{q}"), min("{q}"), max("{q}")' for q in (c.replace('"', '""') for c in numbers))
                + f" FROM {ident}").fetchone()
            sizes = {c: tuple(None if x is None else float(x) for x in got[3 * i:3 * i + 3])
                     for i, c in enumerate(numbers)}
        own_labels = table_labels(con, ident) if any(held.get(str(d.get("attribute") or c), 0) > 1
                                                     for c, d in declared.items()) else {}
        cols = []
        for cname, ctype in catalog:
            if cname.startswith("_"):  # internal columns (the `_obs` provenance JSON) are not for planners
                continue
            d = declared.get(cname, {})
            dtype = normalize_dtype(ctype)
            cident = '"' + cname.replace('"', '""') + '"'
            sample_vals: tuple[str, ...] = ()
            cats: tuple[str, ...] = ()
            counts: tuple[int, ...] = ()
            if cname not in ("source", "round_order", "captions"):
                vals = con.execute(
                    f"SELECT {cident}, count(*) FROM {ident} WHERE {cident} IS NOT NULL GROUP BY {cident} "
                    f"ORDER BY count(*) DESC, {cident} LIMIT {CATEGORY_LIMIT + 1}"
                ).fetchall()
                sample_vals = tuple(_show(v[0]) for v in vals[:samples])
                if dtype == "VARCHAR" and cname not in BASE_COLUMNS and len(vals) <= CATEGORY_LIMIT:
                    cats = tuple(str(v[0]) for v in vals)
                    counts = tuple(int(v[1]) for v in vals)
            median, low, high = sizes.get(cname, (None, None, None))
            cols.append(ColumnMeta(
                name=cname, dtype=dtype, unit=d.get("unit") or None, description=d.get("description") or "",
                samples=sample_vals, categories=cats, category_counts=counts, base=cname in BASE_COLUMNS,
                # (by the column's field: "temp" of a second kind of record holds the field temp~2, whose
                # other names are its own, "oven temp", not those of the field called temp)
                aliases=_column_aliases(str(d.get("attribute") or cname), own_labels, aliases,
                                        held.get(str(d.get("attribute") or cname), 0) > 1)
                if cname not in BASE_COLUMNS else (),
                n_values=int(filled.get(cname) or 0), median=median, low=low,
                high=high, main=bool(d.get("main"))))
        out[name] = TableMeta(table_name=name, description=desc or "", columns=tuple(cols), n_rows=int(n_rows),
                              schema_id=sid)
    return out


def _show(v) -> str:
    if isinstance(v, float):
        return f"{v:g}"
    s = str(v)
    return s if len(s) <= 40 else s[:37] + "..."
