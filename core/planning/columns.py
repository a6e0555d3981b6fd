"""Choosing columns (and categorical values) for a question by meaning: hybrid h over column metadata.

Every attribute column of the tables in the planning context is one candidate,
described by what names it: the column name, its aliases (raw labels merged
into its field by field alignment and the labels as written in the rounds),
its unit with the unit's spellings and dimension, its table's name and
description and, for text columns, a few values. The question's target phrase
is scored against each with the paper's hybrid h = λ·cos + (1-λ)·BM25
(λ = Config.lambda_meta, BM25 min-max normalized over the candidates), at
column level. A unit the question names ("in hours", "how many grams") is a
hard constraint through unit dimensions; an adjective of measure ("long",
"far", "heavy") implies a dimension softly. A column *supports* the question
only when it shares a word with the phrase (its name, an alias, its unit; an
abbreviation counts: "temp" meets "temperature") or its cosine is high;
otherwise the planner falls back to retrieval instead of computing over a
wrong column. Nothing here knows any history's subject matter.
"""
from __future__ import annotations

import re
from collections import OrderedDict
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Callable, Sequence

import numpy as np

from ..lexicon import first_and_consonant, lemma
from .metadata import ColumnMeta, TableMeta, words
from .scoring import STOPWORDS as STOP, BM25Index, minmax, stem, tokens
from ..units import convert, unit_dimension, unit_info  # noqa: F401  (the planner's unit vocabulary)

# English adjectives (and their "how X" questions) of measure -> the dimension they speak of. Grammar of
# measurement, not any domain: "how long / the longest" is a duration unless a distance is named.
MEASURE_ADJECTIVES = {
    "long": "duration", "short": "duration", "quick": "duration", "far": "distance", "distant": "distance",
    "heavy": "mass", "light": "mass", "weigh": "mass", "hot": "temperature", "cold": "temperature",
    "warm": "temperature", "cool": "temperature", "fast": "speed", "slow": "speed",
    "expensive": "currency", "cheap": "currency", "cost": "currency", "pay": "currency", "paid": "currency",
    "spend": "currency", "spent": "currency", "money": "currency", "price": "currency",
    "loud": "level", "big": None, "large": None, "small": None,
    # nouns of measure: "layer height" is a length whatever the layer is ("layers" counts them)
    "height": "distance", "tall": "distance", "depth": "distance", "deep": "distance", "width": "distance",
    "wide": "distance", "thick": "distance", "thickness": "distance", "weight": "mass",
    # a part of a whole is a percentage ("the share changed": the "change %" column)
    "share": "percent", "proportion": "percent", "fraction": "percent", "percentage": "percent",
}
# nouns of measure: the quantity asked IS of their dimension ("the share changed" is no volume)
MEASURE_NOUNS = frozenset("height depth width thickness weight share proportion fraction percentage".split())
# a speed adjective speaks of any rate: "how fast was my pulse" (bpm), "fastest pace" (min/km)
RELATED_DIMENSIONS = {"speed": ("rate", "pace", "frequency")}
COS_SUPPORT = 0.45
COS_SUPPORT_NAMED = 0.35  # ... for a column of the table whose rows the question names
SCAFFOLD = frozenset({"day", "date", "week", "month", "year", "time", "which", "value", "record", "entry", "log",
                      "ever", "recorded", "record", "total", "average", "mean", "avg", "sum", "number",
                      "latest", "first", "last", "recent", "highest", "lowest", "most", "least",
                      "overall", "altogether", "combined", "typical", "usual", "per", "each", "every"})
GENERIC_NAME_WORDS = frozenset({"avg", "average", "mean", "total", "max", "min", "num", "number", "count", "value",
                                "level", "amount", "no", "nr"})
# a column named by a word of the same sense as a generic question word ("sum" printed where one asks "total")
GENERIC_SAME = {"sum": "total"}
# table-name words that say "rows of" rather than what the rows are
RECORD_WORDS = frozenset({"log", "logs", "entry", "entries", "record", "records", "table", "data", "reading",
                          "readings", "report"})

_AMBIGUOUS_UNIT_WORDS = frozenset({"h", "m", "s", "g", "l", "x", "min", "max", "mi", "in", "a", "b", "st", "no",
                                   "v", "j", "t", "ft", "oz", "d", "c", "k"})



def _spellings() -> dict[tuple[str, float], set[str]]:
    from ..lexicon import UNITS

    out: dict[tuple[str, float], set[str]] = {}
    for name, (canon, _dim, factor) in UNITS.items():
        out.setdefault((canon, factor), set()).add(name.lower())
    return out


_SPELL_CACHE: dict = {}


def unit_tokens(unit: str | None) -> set[str]:
    """Words that name a unit: its own tokens, every spelling of the same unit in the lexicon
    ("min" -> minute, minutes, mins) and its dimension's name ("duration")."""
    if not unit:
        return set()
    out = {stem(t) for t in re.findall(r"[a-z0-9%$]+", unit.strip().lower())}
    info = unit_info(unit)
    if info is not None:
        if "sp" not in _SPELL_CACHE:
            _SPELL_CACHE["sp"] = _spellings()
        for sp in _SPELL_CACHE["sp"].get((info.unit, info.factor), ()):
            out |= {stem(t) for t in re.findall(r"[a-z0-9%$]+", sp) if len(t) > 1}
        if "_per_" not in info.dimension:
            # (a rate's dimension is not its first word's: "bubbles/s" is no count, "g/L" no mass)
            out.add(stem(info.dimension.split("_")[0]))
    return out


def expand(toks: Sequence[str]) -> set[str]:
    """Query tokens plus the dimension an adjective of measure implies ('long' -> duration)."""
    out = set(toks)
    for t in toks:
        d = MEASURE_ADJECTIVES.get(t)
        if d:
            out.add(stem(d))
    return out


_FUNCTION_WORDS = frozenset(tokens("what which was were is are did do does my our the a an of in on at to for "
                                   "with how much many long far i we me it that this have has had get got ever "
                                   "over during from by per", keep_stopwords=True))


def question_words(text: str) -> list[str]:
    """The question's words in order, stemmed (for phrase matching)."""
    return [stem(w) for w in re.findall(r"[a-z0-9%]+", text.lower())]


def lettered_name(name: str, seq: Sequence[str]) -> bool:
    """A name of a letter and a word ("b_rating", printed "b-rating") that the phrase (`question_words`)
    writes out: a word of three letters or more starting with that letter right before the word ("blitz
    rating"), as "AA" is written out by "alpha acid"."""
    parts = re.findall(r"[a-z0-9]+", name.lower().replace("_", " "))
    return any(len(x) == 1 and x.isalpha() and len(y) >= 3 and any(
        len(a) >= 3 and a[0] == x and b == stem(y) for a, b in zip(seq, seq[1:])) for x, y in zip(parts, parts[1:]))


def asked_dimensions(seq: Sequence[str]) -> set[str]:
    """Dimensions of the unit words a question uses ('how many hours' -> duration, 'in km' -> distance)."""
    out = set()
    for w in seq:
        if w.lower() in _AMBIGUOUS_UNIT_WORDS or len(w) < 2:
            continue  # one-letter and ambiguous abbreviations are too often something else
        d = unit_dimension(w)
        if d and d not in ("ratio", "dose", "level"):
            out.add(d)
    return out


_UNIT_SLOT = re.compile(
    r"\b(?:in|into|as)\s+(?:the\s+)?([a-z%$€£]+(?:/[a-z]+)?)\b|"  # "in hours", "in kg"
    r"\bhow\s+(?:many|much)\s+([a-z%$€£]+(?:/[a-z]+)?)\b|"  # "how many minutes"
    r"\bnumber\s+of\s+([a-z]+)\b|\bwhat\s+(percentage|percent|share)\b|"
    r"\b([a-z%$€£]+)\s+(?:per|/|an?)\s+[a-z]+\b|"  # "kg per plant", "dollars a month"
    r"(?:^|\s)([%$€£])(?:\s|$)")


def asked_units(text: str) -> list[str]:
    """The unit words of a phrase in a unit's place ('how many hours', 'in kg', 'grams per plant'), in
    order; a unit word used as a noun ('the largest meter') is not one."""
    out = []
    slots = [next(g for g in m.groups() if g) for m in _UNIT_SLOT.finditer(text.lower())]
    for w in slots:
        if w in _AMBIGUOUS_UNIT_WORDS or len(w) < 2 and w not in "%$€£":
            continue
        d = unit_dimension(w)
        if d and d not in ("ratio", "dose", "level"):
            out.append(w)
    return out


def asked_per(text: str) -> str | None:
    """The unit a quantity is asked per when the question writes a compound as a name ('price/L',
    'mites/day' -> the canonical unit after the slash), None otherwise: 'Price/L' is a price per litre,
    not a price in euros, whatever the words before the slash are."""
    for m in re.finditer(r"\b([a-z]+)\s*/\s*([a-z]+)\b", text.lower()):
        if unit_info(m[1]) is not None:
            continue  # a unit itself ("km/h"): asked_units reads it
        info = unit_info(m[2])
        if info is not None:
            return info.unit
    return None


def _flat(name: str) -> str:
    """A name's letters and digits, lower case ("Mites/day", "mites_day" -> "mitesday")."""
    return re.sub(r"[^a-z0-9]+", "", name.lower())


def written_compounds(text: str) -> set[str]:
    """The compounds a question writes with a slash ("mites/day", "pts/game"), flattened (`_flat`)."""
    return {_flat(m[0]) for m in re.finditer(r"\b[a-z]+\s*/\s*[a-z]+\b", text.lower())}


def per_unit(unit: str | None) -> str | None:
    """The canonical unit after a compound unit's slash ('€/L' -> 'L', '/100km' -> None)."""
    if not unit or "/" not in unit:
        return None
    info = unit_info(unit.rsplit("/", 1)[1].strip())
    return info.unit if info else None


def _contains(seq: Sequence[str], phrase: Sequence[str]) -> bool:
    n = len(phrase)
    return any(list(seq[i:i + n]) == list(phrase) for i in range(len(seq) - n + 1))


_INFLECTIONS = frozenset("s es ed d ing ings er ers ly y".split())


def abbreviates(short: str, long: str) -> bool:
    """'temp' abbreviates 'temperature', 'moist' 'moisture', 'qty' 'quantity', 'gs' 'geese' (a prefix of at
    least 3 letters, the word's first letter then some of its consonants in order for 3-4 letters, or its
    first and last letter or consonants)."""
    if short == long or len(short) >= len(long):
        return False
    if len(short) >= 3 and long.startswith(short):
        # an inflection is another word, not an abbreviation ("heat" / "heating", "feed" / "feeder")
        return long[len(short):] not in _INFLECTIONS

    if 3 <= len(short) <= 4 and short[0] == long[0] and not re.search(r"[aeiou]", short[1:]):
        it = iter(long[1:])
        return all(ch in it for ch in short[1:])
    # two letters: the word's first and last ("wt" for weight), or its first and its only other consonant
    # ("gs" for geese)
    if len(short) != 2 or not short.isalpha() or len(long) < 4 or short[0] != long[0]:
        return False
    return short[1] == long[-1] or first_and_consonant(short, long)


def compound_parts(word: str, known: Iterable[str]) -> tuple[str, str] | None:
    """A word written as two, each of at least three letters, the second of which is a word the memory knows:
    "daylight" -> ("day", "light") beside a light log. None else (a remainder that is no known word, the
    "erature" of "temperature", makes no compound)."""
    known = set(known)
    for k in range(3, len(word) - 2):
        if word[k:] in known:
            return word[:k], word[k:]
    return None


def _first_of_compound(short: str, word: str, known: frozenset[str]) -> bool:
    """`short` begins `word` as the first of the two words it is written as ("day" of "daylight" where the rounds
    say "light"), not as its abbreviation."""
    parts = compound_parts(word, known)
    return parts is not None and parts[0] == short


def compound_head(word: str, name: str) -> bool:
    """'photoperiod' is a period, 'headcount' a count: an English compound written as one word ends in the
    noun it is a kind of (a name of at least 4 letters after at least 3 letters of modifier)."""
    return len(name) >= 4 and len(word) - len(name) >= 3 and word.endswith(name) and name.isalpha()


@dataclass(frozen=True)
class ColumnChoice:
    table: str
    column: str
    score: float
    cos: float
    bm25: float
    overlap: int  # shared words (question vs the column's name, aliases, unit)
    supported: bool
    dimension: str | None = None

    def show(self) -> str:
        return (f"{self.table}.{self.column} h={self.score:.2f} (cos {self.cos:.2f}, bm25 {self.bm25:.2f}"
                f"{', ' + self.dimension if self.dimension else ''}{'' if self.supported else ', unsupported'})")


# words of the analytic builder's description template and calendar words: they describe how a table was
# made ("One row per X record ... First recorded 4 Mar 2025. Read from images"), not what it holds
_TEMPLATE_WORDS = frozenset(tokens("one row per record first recorded read from text images image and its rounds "
                                   "round mention mentions "
                                   "jan feb mar apr may jun jul aug sep sept oct nov dec values also reported "
                                   "not converted converted") )


def description_words(description: str) -> list[str]:
    """A table description's content tokens (template and calendar words and numbers left out)."""
    return [w for w in tokens(description) if w not in _TEMPLATE_WORDS and not w.isdigit() and len(w) > 1]


def table_words(table_name: str) -> list[str]:
    return [w for w in tokens(table_name) if w not in RECORD_WORDS]


def record_noun(table_name: str) -> str:
    """What a table's rows are called: its name without '_log' & co ('harvest_log' -> 'harvest')."""
    parts = [p for p in re.split(r"[_\W]+", table_name.lower()) if p]
    kept = [p for p in parts if p not in RECORD_WORDS] or parts
    return " ".join(kept)


def name_tokens(col: ColumnMeta) -> set[str]:
    """Tokens of the column's own names: its name and aliases, and the lemma of a verb form among them (a
    count printed "Won: 7" is what "wins" asks for)."""
    out = set(tokens(col.name))
    for a in col.aliases:
        out |= set(tokens(a))
    for w in re.findall(r"[a-z]+", " ".join((col.name, *col.aliases)).lower().replace("_", " ")):
        lw = lemma(w)
        if lw != w:
            out.add(stem(lw))
    return out


def embed_text(col: ColumnMeta, table_name: str = "") -> str:
    """What a column's embedding sees: its name and aliases, unit, description and its table's name,
    each word once (repeats would weigh a word twice)."""
    seen: list[str] = []
    low: set[str] = set()

    def add(text: str):
        for w in str(text).replace("_", " ").split():
            if w.lower() not in low:
                low.add(w.lower())
                seen.append(w)
    add(words(col.name))
    for a in col.aliases[:4]:
        add(a)
    if col.unit:
        add(f"({col.unit})")
    if col.description:
        add(col.description)
    # (the table's words are left to BM25 and the table prior: in a short text they outweigh the
    # column's own name, "calmness of brood" is further from "temper" than "calmness")
    if col.dtype == "VARCHAR" and col.samples:
        add("e.g. " + ", ".join(col.samples[:3]))
    return " ".join(seen)


def column_tokens(col: ColumnMeta, table_name: str = "", description: str = "") -> list[str]:
    """The column's BM25 document: its names (twice: they name this column, the rest names its table),
    unit words, description, table name and description, and text values."""
    own = sorted(name_tokens(col)) + sorted(unit_tokens(col.unit))
    # description words that only repeat the table's name ("harvest weight" in table harvest) describe
    # the rows, not this column: the table's words come once, for every column alike
    tw = set(table_words(table_name))
    desc = [w for w in tokens(col.description) if w not in tw or w in own]
    doc = own + own + desc + table_words(table_name) + description_words(description)
    if col.dtype == "VARCHAR":
        for v in (col.categories or col.samples)[:6]:
            doc += tokens(str(v))
    return doc


_INDEX_CACHE: "OrderedDict[tuple, tuple]" = OrderedDict()
_INDEX_CACHE_MAX = 32


def _column_index(cands: Sequence[tuple[TableMeta, ColumnMeta]]):
    """(docs, BM25 index, vocabulary, own-name tokens per column) for a candidate set, cached by the
    candidates' metadata (the tables' metadata, not the history: its cost does not grow with rounds)."""
    key = tuple((t.table_name, t.description, c.name, c.unit, c.aliases, c.description,
                 c.categories[:6] if c.dtype == "VARCHAR" else ()) for t, c in cands)
    hit = _INDEX_CACHE.get(key)
    if hit is not None:
        _INDEX_CACHE.move_to_end(key)
        return hit
    docs = [column_tokens(c, t.table_name, t.description) for t, c in cands]
    own = [name_tokens(c) | unit_tokens(c.unit) for _, c in cands]
    vocab = sorted({w for d in docs for w in d})
    val = (docs, BM25Index(docs), vocab, own)
    _INDEX_CACHE[key] = val
    if len(_INDEX_CACHE) > _INDEX_CACHE_MAX:
        _INDEX_CACHE.popitem(last=False)
    return val


def tables_named(records: str | None, tables: Sequence[TableMeta]) -> set[str]:
    """Tables whose name (or description) holds the head word of a records phrase ('water changes' ->
    change_log), abbreviations included; the name before the description."""
    if not records:
        return set()
    rt = [w for w in tokens(records) if w not in RECORD_WORDS]
    if not rt:
        return set()
    head = rt[-1]

    def hit(w, pool):
        return w in pool or any(abbreviates(w, x) or abbreviates(x, w) for x in pool)
    by_name = {t.table_name for t in tables if hit(head, set(table_words(t.table_name)))}
    if by_name:
        return by_name
    return {t.table_name for t in tables if hit(head, set(description_words(t.description)) - RECORD_WORDS)}


# a noun that asks which kind of thing: "the food type", "what kind of seed", "which sort of tea"
_KIND_ASKED = re.compile(r"\b[a-z]{3,}\s+(?:type|kind|sort|variety)\b|\b(?:type|kind|sort|variety)\s+of\b")
# a question for one thing of the rows by its noun: "which tutor", "whose class" (not "which day": a date)
_WHICH_ASKED = re.compile(r"\s*(?:which|whose)\s+(?!(?:day|date|month|week|year|time|session|one)s?\b)([a-z]{3,})\b")
# "time" said of records ("mean time across all my sessions", "my average time on writing exercises"): how long
# they took, the quantity asked, not a clock time nor the scaffolding of "the last time"
_TIME_OF_ROWS = re.compile(r"\btime\s+(?:across|over|on|during)\b")


def time_of_rows(text: str) -> bool:
    """True when the phrase asks the time its records took ("time across all my vocabulary sessions")."""
    return _TIME_OF_ROWS.search(text.lower()) is not None


_NOUN_TIME = re.compile(r"\b(?!(?:what|which|the|a|first|last|each|every|any|some|this|that|same|one|next|"
                        r"most|many|how|of|at|in|on|my|our|your|every|spare|free|real|long|short)\b)[a-z]{3,}\s+time\b")


def implied_dimension(text: str) -> str | None:
    """The dimension a question's words imply without naming a unit: a noun before "time" ("bake
    time") a duration, else its first adjective of measure ("how heavy": mass); None otherwise."""
    low = text.lower()
    if _NOUN_TIME.search(low):
        return "duration"
    return next((MEASURE_ADJECTIVES[w] for w in re.findall(r"[a-z]+", low) if MEASURE_ADJECTIVES.get(w)), None)


def named_dimension(text: str) -> str | None:
    """The unit dimension a word of the phrase names by its name or an abbreviation of it ("flow temp":
    temperature, "charge duration": duration); None when none does. Dimensions are the unit table's."""
    from ..extract.normalize import active_lexicon

    dims = {d for (_u, d, _f) in active_lexicon().units.values() if "_" not in d}
    for w in reversed(re.findall(r"[a-z]+", text.lower())):
        for d in dims:
            if w == d or (len(w) >= 4 and abbreviates(w, d)):
                return d
    return None


_PARTICLES = frozenset("up down out off over back in on at to by of for from with than and or per across among "
                       "during since after before between through within into throughout about around under "
                       "above below like versus vs when while where".split())


def _participles(text: str) -> set[str]:
    """Words written "-ed" in `text`, as `seq` holds them (stemmed): "bottled" of "volume bottled"."""
    return {stem(w) for w in re.findall(r"\b([a-z]{3,}ed)\b", text.lower())}


def _heads(seq: Sequence[str], own: set[str], participles: set[str] = frozenset()) -> bool:
    """Does a word of `seq` that `own` names stand at the end of its noun phrase? Words followed by
    another content word that `own` does not name are modifiers of that word; a past participle after it
    (`participles`: "volume bottled", "water used") closes the phrase instead."""
    def hit(w):
        return w in own or any(abbreviates(w, x) or abbreviates(x, w) or compound_head(w, x) for x in own)
    found = False
    for k, w in enumerate(seq):
        if not hit(w):
            continue
        found = True
        nxt = seq[k + 1] if k + 1 < len(seq) else None
        if nxt is None or nxt in STOP or nxt in SCAFFOLD or nxt in _FUNCTION_WORDS or nxt in _PARTICLES \
                or nxt.isdigit() or hit(nxt) or lemma(nxt) != nxt or nxt in MEASURE_ADJECTIVES or nxt in participles:
            return True
    return not found


def lemmas(text: str) -> list[str]:
    """Verb forms as their lemma, stemmed ('watered' -> water, 'baking' -> bake); other words as tokens."""
    out = []
    for w in re.findall(r"[a-z0-9]+", text.lower().replace("_", " ")):
        if w in STOP or w in SCAFFOLD:
            continue
        lw = lemma(w)
        out.append(stem(lw) if lw != w else stem(w))
    return out


def text_words(text: str) -> set[str]:
    """A text's words as tokens and verb lemmas ('Drove 40 km' -> drove, drive, km)."""
    low = text.lower().replace("_", " ")
    return set(tokens(low)) | set(lemmas(low))


def phrase_words(phrase: str) -> list[str]:
    """The content words of a phrase naming records, in order, as tokens or verb lemmas ('did I feed
    the starter' -> feed, starter; 'starter feeds' -> starter, feed)."""
    out = []
    for w in re.findall(r"[a-z0-9]+", phrase.lower()):
        if w in STOP or w in _FUNCTION_WORDS or w in _PARTICLES:
            continue
        t = tokens(w)
        if not t:
            continue
        lw = lemma(w)
        x = stem(lw) if lw != w else t[0]
        if x not in SCAFFOLD and x not in RECORD_WORDS and x not in out:
            out.append(x)
    return out


ROWS_ABOUT_MIN = 0.5  # share of a table's rows whose rounds name the records for the rows to be those records
# ... or a smaller share when no other table's rounds name them (devices and phrasings vary: "Humidifier
# check: RH 42 %" beside "my humidity reading"), this many times more often than any other table's
ROWS_ABOUT_DISTINCT = 0.2
ROWS_ABOUT_RATIO = 4.0
# ... or, when no other table's rounds name them at all, this share (a receipt's photo says "hop purchase",
# its text form only the numbers: 4 of 25 rows; "Screenshot of my writing exercise" in 3 of 23 sessions)
ROWS_ABOUT_ALONE = 0.12
ROWS_ABOUT_BY_MODIFIERS = 0.15  # ... a share the words before the head noun alone must reach to count at all
# ... unless one table's rounds alone say the whole phrase in this share of its rows and the tables the words
# before the head name never say the head ("Here's today's water change" in 4 of 35 changes; a water test's
# rounds say "water" and never "change")
ROWS_ABOUT_WHOLE = 0.08


def rows_tables(shares: dict[str, float]) -> set[str]:
    """The tables whose rows are the records a phrase names, from `rows_about` shares: those with at least
    ROWS_ABOUT_MIN of their rows naming them, else the one table with ROWS_ABOUT_DISTINCT that names them
    ROWS_ABOUT_RATIO times more often than any other, or with ROWS_ABOUT_ALONE when no other names them."""
    out = {t for t, v in shares.items() if v >= ROWS_ABOUT_MIN}
    if out or not shares:
        return out
    order = sorted(shares.items(), key=lambda kv: -kv[1])
    best, second = order[0][1], (order[1][1] if len(order) > 1 else 0.0)
    if best >= ROWS_ABOUT_ALONE and second == 0.0:
        return {order[0][0]}
    return {order[0][0]} if best >= ROWS_ABOUT_DISTINCT and best >= ROWS_ABOUT_RATIO * second else set()


def rows_about(phrase: str, tables: Sequence[TableMeta],
               row_words: Callable[[str], Sequence[frozenset[str]]]) -> dict[str, float]:
    """Per table, the share of its rows whose round (what the user wrote, image captions) names what
    `phrase` names: its head word (last content word; an abbreviation counts) and at least half of its
    content words (every one of a phrase of up to three). A table named after a field ("temp_log") is found by the noun of its rows ("bakes").
    When no table's rounds use the head word, the words before it alone."""
    want = phrase_words(phrase)
    if not want:
        return {}
    out = _row_shares(want, tables, row_words)
    if len(want) >= 2 and not rows_tables(out):
        # no table's rounds use the whole phrase enough ("writing exercises" where the rounds say "writing practice",
        # "wrote a short text"): the words before its head say which records are meant, unless the head alone
        # names the rows of another table ("water changes": the changes' rounds say "litres changed", a water
        # test's "water"), which leaves the phrase to the rounds' meaning
        before = {t: v if v >= ROWS_ABOUT_BY_MODIFIERS else 0.0
                  for t, v in _row_shares(want[:-1], tables, row_words).items()}
        head_shares = _row_shares(want[-1:], tables, row_words)
        whole = [t for t, v in out.items() if v > 0]
        if len(whole) == 1 and out[whole[0]] >= ROWS_ABOUT_WHOLE and all(
                not head_shares.get(t) for t in rows_tables(before) if t != whole[0]):
            return {t: max(v, ROWS_ABOUT_ALONE) if t == whole[0] else 0.0 for t, v in out.items()}
        by_head = rows_tables(head_shares)
        # (unless the head names them less surely than the words before it name others: "print jobs" where
        # "print" is said in most rounds of the prints and "job" in a few of the resin jobs')
        # (but a head said by the rows of several tables, "session" of blitz and of puzzle sessions, names a kind
        # of none: the words before it decide, "study sessions", "vocabulary sessions" beside tutor sessions)
        if by_head and rows_tables(before) and not by_head & rows_tables(before) \
                and max(head_shares.values()) >= max(before.values()) and not (
                    sum(v > 0 for v in head_shares.values()) >= 2 and len(rows_tables(before)) == 1):
            return {}
        # (a round or two that say the whole phrase do not outweigh the rest: "Screenshot of my writing exercise")
        out = {t: max(v, out.get(t, 0.0)) for t, v in before.items()}
    return out


@lru_cache(maxsize=65536)
def _lemma_key(word: str) -> str:
    """A word's verb lemma, stemmed: "changed", "changes" and "change" share one."""
    return stem(lemma(word))


def _row_shares(want: list[str], tables: Sequence[TableMeta],
                row_words: Callable[[str], Sequence[frozenset[str]]]) -> dict[str, float]:
    head = want[-1]
    out = {}
    own = {w: {w, stem(w), w[:-1] if len(w) > 2 and w.endswith("s") else w} for w in want}
    rounds = {t.table_name: rows for t in tables if (rows := row_words(t.table_name))}
    vocabs = {name: frozenset().union(*rows) for name, rows in rounds.items()}
    # a word some table's rounds say as it is is not read in another's abbreviations: "timesheet" said by the
    # timesheets' rounds is not the "time" of a trip's "time on road"
    said = {w for w in want if any(own[w] & v for v in vocabs.values())}
    every = frozenset().union(*vocabs.values()) if vocabs else frozenset()
    for name, rows in rounds.items():
        vocab = vocabs[name]
        # each wanted word's spellings in these rounds: itself and the words it abbreviates or that abbreviate it
        # ("waterings" -> watering -> water: a plural gerund is stemmed once, the rounds' "watering" fully)
        # (and the words of its lemma: "changes" / "changed")
        forms = {w: own[w]
                 | {x for x in vocab if w not in said and len(w) >= 3 and len(x) >= 3
                    and (abbreviates(w, x) or abbreviates(x, w) and not _first_of_compound(x, w, every))}
                 | {x for x in vocab if _lemma_key(x) == _lemma_key(w)}
                 for w in want}
        need = len(want) if len(want) <= 3 else -(-2 * len(want) // 3)  # every word of a short phrase, else 2/3
        hit = sum(1 for r in rows if forms[head] & r and sum(1 for w in want if forms[w] & r) >= need)
        out[name] = hit / len(rows)
    return out


# the records a question names ("my lake surveys") read like the rounds of one table when the phrase's mean
# cosine to that table's rounds is at least ROWS_LIKE_MIN and ROWS_LIKE_MARGIN above every other table's: the
# rounds of a stream need not use the question's noun ("Waterbirds on the lake. Dabblers: 34" for a survey)
ROWS_LIKE_MIN = 0.30
ROWS_LIKE_MARGIN = 0.05


def rows_like(query: np.ndarray, tables: Sequence[TableMeta],
              row_vectors: Callable[[str], np.ndarray]) -> dict[str, float]:
    """Per table, the mean cosine of `query` (a unit vector of the records phrase) to the embeddings of the
    rounds its rows come from; tables without embedded rounds are left out."""
    out = {}
    for t in tables:
        vecs = row_vectors(t.table_name)
        if len(vecs):
            out[t.table_name] = float(np.mean(vecs @ query))
    return out


def like_table(scores: dict[str, float]) -> str | None:
    """The one table whose rounds the records phrase reads like (`rows_like` scores): the best when it reaches
    ROWS_LIKE_MIN and leads every other by ROWS_LIKE_MARGIN; None when no table stands out."""
    if not scores:
        return None
    order = sorted(scores.items(), key=lambda kv: -kv[1])
    best = order[0][1]
    second = order[1][1] if len(order) > 1 else -1.0
    return order[0][0] if best >= ROWS_LIKE_MIN and best - second >= ROWS_LIKE_MARGIN else None


def initials(text: str) -> dict[str, bool]:
    """The initials of every two or three consecutive content words of a phrase ("resting heart rate" -> "rhr"),
    each with whether its words end the phrase (then they name its head)."""
    # (a word whose stem is scaffolding is too: "logged" in "the smallest front I logged" is no "fl")
    content = [w for w in re.findall(r"[a-z]+", text.lower())
               if w not in STOP and w not in SCAFFOLD and not set(tokens(w)) & SCAFFOLD]
    out: dict[str, bool] = {}
    for n in (2, 3):
        for k in range(len(content) - n + 1):
            ini = "".join(w[0] for w in content[k:k + n])
            out[ini] = out.get(ini, False) or k + n == len(content)
    return out


def initials_ending(text: str, head: str | None) -> set[str]:
    """The initials of two or three consecutive content words of a phrase whose last word (stemmed) is
    `head` ("aa" for "the alpha acid over my purchases" with head "acid")."""
    if not head:
        return set()
    content = [w for w in re.findall(r"[a-z]+", text.lower())
               if w not in STOP and w not in SCAFFOLD and not set(tokens(w)) & SCAFFOLD]
    return {"".join(w[0] for w in content[k - n + 1:k + 1]) for k, w in enumerate(content) if stem(w) == head
            for n in (2, 3) if k - n + 1 >= 0}


# suffixes that make a noun of a verb ("usage", "consumption", "payment") and the endings of its other forms
_NOUN_SUFFIXES = ("age", "ption", "tion", "ment")
_VERB_ENDINGS = ("e", "ed", "ing")


def derived(a: str, b: str) -> bool:
    """Whether two words are a verb and the noun made of it ("used" / "usage", "consumed" / "consumption",
    "produced" / "production", "stored" / "storage"), as tokens or stems: one root of at least two letters,
    one word ending in a noun suffix, the other in a verb's ending (or the bare root, a stem, of four letters
    or more: "consum")."""
    for x, y in ((a, b), (b, a)):
        for suf in _NOUN_SUFFIXES:
            root = x[: -len(suf)]
            if x.endswith(suf) and len(root) >= 2 and (
                    y in {root + e for e in _VERB_ENDINGS} or (y == root and len(root) >= 4)):
                return True
    return False


def query_tokens(text: str, vocab: Sequence[str]) -> list[str]:
    """The phrase's content tokens (and their lemmas), plus the vocabulary words they abbreviate or are
    abbreviations of, and vocabulary words that are the initials of two or three of its words in a row."""
    qt = [t for t in tokens(text) if t not in SCAFFOLD]
    qt += [t for t in lemmas(text) if t not in qt and t not in SCAFFOLD]  # "logged" -> log: scaffolding too
    if _NOUN_TIME.search(text.lower()):
        qt += ["time", "duration"]  # "drive time", "proof time": a duration named by its noun
    out = list(qt)
    vset = set(vocab)
    # a name written as the initials of the question's words ("RHR" for "resting heart rate", "BP" for "blood
    # pressure"): two or three consecutive content words
    out += [ini for ini in initials(text) if ini in vset]
    # the words as written too: a stem loses the letters an abbreviation keeps ("pts": points, not "point")
    written = {w for w in re.findall(r"[a-z]+", text.lower()) if len(w) >= 4 and stem(w) in qt}
    said = re.findall(r"[a-z0-9]+", text.lower())
    for t in set(qt) | written:
        # (a stem abbreviates only as a word said does, or said with a plural "s": "mill" of "milling" does not
        # shorten "millimetre", "temps" does "temperature")
        forms = {f for x in said if stem(x) == t or x == t for f in (x, x[:-1] if x.endswith("s") else x)} or {t}
        for w in vocab:
            if w == t or len(w) < 3:
                continue  # (two letters abbreviate only the word asked about: see match_columns)
            if any(abbreviates(f, w) for f in forms) or compound_head(t, w) or derived(t, w):
                # the question abbreviates a name ("temp" for temperature), or names a kind of it in one
                # word ("photoperiod" for a period), or says the verb of a noun ("used" for "usage")
                out.append(w)
            elif abbreviates(w, t) and t not in vset and not any(
                    v != t and len(v) > len(w) and abbreviates(w, v) for v in vset):
                # a short name ("qty", "temp") for the question's word, unless the memory already spells
                # the short name out as another word ("temp" is temperature there, not "tempering")
                out.append(w)
    return sorted(expand(out))


def match_columns(text: str, tables: Sequence[TableMeta], embed: Callable[[list[str]], np.ndarray],
                  encode_query: Callable[[str], np.ndarray], lam: float, *,
                  dtypes: tuple[str, ...] = ("DOUBLE",), table_prior: dict[str, float] | None = None,
                  exclude: set[tuple[str, str]] = frozenset(), dimension: str | None = None,
                  implied: str | None = None, records: str | None = None,
                  named: set[str] = frozenset(), per: str | None = None) -> list[ColumnChoice]:
    """Rank the attribute columns of `tables` (of the given types) for `text`, best first.

    `dimension`: a unit dimension the question names (a hard constraint: columns of another
    dimension are left out when any column has it); `implied`: a dimension the question's words
    suggest (an adjective of measure; a preference, not a constraint); `per`: the unit a compound
    quantity is asked per ('price/L' -> L: a hard constraint to columns in some unit per litre, when any)."""
    cands = [(t, c) for t in tables for c in t.attribute_columns()
             if c.dtype in dtypes and (t.table_name, c.name) not in exclude]
    if not cands:
        return []
    dims = {dimension} if dimension else set()
    if not dims:
        dims = {d for d in map(unit_dimension, asked_units(text)) if d}
    if dims:
        hard = [(t, c) for t, c in cands if unit_dimension(c.unit) in dims]
        if hard:
            cands = hard
    written = written_compounds(text)
    exact = [(t, c) for t, c in cands if written & {_flat(n) for n in (c.name, *c.aliases)}]
    if exact:
        # the question writes a column's compound label as the memory printed it ("mites/day"): that column,
        # not "mites" per day
        cands = exact
    per = per or asked_per(text)
    per_cols = {(t.table_name, c.name) for t, c in cands if per and per_unit(c.unit) == per}
    if per_cols:
        cands = [(t, c) for t, c in cands if (t.table_name, c.name) in per_cols]
    docs, index, vocab, own = _column_index(cands)
    qtok = query_tokens(text, vocab)
    qset = set(qtok)
    # words the phrase itself uses (not the dimension an adjective implies): what support rests on
    plain = qset - {stem(d) for d in MEASURE_ADJECTIVES.values() if d} | (qset & set(tokens(text)))
    # the phrase's own content words (not those naming the rows' table, nor adjectives of measure)
    all_table_words = (set(tokens(records)) if records else set()) | {"night", "morning", "evening", "time"}
    orig = [w for w in dict.fromkeys(tokens(text) + lemmas(text))
            if w not in SCAFFOLD and w not in all_table_words and w not in MEASURE_ADJECTIVES]
    seq = question_words(text)
    participles = _participles(text)
    head = next((w for w in reversed(seq) if w not in SCAFFOLD and w not in _FUNCTION_WORDS), None)
    # the head of what is asked: the last content word before a preposition, the rows' noun left out ("front"
    # in "mean front across my tyre checks", "tread" in "mean tread on my free days")
    asked = None
    for w in seq:
        if w in _PARTICLES and asked is not None:
            break
        if w not in SCAFFOLD and w not in _FUNCTION_WORDS and w not in _PARTICLES and w not in STOP \
                and not set(tokens(w)) & all_table_words:
            asked = w
    names = {w for _, c in cands for n in (c.name, *c.aliases) for w in tokens(n) if len(w) >= 3}
    # (unless a longer name says it: "period" for "photoperiod" rather than "pH")
    if asked and len(asked) >= 4 and asked.isalpha() and not any(
            w == asked or compound_head(asked, w) or abbreviates(w, asked) for w in names):
        # a name of two letters that begins or abbreviates the phrase's head word ("FR" on a tyre gauge for
        # "front", "GS" on a survey sheet for "geese"): too short for an abbreviation anywhere else, it names
        # the head of what is asked
        # (or the initials of the two words it is written as: "DL" for "daylight" where "light" is known)
        parts = compound_parts(asked, vocab)
        short = {w for _, c in cands for n in (c.name, *c.aliases) for w in tokens(n)
                 if len(w) == 2 and w.isalpha() and (asked.startswith(w) or abbreviates(w, asked)
                                                     or (parts is not None and w == parts[0][0] + parts[1][0]))}
        qtok, qset, plain = qtok + sorted(short - qset), qset | short, plain | short
    # the asked word as written too ("points": its stem "point" lost the letter "pts" keeps)
    asked_forms = ({asked} | {w for w in re.findall(r"[a-z]+", text.lower()) if stem(w) == asked}) if asked else set()
    head_inis = initials_ending(text, asked)
    # the embedding sees the content words only: question scaffolding ("which day did I") is noise here
    etext = " ".join(w for w in re.findall(r"[A-Za-z0-9%]+", text) if stem(w.lower()) in qset) or text
    vecs = embed([embed_text(c, t.table_name) for t, c in cands])
    qv = encode_query(etext)
    cos = vecs @ qv
    bm = minmax(index.scores(qtok))
    prior = table_prior or {}
    pvals = np.array([prior.get(t.table_name, 0.0) for t, _ in cands])
    pnorm = minmax(pvals) if len(set(pvals.tolist())) > 1 else np.zeros(len(cands))
    named_tables = (tables_named(records, tables) if records else set()) | set(named)
    # (or "time" itself is what is asked, the phrase's last word: "what time did my sessions show", "what was
    # the time": the time they took, a duration, as "bake time" is)
    implied_text = implied is None and (bool(_NOUN_TIME.search(text.lower())) or seq[-1:] == ["time"]
                                        or time_of_rows(text))
    if implied_text:
        implied = "duration"
    if implied is None:
        adj = next((w for w in seq if MEASURE_ADJECTIVES.get(w)), None)
        implied = MEASURE_ADJECTIVES.get(adj) if adj else None
        if implied == "duration" and adj in ("long", "short") and any(
                unit_dimension(c.unit) == "distance" for t, c in cands if t.table_name in named_tables):
            # "the longest run": the length of records that have one (a distance column in the table the
            # question names); otherwise a duration ("the longest game", "how long did I study")
            implied = "distance"
    noun_dim = next((MEASURE_ADJECTIVES[w] for w in seq if w in MEASURE_NOUNS), None)
    # a kind asked, when text columns are candidates at all: "food type", "type of filament"
    category_asked = "VARCHAR" in dtypes and _KIND_ASKED.search(text.lower()) is not None
    which = _WHICH_ASKED.match(text.lower())
    noun = stem(which.group(1)) if which else None
    if "VARCHAR" in dtypes and noun and not any(
            noun in own[i] or any(abbreviates(noun, w) or abbreviates(w, noun) for w in own[i])
            for i, (_, c) in enumerate(cands) if c.dtype != "VARCHAR"):
        # "which tutor did my session have": which one, not how much, when no number is named by the noun
        category_asked = True
    out = []
    inits = initials(text)
    # the phrase's content words in order: a column that names them all (by its words or their initials:
    # "pr" for "puzzle rating") is asked about more surely than one that names one of them ("rating")
    text_tokens = set(tokens(text))
    content = [w for w in orig if w in text_tokens and w not in _PARTICLES and w not in _FUNCTION_WORDS]
    whole_ini = "".join(w[0] for w in content) if len(content) >= 2 else None
    covers: list[bool] = []
    loose_only: set[int] = set()  # positions in `out` supported only by the looser cosine
    # tables a column of which the phrase names by a word ("bake" in "bake time": the bakes' table)
    worded = {t.table_name for i, (t, c) in enumerate(cands) if plain & own[i]}
    for i, (t, c) in enumerate(cands):
        cdim = unit_dimension(c.unit)
        per_hit = (t.table_name, c.name) in per_cols
        # the unit asked names it, or the unit it is asked per
        overlap = len(plain & own[i]) + (1 if dims and cdim in dims else 0) + (1 if per_hit else 0)
        dim_hit = bool(implied and (cdim == implied or cdim in RELATED_DIMENSIONS.get(implied, ())))
        # an implied dimension ("longest" -> duration) supports a column only in a table the question names
        named_table = bool(set(table_words(t.table_name)) & plain) or t.table_name in named_tables
        # the column's name written short for the word asked ("gs" on a survey sheet for geese): the encoder
        # does not know the short form, the name says it as surely as the word itself would
        short_for_asked = any(abbreviates(w, a) for a in asked_forms for n in (c.name, *c.aliases)
                              for w in re.findall(r"[a-z]+", n.lower()))
        # or its initials, ending at that word ("AA" on a label for "alpha acid"): as surely named
        short_for_asked = short_for_asked or any(n.lower().replace("_", "") in head_inis
                                                 for n in (c.name, *c.aliases))
        c_eff = max(float(cos[i]), float(cos.max())) if short_for_asked else float(cos[i])
        score = lam * c_eff + (1 - lam) * float(bm[i]) + 0.1 * float(pnorm[i])
        # a name word the phrase does not use ("net" in net_weight for "how much did I harvest") suggests
        # a more specific quantity than the one asked about
        covered = {stem(cdim.split("_")[0])} if cdim else set()
        names = [set(tokens(c.name))] + [set(tokens(a)) for a in c.aliases]
        uncovered = min(len(n - qset - GENERIC_NAME_WORDS - covered - unit_tokens(c.unit)) for n in names)
        if qset & own[i]:
            # only among columns the phrase names at all: a further name word means a narrower quantity
            score -= 0.2 * min(uncovered, 2)
        whole_generic = False  # the phrase is a generic word that is this column's whole name ("my total")
        for nm in [c.name] + list(c.aliases):
            # (a unit in brackets is no word of the name: "Time (mins)" is named "time")
            bare = re.sub(r"\s*\([^()]*\)\s*$", "", nm) or nm
            parts = [stem(w) for w in re.findall(r"[a-z0-9]+", bare.lower().replace("_", " "))]
            parts = [GENERIC_SAME.get(p, p) for p in parts] if len(parts) == 1 else parts
            if parts and _contains(seq, parts) and (len(parts) >= 2 or parts[0] not in GENERIC_NAME_WORDS):
                score += min(0.3, 0.1 * max(len(parts), 1.5))  # a whole name of the column is in the question
                if len(parts) == 1 and parts[0] in SCAFFOLD and (t.table_name in named_tables or _contains(
                        seq, ["my", parts[0]]) or _contains(seq, ["of", parts[0]])):
                    # a question word that is also this column's whole name ("Time 69 min"): it names the
                    # column when said of the rows ("first time in my writing exercises") or owned ("my time")
                    whole_generic = True
                break
            if len(parts) == 1 and parts[0] in GENERIC_NAME_WORDS and parts[0] in seq and not [
                    w for w in orig if w not in _PARTICLES and w not in _FUNCTION_WORDS]:
                whole_generic = True
                score += 0.15
        ini = next((inits[n.lower()] for n in [c.name] + list(c.aliases) if n.lower() in inits), None)
        if ini is not None:
            # the column's whole name is the initials of words of the phrase ("rhr": "resting heart rate")
            score += 0.2 + (0.15 if ini else 0.0)
        if short_for_asked:
            score += 0.15  # as a whole name of the column in the question would (below)
        lettered = any(lettered_name(n, seq) for n in [c.name] + list(c.aliases))
        if lettered:
            score += 0.2  # "b-rating" for "blitz rating": both words of the phrase name it
        if head and (head in own[i] or any(compound_head(head, x) for x in own[i])):
            score += 0.15  # the phrase's last word (its head, or that word's own head) names the quantity
        if dim_hit:
            score += 0.15
        if noun_dim and cdim and cdim != noun_dim and cdim not in RELATED_DIMENSIONS.get(noun_dim, ()):
            score -= 0.3  # a column of another dimension is not what a noun of measure names
        # the phrase asks a quantity ("bake time": a duration): a text column ("baked: scones") only names
        # its records, whatever words they share (a clock time written as text may still be it)
        quantity_asked = bool(implied) and c.dtype == "VARCHAR" and not any(
            re.search(r"\d:\d\d", str(v)) for v in c.samples)
        if quantity_asked:
            score -= 0.5
        # the phrase asks a kind of thing ("which food type", "what kind of seed"): a number names no kind, and
        # the text column of the rows a word of the phrase names (the feedings' "food") is it
        kind_of = category_asked and c.dtype == "VARCHAR" and (t.table_name in worded or t.table_name in named_tables)
        if category_asked and c.dtype != "VARCHAR":
            score -= 0.5
        elif kind_of:
            score += 0.3
        if t.table_name in named_tables:
            score += 0.2  # the rows the question names ("over all my harvests") are this table's
        if c.n_values is not None and t.n_rows:
            score += 0.05 * c.n_values / t.n_rows  # of two like columns, the one that holds the values
        # words of the phrase this column's names account for: the head word or at least half of them
        # ("heat pump COP" is not "heating": one word of three, and not the head)
        # a matched word that only modifies an unmatched noun ("heat" in "heat pump COP") does not name
        # this column: some matched word must head its phrase (not be followed by another content noun)
        lexical = overlap > 0 and (bool(dims and cdim in dims) or per_hit or _heads(seq, own[i], participles))
        # in the table whose rows the question names ("over all my drives"), a looser cosine suffices
        # (an implied dimension also in a table the phrase names by a word of one of its columns: "bake time"
        # is the bakes' duration)
        supported = not quantity_asked and not (category_asked and c.dtype != "VARCHAR") and (
            lexical or whole_generic or short_for_asked or kind_of or float(cos[i]) >= COS_SUPPORT
            or (dim_hit and (named_table or (implied_text and t.table_name in worded))))
        # in the table whose rows the question names a looser cosine suffices, when no column is named
        loose = not supported and not quantity_asked and t.table_name in named_tables \
            and float(cos[i]) >= COS_SUPPORT_NAMED
        if loose:
            loose_only.add(len(out))
        covers.append(bool(content) and (set(content) <= own[i] or lettered or any(
            whole_ini is not None and n.lower().replace("_", "") == whole_ini for n in [c.name] + list(c.aliases))))
        out.append(ColumnChoice(t.table_name, c.name, round(score, 4), round(float(cos[i]), 4),
                                round(float(bm[i]), 4), overlap, supported or loose, cdim))
    if loose_only and any(ch.supported for k, ch in enumerate(out) if k not in loose_only):
        out = [replace(ch, supported=False) if k in loose_only else ch for k, ch in enumerate(out)]
    full = [ch.score for cv, ch in zip(covers, out) if cv and ch.supported]
    if len(content) >= 2 and full:
        # some column names every word of the phrase: one that leaves words of it unnamed ranks below it
        # (its name says less than the question asks: "rating" for "puzzle rating" beside "pr")
        out = [ch if cv or not ch.supported else replace(ch, score=round(min(ch.score, max(full) - 0.01), 4))
               for cv, ch in zip(covers, out)]
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


SELF_WORDS = frozenset({"i", "me", "myself", "my", "mine"})


def _canon_word(w: str) -> str:
    from ..extract.normalize import canonical_word

    c = canonical_word(w)
    if c != w:
        return c
    lw = lemma(w)  # "riding" -> ride, "won" -> win: a verb form names the same value as its noun
    return stem(lw) if lw != w.lower() else stem(w)


def _canon_tokens(text: str) -> list[str]:
    """The question's words in canonical form ('rides' -> ride, 'I' -> me, 'won' -> win)."""
    low = text.lower()
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
        # a value that is another column's own label ("Print time" read as a material where a sentence's
        # order misled extraction) is no category: a question naming that quantity does not filter by it
        labels = {_value_canon(n) for c in t.attribute_columns()
                  for n in (c.name.replace("_", " "), *c.aliases) if n}
        for c in t.attribute_columns():
            if not c.categories:
                continue
            # (the words of the other columns' labels: a value may hold its own column's, "Hive D", "Bike B")
            label_words = {w for o in t.attribute_columns() if o.name != c.name
                           for n in (o.name.replace("_", " "), *o.aliases) if n for w in _value_canon(n).split()}
            groups: dict[str, list[str]] = {}
            for v in c.categories:
                canon = _value_canon(v)
                if canon not in labels:
                    # another column's label read into the value ("LINE Caro-Kann" beside "Caro-Kann", the table's
                    # "lines"): one value, whatever label word came with it
                    core = [w for w in canon.split() if w not in label_words]
                    groups.setdefault(" ".join(core) if any(len(w) >= 3 for w in core) else canon, []).append(v)
            root = _agent_root(c.name)
            for canon, variants in groups.items():
                vt = canon.split()
                if not vt:
                    continue
                if not all(len(x) >= 3 or x == "me" for x in vt):
                    # a value with a short word ("Hive D", "Plot 7") only as a whole phrase of the question
                    if any(len(x) >= 3 for x in vt) and _contains(toks, vt):
                        out.append(CategoryMatch(t.table_name, c.name, variants[0], tuple(variants)))
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
    return _named_column_first(_one_column_per_value(list(best.values()), qtok, tables), qtok)


def _named_column_first(matches: list[CategoryMatch], qtok: set[str]) -> list[CategoryMatch]:
    """Of two matches in one table that share a word ("style = stout" and "batch = Style stout" for
    "where the style was stout"), the one whose column the question names; both when it names neither."""
    def named(m):
        return set(_canon_tokens(m.column.replace("_", " "))) <= qtok
    out = []
    for m in matches:
        rivals = [o for o in matches if o is not m and o.table == m.table and
                  set(_value_canon(o.value).split()) & set(_value_canon(m.value).split())]
        if rivals and not named(m) and any(named(o) for o in rivals):
            continue
        out.append(m)
    return out


def _one_column_per_value(matches: list[CategoryMatch], qtok: set[str],
                          tables: Sequence[TableMeta]) -> list[CategoryMatch]:
    """A value found in several columns of one table (Leo in opponent and winner, red in my_color and
    opponent_color) filters one of them: the column whose verb it is the subject of; else the column
    whose qualifier the question uses ("I moved the white bishop" -> my_color); else the column where the
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
