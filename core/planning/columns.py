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
    "long": ("duration", "hour", "minute", "length", "time", "distance"),
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
    # kinds of record -> what their tables are named or described by (general fitness vocabulary)
    "workout": ("activity", "exercise", "training"),
    "exercise": ("activity", "workout", "training"), "training": ("activity", "workout", "exercise"),
    "train": ("activity", "workout", "exercise", "training"),
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


# Conversions between canonical units of one dimension (core.extract.normalize keeps km and mi apart).
_CROSS = {("mi", "km"): 1.609344, ("km", "mi"): 1 / 1.609344, ("lb", "kg"): 0.45359237, ("kg", "lb"): 2.20462262,
          ("m", "km"): 0.001, ("km", "m"): 1000.0, ("g", "kg"): 0.001, ("kg", "g"): 1000.0,
          ("min/mi", "min/km"): 1 / 1.609344, ("min/km", "min/mi"): 1.609344}
_UNIT_SPELLINGS = {"kilometres": "km", "kilometers": "km", "kilometre": "km", "kilometer": "km",
                   "percent": "%", "percentage": "%", "beats": "bpm", "hrs": "h"}


def unit_info(unit: str | None):
    """(canonical unit, dimension, factor to the canonical unit) of a unit spelling, or None."""
    if not unit:
        return None
    from ..extract.normalize import parse_unit  # the extractor's unit table: one vocabulary

    u = unit.strip().lower()
    u = _UNIT_SPELLINGS.get(u, u)
    info = parse_unit(u)
    if info is None and u.endswith("s"):
        info = parse_unit(u[:-1])
    return info


def unit_dimension(unit: str | None) -> str | None:
    info = unit_info(unit)
    return info.dimension if info else None


def convert(value: float, from_unit: str | None, to_unit: str | None) -> float | None:
    """`value` in from_unit expressed in to_unit (7 hours -> 420 min, 5 mi -> 8.05 km); None when
    the units are of different dimensions or unknown."""
    a, b = unit_info(from_unit), unit_info(to_unit)
    if a is None or b is None or a.dimension != b.dimension:
        return None
    canon = value * a.factor  # in a's canonical unit
    if a.unit != b.unit:
        k = _CROSS.get((a.unit, b.unit))
        if k is None:
            return None
        canon *= k
    return canon / b.factor


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


_FUNCTION_WORDS = frozenset(tokens("what which was were is are did do does my our the a an of in on at to for "
                                   "with how much many long far i we me it that this have has had get got ever "
                                   "over during from by per", keep_stopwords=True))


def expand_abbreviations(text: str) -> str:
    """Abbreviations as the extractor spells them out: 'CV' -> variability, 'HR' -> heart rate."""
    from ..extract.normalize import WORD_MAP

    def sub(m: re.Match) -> str:
        w = m.group(0)
        rep = WORD_MAP.get(w.lower())
        # abbreviations ("cv", "hr") and one-word spelling variants ("colour" -> color)
        return rep if rep and (len(w) <= 4 or " " not in rep) and rep not in ("min", "max") else w
    return re.sub(r"[A-Za-z]+", sub, text)


def question_words(text: str) -> list[str]:
    """The question's words in order, stemmed, abbreviations spelled out (for phrase matching)."""
    text = re.sub(r"\bwork(?:ing|ed|s)?\s+out\b", "workout", text, flags=re.IGNORECASE)
    return [stem(w) for w in re.findall(r"[a-z0-9%]+", expand_abbreviations(text).lower())]


def asked_dimensions(seq: Sequence[str]) -> set[str]:
    """Dimensions of the unit words a question uses ('how many hours' -> duration, 'in km' -> distance)."""
    out = set()
    for w in seq:
        if w in ("h", "m", "s", "g", "l", "x", "min", "max", "mi"):
            continue  # one-letter and ambiguous abbreviations are too often something else
        d = unit_dimension(w)
        if d and d not in ("count", "ratio", "dose"):
            out.add(d)
    return out


def _contains(seq: Sequence[str], phrase: Sequence[str]) -> bool:
    n = len(phrase)
    return any(list(seq[i:i + n]) == list(phrase) for i in range(len(seq) - n + 1))


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
                  exclude: set[tuple[str, str]] = frozenset(), dimension: str | None = None,
                  long_means: str = "duration") -> list[ColumnChoice]:
    """Rank the attribute columns of `tables` (of the given types) for `text`, best first."""
    cands = [(t, c) for t in tables for c in t.attribute_columns()
             if c.dtype in dtypes and (t.table_name, c.name) not in exclude]
    if not cands:
        return []
    raw_text = text
    seq = question_words(raw_text)
    dims = asked_dimensions(seq)
    head = next((w for w in reversed(seq) if w not in SCAFFOLD and w not in _FUNCTION_WORDS), None)
    how = re.search(r"\bhow\s+(long|much)\b|\b(long|much)\b", raw_text.lower())
    how_word = (how[1] or how[2]) if how else None
    spend = bool(re.search(r"\b(?:spen[dt]|take|took|last(?:ed)?|train(?:ed)?)\b", raw_text.lower()))
    qtok = [t for t in tokens(expand_abbreviations(re.sub(r"\bwork(?:ing|ed|s)?\s+out\b", "workout", text,
                                                          flags=re.IGNORECASE))) if t not in SCAFFOLD]
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
        cdim = unit_dimension(c.unit)
        # words that only name the dimension are implied by "how long/much" or by the unit a condition
        # uses (`dimension`): "sleep under 7 hours" is about sleep_duration as much as sleep
        implied = dimension if dimension == cdim else cdim if how else None
        covered = {"duration", "time", "length"} if implied == "duration" else \
            {"distance", "length"} if implied == "distance" else set()
        uncovered = len(set(tokens(c.name)) - qexp - unit_tokens(c.unit) - GENERIC_NAME_WORDS - covered)
        score = (lam * float(cos[i]) + (1 - lam) * float(bm[i]) + 0.15 * float(pnorm[i]) + 0.1 * min(overlap, 2)
                 - 0.15 * min(uncovered, 2))
        name_words = [stem(w) for w in c.name.lower().split("_") if w]
        if len(name_words) >= 2 and _contains(seq, name_words):
            score += min(0.4, 0.12 * len(name_words))  # the column's whole name is in the question
            overlap += 1
        if head and head in set(tokens(c.name)) | unit_tokens(c.unit):
            score += 0.25  # the phrase's last word (its head) names the quantity ("glucose variability")
        if dims:
            if cdim in dims:
                score += 0.3  # "how many hours", "in km", "what percentage": the unit names the column
                overlap += 1
            elif cdim is not None:
                score -= 0.1
        elif how and cdim in ("duration", "distance"):
            # "how much did I sleep", "how long did I spend" (time); "how long / the longest" is a
            # distance for runs and rides (`long_means`, decided by the caller), else a time
            want = "duration" if how_word == "much" or spend else long_means
            score += 0.3 if cdim == want else 0.0
        out.append(ColumnChoice(t.table_name, c.name, score, float(cos[i]), float(bm[i]), overlap,
                                overlap > 0 or float(cos[i]) >= COS_SUPPORT))
    out.sort(key=lambda x: -x.score)
    return out


@dataclass(frozen=True)
class CategoryMatch:
    table: str
    column: str
    value: str  # as stored (the first variant)
    variants: tuple[str, ...] = ()  # every stored spelling with the same canonical form ("Bike", "ride")
    by_subject: bool = False  # the value is the subject of a verb the column names ("I won" -> winner)

    def filter(self) -> dict:
        vals = self.variants or (self.value,)
        if len(vals) == 1:
            return {"column": self.column, "op": "=", "value": vals[0]}
        return {"column": self.column, "op": "in", "value": list(vals)}


# Phrases that mean a verb a column may be named after ("came out on top" = won -> winner).
VERB_PHRASES = {r"\bcame\s+out\s+on\s+top\b|\bcome\s+out\s+on\s+top\b|\bbeat\b|\bwas\s+victorious\b": "win",
                r"\blost\s+to\b": "lose"}
SELF_WORDS = frozenset({"i", "me", "myself", "my", "mine"})


def _canon_word(w: str) -> str:
    from ..extract.normalize import canonical_word

    c = canonical_word(w)
    return c if c != w else stem(w)


def _canon_tokens(text: str) -> list[str]:
    """The question's words in canonical form ('rides' -> ride, 'I' -> me, 'won' -> win)."""
    low = text.lower()
    for pat, verb in VERB_PHRASES.items():
        low = re.sub(pat, f" {verb} ", low)
    low = re.sub(r"['\u2019]s\b", "", low)  # "my first ride's distance"
    return [_canon_word(w) for w in re.findall(r"[a-z][a-z'0-9]*", low)]


def _value_canon(v: str) -> str:
    """A stored category value in the same canonical form ('Bike' -> ride, 'I' -> me, 'Sam' -> sam)."""
    return " ".join(_canon_word(w) for w in re.findall(r"[a-z][a-z'0-9]*", v.lower()))


def _agent_root(column: str) -> str | None:
    """'winner' -> 'win', 'loser' -> 'lose', 'player' -> 'play' (the verb of who did it), else None."""
    from ..extract.normalize import TEXT_CANON, canonical_word

    last = column.lower().split("_")[-1]
    if not last.endswith("er") or len(last) < 5:
        return None
    base = last[:-2]
    cands = [base[:-1]] if len(base) > 2 and base[-1] == base[-2] else []  # winner -> win
    cands += [base + "e", base]  # loser -> lose, player -> play
    for c in cands:
        if c in TEXT_CANON:
            return canonical_word(c)
    return cands[0]


def match_categories(text: str, tables: Sequence[TableMeta]) -> list[CategoryMatch]:
    """Categorical values of text columns that the question names ('runs' -> activity = 'run',
    'bike rides' -> activity in the spellings of 'ride'), plus the user as the subject of a verb
    a column is named after ('rounds I won' -> winner = me/I)."""
    toks = _canon_tokens(text)
    qtok = set(toks)
    out: list[CategoryMatch] = []
    for t in tables:
        for c in t.attribute_columns():
            if not c.categories:
                continue
            groups: dict[str, list[str]] = {}
            for v in c.categories:
                groups.setdefault(_value_canon(v), []).append(v)
            root = _agent_root(c.name)
            for canon, variants in groups.items():
                vt = canon.split()
                if not vt or not all(len(x) >= 3 or x == "me" for x in vt):
                    continue
                if canon == "me":
                    # the user's own value: only as the subject of the column's verb ("I won")
                    if root and re.search(r"\b(?:me|we)\s+(?:\w+\s+)?(?:" + root + r")\b", " ".join(toks)):
                        out.append(CategoryMatch(t.table_name, c.name, variants[0], tuple(variants), True))
                    continue
                if set(vt) <= qtok:
                    subj = bool(root and re.search(r"\b" + re.escape(vt[-1]) + r"\s+(?:\w+\s+)?" + root + r"\b",
                                                    " ".join(toks)))
                    out.append(CategoryMatch(t.table_name, c.name, variants[0], tuple(variants), subj))
    # prefer the most specific value when several in one column match ("trail run" over "run")
    best: dict[tuple[str, str], CategoryMatch] = {}
    for m in out:
        k = (m.table, m.column)
        if k not in best or (m.by_subject, len(tokens(m.value))) > (best[k].by_subject, len(tokens(best[k].value))):
            best[k] = m
    return _one_column_per_value(list(best.values()), qtok, tables)


def _one_column_per_value(matches: list[CategoryMatch], qtok: set[str],
                          tables: Sequence[TableMeta]) -> list[CategoryMatch]:
    """A value found in several columns of one table (Leo in opponent and winner, red in my_color and
    opponent_color) filters one of them: the column whose verb it is the subject of; else the column
    whose qualifier the question uses ("I played a red card" -> my_color); else the column where the
    value is most common."""
    by_table = {t.table_name: t for t in tables}
    groups: dict[tuple[str, str], list[CategoryMatch]] = {}
    for m in matches:
        groups.setdefault((m.table, _value_canon(m.value)), []).append(m)
    taken = {(m.table, m.column) for m in matches if m.by_subject}
    out = []
    for (table, _), ms in groups.items():
        if len(ms) == 1:
            out.append(ms[0])
            continue
        subj = [m for m in ms if m.by_subject]
        if subj:
            out.append(subj[0])
            continue
        ms = [m for m in ms if (m.table, m.column) not in taken] or ms
        self_q = bool(qtok & SELF_WORDS)
        def rank(m: CategoryMatch):
            words = set(m.column.lower().split("_"))
            own = 1 if (self_q and words & SELF_WORDS) else 0
            col = by_table[table].column(m.column) if table in by_table else None
            n = 0
            if col is not None and col.category_counts:
                n = sum(k for v, k in zip(col.categories, col.category_counts) if v in (m.variants or (m.value,)))
            return (own, n)
        out.append(max(ms, key=rank))
    return out
