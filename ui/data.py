"""What the pages read from a memory, as plain dataclasses: the one place with SQL for the page scripts.

No Streamlit here: every function takes a core.store.Store (or a DuckDB connection) and returns plain
data, so it is tested without the app. Writes go through the engine (core.align); the functions here
only check that the memory can be written first and say so clearly when it cannot.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field

from core import align
from core import cases as cases_core
from core.config import DEFAULT, Config


class ReadOnlyMemory(RuntimeError):
    """The memory was opened read-only: a change to its fields cannot be saved."""


# ---------------------------------------------------------------------- fields (core/align.py)
@dataclass(frozen=True)
class FieldColumn:
    """One column of an analytic table that holds a field."""

    table: str
    column: str

    def __str__(self) -> str:
        return f"{self.table}.{self.column}"


@dataclass(frozen=True)
class RawLabel:
    """One raw attribute (the extractor's name) of a field, with its labels as written and why it is there."""

    raw_attribute: str
    field: str
    labels: tuple[tuple[str, int], ...]  # (label as written, observations), most frequent first
    observations: int
    score: float
    reason: str  # the stored reason ("abbreviation (soil_moisture)", "merged by the user", ...)
    decided_by: str  # auto | user
    round_order: int  # the round the decision was made at
    evidence: dict = field(default_factory=dict, compare=False)  # name/unit/range/companions/text parts

    @property
    def joined(self) -> bool:
        """True when this raw attribute joined a field named after another one (what Undo undoes)."""
        return self.raw_attribute != self.field


@dataclass(frozen=True)
class FieldView:
    """A field of the memory as the Fields view shows it."""

    name: str
    kind: str
    unit: str | None
    observations: int
    raws: tuple[RawLabel, ...]
    columns: tuple[FieldColumn, ...] = ()

    @property
    def merged(self) -> bool:
        return len(self.raws) > 1

    @property
    def labels(self) -> tuple[tuple[str, int], ...]:
        """Every label of the field as written with its count, over all its raw attributes."""
        counts: dict[str, int] = {}
        for r in self.raws:
            for label, n in r.labels:
                counts[label] = counts.get(label, 0) + n
        return tuple(sorted(counts.items(), key=lambda x: (-x[1], x[0])))


def _con(store):
    return getattr(store, "con", store)


def has_fields(store) -> bool:
    """True when the memory has the field-alignment tables (migration 4)."""
    n = _con(store).execute(
        "SELECT count(*) FROM duckdb_tables() WHERE table_name IN ('fields', 'field_aliases', 'field_events') "
        "AND schema_name = 'main'").fetchone()[0]
    return int(n) == 3


def field_evidence(store) -> dict[str, dict]:
    """raw attribute -> the stored evidence of its alignment (reason, name, unit, range, companions, text)."""
    out: dict[str, dict] = {}
    for raw, ev in _con(store).execute("SELECT raw_attribute, evidence FROM field_aliases").fetchall():
        try:
            data = json.loads(ev) if ev else {}
        except (TypeError, ValueError):
            data = {}
        out[raw] = data if isinstance(data, dict) else {}
    return out


def field_columns(store) -> dict[str, tuple[FieldColumn, ...]]:
    """field -> the analytic table columns holding it (from the schemas' `columns` JSON), tables in name order."""
    out: dict[str, list[FieldColumn]] = {}
    rows = _con(store).execute(
        "SELECT table_name, columns FROM schemas WHERE table_name IS NOT NULL ORDER BY table_name").fetchall()
    for table, cols in rows:
        try:
            parsed = json.loads(cols or "[]")
        except (TypeError, ValueError):
            parsed = []
        for c in parsed if isinstance(parsed, list) else []:
            if isinstance(c, dict) and c.get("attribute") and c.get("name"):
                out.setdefault(str(c["attribute"]), []).append(FieldColumn(table, str(c["name"])))
    return {k: tuple(v) for k, v in out.items()}


def fields(store) -> list[FieldView]:
    """Every field of the memory (core.align.field_report) with its evidence and table columns:
    merged fields first, then by observations. [] for a memory without field alignment."""
    if not has_fields(store):
        return []
    evidence = field_evidence(store)
    columns = field_columns(store)
    out = []
    for info in align.field_report(_con(store)):
        raws = []
        for lab in info.labels:
            ev = evidence.get(lab.raw_attribute, {})
            raws.append(RawLabel(lab.raw_attribute, info.name, tuple(lab.labels), lab.observations, lab.score,
                                 lab.reason or str(ev.get("reason") or ""), lab.decided_by, lab.round_order, ev))
        # the raw attribute that names the field first, then those that joined it in decision order
        raws.sort(key=lambda r: (r.joined, r.round_order, r.raw_attribute))
        out.append(FieldView(info.name, info.kind, info.unit, info.observations, tuple(raws),
                             columns.get(info.name, ())))
    return out


def shared_rounds(store, raw_attribute: str, field_name: str) -> int:
    """Rounds in which `raw_attribute` and the field `field_name` (other raw attributes) were both observed:
    after a merge such a round has two values for one field, and its table row keeps the first."""
    return int(_con(store).execute(
        "SELECT count(*) FROM (SELECT round_id FROM observations WHERE coalesce(raw_attribute, attribute) = ? "
        "INTERSECT SELECT round_id FROM observations WHERE attribute = ? "
        "AND coalesce(raw_attribute, attribute) <> ?)", [raw_attribute, field_name, raw_attribute]).fetchone()[0])


def _writable(store) -> None:
    if getattr(store, "read_only", False):
        path = getattr(store, "path", None) or "this memory"
        raise ReadOnlyMemory(f"{path} is open read-only: the change was not saved")


def undo_merge(store, raw_attribute: str, config: Config = DEFAULT, llm=None):
    """Make `raw_attribute` a field of its own again and rebuild the analytic tables (core.align.undo_alias).
    Raises ReadOnlyMemory, or KeyError for an unknown raw attribute. Returns the RebuildReport."""
    _writable(store)
    return align.undo_alias(store, raw_attribute, config, llm=llm)


def merge_into(store, raw_attribute: str, into: str, config: Config = DEFAULT, llm=None):
    """Move `raw_attribute` into the field `into` and rebuild the analytic tables (core.align.merge_fields).
    Raises ReadOnlyMemory, or KeyError for an unknown raw attribute or field. Returns the RebuildReport."""
    _writable(store)
    return align.merge_fields(store, raw_attribute, into, config, llm=llm)


# ---------------------------------------------------------------------- analytic tables
def table_sizes(store) -> dict[str, int]:
    """name -> number of rows of every analytic table of the memory (empty before the first schema)."""
    con = _con(store)
    views = {v for (v,) in con.execute("SELECT view_name FROM duckdb_views()").fetchall()}
    if "memory_tables" not in views:
        return {}
    return {str(n): int(r or 0) for n, r in con.execute("SELECT table_name, n_rows FROM memory_tables").fetchall()}


# ---------------------------------------------------------------------- evaluation (core/evaluation)
def qa_sources(store) -> dict[str, str]:
    """qa_id -> the input file (source) the question came from."""
    return dict(_con(store).execute("SELECT qa_id, source FROM qas").fetchall())


def rounds_by_source(store) -> dict[str, list]:
    """source -> that file's rounds (core.model.Round, with image captions), in round order; the
    flat top-10 baseline ranks a question's own file's rounds."""
    src = dict(_con(store).execute("SELECT round_id, source FROM rounds").fetchall())
    out: dict[str, list] = {}
    for _, r in store.rounds():
        out.setdefault(src.get(r.round_id) or "", []).append(r)
    return out


# ---------------------------------------------------------------------- plan cases (core/cases.py)
def cases(store) -> tuple:
    """The plan cases saved in the memory (core.cases.Case), oldest first; none in a memory made before
    migration 6 or opened read-only without the table."""
    return cases_core.list_cases(_con(store))


def save_case(store, plan, expected: str, **kw):
    """Keep an edited plan as a case (core.cases.save_case). Raises ReadOnlyMemory, or InputError for an
    empty question or expected answer. Returns the Case."""
    _writable(store)
    return cases_core.save_case(_con(store), plan, expected, **kw)


def delete_case(store, case_id: int) -> bool:
    """Remove a saved case; False when there was none with that id. Raises ReadOnlyMemory."""
    _writable(store)
    return cases_core.delete_case(_con(store), case_id)
