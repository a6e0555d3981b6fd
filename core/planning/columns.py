"""Choosing columns (and categorical values) for a question by embedding + BM25 over metadata.

Each candidate column is described by its name, unit and description (plus
its table's name); the question words left after intent analysis are scored
against these with the same hybrid h as the planning context, plus a small
prior for tables the context ranked high. A column *supports* the question
only when it shares a word (after light stemming and a few generic quantity
synonyms such as far -> distance) or its cosine is high; otherwise the
planner falls back to retrieval instead of computing over a wrong column.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from .metadata import ColumnMeta, TableMeta, words
from .scoring import bm25_raw, minmax, stem, tokens

# Generic quantity words -> words that name such quantities in metadata (not any one history's attributes).
SYNONYMS = {
    "far": ("distance", "km", "mile", "kilometer", "meter"),
    "long": ("duration", "hour", "minute", "length", "time"),
    "heavy": ("weight", "kg", "lb", "pound"),
    "weigh": ("weight", "kg", "lb", "pound"),
    "fast": ("speed", "pace"),
    "quick": ("speed", "pace", "duration"),
    "spend": ("cost", "price", "amount", "spent", "expense", "spending"),
    "spent": ("cost", "price", "amount", "spend", "expense", "spending"),
    "cost": ("price", "amount", "spent", "expense"),
    "pay": ("cost", "price", "amount", "spent"),
    "paid": ("cost", "price", "amount", "spent"),
    "hot": ("temperature",), "cold": ("temperature",), "warm": ("temperature",),
    "tall": ("height",), "big": ("size",), "old": ("age",),
    "money": ("cost", "price", "amount", "spent"),
    "pulse": ("heart", "bpm", "rate"), "bp": ("blood", "pressure", "mmhg"), "fever": ("temperature",),
    "rest": ("sleep",), "calorie": ("kcal", "calories"), "walk": ("step",), "sugar": ("glucose",),
}
UNIT_WORDS = {
    "km": ("kilometer", "kilometre", "km"), "mi": ("mile",), "mile": ("mile",), "h": ("hour", "hr"),
    "hr": ("hour",), "hour": ("hour", "hr"), "min": ("minute", "min"), "minute": ("minute", "min"),
    "s": ("second", "sec"), "sec": ("second",), "kg": ("kilogram", "kilo", "kg"), "lb": ("pound", "lb"),
    "bpm": ("bpm", "beat", "heart"), "%": ("percent", "percentage"), "kcal": ("calorie", "kcal"),
    "cal": ("calorie",), "m": ("meter", "metre"), "g": ("gram",), "mmhg": ("mmhg", "pressure"),
    "usd": ("dollar", "usd"), "$": ("dollar",), "eur": ("euro",), "l": ("liter", "litre"),
    "ml": ("milliliter", "ml"), "step": ("step",),
}
COS_SUPPORT = 0.45
SCAFFOLD = frozenset({"day", "date", "week", "month", "year", "time", "which", "value", "record", "entry", "log",
                      "ever", "recorded", "record"})
GENERIC_NAME_WORDS = frozenset({"avg", "average", "mean", "total", "max", "min", "num", "number", "count", "value",
                                "level", "amount"})


def unit_tokens(unit: str | None) -> set[str]:
    if not unit:
        return set()
    u = unit.strip().lower()
    out = {stem(t) for t in re.findall(r"[a-z0-9%$]+", u)}
    out |= set(UNIT_WORDS.get(u, ()))
    out |= {w for t in list(out) for w in UNIT_WORDS.get(t, ())}
    return {stem(t) for t in out}


def expand(toks: Sequence[str]) -> set[str]:
    out = set(toks)
    for t in toks:
        out |= {stem(s) for s in SYNONYMS.get(t, ())}
        out |= {stem(s) for s in UNIT_WORDS.get(t, ())}
    return out


@dataclass(frozen=True)
class ColumnChoice:
    table: str
    column: str
    score: float
    cos: float
    bm25: float
    overlap: int  # shared words (question vs column name/unit/description)
    supported: bool


def embed_text(col: ColumnMeta, table_name: str = "") -> str:
    """What a column's embedding sees: name, unit and description, each word once (repeats would
    weigh a word twice), without description words that only repeat the table's name."""
    drop = set(tokens(table_name)) - set(tokens(col.name))
    seen: list[str] = list(words(col.name).split()) + ([col.unit] if col.unit else [])
    for w in col.description.split():
        if w.lower() not in (x.lower() for x in seen) and not (set(tokens(w)) & drop):
            seen.append(w)
    return " ".join(seen)


def column_tokens(col: ColumnMeta, table_name: str = "") -> set[str]:
    """Words that name a column's quantity. Description words that only repeat the table's name
    ("workout duration" in table workout) describe the rows, not this column, so they are left out."""
    desc = set(tokens(col.description)) - (set(tokens(table_name)) - set(tokens(col.name)))
    return set(tokens(col.name)) | desc | unit_tokens(col.unit)


def match_columns(text: str, tables: Sequence[TableMeta], embed: Callable[[list[str]], np.ndarray],
                  encode_query: Callable[[str], np.ndarray], lam: float, *,
                  dtypes: tuple[str, ...] = ("DOUBLE",), table_prior: dict[str, float] | None = None,
                  exclude: set[tuple[str, str]] = frozenset()) -> list[ColumnChoice]:
    """Rank the attribute columns of `tables` (of the given types) for `text`, best first."""
    cands = [(t, c) for t in tables for c in t.attribute_columns()
             if c.dtype in dtypes and (t.table_name, c.name) not in exclude]
    if not cands:
        return []
    qtok = [t for t in tokens(text) if t not in SCAFFOLD]
    qexp = expand(qtok)
    # the embedding sees the content words only: question scaffolding ("which day did I") is noise here
    text = " ".join(w for w in re.findall(r"[A-Za-z0-9%]+", text) if stem(w.lower()) in set(qtok)) or text
    docs = [sorted(column_tokens(c, t.table_name)) for t, c in cands]
    vecs = embed([embed_text(c, t.table_name) for t, c in cands])
    qv = encode_query(text)
    cos = vecs @ qv
    bm = minmax(bm25_raw(sorted(qexp), docs))
    prior = table_prior or {}
    pvals = np.array([prior.get(t.table_name, 0.0) for t, _ in cands])
    pnorm = minmax(pvals) if len(set(pvals.tolist())) > 1 else np.zeros(len(cands))
    out = []
    for i, (t, c) in enumerate(cands):
        ctoks = column_tokens(c, t.table_name)
        overlap = len(qexp & ctoks)
        # a name word the question does not use ("deep" in deep_sleep for "how much did I sleep")
        # suggests a more specific quantity than the one asked about
        uncovered = len(set(tokens(c.name)) - qexp - unit_tokens(c.unit) - GENERIC_NAME_WORDS)
        score = (lam * float(cos[i]) + (1 - lam) * float(bm[i]) + 0.15 * float(pnorm[i]) + 0.1 * min(overlap, 2)
                 - 0.15 * min(uncovered, 2))
        out.append(ColumnChoice(t.table_name, c.name, score, float(cos[i]), float(bm[i]), overlap,
                                overlap > 0 or float(cos[i]) >= COS_SUPPORT))
    out.sort(key=lambda x: -x.score)
    return out


@dataclass(frozen=True)
class CategoryMatch:
    table: str
    column: str
    value: str


def match_categories(text: str, tables: Sequence[TableMeta]) -> list[CategoryMatch]:
    """Categorical values of text columns that the question names ('runs' -> activity = 'run')."""
    qtok = set(tokens(text))
    out = []
    for t in tables:
        for c in t.attribute_columns():
            for v in c.categories:
                vt = tokens(v)
                if vt and len(v) >= 3 and all(len(x) >= 3 for x in vt) and set(vt) <= qtok:
                    out.append(CategoryMatch(t.table_name, c.name, v))
    # prefer the most specific value when several in one column match ("trail run" over "run")
    best: dict[tuple[str, str], CategoryMatch] = {}
    for m in out:
        k = (m.table, m.column)
        if k not in best or len(tokens(m.value)) > len(tokens(best[k].value)):
            best[k] = m
    return list(best.values())
