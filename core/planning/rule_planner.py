"""The rule-based planner: question intent -> a plan of at most 3 tool steps, instantiated progressively.

`outline()` analyses the question (intent.py), picks the table and columns
from the planning context (columns.py: embedding + BM25 over metadata) and
writes the high-level plan [(goal, tool)]. `instantiate()` fills in one step's
Table 4 arguments from the question and the results of the earlier steps:
for "... on the day I repotted the monstera", step 1 is EventLocate and step
2's time filter is the date step 1 found (paper eq. 10). With
progressive=False every step is instantiated before any runs, so such a
constraint is unavailable (the no-progressive ablation); the trace says so.
When no column supports the question, the plan falls back to retrieval;
when no tool can help, the plan is empty and the answer is a refusal.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from datetime import date, datetime, timedelta
from typing import Callable, Sequence

import numpy as np

from ..config import Config
from .columns import (
    MEASURE_ADJECTIVES, RELATED_DIMENSIONS, SCAFFOLD, ColumnChoice, named_dimension, rows_about, rows_tables, abbreviates, implied_dimension, asked_units, description_words, convert, match_categories, match_columns, name_tokens, time_of_rows,
    lettered_name, phrase_words, question_words, record_noun, table_words, unit_dimension, unit_info, unit_tokens, rows_like, like_table,
)
from .context import PlanningContext
from .counted import counted_phrase
from .intent import _FIRST, _LATEST, Analysis, Condition, analyze, order_choice, order_clauses
from .located import best_event, event_supported
from .metadata import ColumnMeta, TableMeta, words
from .scoring import STOPWORDS, stem, tokens
from .shape import AUXILIARIES, strip_instructions
from .tools import ANALYTIC_TOOLS, ToolResult
from .trace import Plan, PlanStep

# English adjectives that say how a question asks ("my most common activity", "my usual bedtime"), not
# what it is about: never a missing modifier
ASKING_ADJECTIVES = frozenset(stem(w) for w in (
    "common commonest frequent usual typical normal regular overall whole entire general daily weekly monthly "
    "yearly nightly new newest old oldest recent previous next own best worst biggest smallest largest "
    "greatest top bottom single individual particular specific exact actual current final initial latest "
    "earliest last first second third average median mean highest lowest maximum minimum max min avg peak").split())
COS_CLEAR = 0.15  # a column this much nearer the words by cosine than every other of its table is the one meant
ROWS_NAMING_ONE_OFF = 0.2  # a word said in more of a table's rounds than this is about its rows, not a one-off


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
    expr: str | None = None  # target expression when the column is converted ("study_duration / 60")
    sides: tuple[dict, ...] = ()  # kind "versus": the user's filter, then the other party's
    # a quantity no table holds: its attributes in the observations, the operator over the values found
    # in the retrieved rounds, and the reader of those rounds' observations
    rare: tuple[str, ...] = ()
    rare_op: str | None = None
    rare_dim: str | None = None
    reader: Callable | None = field(default=None, compare=False, repr=False)
    # a thing said of in a few rounds outside every table ("a grain mill"): those rounds, read instead
    rare_rounds: tuple[str, ...] = ()


WINDOW_DAYS = 3  # a time window this short reads the value of one record (a day, an event's day and its neighbours)
# words of a records phrase that say nothing about the records ("all my", "every", "the")
STOP_RECORDS = frozenset("a an the my our all every each of any some those these".split())


def _threshold_inside(c: Condition, col: ColumnMeta) -> bool:
    """The condition's number (in the column's unit) lies between the column's smallest and largest values."""
    if c.number is None or col.low is None or col.high is None:
        return False
    v = convert(c.number, c.unit, col.unit) if c.unit and col.unit else c.number
    return v is not None and col.low < v < col.high


# "when did I last mention X", "have I talked about X": the phrase as said is asked about
_MENTION = re.compile(r"\b(?:mention(?:ed|s)?|talk(?:ed)? about|spoke about)\b", re.IGNORECASE)
# "how many times did I log my heat pump COP": the thing whose records are counted
_TIMES_DID = re.compile(r"\btimes\s+(?:did|have|had)\s+(?:i|we)\s+([a-z]+)\s+(?:(?:my|the|a|an|our)\s+)?"
                        r"([a-z][a-z0-9 '-]*?)\s*(?:\?|$|\bin\b|\bon\b|\bduring\b|\bsince\b|\bbefore\b|\bafter\b)")


def _empty_words() -> set[str]:
    """The lexicon's words that name no quantity by themselves ("amount", "value"), stemmed."""
    from ..extract.normalize import active_lexicon
    return {stem(w) for w in active_lexicon().empty_words}


# "how much" / "how many": an amount is asked
_HOW_MUCH = re.compile(r"\bhow\s+(?:much|many)\b")


def _per_time(text: str) -> bool:
    """Whether a phrase names a quantity per unit of time ("mites/day", "visits per week", "cups a day")."""
    from ..extract.normalize import active_lexicon

    calendar = active_lexicon().calendar_nouns
    return any(unit_dimension(w) == "duration" or w in calendar
               for w in re.findall(r"(?:/\s*|\bper\s+|\ban?\s+)([a-z]+)\b", text.lower()))


def _observed_op(a: Analysis, kind: str) -> str | None:
    """The operator over values read from rounds instead of a table: the intent's, and for a plain value
    question a sum when it asks how much / in total, else the latest."""
    if kind == "value":
        q = a.question.lower()
        return "sum" if _HOW_MUCH.search(q) or re.search(r"\btotal\b", q) else "latest"
    return {"aggregate": a.op, "value_sum": "sum", "latest": "latest", "first": "first",
            "extreme": "max" if a.order != "asc" else "min"}.get(kind)


def _meta_words(tables: Sequence[TableMeta]) -> set[str]:
    """Every word the tables' metadata holds: table names and descriptions, column names and aliases,
    text values."""
    meta: set[str] = set()
    for t in tables:
        meta |= set(table_words(t.table_name)) | set(description_words(t.description))
        for c in t.attribute_columns():
            meta |= name_tokens(c) | {w for v in c.categories for w in tokens(str(v))}
    return meta


def _in_meta(w: str, meta: set[str]) -> bool:
    """w is a metadata word, or abbreviates one, or one abbreviates it."""
    return w in meta or any(abbreviates(w, x) or abbreviates(x, w) for x in meta if len(x) >= 2)


EVENT_CANDIDATES = 3  # events EventLocate returns for a progressive plan


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


_FAST = re.compile(r"\b(fastest|quickest|best|speediest)\b")
_SLOW = re.compile(r"\b(slowest|worst)\b")


def _order_for(a: Analysis, col) -> str:
    """Rank order for a superlative: 'fastest pace' is the lowest min/km, 'fastest time' the shortest."""
    dim = unit_dimension(col.unit)
    q = a.question.lower()
    if dim == "pace" or (dim == "duration" and re.search(r"\b(fastest|quickest|slowest)\b", q)):
        if _FAST.search(q) and not _SLOW.search(q):
            return "asc"
        if _SLOW.search(q) and not _FAST.search(q):
            return "desc"
    return a.order or "desc"


def _converted(question: str, col, skip: Sequence[str] = ()) -> str | None:
    """'how many hours' over a column in minutes -> 'col / 60' (the tool reports the unit as h)."""
    if col.dtype != "DOUBLE" or not col.unit:
        return None
    q = question
    for ph in skip:  # units inside conditions ("under 7 hours") say nothing about the answer's unit
        q = q.replace(ph, " ")
    cdim = unit_dimension(col.unit)
    for w in question_words(q):
        if w in ("h", "m", "s", "g", "l", "x", "min", "max", "mi"):
            continue
        info = unit_info(w)
        if info is None or info.dimension != cdim:
            continue
        k = convert(1.0, col.unit, w)
        if k is None or abs(k - 1.0) < 1e-9:
            return None
        inv = 1.0 / k
        if abs(inv - round(inv)) < 1e-9:
            return f"{col.name} / {int(round(inv))}"
        return f"{col.name} * {k:.6g}"
    return None


def _sides(tables: Sequence[TableMeta], table: str, other: str | None) -> tuple[dict, dict] | None:
    """Filters for 'me' and for `other` on the text column of `table` that holds both (winner: I, Leo)."""
    from .columns import _value_canon

    if not other:
        return None
    want_other = _value_canon(other)
    for t in tables:
        if t.table_name != table:
            continue
        for c in t.attribute_columns():
            if not c.categories:
                continue
            mine = [v for v in c.categories if _value_canon(v) == "me"]
            theirs = [v for v in c.categories if _value_canon(v) == want_other]
            if mine and theirs:
                def f(vals):
                    return {"column": c.name, "op": "=", "value": vals[0]} if len(vals) == 1 else \
                        {"column": c.name, "op": "in", "value": vals}
                return f(mine), f(theirs)
    return None


def _average_in_name(question: str, tables: Sequence[TableMeta]) -> str | None:
    """The question without its "average" when that word only belongs to a column's name
    ("my average pressure on the latest gauge") and another operator word is present; else None."""
    low = question.lower()
    if not (re.search(_LATEST, low) or re.search(_FIRST, low)):
        return None
    seq = question_words(low)
    for t in tables:
        for c in t.attribute_columns():
            parts = c.name.lower().split("_")
            if len(parts) >= 2 and parts[0] in ("average", "avg", "mean"):
                rest = [stem(p) for p in parts[1:]]
                for i in range(len(seq) - len(rest)):
                    if seq[i] in ("average", "avg", "mean") and seq[i + 1:i + 1 + len(rest)] == rest:
                        return re.sub(r"\b(?:average|avg|mean)\s+(?=" + re.escape(parts[1]) + ")", "", question,
                                      count=1, flags=re.IGNORECASE)
    return None


def _named_by_time_only(target: str | None, column: str) -> bool:
    """The phrase is a noun before "time" ("proof time") and of the column's name words it says only
    "time" or "duration" (bake_duration): the column is a duration, not the one the noun names."""
    low = (target or "").lower()
    if implied_dimension(low) != "duration" or not re.search(r"[a-z]{3,}\s+time\b", low):
        return False
    return not (set(tokens(column.replace("_", " "))) - {"time", "duration"}) & set(tokens(low))


class RulePlanner:
    """Deterministic planner; `embed`/`encode_query` give metadata and question embeddings."""

    name = "rules"

    def __init__(self, config: Config, embed: Callable[[list[str]], np.ndarray],
                 encode_query: Callable[[str], np.ndarray], catalog: Callable[[], dict[str, TableMeta]],
                 record_rounds: Callable[[], frozenset[str]] | None = None):
        self.config = config
        self.embed = embed
        self.encode_query = encode_query
        self.catalog = catalog
        self.record_rounds = record_rounds  # rounds that are rows of analytic tables (for locating events)
        # the planning context's builder (observations outside the tables, for rare quantities)
        self.builder = getattr(catalog, "__self__", None)

    # ------------------------------------------------------------------ outline
    def outline(self, question: str, context: PlanningContext, tools: Sequence[str],
                now: datetime | date, first: datetime | date | None,
                catalog: dict[str, TableMeta] | None = None) -> Plan:
        """The high-level plan [(goal, tool)] (at most config.max_steps steps). The question's own
        instructions ("Return in the format YYYY-MM-DD.") are no part of what is planned for."""
        whole = question
        question = strip_instructions(question)[0] or question
        a = analyze(question, now, first)
        if question != whole and not a.asks_date and analyze(whole, now, first).asks_date:
            a = replace(a, asks_date=True)  # "Which game was shortest? Give the date."
        analytic = [t for t in tools if t in ANALYTIC_TOOLS]
        cat = catalog if catalog is not None else self.catalog()
        tables = [cat[n] for n in context.tables if n in cat] if analytic else []
        named = _average_in_name(question, tables) if a.kind == "aggregate" and a.op == "avg" else None
        if named is not None:
            # "my average pressure on the latest gauge": "average" is part of a column's name
            a2 = analyze(named, now, first)
            a = Analysis(**{**a.__dict__, "kind": a2.kind, "op": a2.op, "order": a2.order,
                            "target_text": a.target_text if a2.kind == "aggregate" else a2.target_text})
        d = self._decide(a, tables, context) if tables and a.kind != "retrieval" else Decision(
            a, notes=("no analytic tables available",) if not tables else ())
        if d.tool:
            # (a condition's words are read by the condition: "when the cost was over 20 €")
            target = a.target_text or ""
            for c in a.conditions:
                # (the context as asked, "On how many waterings was the soil moisture", in the lower-cased target)
                target = re.sub(re.escape(c.context), " ", target, flags=re.IGNORECASE)
            unknown = self._unknown_modifier(target, tables, d, question)
            if unknown is None and d.column == "*":
                unknown = self._unknown_counted(question, tables)
            chosen = [c for t in tables if t.table_name == d.table for c in t.attribute_columns() if c.name == d.column]
            # (not when the question asks about the phrase as said: "when did I last mention my boat fuel")
            if unknown and _only_kind(chosen, phrase_words(target), tables) and not _MENTION.search(question):
                # "soil moisture" where the rounds say just "Moisture": the only moisture there is
                d = replace(d, notes=d.notes + (f"nothing in the memory mentions {unknown!r}; {d.table}.{d.column} "
                                                f"is the only {words(d.column)} it holds",))
            elif unknown:
                # "my average kayak fee" in a memory that never mentions kayaks: the fee column
                # is some other fee; retrieval reads what there is (and the answer refuses without it)
                d = Decision(a, notes=d.notes + (f"nothing in the memory mentions {unknown!r}: no table is "
                                                 f"computed for it",), retrieval="semantic", choices=d.choices)
            else:
                d = self._one_off(a, target, tables, d) or d
        steps: list[PlanStep] = []
        # "did A happen before B": each event located on its own (the answer compares their times); the
        # question as a whole retrieves mostly what is around one of them
        order = None
        if not d.tool and "EventLocate" in tools:
            choice = order_choice(question)  # "which came first: A or B?" locates A and B the same way
            order = order_clauses(question, a.event) or (choice.sides if choice is not None else None)
        if order is not None and not a.event:
            steps.append(PlanStep(f"locate when: {order[1]}", "EventLocate"))
        if a.event and "EventLocate" in tools and (d.tool or a.kind != "when"):
            steps.append(PlanStep(f"locate when: {a.event.text}", "EventLocate"))
        if order is not None:
            steps.append(PlanStep(f"locate when: {order[0]}", "EventLocate"))
        if d.tool and a.kind == "versus" and len(d.sides) == 2:
            steps.append(PlanStep(f"compute {d.op} of {d.column} in {d.table} for me", d.tool))
            steps.append(PlanStep(f"compute {d.op} of {d.column} in {d.table} for {a.other}", d.tool))
        elif d.tool and a.kind == "compare":
            steps.append(PlanStep(f"compute {d.op} of {d.column} in {d.table} for {a.baseline.label}", d.tool))
            steps.append(PlanStep(f"compute {d.op} of {d.column} in {d.table} for {a.time_range.label}", d.tool))
        elif d.tool:
            steps.append(PlanStep(self._goal(d), d.tool))
        elif a.kind == "when" and "EventLocate" in tools:
            steps.append(PlanStep("locate the event the question asks about", "EventLocate"))
            d = Decision(a, notes=d.notes, retrieval="locate")
        elif "SemanticMatch" in tools and d.rare:
            steps.append(PlanStep(f"retrieve the rounds that mention {' / '.join(d.rare)} and compute "
                                  f"{d.rare_op} over their values", "SemanticMatch"))
        elif "SemanticMatch" in tools:
            steps.append(PlanStep("retrieve memories relevant to the question", "SemanticMatch"))
            d = Decision(a, notes=d.notes, retrieval="semantic", choices=d.choices)
        elif "EventLocate" in tools and not steps:
            steps.append(PlanStep("locate events relevant to the question", "EventLocate"))
            d = Decision(a, notes=d.notes, retrieval="locate")
        intent = a.kind if d.tool or not d.retrieval else f"{a.kind}->retrieval" if a.kind not in (
            "retrieval", "when") else a.kind
        if a.event and d.tool:
            intent = f"event+{a.kind}"
        if d.rare and steps:
            intent = f"{a.kind}->observations"
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

    def _condition_filters(self, a: Analysis, tables: list[TableMeta], prior: dict,
                           strict: bool = False) -> list[tuple[str, dict]]:
        """A filter per condition that some column of `tables` can take (conditions that none can are left
        out). `strict`: a condition in a unit of a dimension only on a column of that dimension."""
        out = []
        for c in a.conditions:
            choice = self._condition_column(c, tables, prior, strict)
            if choice is not None:
                col = next(col for t in tables if t.table_name == choice.table for col in t.columns
                           if col.name == choice.column)
                # "under 7 hours" on a column in minutes: the value in the column's unit
                value = convert(c.number, c.unit, col.unit) if c.unit and col.unit else None
                out.append((choice.table, {"column": choice.column, "op": c.op,
                                           "value": round(value, 6) if value is not None else c.number}))
        return out

    def _sized_conditions(self, a: Analysis, table: TableMeta, measured: str, prior: dict) -> list[dict] | None:
        """A filter on `table` per condition: the column its words name there, else the one column (not the
        measured one) of the condition's unit kind (its dimension; no unit: a bare number) whose values lie
        on both sides of its number ("solved above 22" beside a rating near 1700 and hits of 10-30: the
        hits). None when a condition has neither."""
        out = []
        for c in a.conditions:
            choice = self._condition_column(c, [table], prior)
            if choice is not None and choice.column != measured:
                name = choice.column
            else:
                dim = unit_dimension(c.unit)
                cols = [col for col in table.attribute_columns() if col.dtype == "DOUBLE" and col.name != measured]
                kin = [col for col in cols if dim is not None and unit_dimension(col.unit) == dim] or \
                    [col for col in cols if col.unit is None]
                inside = [col for col in kin if _threshold_inside(c, col)]
                if len(inside) != 1:
                    return None
                name = inside[0].name
            col = next(x for x in table.columns if x.name == name)
            value = convert(c.number, c.unit, col.unit) if c.unit and col.unit else None
            out.append({"column": name, "op": c.op, "value": round(value, 6) if value is not None else c.number})
        return out

    def _condition_column(self, c: Condition, tables: list[TableMeta], prior: dict,
                          strict: bool = False) -> ColumnChoice | None:
        dim = unit_dimension(c.unit)
        if c.unit:
            u = stem(c.unit.lower())
            if dim is not None:
                # the unit's dimension names the column: km -> distance (not pace in min/km), hours -> duration
                by_unit = [(t, col) for t in tables for col in t.attribute_columns()
                           if col.dtype == "DOUBLE" and unit_dimension(col.unit) == dim]
            else:
                by_unit = []
            if not by_unit:
                by_unit = [(t, col) for t in tables for col in t.attribute_columns()
                           if col.dtype == "DOUBLE" and (u in unit_tokens(col.unit) or u in set(tokens(col.name)))]
            if not by_unit and dim is not None and strict:
                return None  # "below 0.2 mm" is on a length: not on a count of layers beside it
            if len(by_unit) == 1:
                t, col = by_unit[0]
                return ColumnChoice(t.table_name, col.name, 1.0, 1.0, 1.0, 1, True)
            if by_unit:
                names = {(t.table_name, col.name) for t, col in by_unit}
                # among columns of the unit's dimension the words before the comparator decide (not the
                # unit again: "less than 390 minutes" says nothing about which duration); the dimension
                # names its columns by itself ("moves under 40" -> moves, not opening_moves)
                ranked = [ch for ch in match_columns(c.context if dim else f"{c.context} {c.unit}", tables,
                                                     self.embed, self.encode_query, self.config.lambda_meta,
                                                     table_prior=prior, dimension=dim)
                          if (ch.table, ch.column) in names]
                ranked.sort(key=lambda ch: -ch.overlap)  # a column the words name before one only its unit does
                if len(ranked) > 1 and ranked[0].overlap <= 1:
                    # no word names one of them ("when the cost was over 20 €" beside a price and a delivery
                    # charge): the one some of whose records are over the threshold and some not
                    meta = {(t.table_name, col.name): col for t, col in by_unit}
                    inside = [ch for ch in ranked if _threshold_inside(c, meta[(ch.table, ch.column)])]
                    if inside:
                        ranked = inside
                return ranked[0] if ranked else None
        ranked = match_columns(f"{c.context} {c.unit or ''}", tables, self.embed, self.encode_query,
                               self.config.lambda_meta, table_prior=prior)
        return ranked[0] if ranked and ranked[0].supported else None

    def _rare_attributes(self, a: Analysis, text: str, tables: list[TableMeta], dim: str | None,
                         whole: bool = False) -> tuple[str, ...]:
        """Attributes of the observations that no table holds and whose name or labels as written share a
        content word with the target phrase (abbreviations count; with `whole`, only whole words), of the
        asked dimension if any."""
        if self.builder is None or not hasattr(self.builder, "attributes"):
            return ()
        cat = self.catalog()
        in_tables = {c.name for t in cat.values() for c in t.columns}
        qt = {w for w in tokens(text) if w not in SCAFFOLD}
        if not qt:
            return ()
        out = []
        named = qt - _empty_words() if whole else qt
        for attr, labels, unit, _n in self.builder.attributes():
            if attr in in_tables:
                continue
            if dim is not None and unit_dimension(unit) != dim:
                continue
            names = set(tokens(attr))
            for lab in labels:
                names |= set(tokens(lab))
            names -= {"total", "average", "avg", "number", "count", "value"}
            if any(w in names or any(abbreviates(w, x) or abbreviates(x, w) for x in names) for w in qt):
                # (with `whole`, a word that names no quantity, "amount" of a one-off "pay amount", is none)
                k = len(named & names)
                if k or not whole:
                    out.append((k, attr))
        out.sort(key=lambda x: -x[0])
        return tuple(attr for k, attr in out if k == out[0][0]) if out else ()

    def _asked_dimension(self, a: Analysis) -> str | None:
        """The dimension of the unit the answer is asked in ('how many hours', 'in grams', '$ per kg'),
        not the units of conditions; None when the question names no unit."""
        q = a.question
        for c in a.conditions:
            q = q.replace(c.phrase, " ")
        units = asked_units(q)
        if not units:
            return None
        m = re.search(r"\b" + re.escape(units[0]) + r"\s*(?:per|/|an?)\s+([a-z%]+)", q.lower())
        if m and unit_info(m[1]) is not None:
            info = unit_info(f"{unit_info(units[0]).unit}/{unit_info(m[1]).unit}")
            if info is not None:
                return info.dimension
        return unit_dimension(units[0])

    def _rows_about(self, phrase: str | None, tables: list[TableMeta]) -> dict[str, float]:
        """Per table, the share of its rows whose rounds name what `phrase` names (columns.rows_about);
        empty without a phrase or without the rounds."""
        if not phrase or self.builder is None or not hasattr(self.builder, "row_words"):
            return {}
        return rows_about(phrase, tables, self.builder.row_words)

    def _tables_of_rows(self, phrase: str | None, tables: list[TableMeta]) -> set[str]:
        """Tables whose rows are the records `phrase` names, by the words of their rounds."""
        return rows_tables(self._rows_about(phrase, tables))

    def _modifier_rows(self, phrase: str, best: ColumnChoice, numeric: Sequence[ColumnChoice],
                       tables: list[TableMeta]) -> set[str]:
        """With no records named, the words before the phrase's head may name them ("puzzle" of "puzzle
        rating"): the tables whose rounds say those words, when the best column's table is not among them,
        its name does not say them, and one of theirs is named by the head word itself or by those words
        alone. Else nothing."""
        seq = [w for w in re.findall(r"[a-z]+", phrase.lower()) if w not in SCAFFOLD and w not in STOPWORDS
               and stem(w) not in SCAFFOLD and w not in MEASURE_ADJECTIVES]  # ("big": the operator)
        if len(seq) < 2:
            return set()
        head, mods = stem(seq[-1]), seq[:-1]
        if {stem(w) for w in mods} & set(tokens(best.column.replace("_", " "))):
            return set()
        found = self._tables_of_rows(" ".join(mods), tables)
        if not found or best.table in found:
            return set()
        # (or one of theirs is named by those words alone: "blitz rating" where the blitz log's "Blitz: 1391" is
        # its rating, beside the games' "rating")
        own = {stem(w) for w in mods}
        if not any(c.table in found and (head in (toks := set(tokens(c.column.replace("_", " "))))
                                         or (toks and toks <= own)) for c in numeric):
            return set()
        return found

    def _tables_of_records(self, records: str | None, tables: list[TableMeta]) -> set[str]:
        """Tables whose rows are the records the question names ("over all my lake surveys"): by the words of
        their rounds, else the one table whose rounds read like the phrase (columns.like_table: the mean
        cosine of the phrase to the embeddings of its rows' rounds, clearly above every other table's).
        Only for a records phrase, never for the measured quantity: a quantity's word is no kind of round."""
        found = self._tables_of_rows(records, tables)
        if found or not records or len(tables) < 2 or self.builder is None \
                or not hasattr(self.builder, "row_vectors"):
            return found
        kept = [w for w in re.findall(r"[a-z]+", records.lower())
                if w not in STOP_RECORDS and w not in STOPWORDS and stem(w) not in SCAFFOLD]
        if not kept:
            return found
        # (in a clause, "did I borrow books", a verb comes before its object: only a noun phrase's words narrow)
        clause = re.match(r"\s*(?:did|do|does|have|has|had)\b", records.lower()) is not None
        if hasattr(self.builder, "mentions") and not clause:
            said = [any(self.builder.mentions(x) for x in phrase_words(w)) for w in kept]
            if any(not a and b for a, b in zip(said, said[1:])):
                # a word the memory never mentions narrows one it does ("sign language course" beside language
                # lessons): other records than the rounds hold, whatever they read like
                return found
        best = like_table(rows_like(self.encode_query(" ".join(kept)), tables, self.builder.row_vectors))
        if best and hasattr(self.builder, "row_words"):
            # the rows must say some word of the phrase themselves ("Business expense" in one of the expenses):
            # a thing of the same kind the history never logged reads alike too ("my gluten-free croissant"
            # beside bakes of bread), and a refusal is the right answer there
            rows = self.builder.row_words(best)
            words = {x for w in kept for x in phrase_words(w)}
            if not any(words & r for r in rows):
                return found
        return {best} if best else found

    def _head_unsaid(self, records: str | None) -> bool:
        """Whether no round says the head word of a records phrase ("trips" of "business trips" where the
        rounds say "Business expense" and "km dist"): its table was then found by the words before the head
        alone, which does not outweigh a column the question names by its own word elsewhere. False without
        the rounds."""
        words = phrase_words(records or "")
        if not words or self.builder is None or not hasattr(self.builder, "mentions"):
            return False
        return not self.builder.mentions(words[-1])

    def _unknown_modifier(self, text: str | None, tables: list[TableMeta], d: Decision,
                          question: str = "") -> str | None:
        """A word of the target phrase right before a word that names what the decision computes (its
        column, or for a count its table: "kayak" of "kayak fee") that nothing in the memory
        holds: no table, column or alias names it (abbreviations count) and no round mentions it. None when
        every such word is known, or without the rounds. The verb of the question's clause ("play" of "how
        many times did I play blitz") modifies nothing."""
        if self.builder is None or not hasattr(self.builder, "mentions"):
            return None
        verbs = set(re.findall(r"\b(?:" + "|".join(AUXILIARIES) + r")\s+(?:i|we|you)\s+([a-z]+)", question.lower()))
        chosen = next((t for t in tables if t.table_name == d.table), None)
        if chosen is None:
            return None
        cols = [c for c in chosen.attribute_columns() if d.column in (None, "*") or c.name == d.column]
        computed = {w for c in cols for w in name_tokens(c)} | (
            set(table_words(chosen.table_name)) if d.column in (None, "*") else set())
        # adjacent words of the phrase only ("kayak fee"; not "pulse ... during rehearsals")
        raw = re.findall(r"[a-z0-9]+", (text or "").lower())
        pairs = [(a, b) for a, b in zip(raw, raw[1:]) if phrase_words(a) and phrase_words(b)]
        seq = phrase_words(text or "")
        meta = _meta_words(tables)
        # the name of what the column's unit measures ("volume changed" of a column in litres) says what it is
        dims = {unit_dimension(c.unit) for c in cols} - {None}

        def known(w: str) -> bool:
            return _in_meta(w, meta) or w in dims or self.builder.mentions(w)
        for a_raw, b_raw in pairs:
            w, nxt = phrase_words(a_raw)[0], phrase_words(b_raw)[0]
            if a_raw in verbs:
                continue
            if any(lettered_name(n, [a_raw, stem(b_raw)]) for c in cols for n in (c.name, *c.aliases)):
                continue  # "blitz" of "blitz rating" is the "b" of the column "b-rating"
            k = seq.index(w) if w in seq else 0
            # (words whose initials name a column are known: "resting heart rate" for "rhr")
            ini = {"".join(x[0] for x in seq[j:j + n]) for n in (2, 3) for j in range(max(0, k - n + 1), k + 1)
                   if j + n <= len(seq)}
            if len(w) >= 3 and not w.isdigit() and w not in MEASURE_ADJECTIVES and w not in ASKING_ADJECTIVES \
                    and unit_info(w) is None and unit_info(w + "s") is None and not ini & meta \
                    and not known(w) and any(n in computed or any(abbreviates(n, x) or abbreviates(x, n)
                                                                  for x in computed) for n in (nxt, b_raw)):
                # (the word as written too: "temp" shortens "tempering", not its lemma "temper")
                return w
        return None

    def _unknown_counted(self, question: str, tables: list[TableMeta]) -> str | None:
        """The head of what "how many times did I log <thing>" counts ("cop" of "log my heat pump COP"),
        when nothing in the memory holds it: no table, column or alias names it (abbreviations count) and no
        round mentions it. A verb of its own ("water the plants") says what is counted, whatever its object
        (the rounds may say "Watered" and never "plants"): only a verb of logging, or one nothing mentions
        either, leaves it to the object. None otherwise, or without the rounds."""
        m = _TIMES_DID.search(question.lower())
        if m is None or self.builder is None or not hasattr(self.builder, "mentions"):
            return None
        if stem(m.group(1)) not in SCAFFOLD and m.group(1) not in SCAFFOLD and self.builder.mentions(m.group(1)):
            return None
        seq = phrase_words(m.group(2))
        if not seq:
            return None
        head = seq[-1]
        if len(head) < 3 or head.isdigit() or unit_info(head) is not None or _in_meta(head, _meta_words(tables)) \
                or self.builder.mentions(head):
            return None
        return head

    def _one_off(self, a: Analysis, text: str | None, tables: list[TableMeta], d: Decision) -> Decision | None:
        """The question names a thing right before its quantity ("the mill price") that no table, column,
        alias or value names and that the chosen table's rounds hardly say, while rounds that are no row
        of it do ("Paid €150 for a grain mill"): a decision that reads the values of those rounds (in the
        chosen column's dimension) instead of the table. None otherwise, or without the rounds."""
        if self.builder is None or not hasattr(self.builder, "one_off_rounds") or d.tool != "Compute" \
                or a.kind not in ("value", "latest", "first", "aggregate", "extreme", "value_sum") or a.event \
                or a.asks_date:
            return None
        chosen = next((t for t in tables if t.table_name == d.table), None)
        col = next((c for c in chosen.attribute_columns() if c.name == d.column), None) if chosen else None
        if col is None or col.dtype != "DOUBLE":
            return None
        seq = phrase_words(text or "")
        own = name_tokens(col) | unit_tokens(col.unit)
        # the quantity's word: the one naming the column, else the phrase's head (its last word)
        at = [k for k, x in enumerate(seq) if x in own] or [len(seq) - 1]
        beside = [seq[j] for k in at for j in (k - 1, k + 1) if 0 <= j < len(seq) and seq[j] not in own]
        meta = _meta_words(tables)
        rows = self.builder.row_words(chosen.table_name) if hasattr(self.builder, "row_words") else ()
        records = set(tokens(a.records or "")) | set(tokens(a.how_many_noun or ""))
        reader = getattr(self.builder, "round_observations", None)
        dim = unit_dimension(col.unit)
        w = rounds = None
        for x in beside:
            if len(x) < 3 or not x.isalpha() or x in MEASURE_ADJECTIVES or x in ASKING_ADJECTIVES or \
                    unit_info(x) is not None or _in_meta(x, meta) or x in records:
                continue
            if rows and sum(1 for r in rows if x in r) > ROWS_NAMING_ONE_OFF * len(rows):
                continue  # the table's own rounds say it: its rows are about it
            # a few rounds (fewer than a table needs), holding a number of the column's dimension ("I bought
            # a road bike" holds no distance: the rides on it are still the table's)
            found = self.builder.one_off_rounds(x, chosen.table_name, limit=self.config.theta_s)
            if found and len(found) < self.config.theta_s and reader is not None and any(
                    unit_dimension(r[4]) == dim for r in reader(list(found))):
                w, rounds = x, found
                break
        if w is None:
            return None
        op = _observed_op(a, a.kind)
        note = (f"{w!r} is said only in {len(rounds)} round(s) outside {d.table} ({', '.join(rounds[:5])}): the "
                f"answer reads their values, not {d.table}.{d.column}")
        return Decision(a, notes=d.notes + (note,), choices=d.choices, retrieval="semantic", rare=(w,), rare_op=op,
                        rare_dim=dim, rare_rounds=rounds, reader=reader)

    def _column_of_rows(self, a: Analysis, numeric: list[ColumnChoice], tables: list[TableMeta],
                        like: ColumnChoice | None = None) -> ColumnChoice | None:
        """When no column's name supports the question but its words name one table's rows ("how much resin"
        beside a table pour_log whose rounds say "resin pour"): that table's quantity. Among its
        candidate columns: for "how much" an amount (mass, volume, money), then one of the dimension the
        words imply ("bake time": a duration), then the one named like the table (feed_log.feed: the
        field the table is named after), then the match order. None when the words name no single table, or
        when none of these tells its columns apart."""
        # what is measured must be named by the rounds, not only the records ("mean hydration across my
        # proof checks" names the proof checks, and nothing of the table says "hydration")
        # (a word of size alone, "largest" read as "big", is the operator, not what the rounds name)
        asked_words = phrase_words(a.target_text or "")
        words = [w for w in asked_words if not (w in MEASURE_ADJECTIVES and MEASURE_ADJECTIVES[w] is None)]
        sized = len(words) < len(asked_words)
        found = self._tables_of_rows(" ".join(words) if sized else a.target_text, tables) if words \
            else self._tables_of_records(a.records, tables)
        if not found and words:
            # the target phrase carries verbs the rounds need not use ("how much did my grocery runs come
            # to"): its words one by one, when more than half of them are named, all by one table's rounds
            per_word = [self._tables_of_rows(w, tables) for w in words]
            named = [f for f in per_word if f]
            found = set.intersection(*named) if 2 * len(named) > len(per_word) and all(
                len(f) == 1 for f in named) else set()
        if found and a.records and words:
            # the records the question names ("across my blitz sessions") are the rows, when the quantity's word
            # names other rows and none of their columns ("games": the games played, a table of moves and
            # ratings); a word that is a column's name there ("words" of a word count) names that quantity
            rows = self._tables_of_records(a.records, tables)
            said = {stem(w) for w in words}
            if rows and not found & rows and not any(
                    said & name_tokens(c) for t in tables if t.table_name in found for c in t.attribute_columns()):
                found = rows
        if len(found) != 1:
            return None
        (table,) = found
        cands = [c for c in numeric if c.table == table]
        if not cands:
            return None
        # what is measured, named by a word of its kind ("minimum time across my library loans": a duration;
        # "the weight"): rows holding no quantity of that kind hold no answer (not their fee in €)
        said = named_dimension(a.target_text or "") or (
            "duration" if re.search(r"\btimes?\b", a.target_text or "") and not a.asks_date else None)
        if said and not any(c.dimension == said or c.dimension in RELATED_DIMENSIONS.get(said, ()) for c in cands):
            return None
        low = a.question.lower()
        much = bool(re.search(r"\bhow\s+much\b", low))
        # "my total" over records no column names so: what they came to, a sum of money first
        total = bool(re.search(r"\btotal\b", a.target_text or "")) and a.op != "sum"
        implied = implied_dimension(low)  # "bake time": a duration
        tw = set(table_words(table))
        # one word that names what the records are of, not the records ("resin" of my resin prints, "honey" of
        # my honey harvests, said by the rounds where no records are named), is that stuff's amount: a mass or
        # a volume, not the cure time or the frames beside it
        own = [w for w in words if w not in MEASURE_ADJECTIVES]
        rec = phrase_words(a.records or "")
        stuff = len(own) == 1 and not said and not much and not total and own[0] not in tw and (
            own[0] in rec[:-1] if rec else True)
        # one verbal noun that names the records' activity ("how much listening", "the listening" of my listening
        # sessions): how long they went on, a duration, when the rows hold one
        doing = len(own) == 1 and not said and not total and any(c.dimension == "duration" for c in cands) \
            and re.search(r"\b" + re.escape(own[0]) + r"[a-z]*ing\b", (a.target_text or "").lower()) is not None
        # a record's total is at least any of its parts: of its sums of money, "the order total" is the largest
        # typical one (the amount, not the postage or the tax beside it)
        medians = {c.name: c.median for t in tables if t.table_name == table for c in t.columns}
        mains = {c.name for t in tables if t.table_name == table for c in t.columns if c.main}
        # a column clearly nearest the words by meaning ("gas used": the consumption, cosine 0.43 against the
        # flow temp's 0.15) before the one the table happens to be named after
        meant = cands[0].column if len(cands) > 1 and cands[0].cos - max(c.cos for c in cands[1:]) >= COS_CLEAR \
            else None

        def rank(k_c):
            k, c = k_c
            amount = c.dimension == "duration" if doing else c.dimension in ("mass", "volume", "currency") if much \
                else c.dimension == "currency" if total else stuff and c.dimension in ("mass", "volume")
            # the field the table is named after, or would be by its fields alone: its main quantity
            named = bool(set(tokens(c.column)) & tw) or c.column in mains
            # (`like`: a column elsewhere close in meaning says what kind of quantity is meant: "humidity"
            # near a soil moisture in % is the checks' RH in %, not their temperature)
            alike = like is not None and like.dimension is not None and c.dimension == like.dimension
            largest = -(medians.get(c.column) or 0.0) if total and amount else 0.0
            if total:
                # "my total" is the record's largest sum of money, whatever field the table is named after
                # (an expense table named after its tax)
                return (not amount, largest, not (implied and c.dimension == implied), not alike, not named, k)
            return (not amount, not (implied and c.dimension == implied), not alike, c.column != meant, not named,
                    largest, k)
        keys = [rank(kc)[:-1] for kc in enumerate(cands)]
        if len(cands) > 1 and len(set(keys)) == 1:
            return None  # nothing says which of its quantities is meant ("my average sold": units? left over?)
        return min(enumerate(cands), key=rank)[1]

    @staticmethod
    def _counted_phrase(a: Analysis) -> str | None:
        """What a count counts, as the question words it: 'how many starter feeds' -> 'starter feeds',
        'how many times did I water the ferns' -> 'did I water the ferns', else the records phrase."""
        if a.records:
            return a.records
        noun = a.how_many_noun
        low = a.question.lower()
        if noun and noun not in ("times", "time"):
            m = re.search(r"\b(?:how\s+many|number\s+of)\s+((?:[a-z-]+\s+){0,2}?" + re.escape(noun.lower()) + r")\b", low)
            return m[1] if m else noun
        return a.target_text or None

    def _noun_is_quantity(self, a: Analysis, tables: list[TableMeta]) -> bool:
        """'how many hours/grams' (a unit) or 'how many eggs' (a numeric column's own name or unit):
        a sum; 'how many harvests' (the rows' noun, a table's name) or nothing numeric: a count."""
        noun = (a.how_many_noun or "").lower()
        if not noun:
            return False
        if noun not in ("times", "days", "nights", "weeks", "months", "years") and \
                asked_units("how many " + noun) and unit_dimension(noun) is not None:
            return True
        n = stem(noun)
        cols = [c for t in tables for c in t.attribute_columns() if c.dtype == "DOUBLE"]
        def head_word(name):
            ws = [w for w in tokens(name) if w not in ("total", "count", "number", "num", "no")]
            return ws[-1] if ws else None
        # the noun is the quantity when it is the head of a column's name (or alias) or its unit: "eggs" for
        # eggs / egg_count, not "tests" for test_temperature
        named = [c for c in cols if n in unit_tokens(c.unit) or any(
            h is not None and (h == n or abbreviates(h, n)) for h in map(head_word, (c.name,) + tuple(c.aliases)))]
        # a column measured in a unit ("order_total" in €) is not what "how many orders" counts
        named = [c for c in named if unit_dimension(c.unit) is None or n in unit_tokens(c.unit)]
        if a.records and stem(a.records.split()[-1]) != n:
            # "how many eggs over all my harvests": the records are named apart, the noun is what they hold
            return True
        if not named:
            return False
        rows_noun = any(n in table_words(t.table_name) or any(abbreviates(w, n) or abbreviates(n, w)
                                                              for w in table_words(t.table_name))
                        for t in tables) or bool(self._tables_of_rows(self._counted_phrase(a), tables))
        if not rows_noun:
            return True
        # a table named after the noun holds none of those columns: its rows are what is counted ("how many
        # games did I log" beside game_log's games and a blitz session's "games played")
        by_name = {t.table_name for t in tables if n in table_words(t.table_name)}
        holders = {t.table_name for t in tables for c in t.attribute_columns() if c in named}
        # (unless the question writes a column's whole name of several words: "how many games played")
        said = question_words(a.question)
        whole = any(len(ws) >= 2 and any(said[k:k + len(ws)] == ws for k in range(len(said)))
                    for c in named for ws in ([stem(w) for w in re.findall(r"[a-z0-9]+", x.lower())]
                                              for x in (c.name.replace("_", " "),) + tuple(c.aliases)))
        if by_name and not by_name & holders and not whole:
            return False
        # a table whose rows are called by the noun itself and holds no such column ("game_log" beside a
        # blitz session's "games"): "how many games are there" counts its rows
        if {t.table_name for t in tables if stem(record_noun(t.table_name)) == n} - holders and not whole:
            return False
        # the noun names both a table and a column: the column when that is all its name says
        return any(set(tokens(c.name)) - {"total", "count", "number", "num"} == {n} for c in named)

    def _counted_table(self, a: Analysis, tables: list[TableMeta], prior: dict) -> str | None:
        """The table whose rows the question counts: the counted noun (and the target phrase) against
        each table's name, description and column names, abbreviations included; then the context."""
        # ("how many times" counts occasions: "times" names no table, not even a "timesheet" by its prefix)
        counted = None if (a.how_many_noun or "").lower() in ("times", "time") else a.how_many_noun
        noun = stem((counted or "").lower())
        qt = {w for w in tokens(" ".join(filter(None, [counted, a.records, a.target_text])))
              if w not in SCAFFOLD}
        best_key, table = None, None
        # the rows the question counts may be named only in their rounds ("bakes" in a table temp_log)
        about = self._rows_about(self._counted_phrase(a), tables)
        of_rows = rows_tables(about)
        for t in tables:
            tw = set(table_words(t.table_name))
            words_t = tw | set(description_words(t.description)) | {
                w for c in t.attribute_columns() for w in name_tokens(c)}

            def hit(w, pool):
                return w in pool or any(abbreviates(w, x) or abbreviates(x, w) for x in pool)
            share = about.get(t.table_name, 0.0)
            # (the rows' table by its rounds in proportion to how many of them name the rows: "games" is
            # said in every game round, and in half the rounds of blitz sessions, "12 games played")
            top = max((about.get(x, 0.0) for x in of_rows), default=0.0)
            # (a table that holds the noun as a quantity, "games" of blitz sessions in games_log, counts it
            # per row: its rows are something else, less likely the ones counted)
            holds = bool(noun) and any(c.dtype == "DOUBLE" and noun in {stem(w) for w in tokens(c.name)}
                                       for c in t.attribute_columns())
            lex = sum(1 for w in qt if hit(w, words_t)) + (3 if noun and hit(noun, tw) else 0) + (
                4 * share / top if t.table_name in of_rows and top > 0 else 0) - (1 if holds else 0)
            key = (lex, share, prior.get(t.table_name, 0.0))
            if lex > 0 and (best_key is None or key > best_key):
                best_key, table = key, t.table_name
        what = a.records or (a.how_many_noun if noun and noun not in ("time", "day", "night", "week", "month")
                             else None)
        if table is None and (what or a.how_many_noun in ("times", "time")):
            # the records named, no shared word: the table whose rounds read like them ("expenses" beside
            # rounds that say "Bought supplies. Amount paid $110")
            like = self._tables_of_records(self._counted_phrase(a), tables)
            table = next(iter(like)) if len(like) == 1 else None
        if table is None and what and tables:
            # no shared word: the counted noun's meaning against each table's rows noun and description,
            # only when one table is clearly closest (else nothing is counted: the planner retrieves)
            qv = self.encode_query(what)
            cos = np.maximum(self.embed([record_noun(t.table_name) for t in tables]) @ qv,
                             self.embed([f"{record_noun(t.table_name)}: {t.description}" for t in tables]) @ qv)
            order = np.argsort(-cos)
            i = int(order[0])
            second = float(cos[order[1]]) if len(order) > 1 else -1.0
            if float(cos[i]) >= 0.4 and float(cos[i]) - second >= 0.05:
                table = tables[i].table_name
        return table

    def _decide(self, a: Analysis, tables: list[TableMeta], context: PlanningContext) -> Decision:
        prior = {t.table_name: context.table_score(t.table_name) for t in tables}
        notes: list[str] = []
        cond = self._condition_filters(a, tables, prior)
        if len(cond) < len(a.conditions):
            notes.append("a numeric condition matched no column")
        cats = match_categories(" ".join(filter(None, [a.target_text, a.records])) if a.kind != "compare"
                                else a.question, tables)
        cats, dropped = self._categories_meant(a, cats, tables)
        notes += dropped
        cat_filters = [(m.table, m.filter()) for m in cats]
        kind = a.kind
        numeric: list[ColumnChoice] = []
        if kind == "how_many":
            # "how many <units>" sums a column measured in that unit (or named by the noun: "how many
            # eggs"); "how many <records>" counts rows of the table the noun names
            # with a condition on the rows ("how many harvests had more than 2 kg") the noun counts rows
            # unless it is a unit
            unit_noun = bool(asked_units("how many " + (a.how_many_noun or ""))) and unit_dimension(a.how_many_noun) is not None
            kind = "value_sum" if (unit_noun or (not a.conditions and self._noun_is_quantity(a, tables))) \
                else "count"
        if kind in ("aggregate", "trend", "extreme", "value", "value_sum", "latest", "first", "compare", "versus"):
            dtypes = {"latest": ("DOUBLE", "VARCHAR", "DATE", "TIMESTAMP"), "first": ("DOUBLE", "VARCHAR", "DATE", "TIMESTAMP"),
                      "value": ("DOUBLE", "VARCHAR")}.get(kind, ("DOUBLE",))
            if kind == "value" and _HOW_MUCH.search(a.question.lower()):
                dtypes = ("DOUBLE",)  # "how much was the vet bill": an amount, never a text ("Bill to: Quill Books")
            text = a.target_text
            for m in cats:  # the category words name the rows, not the measured quantity
                for v in (m.variants or (m.value,)):
                    text = re.sub(r"\b" + re.escape(str(v).lower()) + r"\w*", " ", text)
                # nor does the filtered column's name ("where the kind was chain")
                text = re.sub(r"\b" + re.escape(m.column.replace("_", " ").lower()) + r"\s+(?:was|is|were)\b",
                              " ", text)
            # a column the conditions filter on is not what is measured ("nitrate on tanks with a
            # resting heart rate of 60 or more"), unless nothing else fits
            used = {(t, f["column"]) for t, f in cond}
            # the unit the answer is asked in is a hard constraint (not the units of conditions)
            dim = self._asked_dimension(a)
            # tables whose rows the question names by a category value ("my runs" -> activity = run)
            named = {m.table for m in cats} | self._tables_of_records(a.records, tables)
            ctx = {w for c in a.conditions for w in tokens(c.context)}
            own_words = {w for w in tokens(text) if w not in SCAFFOLD} - ctx
            if time_of_rows(text):
                own_words.add("time")  # "my average time on writing exercises with words above 336": asked
            asked = text
            if _per_time(text) and "rate" not in own_words:
                asked += " rate"  # "mites/day", "visits per week": a rate, whatever the column calls its thing
            if own_words and used:
                # the words of a condition's quantity are not the measured one's ("time on puzzle sessions with
                # puzzle rating above 1854": "puzzle rating" named "Puzzles." solved beside it)
                for c in a.conditions:
                    asked = re.sub(r"\b" + re.escape(c.context.lower()) + r"\b", " ", asked.lower())
            numeric = match_columns(asked, tables, self.embed, self.encode_query, self.config.lambda_meta,
                                    dtypes=dtypes, table_prior=prior, exclude=used, dimension=dim,
                                    records=a.records, named=named)
            if used and not any(c.supported for c in numeric) and not own_words:
                # the phrase names nothing but the condition's quantity: the condition column it is
                numeric = match_columns(text, tables, self.embed, self.encode_query, self.config.lambda_meta,
                                        dtypes=dtypes, table_prior=prior, dimension=dim, records=a.records,
                                        named=named)
        best = next((c for c in numeric if c.supported), None)
        by_rows = self._tables_of_records(a.records, tables) if numeric and a.records else set()
        if numeric and not a.records and best is not None and not cats:
            by_rows = self._modifier_rows(a.target_text, best, numeric, tables)
        inside = next((c for c in numeric if c.supported and c.table in by_rows), None)
        if inside is None and best is not None and best.table not in by_rows:
            # no column of the named rows' table is supported, but one shares a word of the phrase ("new" of
            # "new words" on vocabulary sessions, beside a writing log's word count): it is theirs
            inside = next((replace(c, supported=True) for c in numeric if c.overlap > 0 and c.table in by_rows
                           and c.bm25 > 0), None)
        if inside is not None and best is not None and best.table not in by_rows:
            # "over all my loans": a column of the table whose rows are the loans, before a like column elsewhere
            notes.append(f"{inside.table} holds the {a.records or 'records'} (by its rounds): {inside.column} before "
                         f"{best.table}.{best.column}")
            best = inside
        elif best is not None and by_rows and best.table not in by_rows and not cats \
                and not (best.overlap > 0 and best.bm25 > 0 and self._head_unsaid(a.records)):
            # "mean chicks across all my nest box checks": the checks are the rows of another table than the one
            # whose column is nearest in meaning (a bird count's "birds"); what they hold, or nothing, is meant
            notes.append(f"{', '.join(sorted(by_rows))} holds the {a.records} (by its rounds); "
                         f"{best.table}.{best.column} is no column of theirs")
            best = None
        in_cat = next((c for c in numeric if c.supported and c.table in {m.table for m in cats}), None)
        if best is not None and cats and in_cat is not None and best.table not in {m.table for m in cats}:
            # "my average print time for TPU": TPU is a value of the print jobs' table; its own duration is
            # meant, not a like column of another table where the filter would be dropped
            notes.append(f"{in_cat.table} holds the rows {cats[0].value!r} names: {in_cat.column} before "
                         f"{best.table}.{best.column}")
            best = in_cat
        # "proof time": a duration of the records "proof" names; a column that shares only "time" or
        # "duration" with the phrase (the bakes' bake_duration) is named by meaning alone
        by_meaning = (lambda c: c.overlap == 0 or _named_by_time_only(a.target_text, c.column))
        if best is not None and by_meaning(best) and numeric and not cats and not cond:
            # a column chosen by meaning alone ("soil moisture" for "humidity") in one table, while the
            # question's word is said in the rounds of another ("Humidity check: RH 58 %"): that table's
            of_rows = self._column_of_rows(a, numeric, tables, like=best)
            # (not when the phrase names the dimension best measures and of_rows' does not: "flow temp" is a
            # temperature, whatever else the rounds that say "flow" hold)
            said_dim = named_dimension(a.target_text or "")
            # (nor when the question names the records and best is theirs: "what games did my blitz sessions
            # show" asks the sessions' game count, not the moves of the games another table holds)
            if of_rows is not None and of_rows.table != best.table and not any(
                    not by_meaning(c) and c.supported for c in numeric) and not (
                    said_dim and best.dimension == said_dim and of_rows.dimension != said_dim) and not (
                    best.table in by_rows and of_rows.table not in by_rows):
                notes.append(f"{best.table}.{best.column} only by meaning; the rounds of {of_rows.table} say "
                             f"{' '.join(phrase_words(a.target_text or ''))!r}: {of_rows.column}")
                best = replace(of_rows, supported=True)
        if best is None and numeric:
            of_rows = self._column_of_rows(a, numeric, tables)
            if of_rows is not None:
                notes.append(f"no column is named by the question; the rounds of {of_rows.table} name its rows: "
                             f"{of_rows.column}")
                best = replace(of_rows, supported=True)
        if kind in ("aggregate", "extreme", "value", "value_sum", "latest", "first") and \
                (best is None or best.overlap == 0) and not a.event:
            dim = self._asked_dimension(a)
            rare = self._rare_attributes(a, a.target_text, tables, dim)
            if rare and best is not None and best.table in self._tables_of_rows(a.records or a.target_text, tables) \
                    and not self._rare_attributes(a, a.target_text, tables, dim, whole=True):
                # the records' own table, no column of it named: its column is meant unless an attribute no
                # table holds is named by a whole word ("fish counted" on three feedings' screens, "fd" g held)
                rare = ()
            if rare:
                op = _observed_op(a, kind)
                notes.append(f"no table holds {' / '.join(rare)}; the answer reads the observations of the "
                             f"retrieved rounds and computes {op} over the values found there")
                if best is not None:
                    notes.append(f"column {best.table}.{best.column} only by cosine {best.cos:.2f}: not used")
                return Decision(a, notes=tuple(notes), choices=tuple(numeric[:5]), retrieval="semantic",
                                rare=rare, rare_op=op, rare_dim=dim,
                                reader=getattr(self.builder, "round_observations", None))
        if kind == "extreme" and re.search(r"\bmost\s+(?:often|common(?:ly)?|frequent(?:ly)?)\b|\bfavou?rite\b|"
                                           r"\bthe\s+most\s*(?:$|[?.!,]|\b(?:in|on|during|last|this|over|since|"
                                           r"times)\b)", a.question.lower()):
            # "what colour did I play the most": the most frequent value of a text column
            texts = match_columns(a.target_text, tables, self.embed, self.encode_query, self.config.lambda_meta,
                                  dtypes=("VARCHAR",), table_prior=prior)
            first_person = bool(re.search(r"\b(?:i|my|me)\b", a.question.lower()))
            texts = sorted(texts, key=lambda c: -(c.score + (0.1 if first_person and "my" in c.column.split("_")
                                                              else 0.0)))
            top = next((c for c in texts if c.supported), None)
            if top is not None and (best is None or top.overlap > best.overlap):
                filters = tuple(f for t, f in cond + cat_filters if t == top.table)
                return Decision(a, "Compute", top.table, top.column, op="mode", filters=filters,
                                choices=tuple(texts[:5]), notes=tuple(notes))
        if kind in ("latest", "first") and best is None and (cat_filters or cond) and a.asks_date:
            table = (cat_filters or cond)[0][0]
            filters = tuple(f for t, f in cat_filters + cond if t == table)
            return Decision(a, "Rank", table, "time", order="desc" if kind == "latest" else "asc", budget=1,
                            filters=filters, notes=tuple(notes))
        if kind in ("count", "list", "yesno"):
            table = None
            if len(cond) < len(a.conditions) and not cat_filters:
                # "how many X had a Y over 3": no column named Y; the records' own table (by its rounds) may hold
                # one column Y's number fits by its size, as in a computation ("payments with a days late above
                # 13 days" where the screen prints "Delay."); else no table's rows can be counted
                counted = self._counted_table(a, tables, prior)
                sized = self._sized_conditions(a, next(t for t in tables if t.table_name == counted), "", prior) \
                    if counted and counted in self._tables_of_records(self._counted_phrase(a), tables) else None
                if sized is None:
                    return Decision(a, notes=tuple(notes + ["a condition matches no column; nothing to count"]))
                notes.append(f"conditions read in {counted} (a condition by its number's size): " + ", ".join(
                    f"{f['column']} {f['op']} {f['value']}" for f in sized))
                cond = [(counted, f) for f in sized]
            if cond and not cat_filters and kind == "count":
                # "how many games had a rating under 1522": the counted rows' table, when it holds a
                # column for every condition, before the table a condition's words alone point to (the
                # noun "games" is also a column of blitz sessions); the noun is not the condition's quantity
                counted = self._counted_table(a, tables, prior)
                noun_words = set(tokens(self._counted_phrase(a) or ""))
                bare = replace(a, conditions=tuple(
                    replace(c, context=" ".join(w for w in c.context.split() if stem(w.lower()) not in noun_words)
                            or c.context) for c in a.conditions))
                own = self._condition_filters(bare, [t for t in tables if t.table_name == counted], prior) \
                    if counted else []
                # the records may be the rows of several tables ("print jobs": the rounds of filament prints and
                # of resin prints both say "print"): the one whose columns take the conditions in their units
                of_rows = sorted(self._tables_of_rows(self._counted_phrase(a), tables))
                several = counted in of_rows and len(of_rows) > 1
                for t in [counted] + [x for x in of_rows if x != counted] if several else ():
                    strict = self._condition_filters(bare, [x for x in tables if x.table_name == t], prior, strict=True)
                    if len(strict) == len(a.conditions):
                        if t != counted:
                            notes.append(f"the {self._counted_phrase(a)} are rows of {', '.join(of_rows)}; only "
                                         f"{t} holds the condition's quantity")
                            counted, own = t, strict
                        break
                if counted and counted != cond[0][0] and len(own) == len(a.conditions) and noun_words & set(
                        table_words(cond[0][0])) and any(
                        unit_dimension(c.unit) for c in a.conditions) and len(self._condition_filters(
                        bare, [t for t in tables if t.table_name == counted], prior, strict=True)) < len(a.conditions):
                    # "print jobs with a layer height over 0.18 mm": the resin prints' table, with no column in
                    # millimetres, does not hold the condition; the print table whose column has the unit does
                    notes.append(f"{counted} holds no column in the condition's unit: the rows of {cond[0][0]} "
                                 f"are counted")
                    counted, own = cond[0][0], cond
                if counted and len(own) == len(a.conditions) and counted != cond[0][0]:
                    notes.append(f"the {self._counted_phrase(a)} are rows of {counted}: conditions read there")
                    cond = own
            if cond or cat_filters:
                table = (cond or cat_filters)[0][0]
            else:
                table = self._counted_table(a, tables, prior)
            if table is None:
                return Decision(a, notes=tuple(notes + ["no table matches what is counted"]))
            filters = tuple(f for t, f in cond + cat_filters if t == table)
            if kind == "count":
                return Decision(a, "Compute", table, "*", op="count", filters=filters, notes=tuple(notes))
            if not filters:
                return Decision(a, notes=tuple(notes + ["no condition to filter on"]))
            return Decision(a, "Filter", table, None, filters=filters, notes=tuple(notes))
        if best is None:
            # (of the tables whose rows the question names, when it names any)
            near = next((c for c in numeric if c.table in by_rows), None) if by_rows else (numeric or [None])[0]
            if near is not None:
                notes.append(f"no column supports the question (best: {near.table}.{near.column}, "
                             f"cos {near.cos:.2f}, no shared word)")
            return Decision(a, choices=tuple(numeric[:5]), notes=tuple(notes))
        table, column = best.table, best.column
        if a.conditions and len(cond) < len(a.conditions) and not any(t != table for t, _ in cond):
            # a condition whose words name no column ("with solved above 22" where the screen prints "Hits."):
            # its number says the size of the quantity meant, as a value does in alignment; computed without
            # it the answer would be over rows the question excludes
            sized = self._sized_conditions(a, next(t for t in tables if t.table_name == table), column, prior)
            if sized is None:
                return Decision(a, choices=tuple(numeric[:5]), notes=tuple(notes + [
                    f"a condition names no column of {table}, and its number fits no one column there: "
                    "nothing to compute over"]))
            notes.append("conditions read in " + table + " (a condition by its number's size): " + ", ".join(
                f"{f['column']} {f['op']} {f['value']}" for f in sized))
            cond = [(table, f) for f in sized]
        if a.conditions and (len(cond) < len(a.conditions) or any(t != table for t, _ in cond)):
            # a condition read against every table may land on a like column elsewhere ("humidity over 56 %"
            # on another table's moisture in %): the measured rows' own table decides when it holds a column
            # for every condition (by the condition's unit or words), other than the one measured
            own = self._condition_filters(a, [t for t in tables if t.table_name == table], prior)
            if len(own) == len(a.conditions) and all(f["column"] != column for _, f in own):
                notes.append("conditions read in " + table + ": " + ", ".join(
                    f"{f['column']} {f['op']} {f['value']}" for _, f in own))
                cond = own
        filters = tuple(f for t, f in cond + cat_filters if t == table)
        dropped = [f for t, f in cond + cat_filters if t != table]
        if dropped:
            notes.append(f"{len(dropped)} filter(s) on other tables ignored")
        if any(t != table for t, _ in cond):
            # a numeric condition only another table's rows can meet ("when the temperature was over 25 °C"
            # measured in dough_log, the rise in another table): computed without it, the answer would be
            # over rows the question excludes; nothing is computed
            return Decision(a, choices=tuple(numeric[:5]), notes=tuple(notes + [
                f"the condition is on {', '.join(sorted({t for t, _ in cond if t != table}))}, not on {table}, "
                f"where {column} is: nothing to compute over"]))
        colmeta = next(c for t in tables if t.table_name == table for c in t.columns if c.name == column)
        expr = _converted(a.question, colmeta, [c.phrase for c in a.conditions])
        if expr:
            notes.append(f"{column} ({colmeta.unit}) converted to the unit asked: {expr}")
        common = dict(table=table, column=column, filters=filters, choices=tuple(numeric[:5]), notes=tuple(notes),
                      expr=expr)
        single_day = (a.time_range is not None and a.time_range.days() == 1) or (
            a.event is not None and a.event.relation.startswith("day"))
        if kind == "aggregate":
            return Decision(a, "Compute", op=a.op, **common)
        if kind == "trend":
            return Decision(a, "Compute", op="change", **common)
        if kind == "compare":
            return Decision(a, "Compute", op="avg", **common)
        if kind == "versus":
            sides = _sides(tables, table, a.other)
            if not sides:
                return Decision(a, notes=tuple(notes + [f"no text column of {table} holds both me and {a.other}"]))
            common["filters"] = tuple(f for f in filters if f["column"] != sides[0]["column"])
            return Decision(a, "Compute", op="sum", sides=sides, **common)
        if kind == "extreme":
            return Decision(a, "Rank", order=_order_for(a, colmeta), budget=a.top_n, **common)
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
        if cond and kind == "value":
            # "how much nitrate was there on tests with a pH under 7": over the matching rows
            total = bool(re.search(r"\b(?:total|in all|altogether|combined)\b", a.question.lower()))
            return Decision(a, "Compute", op="sum" if total else "avg", **common)
        if filters and kind == "value":
            return Decision(a, "Filter", **common)
        return Decision(a, "Compute", op="sum" if kind == "value_sum" else "latest", **common)

    # ------------------------------------------------------------------ instantiate
    def instantiate(self, question: str, context: PlanningContext, plan: Plan, index: int,
                    results: Sequence[ToolResult | None], budget_left: int, *, progressive: bool = True,
                    now: datetime | date | None = None, first: datetime | date | None = None) -> Instantiation:
        """Step `index`'s arguments from the question (without its instructions) and earlier results
        (None results = failed steps). Retrieval steps note the memory's people (`context.people`, when
        the context has them) for the answerer (core.planning.answer.people_from_steps)."""
        question = strip_instructions(question)[0] or question
        inst = self._instantiate(question, context, plan, index, results, budget_left, progressive=progressive,
                                 now=now, first=first)
        people = tuple(str(p) for p in (getattr(context, "people", ()) or ()) if str(p).strip())
        if people and plan.steps[index].tool in ("SemanticMatch", "EventLocate"):
            from .answer import PEOPLE_NOTE

            return replace(inst, notes=tuple(inst.notes) + (PEOPLE_NOTE + ", ".join(people),))
        return inst

    def _categories_meant(self, a: Analysis, cats: list, tables: list[TableMeta]) -> tuple[list, list[str]]:
        """The category values that filter the rows, of those a question's words match: not one in another
        table than the records the question names ("wins over all my blitz sessions": the sessions' wins,
        not the games whose result is "win"), nor one whose word is the only thing the question asks about
        while a number column is named by it ("the smallest wins I logged": the column "Won", not rows
        whose result is "win")."""
        if not cats or a.kind in ("compare", "versus", "count", "list", "yesno"):
            return cats, []
        notes = []
        rec = self._tables_of_records(a.records, tables) if a.records else set()
        if rec:
            kept = [m for m in cats if m.table in rec]
            if len(kept) < len(cats):
                notes.append(f"{', '.join(sorted({m.value for m in cats if m.table not in rec}))}: a value of "
                             f"another table than the {a.records}; no filter")
            cats = kept
        numbers = {w for t in tables for c in t.attribute_columns() if c.dtype == "DOUBLE" for w in name_tokens(c)}
        out = []
        for m in cats:
            said = {stem(w) for v in (m.variants or (m.value,)) for w in re.findall(r"[a-z]+", str(v).lower())}
            rest = re.sub(r"\b(?:" + "|".join(re.escape(str(v).lower()) for v in (m.variants or (m.value,)))
                          + r")\w*", " ", a.target_text or "")
            if said & numbers and not [w for w in tokens(rest) if w not in SCAFFOLD and w not in MEASURE_ADJECTIVES]:
                notes.append(f"{m.value!r} names a number column, not rows whose {m.column} is {m.value!r}")
                continue
            out.append(m)
        return out, notes

    def _column_on_the_day(self, d: Decision, filters: list[dict]) -> tuple[Decision, str | None]:
        """A value read on one day ("my X on May 5", "on the day I ...") from a column with no record that day,
        while another candidate the question supports as well has one: that candidate (the record the
        question is about exists; of two like quantities, the one logged that day is meant). Only for a
        plain value or latest/first read over a window of at most WINDOW_DAYS days with no other filter;
        else `d` as it is."""
        window = [f for f in filters if f.get("column") == "time" and f.get("op") == "between"]
        if (d.analysis.kind not in ("value", "latest", "first") or d.tool != "Compute" or not d.column
                or d.expr or len(window) != 1 or len(filters) != 1 or self.builder is None
                or not hasattr(self.builder, "values_between")):
            return d, None
        lo, hi = window[0]["value"]
        if (date.fromisoformat(hi) - date.fromisoformat(lo)).days > WINDOW_DAYS - 1:
            return d, None
        if self.builder.values_between(d.table, d.column, lo, hi):
            return d, None
        best = next((c for c in d.choices if c.supported and (c.table, c.column) != (d.table, d.column)
                     and self.builder.values_between(c.table, c.column, lo, hi)), None)
        if best is None:
            return d, None
        return replace(d, table=best.table, column=best.column), (
            f"{d.table}.{d.column} has no record on {lo}..{hi}; {best.table}.{best.column}, also named by the "
            f"question, has one")

    def _instantiate(self, question: str, context: PlanningContext, plan: Plan, index: int,
                     results: Sequence[ToolResult | None], budget_left: int, *, progressive: bool = True,
                     now: datetime | date | None = None, first: datetime | date | None = None) -> Instantiation:
        d: Decision = plan.payload
        a = d.analysis
        step = plan.steps[index]
        if step.tool == "EventLocate":
            if d.retrieval == "locate":
                query = a.event.text if a.event else re.sub(r"^\s*when\s+(?:did|was|were|is|do|does)\s+", "",
                                                            question, flags=re.IGNORECASE)
                # the whole budget, as the rag baseline gets: each unit is one event with its window
                return Instantiation({"query_content": query, "result_budget": budget_left})
            # a few candidates: a recurring record that mentions the same thing ("Bike ride today") may
            # outscore the one-off event ("I finally bought a road bike") by a hair; the next step picks
            said = step.goal.split("locate when: ", 1)
            query = said[1] if len(said) == 2 and said[1].strip() else a.event.text if a.event else question
            return Instantiation({"query_content": query, "result_budget": min(EVENT_CANDIDATES, budget_left)})
        if step.tool == "SemanticMatch":
            notes = ("columns by meaning: " + "; ".join(c.show() for c in d.choices[:4]),) if d.choices else ()
            return Instantiation({"query_content": question, "retrieval_scope": "event",
                                  "result_budget": budget_left}, notes)
        notes: list[str] = []
        if d.choices:
            # why this column: the best candidates by h over column metadata (name, aliases, unit, table)
            notes.append("columns by meaning: " + "; ".join(c.show() for c in d.choices[:4]))
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
                u = best_event(prev.units, a.event.text, self.record_rounds() if self.record_rounds else frozenset())
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
        elif a.kind == "compare" and a.baseline is not None:
            r = a.baseline if index == 0 else a.time_range
            filters.append({"column": "time", "op": "between", "value": [r.start.isoformat(), r.end.isoformat()]})
        elif a.time_range is not None:
            filters.append({"column": "time", "op": "between",
                            "value": [a.time_range.start.isoformat(), a.time_range.end.isoformat()]})
        if a.kind == "versus" and len(d.sides) == 2:
            filters.append(dict(d.sides[min(index, 1)]))
        d, note = self._column_on_the_day(d, filters)
        if note:
            notes.append(note)
        args: dict = {"table": d.table}
        target = d.expr if d.expr and d.op not in ("count",) else d.column
        if step.tool == "Compute":
            args.update({"target_column_expression": target or "*", "operator": d.op or "latest",
                         "optional_column_filters": filters})
        elif step.tool == "Rank":
            args.update({"target_column_expression": target, "order": d.order or "desc",
                         "optional_column_filters": filters, "result_budget": min(d.budget or 1, budget_left)})
        elif step.tool == "Filter":
            if not filters:
                return Instantiation(None, ("no filter to apply",))
            args.update({"column_filters": filters, "result_budget": budget_left})
        else:  # Lookup
            args.update({"key_values": {f["column"]: f["value"] for f in filters if f["op"] == "="},
                         "result_budget": budget_left})
        return Instantiation(args, tuple(notes))


# ---------------------------------------------------------------------- composite answers
def compose_answer(plan: Plan, records: Sequence) -> "Answer | None":
    """Answers that need more than one step's result or a yes/no reading of rows, which the
    per-step answerer does not give: a comparison of two periods ("higher or lower in March than in
    January" -> "Higher: 7.4 h on average in March 2026 vs 6.9 h in January 2026") and a yes/no over
    matching rows ("Did X ever drop below Y?" -> "No, never: 0 of the rows match ..."). None when
    the plan is not one of these or its steps did not run."""
    from .answer import fmt_num, scope_text
    from .trace import Answer

    d = plan.payload
    if not isinstance(d, Decision):
        return None
    a = d.analysis
    ok = [r for r in records if r.status == "ok" and r.tool in ANALYTIC_TOOLS]
    ids = tuple(u.unit_id for r in ok for u in r.units)
    rounds = tuple(dict.fromkeys(x for r in ok for u in r.units for x in u.rounds))
    if d.rare:
        return _rare_answer(d, records) or _no_number(d)
    if d.retrieval == "semantic" and a.kind in COMPUTED_KINDS and not (a.asks_date and a.kind in ("latest", "first")) \
            and not _asks_words(a) and counted_phrase(a.question) is None and not _asks_order(a):
        # (pictures are counted from the retrieved rounds by the answerer: "how many photos of X did I share")
        # ("when did I last go bouldering": the date of an event, which the retrieved rounds can give)
        return _no_number(d)
    if d.retrieval == "semantic" and a.kind == "value" and _LOGGED_VALUE.search(a.question):
        # "what sugar did I log on May 5": a value of a record; without a column a phrase of some round ("gr",
        # "Thanks") is no answer
        return _no_number(d)
    if a.kind == "compare" and d.tool == "Compute":
        comp = [r for r in ok if r.tool == "Compute" and isinstance(r.value, dict)]
        if len(comp) != 2 or a.baseline is None:
            return None
        vb, vt = comp[0].value.get("value"), comp[1].value.get("value")
        if not isinstance(vb, (int, float)) or not isinstance(vt, (int, float)):
            return None
        unit = comp[1].value.get("unit") or ""
        unit = f" {unit}" if unit else ""
        updown = bool(re.search(r"\b(?:up|down|increas\w*|decreas\w*|rise|rose|fall|fell|drop\w*)\b", a.question.lower()))
        if vt > vb:
            word = "went up" if updown else "higher"
        elif vt < vb:
            word = "went down" if updown else "lower"
        else:
            word = "stayed the same" if updown else "the same"
        text = (f"{word[0].upper() + word[1:]}: {fmt_num(vt)}{unit} on average {a.time_range.label} "
                f"(n={comp[1].value.get('n_rows', 0)}) vs {fmt_num(vb)}{unit} {a.baseline.label} "
                f"(n={comp[0].value.get('n_rows', 0)})")
        return Answer(text, "computed", 1.0, ids, rounds)
    if a.kind == "versus" and len(d.sides) == 2:
        comp = [r for r in ok if r.tool == "Compute" and isinstance(r.value, dict)]
        if len(comp) != 2:
            return None
        mine, theirs = (c.value.get("value") or 0 for c in comp)
        unit = comp[0].value.get("unit") or ""
        unit = f" {unit}" if unit else ""
        yes = mine > theirs if a.more else mine < theirs
        scope = a.time_range.label if a.time_range else ""
        text = (f"{'Yes' if yes else 'No'}: you {fmt_num(mine)}{unit}, {a.other} {fmt_num(theirs)}{unit}"
                f"{' ' + scope if scope else ''}.")
        return Answer(text, "computed", 1.0, ids, rounds)
    if a.kind == "yesno" and ok:
        r = ok[-1]
        n = r.n_matched if r.tool != "Compute" else int((r.value or {}).get("n_rows", 0) or 0)
        scope = scope_text(r.args)
        if n == 0:
            return Answer(f"No, never: 0 rows match{' (' + scope + ')' if scope else ''}.", "rows", 1.0, ids, rounds)
        days = []
        for u in r.units[:5]:
            if u.time:
                days.append(str(u.time)[:10])
        shown = f": {', '.join(days)}" if days else ""
        more = f" and {n - len(days)} more" if days and n > len(days) else ""
        return Answer(f"Yes, {n} time{'s' if n != 1 else ''}{shown}{more}.", "rows", 1.0, ids, rounds)
    return None


# intents whose answer is a number computed over records: retrieved text (a caption, a fragment) never
# answers them; without a column (or observations) to compute over, the answer is a refusal
COMPUTED_KINDS = frozenset({"aggregate", "extreme", "how_many", "count", "trend", "latest", "first",
                            "value_sum", "compare"})


# "what <quantity> did I log / record / note", "what <quantity> did my <records> show": a record's value
_LOGGED_VALUE = re.compile(r"^\s*(?:what|which)\s+(?:\w+\s+){1,3}did\s+(?:i\s+(?:log|record|note|write down)|"
                           r"my\s+(?:\w+\s+){1,3}show)\b", re.I)


def _asks_words(a: Analysis) -> bool:
    """A change, first or latest thing asked with "what"/"which"/"how did" and no quantity word ("What
    change happened to X after Y?", "How did X evolve?"): retrieved text answers it, no column needs to."""
    low = a.question.lower()
    if a.kind not in ("trend", "latest", "first") or re.search(r"\bhow\s+(?:much|many|long|far|often|fast)\b", low):
        return False
    # the asking clause may follow a circumstance ("Considering all sessions, what is ...", "X wondered
    # whether Y. What did he conclude?"); a yes/no question ("Has the discussion changed her view?",
    # "Currently, does she still like it?") asks whether, which the retrieved text answers too
    return bool(re.search(r"(?:^|[,.;:?!]\s*)(?:what|which|how did|how has|how have|in what way)\b", low)
                or re.search(r"(?:^|[,.;:?!]\s*)(?:" + "|".join(AUXILIARIES) + r")\s", low)
                or re.search(r"\b(?:remember|know|recall)\s+(?:what|which|how)\b", low))


def _only_kind(cols: Sequence[ColumnMeta], phrase: Sequence[str], tables: list[TableMeta]) -> bool:
    """Whether the one column a phrase names ("soil moisture" -> moisture) is the only kind of that quantity
    the memory has, so an unknown word before it specifies nothing else ("soil" in a memory whose rounds
    say just "Moisture: 15 %"): the phrase holds every word of the column's name, no label of the column
    puts another word before its head ("Late fee" is a kind of fee: "kayak fee" is not it), and no other
    column is called so (by its name or a label)."""
    if len(cols) != 1:
        return False
    col = cols[0]
    own = set(tokens(col.name))
    # (each word said, or said short: "air temp" names "temperature")
    said = set(phrase) | {w for w in own if any(abbreviates(p, w) for p in phrase)}
    if not own or not own <= said:
        return False
    head = tokens(col.name)[-1]
    for label in (col.name, *col.aliases):
        lt = tokens(label)
        if len(lt) > 1 and lt[-1] == head and not set(lt[:-1]) <= set(phrase):
            return False
    return not any(set(tokens(x)) == own for t in tables for c in t.attribute_columns() if c is not col
                   for x in (c.name, *c.aliases))


def _asks_order(a: Analysis) -> bool:
    """"Did I first X before Y?", "Which came first: X or Y?": the order of two events, which the located
    events' times answer; "first" there computes nothing."""
    return order_clauses(a.question, a.event) is not None or order_choice(a.question) is not None


def _no_number(d: Decision) -> "Answer":
    """The refusal of a computed intent that found nothing to compute over."""
    from .answer import REFUSAL
    from .trace import Answer

    # the standard phrase alone; why in the notes
    return Answer(f"{REFUSAL}.", "refusal", 0.0, refused=True,
                  notes=(f"refused: no table holds values to compute the {d.analysis.kind} over",))


def _rare_answer(d: Decision, records: Sequence) -> "Answer | None":
    """A quantity no table holds: its values in the observations of the retrieved rounds, computed over
    ('18.5 L in total over 3 rounds, 2 Mar - 9 Apr 2026'). None when those rounds hold none of it."""
    from .answer import fmt_num
    from .dates import fmt_day
    from .trace import Answer

    if d.reader is None:
        return None
    units = [u for r in records if r.status == "ok" and r.tool in ("SemanticMatch", "EventLocate") for u in r.units]
    rounds = list(dict.fromkeys(x for u in units for x in u.rounds))
    if d.rare_rounds:
        # the rounds that say the thing asked about: their numbers of the asked quantity's dimension
        rounds = list(dict.fromkeys(list(d.rare_rounds) + rounds))
        rows = [r for r in d.reader(list(d.rare_rounds)) if unit_dimension(r[4]) == d.rare_dim]
    elif not rounds:
        return None
    else:
        rows = [r for r in d.reader(rounds) if r[1] in d.rare]
    a = d.analysis
    if a.time_range is not None:
        lo, hi = a.time_range.start, a.time_range.end
        rows = [r for r in rows if _as_date(r[5]) is not None and lo <= _as_date(r[5]) <= hi]
    if not rows:
        return None
    unit = next((r[4] for r in rows if r[4]), None)
    vals = []
    for r in rows:
        v = float(r[3])
        if r[4] and unit and r[4] != unit:
            c = convert(v, r[4], unit)
            v = c if c is not None else v
        vals.append((r[0], r[5], v))
    op = d.rare_op or "latest"
    if op == "avg":
        value = sum(v for _, _, v in vals) / len(vals)
    elif op == "sum":
        value = sum(v for _, _, v in vals)
    elif op in ("max", "min"):
        pick = (max if op == "max" else min)(vals, key=lambda x: x[2])
        value, vals = pick[2], [pick] + [x for x in vals if x is not pick]
    elif op == "first":
        value = vals[0][2]
    else:
        value, vals = vals[-1][2], [vals[-1]] + vals[:-1]
    days = sorted({_as_date(t) for _, t, _ in vals if _as_date(t)})
    n = len(vals)
    period = (f"on {fmt_day(days[0])}" if len(days) == 1 else f"{fmt_day(days[0])} - {fmt_day(days[-1])}") \
        if days else ""
    u = f" {unit}" if unit else ""
    noun = (f"{n} round{'s that mention' if n != 1 else ' that mentions'} {d.rare[0]}" if d.rare_rounds else
            f"{n} round{'s that mention' if n != 1 else ' that mentions'} it (no table holds it)")
    if op in ("avg", "sum"):
        text = f"{fmt_num(value)}{u} {'on average' if op == 'avg' else 'in total'} over {noun}, {period}"
    elif op in ("max", "min", "first", "latest"):
        word = {"max": "highest", "min": "lowest", "first": "first", "latest": "latest"}[op]
        at = _as_date(vals[0][1])
        text = f"{fmt_num(value)}{u} ({word}, on {fmt_day(at) if at else '?'}; of {noun})"
    else:
        text = f"{fmt_num(value)}{u}"
    deciding = list(dict.fromkeys([r for r, _, _ in vals] + rounds))
    ids = tuple(uu.unit_id for uu in units)
    return Answer(text, "computed", 0.8, ids, tuple(deciding))
