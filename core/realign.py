"""Late re-alignment: after a build has seen the history, one kind of record named two ways is merged.

Field alignment (core/align.py) decides each new label once, with the evidence
seen so far. A second till, app or device that names every quantity its own
way ("qty sold", "revenue", "unsold" / "items sold", "sales", "remaining") brings
only new labels in its first round, with no known field beside them, so each
starts a field of its own and the stream ends up as two tables. At the end of a
build the whole record structure is known, and two groups of fields can be
compared as records:

* a group is a field with the fields beside it in at least half of its rounds
  (numbers only: dates, codes and names come with records of any kind);
* two groups are one kind of record named two ways when the fields they do
  not share pair one to one, each pair (nearly) never in one round — the same
  value kind, the same unit or dimension, overlapping ranges and typical values
  (medians) of one size, names not unlike
  (some name evidence, or the text encoder finds them SLOT_COSINE alike) — with
  exactly one such pairing, covering the smaller rest, and either a field in
  common (a watering record printing "moist" on both devices, "h2o" on one and
  "watered" on the other) or one pair close in name (name evidence or cosine
  >= CLOSE); with a field in common, quantities with units may pair by unit
  and range alone, their names unlike ("removed" in L and "volume changed" in
  mL beside "cond" on both), bare counts only when their typical values are
  of clearly different sizes, each fitting one place ("hits" 20 / "correct"
  22 and "tactics rating" 1700 / "PR" 1780);
* a pairing is refused when it turns round an order both kinds keep in their
  records (a yield above the part exported), and two groups are not joined
  when each holds a field of its own the other never shows and cannot be one
  quantity with it, unless a pair is one name by its letters;
* each pair's smaller field joins the larger (`align.join_field`); the analytic
  memory is then rebuilt from the stored observations (core/analytic.py) as if
  the labels had been aligned from the start, so rows of both devices land in
  one table: the paper's schema evolution (columns appended, rows refilled).

Fields a person kept apart or merged (decided_by = 'user') are never touched.
Every merge is logged with its evidence (field_events kind "realign") and can
be undone label by label like any alignment (`align.undo_alias`).
"""
from __future__ import annotations

import itertools
import re
import time
from dataclasses import dataclass, replace
from typing import Callable, Iterable, Mapping, Sequence

import numpy as np

from .align import (MAX_SENSES, MIN_NAME, SLOT_COSINE, WORD_MORE_OR_LESS, FieldStats, LabelText, contrasting,
                    field_stats, join_field, label_texts, move_label, name_evidence, fields_by_round,
                    recompute_field_stats, split_field, words_of)
from .config import Config
from .protocols import LLM, TextEncoder
from .units import convert, read_beside, unit_dimension

GROUP_SHARE = 0.5  # a field is in f's group when it was beside f in at least half of f's rounds
CLOSE = 0.55  # one pair of a merge must be at least this close by name evidence or cosine
MIN_ROUNDS = 2  # a group's field needs this many rounds to stand for a kind of record
TOGETHER = 0.2  # two groups are apart when their fields shared at most this share of rounds
STRUCTURAL = 3  # this many quantities pairing one to one by kind, unit and range need no name evidence
TEXT_ALIKE = 0.55  # mean cosine of the round texts of pairs that have no name evidence
TEXT_SAME = 0.65  # ... of pairs whose one name-like pair is only a word more or less apart
ANCHOR_ALIKE = 0.5  # ... of pairs beside a text field of each holding the same values (a text anchor)
FEW_ROUNDS = 5  # a field in fewer rounds than this has no range yet, only a size
SETTLED = 0.05  # of two places that fit, the closer in name must be this much closer
SPLIT_ROUNDS = 3  # a kind of record needs this many rounds of a field to be given the field of its own
SPLIT_ALIKE = 0.75  # ... unless its rounds read this much like the other kind's (mean text cosine)
TEXT_COMMON = 2  # a text field of each group with this many values in common ...
TEXT_SHARE = 0.5  # ... and at least this share of the smaller one's values anchors their join
ANCHOR_SUPPORT = 0.5  # what such an anchor adds to a pairing's support when two pairings compete
SIZE_RATIO = 4.0  # two fields with enough rounds whose medians differ more than this are two quantities
JOIN_PASSES = 3  # late joins are planned again after joins, at most this many more times
REJOIN_ROUNDS = 3  # a second sense in at most this many rounds may have been given too early (plan_rejoins)
CONTRAST_SIZE = 2.0  # pairs by shape alone against their names (a contrast, a split) are at most this far apart
VOUCH = 0.8  # name evidence of a pair that vouches for an unlike one (initials, the same words in another form)
COMMON_TEXTS = 2  # this many text fields of recurring values beside two kinds of record vouch like a field in common


@dataclass(frozen=True)
class Merge:
    """One field joined into another, with why."""

    source: str
    target: str
    evidence: Mapping[str, object]


@dataclass(frozen=True)
class Split:
    """The rounds where a field is a quantity of another kind of record, given a field of their own."""

    field: str
    sense: str
    rounds: tuple[str, ...]
    evidence: Mapping[str, object]


@dataclass(frozen=True)
class RealignReport:
    merges: tuple[Merge, ...]
    rebuilt: bool
    seconds: float
    splits: tuple[Split, ...] = ()


Similarity = Callable[[str, str], float]


def groups(stats: Mapping[str, FieldStats]) -> list[frozenset[str]]:
    """The kinds of record the memory's numbers come in: each number field with the number fields
    beside it in at least half of its rounds; the same group once."""
    out: list[frozenset[str]] = []
    for name, f in sorted(stats.items()):
        if f.kind != "number" or f.rounds < MIN_ROUNDS:
            continue
        g = frozenset({name} | {c for c in _usual(name, stats) if stats[c].rounds >= MIN_ROUNDS})
        if len(g) >= 2 and g not in out:
            out.append(g)
    return out


def _apart(pairs: Mapping[str, str], stats: Mapping[str, FieldStats]) -> bool:
    """No two fields to be joined were in one round in more than TOGETHER of the rarer one's rounds
    (two quantities of one record are never one field; a value said in the text and shown on a
    screen puts both namings in one round now and then). Other fields of the two groups may share
    rounds: a record told half in a photo and half in the text."""
    return all(max(stats[x].companions.get(y, 0), stats[y].companions.get(x, 0))
               <= TOGETHER * min(stats[x].rounds, stats[y].rounds) for x, y in pairs.items())


def _read_alike(pairs: Mapping[str, str], stats: Mapping[str, FieldStats], least: float) -> bool:
    """The rounds of every pair read alike: mean text cosine at least `least` (no texts: not alike)."""
    alike = [stats[x].text_cosine(stats[y]) for x, y in pairs.items()]
    return None not in alike and bool(alike) and sum(alike) / len(alike) >= least


def _read(a: FieldStats, b: FieldStats) -> tuple[FieldStats, FieldStats]:
    """Two fields with a unit symbol of two readings read beside each other: "34 m watched" in the texts beside
    a screen's "Count time 27 min" is minutes (`units.read_beside`); others as they are."""
    au, bu = read_beside(a.unit, [b.unit]), read_beside(b.unit, [a.unit])
    if (au, bu) == (a.unit, b.unit):
        return a, b
    return (replace(a, unit=au, dimension=unit_dimension(au)) if au != a.unit else a,
            replace(b, unit=bu, dimension=unit_dimension(bu)) if bu != b.unit else b)


def _fit(a: FieldStats, b: FieldStats) -> bool:
    """Two fields could be one quantity: same kind, unit (or dimension) and overlapping ranges."""
    a, b = _read(a, b)
    if a.kind != b.kind:
        return False
    if (a.unit is None) != (b.unit is None) and not _counted_noun(a.unit or b.unit):
        return False
    bare_per = _bare_per(a.unit, b.unit)
    if a.unit and b.unit and a.unit != b.unit and not (a.dimension and a.dimension == b.dimension) and not bare_per:
        return False
    if None in (a.vmin, a.vmax, b.vmin, b.vmax):
        return True
    bmin, bmax = b.vmin, b.vmax
    if a.unit and b.unit and a.unit != b.unit and not bare_per:
        # "Mix volume 2500 ml" on one device, "dilution 2.5 L" on the other: ranges compared in one unit
        lo, hi = convert(b.vmin, b.unit, a.unit), convert(b.vmax, b.unit, a.unit)
        if lo is None or hi is None:
            return False
        bmin, bmax = lo, hi
    if min(a.rounds, b.rounds) >= FEW_ROUNDS:
        # ranges that overlap at their ends are not one quantity when the typical values are of another
        # size: a shop receipt's total (median 226 $) and a client's payment (median 2,105 $), both in $
        # beside two more numbers of the same kinds
        # (not when each typical value lies inside the other's range: five readings of a small
        # concentration with a median of 0.1 beside many of 0.05-0.97, median 0.49, are one quantity)
        gap = _size_gap(a, b)
        if gap is not None and gap > np.log(SIZE_RATIO) and not (
                _inside(a.median, bmin, bmax) and _inside(_in_unit(b.median, b, a), a.vmin, a.vmax)):
            return False
    # a field seen a few times has a narrow range by chance ("bank fee" 3.26-5.43 on two screens, "fee"
    # 6.45-9.90 on three): its values say the size of the quantity, not its bounds
    pad = (0.5 if min(a.rounds, b.rounds) < FEW_ROUNDS else 0.1) * max(abs(a.vmax), abs(bmax), 1e-9)
    return a.vmin <= bmax + pad and bmin <= a.vmax + pad


def _counted_noun(unit: str | None) -> bool:
    """A unit that is only the noun counted, from a label's brackets ("Days late (days)"): no measure, so a
    bare count beside it ("Overdue days: 1") may be the same quantity."""
    return bool(unit) and re.fullmatch(r"[a-z]{3,}", unit) is not None and unit_dimension(unit) is None


def _inside(x: float | None, lo: float, hi: float) -> bool:
    return x is not None and lo <= x <= hi


def _in_unit(x: float | None, b: FieldStats, a: FieldStats) -> float | None:
    """b's value x in a's unit (as it is when either has no unit or they are one)."""
    if x is None or not (a.unit and b.unit and a.unit != b.unit) or _bare_per(a.unit, b.unit):
        return x
    return convert(x, b.unit, a.unit)


def _bare_per(u: str | None, v: str | None) -> bool:
    """One unit is a rate with a part not printed and the other the same rate in full: its amount missing
    ("1.651/L" in the text, "1.924 EUR/L" on the pump's receipt) or what it is per ("PPL 1.819 €" on
    one receipt, "1.722 €/L" in the text): compared as they are, without conversion."""
    if not u or not v or u == v:
        return False
    if "/" not in u or "/" not in v:
        # (a price's "per what" goes unprinted, a flow's does not: "L/min" beside "L" is a flow and a volume)
        rate, bare = (u, v) if "/" in u else (v, u)
        return "/" in rate and rate.split("/", 1)[0] == bare and unit_dimension(bare) == "currency"
    return (u.startswith("/") or v.startswith("/")) and u.split("/", 1)[1] == v.split("/", 1)[1]


def _closeness(a: str, b: str, similar: Similarity | None) -> float:
    return max(name_evidence(_base(a), _base(b))[0], similar(a, b) if similar is not None else 0.0)


def _not_unlike(a: str, b: str, similar: Similarity | None) -> bool:
    return name_evidence(_base(a), _base(b))[0] >= MIN_NAME or similar is None or similar(a, b) >= SLOT_COSINE


def _base(name: str) -> str:
    """"duration~2" (the field of a second kind of record) is named "duration"."""
    return name.split("~")[0]


def pairing(small: frozenset[str], large: frozenset[str], stats: Mapping[str, FieldStats],
            similar: Similarity | None, lenient: bool = False, by_fit: bool = False,
            anchored: bool = False, anchors: int = 0) -> dict[str, str] | None:
    """The one pairing of every field of `small` with a field of `large` (fit, names not unlike,
    names not contrasting), or None when there is none or more than one. Where a pair's names are no
    close match (< CLOSE), the pairing the fields' typical sizes clearly prefer among every one that fits
    is taken (`_sized_pairing`).

    lenient: one field of two or more may pair by fit alone, its names unlike ("net" in kg on one
    scale, "harvest" in kg on the other, both beside "frames" and a moisture %; "H2O" and
    "irrigation" in mL beside "SM" and "soil moisture"): the caller asks for a shared field or a
    pair close in name, which with the other pairs says it is one kind of record.
    by_fit: every field may pair by fit alone (the caller has a text field of each holding the same
    values, in rounds that read alike: "Mix type: nyjer" on a screen beside "seed type nyjer").
    anchored: the two groups have a field in common (with lenient): every field with a unit may pair by
    fit alone, its names unlike ("removed" in L and "volume changed" in mL, "share changed" and "portion" in
    %, beside "cond" on the screen and in the text): a unit of one dimension and a range of one size are
    evidence a bare count is not. One such pair alone needs two fields in common (`anchors`, texts
    included: "sugar used" and the colony's name beside "volume" in mL and "syrup" in L): one shared
    peak power does not make a solar panel's yield the house's use, both in kWh. With two fields in
    common, one bare count of each may pair by fit too, when their rounds read alike (TEXT_SAME)."""
    def fits(a):
        return [b for b in large if _fit(stats[a], stats[b]) and not contrasting(_base(a), _base(b))]
    options = {a: [b for b in fits(a) if _not_unlike(a, b, similar)] for a in small}
    empty = [a for a, o in options.items() if not o]
    if by_fit:
        options = {a: fits(a) for a in small}
    elif lenient and anchored and empty and all(stats[a].unit for a in empty) and (len(small) >= 2 or anchors >= 2):
        for a in empty:
            options[a] = fits(a)
    elif lenient and anchored and anchors >= 2 and len(small) == 1 and empty:
        # one bare count left on each side beside two fields in common ("kinds" in the text, "SPECIES SEEN" on
        # a screen, both beside the birds and the minutes): the one place it fits, when their rounds read as
        # one kind of record
        options[empty[0]] = [b for b in fits(empty[0]) if _read_alike({empty[0]: b}, stats, TEXT_SAME)]
    elif lenient and anchored and empty and len(small) >= 2 and _forced_by_size(empty, fits, stats):
        # bare counts of clearly different sizes, each fitting one field of the other kind by its typical
        # value alone ("hits" 20 and "tactics rating" 1700 on the screen, "correct" 22 and "PR" 1780 in the
        # text, both beside a duration): the sizes pair them where the names cannot
        for a in empty:
            options[a] = _by_size(a, fits(a), stats)
    elif lenient and len(empty) == 1 and len(small) >= 2:
        options[empty[0]] = fits(empty[0])
    elif lenient and len(small) >= STRUCTURAL and any(stats[a].unit for a in small):
        # three or more quantities, one with a unit, that pair one to one by kind, unit and range alone
        # ("qty sold, takings €, left over" on a till's photo; "units, revenue €, unsold" in the text)
        options = {a: fits(a) for a in small}
    out = _settled(options, similar)
    if out is None and lenient and len(small) >= 2:
        # names that settle nothing ("xp"/"points" 0.35 and "lessons"/"points" 0.36 beside a shared streak;
        # "gs" one name with "geese" by its letters while "dabblers" is a little closer to geese than to
        # mallards by the encoder): counts each of which has one place of its size beside a shared field
        # (xp 171 / points 200, lessons 4 / units 6.5), or, where a pair is one name by its letters, the
        # pairing the sizes clearly prefer that keeps every such pair, is taken
        strong = {(a, b) for a in small for b in large if name_evidence(_base(a), _base(b))[0] >= VOUCH}
        if anchored and _forced_by_size(sorted(small), fits, stats):
            out = {a: _by_size(a, fits(a), stats)[0] for a in small}
        elif strong:
            out = _sized_pairing({a: fits(a) for a in small}, stats)
        elif anchored:
            # no name vouches ("dabblers | gs" in the texts, "mallards | greylag" on a screen, beside the lake's
            # temperature in both): a shared field, sizes that clearly pair the rest, and rounds that read alike
            out = _sized_pairing({a: fits(a) for a in small}, stats)
            out = out if out is not None and _read_alike(out, stats, TEXT_ALIKE) else None
        if out is None or not _keeps_order(out, stats) or any(out.get(a) != b for a, b in strong):
            return None
        return out
    if out is None:
        return None
    if len(out) >= 2 and any(_closeness(a, b, similar) < CLOSE for a, b in out.items()):
        # names as loose as "dabblers"/"geese" (0.39) against "dabblers"/"mallards" do not outweigh typical values
        # clearly of another size (dabblers 54 and mallards 31, "Gs." 16 and geese 19): the pairing the sizes
        # clearly prefer among every pairing that fits is taken
        by_size = _sized_pairing({a: fits(a) for a in small}, stats)
        if by_size is not None and _keeps_order(by_size, stats):
            return by_size
    if not _keeps_order(out, stats):
        # two quantities one of which is the larger in every record of each kind (a panel's yield and the part
        # of it exported): a pairing that turns the order round is wrong whatever the names say; the one
        # pairing by fit that keeps every order is taken, else none
        kept = [p for p in _one_to_one({a: fits(a) for a in small}) if _keeps_order(p, stats)]
        return kept[0] if len(kept) == 1 else None
    return out


def _settled(options: Mapping[str, list[str]], similar: Similarity | None) -> dict[str, str] | None:
    """Each field's place, the most constrained first, where a field with two free places takes the one
    clearly closest in name ("leaf count" is "leaves" more than "new leaves", 0.69 against 0.62); None when
    a field has no place, or two places no name tells apart."""
    if any(not o for o in options.values()):
        return None
    out: dict[str, str] = {}
    for a in sorted(options, key=lambda x: (len(options[x]), x)):
        free = [b for b in options[a] if b not in out.values()]
        if len(free) > 1:
            ranked = sorted(free, key=lambda b: -_closeness(a, b, similar))
            if _closeness(a, ranked[0], similar) - _closeness(a, ranked[1], similar) < SETTLED:
                return None
            free = ranked[:1]
        if len(free) != 1:
            return None
        out[a] = free[0]
    return out


ORDER_ROUNDS = 3  # two fields in this many rounds together ...
ORDER_SHARE = 0.9  # ... one the larger in at least this share of them keep an order


def _order(a: str, b: str, stats: Mapping[str, FieldStats]) -> int:
    """+1 when a was the larger of the two in their records (ORDER_ROUNDS, ORDER_SHARE), -1 when b was, else 0."""
    both, larger = stats[a].above.get(b, (0, 0))
    if both < ORDER_ROUNDS:
        return 0
    return 1 if larger >= ORDER_SHARE * both else -1 if both - larger >= ORDER_SHARE * both else 0


def _keeps_order(pairs: Mapping[str, str], stats: Mapping[str, FieldStats]) -> bool:
    """No two pairs of a pairing are in opposite orders on the two sides."""
    items = sorted(pairs.items())
    return all(_order(x, x2, stats) * _order(y, y2, stats) >= 0
               for i, (x, y) in enumerate(items) for x2, y2 in items[i + 1:])


def _one_to_one(options: Mapping[str, list[str]]) -> list[dict[str, str]]:
    """Every one-to-one pairing `options` allow (at most the first 500 combinations looked at)."""
    keys = sorted(options)
    return [dict(zip(keys, combo)) for combo in itertools.islice(itertools.product(*(options[k] for k in keys)), 500)
            if len(set(combo)) == len(combo)]


def _by_size(a: str, places: list[str], stats: Mapping[str, FieldStats]) -> list[str]:
    """The places whose typical value is of a's size (within SIZE_RATIO)."""
    return [b for b in places if (g := _size_gap(stats[a], stats[b])) is not None and g <= np.log(SIZE_RATIO)]


def _forced_by_size(fields: list[str], fits: Callable[[str], list[str]], stats: Mapping[str, FieldStats]) -> bool:
    """Each field has exactly one place of its size among those that fit, all places different."""
    places = [_by_size(a, fits(a), stats) for a in fields]
    return all(len(p) == 1 for p in places) and len({p[0] for p in places}) == len(places)


SIZE_CLEAR = 0.5  # the pairing by typical size is taken when its cost is at most this share of the next one's ...
SIZE_GAP = 0.3  # ... and at least this much lower (sum of |log median ratio|)


def _size_gap(a: FieldStats, b: FieldStats) -> float | None:
    """|log| of the ratio of two fields' typical values (medians, b converted to a's unit), None unknown."""
    a, b = _read(a, b)
    if not a.median or not b.median or a.median <= 0 or b.median <= 0:
        return None
    mb = b.median if not (a.unit and b.unit and a.unit != b.unit) else convert(b.median, b.unit, a.unit)
    if mb is None or mb <= 0:
        return None
    if not a.unit and not b.unit and float(a.median).is_integer() and float(mb).is_integer() \
            and abs(a.median - mb) <= 1:
        return 0.0  # bare counts whose typical values are a count apart (4 and 5 chicks): one size, by chance
    return abs(float(np.log(a.median / mb)))


def _sized_pairing(options: Mapping[str, list[str]], stats: Mapping[str, FieldStats]) -> dict[str, str] | None:
    """Of every one-to-one pairing `options` allow (at most a few hundred), the one whose pairs' typical
    values are closest in size, when it is clearly the closest (SIZE_CLEAR, SIZE_GAP); None otherwise or
    when a size is unknown."""
    costs: list[tuple[float, dict[str, str]]] = []
    for pairs in _one_to_one(options):
        gaps = [_size_gap(stats[a], stats[b]) for a, b in pairs.items()]
        if None in gaps:
            return None
        costs.append((sum(gaps), pairs))
    if len(costs) < 2:
        return None
    costs.sort(key=lambda c: c[0])
    (best, pairs), (second, _) = costs[0], costs[1]
    return pairs if best <= SIZE_CLEAR * second and second - best >= SIZE_GAP else None


def _texts_beside(group: frozenset[str], stats: Mapping[str, FieldStats]) -> set[str]:
    """Text fields beside some field of `group` in at least half of its rounds."""
    return {t for f in group for t, n in stats[f].companions.items()
            if t in stats and stats[t].kind == "text" and n >= GROUP_SHARE * stats[f].rounds}


def text_anchor(small: frozenset[str], large: frozenset[str], stats: Mapping[str, FieldStats]) -> tuple[str, str] | None:
    """A text field beside each group, named two ways but holding the same values (a feeder's screen
    prints "KIND: bloodworms", the text says "food type flakes": the same few foods), and never in one
    round: evidence that the two groups are one kind of record, like a field in common. The pair with
    most values in common, or None."""
    best, most = None, 0
    for ta in sorted(_texts_beside(small, stats)):
        for tb in sorted(_texts_beside(large, stats)):
            va, vb = stats[ta].values, stats[tb].values
            if ta == tb or not va or not vb:
                continue
            common = len(va & vb)
            if common >= TEXT_COMMON and common >= TEXT_SHARE * min(len(va), len(vb)) and common > most \
                    and _apart({ta: tb}, stats):
                best, most = (ta, tb), common
    return best


def _numbers_beside(f: FieldStats, stats: Mapping[str, FieldStats]) -> frozenset[str]:
    """The number fields beside `f` in at least half of its rounds."""
    return frozenset(c for c, n in f.companions.items()
                     if c in stats and stats[c].kind == "number" and n >= GROUP_SHARE * f.rounds)


def _placeholder(name: str) -> bool:
    """The extractor's own name for an unlabelled text ("item", "item_2"): a label the history printed is
    the better name of a field both name."""
    return re.fullmatch(r"item(?:_\d+)?(?:~\d+)?", name) is not None


def _same_numbers_beside(fa: FieldStats, fb: FieldStats, stats: Mapping[str, FieldStats]) -> set[str]:
    """The number fields beside both `fa` and `fb` (names of one label's senses, "rating" and "rating~2", are
    the same name here: one label printed beside both)."""
    na, nb = _numbers_beside(fa, stats), _numbers_beside(fb, stats)
    by_base = {n.split("~")[0] for n in na} & {n.split("~")[0] for n in nb}
    return {n for n in na | nb if n.split("~")[0] in by_base}


def plan_text_joins(stats: Mapping[str, FieldStats], keep: frozenset[str] = frozenset(),
                    moved: frozenset[str] = frozenset()) -> list[Merge]:
    """Text fields that are one field named two ways (pure): never in one round, holding the same values
    (TEXT_COMMON and TEXT_SHARE of the smaller one's), beside the same numbers (a photo prints
    "Specimen: Pothos" beside height and leaves, another "Plant: Pothos" beside the same height). Two
    names of things kept in one record ("from" and "to" stations) meet in its rounds and stay apart; the
    same things in another kind of record (the pots watered) have other numbers beside them and stay
    apart too. The field with fewer rounds joins the other; each field moves at most once."""
    texts = sorted(n for n, f in stats.items() if f.kind == "text" and len(f.values) >= TEXT_COMMON
                   and n not in keep and n.split("~")[0] not in keep)
    found: list[tuple[int, str, str]] = []
    for i, a in enumerate(texts):
        for b in texts[i + 1:]:
            fa, fb = stats[a], stats[b]
            common = len(fa.values & fb.values)
            if common < TEXT_COMMON or common < TEXT_SHARE * min(len(fa.values), len(fb.values)):
                continue
            if not _apart({a: b}, stats) or not _same_numbers_beside(fa, fb, stats):
                continue
            found.append((common, a, b))
    out: list[Merge] = []
    done: set[str] = set(moved)
    for common, a, b in sorted(found, key=lambda t: (-t[0], t[1], t[2])):
        src, dst = (a, b) if (_placeholder(b), stats[a].rounds, a) < (_placeholder(a), stats[b].rounds, b) \
            else (b, a)
        if src in done or dst in done:
            continue
        beside = ", ".join(sorted(_same_numbers_beside(stats[a], stats[b], stats)))
        out.append(Merge(src, dst, {
            "reason": f"late re-alignment: {src} and {dst} hold the same {common} values beside {beside}, "
                      f"never in one round", "name": 0.0}))
        done |= {src, dst}
    return out


def plan_label_moves(labels: Mapping[tuple[str, str], LabelText], stats: Mapping[str, FieldStats],
                     keep: frozenset[str] = frozenset()) -> list[Merge]:
    """Text labels given the wrong place of a record (pure): a label whose values the other labels of its
    field never had, while another text field of the same kind of record holds them (TEXT_COMMON and
    TEXT_SHARE of the label's values) and is never in the label's rounds; the label a field is named after
    stays. Example: "Opponent: Aurelie"
    placed early, on little evidence, in the unlabelled place that holds "win"/"loss"/"draw" in the log
    lines "Day 3 — Tomasz, draw, ...", while the place holding "Tomasz", "Dev" is elsewhere. Returns
    Merge(label, field) moves, each label at most once, the clearest (most values in common) first."""
    by_field: dict[str, list[LabelText]] = {}
    for lt in labels.values():
        by_field.setdefault(lt.field, []).append(lt)
    field_rounds = {f: frozenset().union(*(lt.rounds for lt in lts)) for f, lts in by_field.items()}
    found: list[tuple[int, str, str, str]] = []
    for f, lts in sorted(by_field.items()):
        if len(lts) < 2 or f not in stats or f in keep:
            continue
        for lt in lts:
            if lt.raw in keep or lt.raw == f or len(lt.values) < TEXT_COMMON:
                continue  # (the label the field is named after is the field: the others move)
            others = frozenset().union(*(o.values for o in lts if o is not lt))
            if len(others) < TEXT_COMMON or lt.values & others:
                continue
            best: tuple[int, str] | None = None
            for g, fg in stats.items():
                if g == f or fg.kind != "text" or g in keep or g not in field_rounds:
                    continue
                common = len(lt.values & fg.values)
                if common < TEXT_COMMON or common < TEXT_SHARE * len(lt.values) or lt.rounds & field_rounds[g]:
                    continue
                if not _same_numbers_beside(stats[f], fg, stats):
                    continue  # the same words in another kind of record (the plants a photo names, the pots watered)
                if best is None or common > best[0]:
                    best = (common, g)
            if best is not None:
                found.append((best[0], lt.raw, f, best[1]))
    out: list[Merge] = []
    moved: set[str] = set()
    for common, raw, f, g in sorted(found, key=lambda t: (-t[0], t[1])):
        if raw in moved:
            continue
        moved.add(raw)
        out.append(Merge(raw, g, {"reason": f"late re-alignment: the label {raw} brought {common} values into {f} "
                                            f"that {f}'s other labels never had and {g} holds", "name": 0.0,
                                  "from": f}))
    return out


def _apply_moves(con, moves: Sequence[Merge], stats: Mapping[str, FieldStats]) -> None:
    """Apply label moves; a printed label moved to the extractor's unlabelled place ("opponent" to "item")
    gives the place its name: the label gets a field of its own and the place joins it."""
    renamed: dict[str, str] = {}
    for mv in moves:
        target = renamed.get(mv.target, mv.target)
        if _placeholder(target) and not _placeholder(mv.source) and mv.source not in stats:
            move_label(con, mv.source, mv.source, mv.evidence)
            join_field(con, target, mv.source, mv.evidence, score=0.0)
            renamed[target] = mv.source
        else:
            move_label(con, mv.source, target, mv.evidence)


def _senses_beside(small: frozenset[str], large: frozenset[str], stats: Mapping[str, FieldStats],
                   similar: Similarity | None, anchors: int) -> dict[str, str] | None:
    """Two kinds of record that differ by one field each beside a label's two senses ("eggs" beside "chicks",
    "eggs~2" beside "young": the label was given a sense of its own because the one other field was new beside
    it): the senses pair as a field in common would anchor them, and the other two pair as one bare count of
    each beside two fields in common may (`pairing`); where the other kind has more fields of its own, the one
    field with a unit pairs by unit and size in rounds that read alike. The pairs, senses included, or None."""
    senses = {x: y for x in small for y in large if x != y and _base(x) == _base(y)}
    if not senses or len(small) - len(senses) != 1 or len(large) - len(set(senses.values())) < 1:
        return None
    rest_small = frozenset(small - senses.keys())
    rest_large = frozenset(large - set(senses.values()))
    if len(rest_large) > 1:
        # the other kind prints more (a moisture the scale's screen lacks: "HARVEST" kg beside "FRAMES~2", and
        # "honey" kg, "frames" and "H2O %"): the one field with a unit pairs with the one place of its unit and
        # size there, when the rounds read as one kind of record
        (a,) = rest_small
        places = [b for b in rest_large if _fit(stats[a], stats[b]) and not contrasting(_base(a), _base(b))]
        if not stats[a].unit or len(places) != 1:
            return None
        pairs = {a: places[0], **senses}
        return pairs if _of_one_size({a: places[0]}, stats) and _read_alike(pairs, stats, TEXT_SAME) else None
    pairs = pairing(rest_small, rest_large, stats, similar, lenient=True, anchored=True,
                    anchors=anchors + len(senses))
    return None if pairs is None else {**pairs, **senses}


def _forced_despite_contrast(small: frozenset[str], large: frozenset[str],
                             stats: Mapping[str, FieldStats]) -> dict[str, str] | None:
    """STRUCTURAL or more quantities, each with a unit, each of which fits exactly one field of the other kind
    (kind, dimension and range), all different, of one size (CONTRAST_SIZE) in rounds that read as one kind of
    record (TEXT_SAME): the pairing, though
    one pair's names differ by a contrast word ("flow" in the texts, "max flow" on the meter's screen, beside
    "meter" / "reading" in m³ and "usage" in m³ / "used" in L). A contrast word says two names are two
    quantities where one record could hold both; here nothing else fits either, and the rest of the record
    pairs by its shape alone. At most one such pair; None otherwise."""
    places = {a: [b for b in large if _fit(stats[a], stats[b])] for a in small}
    if any(len(p) != 1 for p in places.values()) or len({p[0] for p in places.values()}) != len(places):
        return None
    pairs = {a: p[0] for a, p in places.items()}
    if sum(contrasting(_base(a), _base(b)) for a, b in pairs.items()) != 1:
        return None  # (none: the usual pairing had its say)
    # (evidence against the names wants more than a shape: rounds that read as one kind of record; a proof's
    # bulk time, dough temperature and hydration beside a starter's peak time, temperature and rise fit one to
    # one, 2.6 times apart in time, in rounds about bread read at 0.56)
    return pairs if _shaped_alike(pairs, stats, TEXT_SAME) else None


def _of_one_size(pairs: Mapping[str, str], stats: Mapping[str, FieldStats]) -> bool:
    """Every pair's typical values at most CONTRAST_SIZE apart (in one unit); False when a size is unknown."""
    gaps = [_size_gap(stats[a], stats[b]) for a, b in pairs.items()]
    return bool(gaps) and None not in gaps and max(gaps) <= np.log(CONTRAST_SIZE)


def _shaped_alike(pairs: Mapping[str, str], stats: Mapping[str, FieldStats], least: float = TEXT_ALIKE,
                  kin: Iterable[str] = ()) -> bool:
    """STRUCTURAL or more pairs, every field with a unit, of one size, keeping their orders, in rounds that read
    alike (mean text cosine `least`): one kind of record by its shape alone. A field and its own second sense
    (`kin`, paired by name) need no unit: "frames~2" beside "Net." kg and "Moisture." % on a screen, "frames"
    beside "honey" kg and "h2o %" in the text."""
    kin = set(kin)
    return len(pairs) >= STRUCTURAL and all(stats[a].unit and stats[b].unit for a, b in pairs.items() if a not in kin) \
        and _of_one_size(pairs, stats) and _keeps_order(pairs, stats) and _read_alike(pairs, stats, least)


def _units_apart(pairs: Mapping[str, str], stats: Mapping[str, FieldStats]) -> bool:
    """STRUCTURAL or more pairs, each side's fields every one in a unit of its own (no two in one unit), of one
    size and keeping their orders: a water change told in text ("34.1l removed, 44% pct, 10 ML cond") and on
    an app's screen ("Volume changed (l) | Share changed (percent) | Dechlor (mL)") pair L to L, % to % and mL
    to mL with no choice left, whatever the rounds' words; fields sharing a unit (a receipt's total and tax)
    could pair by chance and need their rounds to read alike."""
    if len(pairs) < STRUCTURAL or not all(stats[a].unit and stats[b].unit for a, b in pairs.items()):
        return False
    mine, theirs = [stats[a].unit for a in pairs], [stats[b].unit for b in pairs.values()]
    return len(set(mine)) == len(mine) and len(set(theirs)) == len(theirs) \
        and _of_one_size(pairs, stats) and _keeps_order(pairs, stats)


def _twin_shape(pairs: Mapping[str, str], stats: Mapping[str, FieldStats]) -> bool:
    """Two pairs, each of one size, keeping their order, in rounds that read as one kind of record
    (SPLIT_ALIKE): a second screen's "Puzzles. | Tactics rating." beside "solved | puzzle rating", 0.77,
    where a blitz log's "games | blitz rating", closer in name, reads 0.48. Quantities with units pair by
    their units too, so less likeness will do (TEXT_SAME: a meter's "Index" m³ and "Usage" m³ beside the
    text's "meter" m³ and "consumption" L, 0.68)."""
    units = all(stats[a].unit and stats[b].unit for a, b in pairs.items())
    return len(pairs) == 2 and _of_one_size(pairs, stats) and _keeps_order(pairs, stats) \
        and _read_alike(pairs, stats, TEXT_SAME if units else SPLIT_ALIKE)


def plan_merges(stats: Mapping[str, FieldStats], similar: Similarity | None = None,
                keep: frozenset[str] = frozenset()) -> list[Merge]:
    """The merges late re-alignment would make (pure): for each two groups that are apart and pair
    one to one with one close pair, each pair's field with fewer rounds joins the other. `keep`:
    fields a person decided about (never moved). A field is moved at most once."""
    gs = groups(stats)
    # every pairing found, by (smaller rest, larger rest): one kind of record may pair with two others (the
    # openings told in text with the puzzles and with the openings' photos), and support decides below
    found: dict[tuple[frozenset, frozenset], dict[str, str]] = {}
    anchored: set[tuple[frozenset, frozenset]] = set()
    for i, a in enumerate(gs):
        for b in gs[i + 1:]:
            shared = a & b  # fields both kinds print alike: evidence they are one kind, if the rest pairs
            ra, rb = a - shared, b - shared
            if not ra or not rb:
                continue
            small, large = (ra, rb) if (len(ra), sorted(ra)) <= (len(rb), sorted(rb)) else (rb, ra)
            # (one pair may be unlike in name: the shared field, or another pair close in name, vouches)
            # (a text beside both whose values recur, a hive's or a client's name, not a reference number)
            common_texts = {t for t in _texts_beside(a, stats) & _texts_beside(b, stats)
                            if stats[t].values and 2 * len(stats[t].values) <= stats[t].rounds}
            pairs = pairing(small, large, stats, similar, lenient=True, anchored=bool(shared),
                            anchors=len(shared) + len(common_texts))
            anchor = None if shared else text_anchor(small, large, stats)
            if pairs is None and anchor is not None:
                # no name vouches, but a text field of each holds the same values: the fit alone may pair
                pairs = pairing(small, large, stats, similar, by_fit=True)
            if pairs is None and anchor is None:
                senses = _senses_beside(small, large, stats, similar, len(shared) + len(common_texts))
                if senses is not None:
                    pairs, shared = senses, shared | frozenset(x for x, y in senses.items() if _base(x) == _base(y))
            if pairs is None and anchor is None and not shared:
                pairs = _forced_despite_contrast(small, large, stats)
            if pairs is None or not _apart(pairs, stats):
                continue
            if anchor is not None and _read_alike(pairs, stats, ANCHOR_ALIKE):
                # (it vouches like a field in common, and is joined with the rest; names of things, a plant's or
                # a client's, come with records of several kinds, so the rounds must read alike too)
                shared = frozenset({anchor[0]})
            else:
                anchor = None
            kin = {x for x, y in pairs.items() if _base(x) == _base(y)}
            if kin and not shared and len(common_texts) < COMMON_TEXTS \
                    and all(_closeness(x, y, similar) < CLOSE for x, y in pairs.items() if x not in kin) \
                    and not _read_alike(pairs, stats, SPLIT_ALIKE):
                # "duration~2" was given its own field because its records are of another kind: its name
                # is no evidence for joining them back; another pair close in name, a shared field (or two
                # texts of recurring values beside both: a game's opponent and result), or rounds
                # that read as one stream (a second device's garden counts: 0.78; vocabulary beside writing
                # sessions: 0.63) are; or the one other field of each pairs beside them as beside two in common
                senses = _senses_beside(small, large, stats, similar, len(common_texts))
                if senses is not None:
                    pairs, shared = senses, shared | frozenset(kin)
                elif _shaped_alike(pairs, stats, kin=kin):
                    # or every field pairs with a unit and of one size, three or more, in rounds that read alike (a
                    # water change told in text, "changed" L / "pct" % / "conditioner" mL, and on an app's screen,
                    # "Vol." L / "Portion." % / "Cond." mL): a writing session and a vocabulary session share a
                    # duration and read alike too, but their counts have no unit to pair by
                    shared = shared | frozenset(kin)
                else:
                    continue
            by_shape = not shared and max(_closeness(x, y, similar) for x, y in pairs.items()) < CLOSE
            twin = by_shape and len(pairs) < STRUCTURAL and _twin_shape(pairs, stats)
            if by_shape and len(pairs) < STRUCTURAL and not twin:
                continue  # without a field in common, one pair must be close in name (or three pair)
            unlike = [x for x, y in pairs.items() if not _not_unlike(x, y, similar)]
            if (len(unlike) >= 2 and not (shared and all(stats[x].unit for x in unlike))) or by_shape:
                # paired by kind, unit and range alone: their rounds must read alike too (a till's photo and
                # the market-day text, 0.6; a shop receipt's total/tax/items and a payment's, 0.4-0.45)
                if not _read_alike(pairs, stats, TEXT_ALIKE) and not (by_shape and _units_apart(pairs, stats)):
                    continue
            liked = max((name_evidence(_base(x), _base(y))[0] for x, y in pairs.items() if x not in unlike),
                        default=0.0)
            if not shared and max(name_evidence(_base(x), _base(y))[0] for x, y in pairs.items()) < VOUCH \
                    and _both_own(pairs, stats):
                # each kind has a field of its own in most of its rounds that the other never shows, of
                # another kind than the other's ("line: Catalan" beside reps and study minutes; a score beside
                # puzzles solved and minutes): two kinds of record whose counts and minutes happen to fit
                continue
            if unlike and not shared and len(pairs) < STRUCTURAL and liked < VOUCH and not twin and not (
                    liked >= WORD_MORE_OR_LESS and _read_alike(pairs, stats, TEXT_SAME)):
                # a pair unlike in name needs another that is one name by its letters ("sm" / "soil moisture"),
                # not by the encoder ("session duration" / "minutes spent duration" share a unit word) nor a
                # word more or less ("temp" / "dough temp": two kinds of record both take temperatures),
                # unless every pair's rounds read as one kind of record (an invoice's photo beside its text)
                continue
            found[(small, large)] = dict(pairs, **({anchor[0]: anchor[1]} if anchor else {}))
            if anchor:
                anchored.add((small, large))
    merges: list[Merge] = []
    moved: set[str] = set()
    # a field two pairings would join to different partners ("credit" with a second till's "incoming"
    # and with a receipt's "total"): the better supported pairing (names and round texts) is taken, the
    # other left; two readings of one kind of record (overlapping groups) agree and are both taken
    # (a text field holding the same values beside both, the same openings by name, is support of its own)
    def support(key: tuple[frozenset, frozenset], pairs: Mapping[str, str]) -> float:
        return sum(_closeness(x, y, similar) + (stats[x].text_cosine(stats[y]) or 0.0)
                   for x, y in pairs.items()) / len(pairs) + (ANCHOR_SUPPORT if key in anchored else 0.0)
    partner: dict[str, str] = {}
    taken: list[tuple[frozenset, dict[str, str]]] = []
    for (small, _), pairs in sorted(found.items(), key=lambda kv: (-support(*kv), sorted(kv[0][0]), sorted(kv[0][1]))):
        if any(partner.get(x, y) != y or partner.get(y, x) != x for x, y in pairs.items()):
            continue
        for x, y in pairs.items():
            partner[x], partner[y] = y, x
        taken.append((small, pairs))
    for small, pairs in taken:
        for x, y in sorted(pairs.items()):
            src, dst = (x, y) if (stats[x].rounds, x) < (stats[y].rounds, y) else (y, x)
            if src in moved or dst in moved or src in keep or dst in keep:
                continue
            beside = ", ".join(f"{p} as {q}" for p, q in sorted(pairs.items()))
            merges.append(Merge(src, dst, {
                "reason": f"late re-alignment: records with {', '.join(sorted(small))} read as records with "
                          f"{', '.join(sorted(set(pairs.values())))} ({beside})",
                "name": round(_closeness(src, dst, similar), 3)}))
            moved.add(src)
    return merges


def _usual(name: str, stats: Mapping[str, FieldStats]) -> set[str]:
    """The number fields beside `name` in at least GROUP_SHARE of its rounds."""
    f = stats[name]
    return {c for c, n in f.companions.items() if n >= GROUP_SHARE * f.rounds and c in stats
            and stats[c].kind == "number"}


def plan_rejoins(stats: Mapping[str, FieldStats], keep: frozenset[str] = frozenset(),
                 taken: frozenset[str] = frozenset()) -> list[Merge]:
    """A field's second sense ("gs~2") given to a round or two as a record of another kind while the fields
    beside it were still apart ("Gs." beside "Ducks" before "Ducks" joined "dabblers"): it joins the one field
    of its name (the field itself or another of its senses) whose usual company holds every number beside
    it, that it fits and never meets (pure; `keep` and `taken` are never moved)."""
    out = []
    for name, f in sorted(stats.items()):
        if "~" not in name or f.kind != "number" or f.rounds > REJOIN_ROUNDS or name in keep | taken:
            continue
        mine = _usual(name, stats)
        if not mine:
            continue
        homes = [h for h in stats if h != name and _base(h) == _base(name) and stats[h].kind == "number"
                 and stats[h].rounds > f.rounds and h not in keep and mine <= _usual(h, stats)
                 and not f.companions.get(h) and not stats[h].companions.get(name) and _fit(f, stats[h])]
        if len(homes) == 1:
            out.append(Merge(name, homes[0], {
                "reason": f"late re-alignment: {name} was given to a record of another kind, but the fields beside "
                          f"it ({', '.join(sorted(mine))}) are those {homes[0]}'s records have", "name": 1.0}))
    return out


def plan_lone_joins(stats: Mapping[str, FieldStats], keep: frozenset[str] = frozenset(),
                    taken: frozenset[str] = frozenset()) -> list[Merge]:
    """A one-off record every label of which is new: STRUCTURAL or more number fields with units, each in one
    round, the same round (another app's screen, printed once: "usage. 25.3 kWh | register. 42535 kWh | peak
    load. 8.1 kW" beside an electricity log's "cons", "reading" and "peak"). When each fits exactly one field of
    one kind of record and of no other (kind, dimension, range), all different, and the round reads like that
    kind's rounds (TEXT_ALIKE), its fields join those (pure; `keep` and `taken` are never moved)."""
    lone = {n for n, f in stats.items() if f.kind == "number" and f.rounds == 1 and f.unit and n not in keep | taken}
    records = {frozenset({n} | {c for c in stats[n].companions if c in lone}) for n in lone}
    kinds = groups(stats)
    out = []
    for rec in sorted(records, key=sorted):
        if len(rec) < STRUCTURAL or any(set(stats[n].companions) & lone != rec - {n} for n in rec):
            continue
        found = []
        for g in kinds:
            places = {a: [b for b in g if _fit(stats[a], stats[b]) and b not in keep | taken] for a in rec}
            if all(len(p) == 1 for p in places.values()) and len({p[0] for p in places.values()}) == len(rec):
                found.append({a: p[0] for a, p in places.items()})
        if len(found) != 1 or not _read_alike(found[0], stats, TEXT_ALIKE):
            continue
        for a, b in sorted(found[0].items()):
            out.append(Merge(a, b, {
                "reason": f"late re-alignment: a one-off record ({', '.join(sorted(rec))}) fits one by one the "
                          f"fields of one kind of record ({', '.join(sorted(found[0].values()))})",
                "name": 0.0}))
    return out


def plan_anchored_lone_joins(stats: Mapping[str, FieldStats], similar: Similarity | None = None,
                             keep: frozenset[str] = frozenset(), taken: frozenset[str] = frozenset()) -> list[Merge]:
    """A record of a known kind printed once another way (pure): its round holds a field of a kind of record
    (an anchor, joined by name: "Hours" to the invoices' "hrs") beside labels seen in no other round
    ("Amount", "Bill to"). A new number fitting (kind, unit, range) exactly one place of that kind the round
    lacks, claimed by no other new number, joins it when their names are not unlike or a new text of the
    round holds only values of the text field beside that kind ("Harbor Cafe", a client the invoices name);
    such a text joins that field. A number fitting no place, or several, stays apart (a one-off beside a
    record). `keep` and `taken` are never moved."""
    lone = {n for n, f in stats.items() if f.rounds == 1 and n not in keep | taken}
    kinds = groups(stats)
    out: list[Merge] = []
    done: set[str] = set()
    for n in sorted(x for x in lone if stats[x].kind == "number"):
        if n in done:
            continue
        here = frozenset({n} | set(stats[n].companions))
        mine = [g for g in kinds if g & here and not g & lone]
        free = sorted({b for g in mine for b in g - here if b not in keep | taken})
        new_numbers = sorted(x for x in here if x in lone and stats[x].kind == "number")
        done |= set(new_numbers)
        places = {a: [b for b in free if _fit(stats[a], stats[b])] for a in new_numbers}
        claimed = [p[0] for p in places.values() if len(p) == 1]
        pairs = {a: p[0] for a, p in places.items() if len(p) == 1 and claimed.count(p[0]) == 1}
        if not pairs:
            continue
        beside = {t for g in mine for t in _texts_beside(g, stats)} - here
        texts = {x: t for x in sorted(here & lone) if stats[x].kind == "text" and stats[x].values
                 for t in sorted(beside) if stats[x].values <= stats[t].values and t not in keep | taken}
        anchors = ", ".join(sorted(here & frozenset().union(*mine)))
        joined = [Merge(a, b, {"reason": f"late re-alignment: {a}, printed once beside {anchors}, fills the place of "
                                         f"{b} the round lacks", "name": 0.0})
                  for a, b in sorted(pairs.items()) if texts or _not_unlike(a, b, similar)]
        out += joined + [Merge(x, t, {"reason": f"late re-alignment: {x}, printed once beside {anchors}, holds only "
                                                f"values of {t}", "name": 0.0}) for x, t in texts.items() if joined]
    return out


def _own(side: Iterable[str], other: Iterable[str], stats: Mapping[str, FieldStats]) -> set[str]:
    """Numbers and texts beside a field of `side` in at least half of its rounds, never beside `other`'s
    fields in more than TOGETHER of their rounds."""
    side, other = set(side), set(other)
    out = set()
    for f in side:
        for c, n in stats[f].companions.items():
            if c in side | other or c not in stats or stats[c].kind not in ("number", "text"):
                continue
            if n >= GROUP_SHARE * stats[f].rounds and all(
                    stats[c].companions.get(o, 0) <= TOGETHER * min(stats[o].rounds, stats[c].rounds) for o in other):
                out.add(c)
    return out


def _both_own(pairs: Mapping[str, str], stats: Mapping[str, FieldStats]) -> bool:
    """Both sides of a pairing have a field of their own (`_own`) and no two of those could be one
    quantity (`_fit`): each kind of record holds something the other cannot."""
    a, b = _own(pairs.keys(), pairs.values(), stats), _own(pairs.values(), pairs.keys(), stats)
    return bool(a) and bool(b) and not any(_fit(stats[x], stats[y]) for x in a for y in b)


def _kinds_without(field: str, by_round: Mapping[str, frozenset[str]]) -> Callable[[str], str]:
    """The kind of record of each number field but `field`: fields filled in one round are one kind,
    transitively (union-find over every round); returns field -> a representative of its kind."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x
    for fields in by_round.values():
        others = sorted(fields - {field})
        for x in others[1:]:
            parent[find(x)] = find(others[0])
    return find


def plan_splits(by_round: Mapping[str, frozenset[str]], keep: frozenset[str] = frozenset(),
                alike: Callable[[Sequence[str], Sequence[str]], float | None] | None = None,
                taken: frozenset[str] = frozenset()) -> list[Split]:
    """The splits late re-alignment would make (pure): a number field filled in rounds of kinds of record
    that never meet otherwise (writing sessions beside length and fixes, tutor sessions beside a fee:
    no round holds a fee and a length) is one field per kind, at least SPLIT_ROUNDS rounds each; the
    kind with the most rounds keeps the name, the others get senses ("duration~3"). Not when `alike`
    (mean text cosine of two sets of rounds) says the kinds' rounds read as one (SPLIT_ALIKE): one stream
    printed with other companions on a second device. `keep`: fields a person decided about; `taken`:
    names already used (an alias's or a field's), never given to a new sense."""
    rounds_of: dict[str, list[str]] = {}
    for r, fields in by_round.items():
        for f in fields:
            rounds_of.setdefault(f, []).append(r)
    out: list[Split] = []
    for f, rs in sorted(rounds_of.items()):
        base = f.split("~")[0]
        if f in keep or base in keep or len(rs) < 2 * SPLIT_ROUNDS:
            continue
        kind = _kinds_without(f, by_round)
        groups: dict[str, list[str]] = {}
        for r in rs:
            others = by_round[r] - {f}
            if others:
                groups.setdefault(kind(min(others)), []).append(r)
        big = sorted((sorted(g) for g in groups.values() if len(g) >= SPLIT_ROUNDS), key=lambda g: (-len(g), g))
        family = {x for x in rounds_of if x.split("~")[0] == base}
        for g in big[1:]:
            if len(family) >= MAX_SENSES:
                break
            likeness = alike(big[0], g) if alike is not None else None
            if likeness is not None and likeness >= SPLIT_ALIKE:
                continue
            n = 2
            while f"{base}~{n}" in family or f"{base}~{n}" in taken:
                n += 1
            sense = f"{base}~{n}"
            family.add(sense)
            beside = sorted({x for r in g for x in by_round[r]} - {f})
            usual = sorted({x for r in big[0] for x in by_round[r]} - {f})
            out.append(Split(f, sense, tuple(g), {
                "reason": f"late split: {f} in {len(g)} records beside {', '.join(beside[:4])}, a kind of record "
                          f"never seen with {', '.join(usual[:4])}", "sense_of": f,
                "text": None if likeness is None else round(likeness, 3)}))
    return out


def plan_item_splits(con, keep: frozenset[str], alike, taken: frozenset[str]) -> list[Split]:
    """`plan_splits` for the extractor's unlabelled texts (`item`, `item_2`): their kinds of record are those of
    the number fields beside them; other text fields are left alone (a printed label ties a text to its kind)."""
    numbers = fields_by_round(con)
    items = {r: frozenset(f for f in fs if _placeholder(f)) for r, fs in fields_by_round(con, "text").items()}
    by_round = {r: numbers.get(r, frozenset()) | items.get(r, frozenset()) for r in numbers.keys() | items.keys()}
    return [sp for sp in plan_splits(by_round, keep, alike, taken) if _placeholder(sp.field)]


def _names_taken(con) -> frozenset[str]:
    """Every raw label and field name the memory uses (a new sense never takes one)."""
    return frozenset(x for row in con.execute("SELECT raw_attribute, field FROM field_aliases").fetchall() for x in row)


def round_text_likeness(con) -> Callable[[Sequence[str], Sequence[str]], float | None]:
    """Cosine of the mean text embeddings of two sets of rounds (their event nodes); None without them."""
    vecs = {r: np.asarray(e, dtype=np.float64) for r, e in con.execute(
        "SELECT round_id, text_emb FROM nodes WHERE level = 'event' AND round_id IS NOT NULL "
        "AND text_emb IS NOT NULL").fetchall()}

    def alike(a: Sequence[str], b: Sequence[str]) -> float | None:
        va, vb = [vecs[r] for r in a if r in vecs], [vecs[r] for r in b if r in vecs]
        if not va or not vb:
            return None
        x, y = np.mean(va, axis=0), np.mean(vb, axis=0)
        d = float(np.linalg.norm(x) * np.linalg.norm(y))
        return float(x @ y / d) if d else None
    return alike


def encoder_similarity(encoder: TextEncoder | None, names: Sequence[str]) -> Similarity | None:
    """Cosine of two field names' words by the text encoder (one call for all names), or None."""
    if encoder is None or not names:
        return None
    names = list(dict.fromkeys(names))
    vecs = np.asarray(encoder.encode([" ".join(words_of(_base(n))) for n in names]), dtype=np.float64)
    norms = np.linalg.norm(vecs, axis=1, keepdims=True)
    vecs = vecs / np.where(norms == 0, 1, norms)
    index = {n: i for i, n in enumerate(names)}

    def similar(a: str, b: str) -> float:
        if a not in index or b not in index:
            return 0.0
        return float(vecs[index[a]] @ vecs[index[b]])

    return similar


def _join(con, stats: Mapping[str, FieldStats], encoder: TextEncoder | None, keep: frozenset[str]) -> list[Merge]:
    """Plan and apply the merges of `stats` (statistics recounted after any); returns them."""
    numbers = [n for n, f in stats.items() if f.kind == "number"]
    similar = encoder_similarity(encoder, numbers)
    merges = plan_merges(stats, similar, keep)
    merges += plan_text_joins(stats, keep, frozenset(x for m in merges for x in (m.source, m.target)))
    merges += plan_rejoins(stats, keep, frozenset(x for m in merges for x in (m.source, m.target)))
    merges += plan_lone_joins(stats, keep, frozenset(x for m in merges for x in (m.source, m.target)))
    merges += plan_anchored_lone_joins(stats, similar, keep,
                                       frozenset(x for m in merges for x in (m.source, m.target)))
    for m in merges:
        join_field(con, m.source, m.target, m.evidence, score=float(m.evidence.get("name", 0.0)))
    if merges:
        recompute_field_stats(con)
    return merges


def realign(store, config: Config, encoder: TextEncoder | None = None, llm: LLM | None = None) -> RealignReport:
    """Plan and apply late re-alignment on a built memory (in its own transaction): join fields, split a
    field two kinds of record share, join again what the split allows, recount their statistics and
    rebuild the analytic memory when anything changed. Does nothing when field alignment is off."""
    t0 = time.perf_counter()
    if not config.field_alignment:
        return RealignReport((), False, 0.0)
    from .analytic import rebuild

    with store.transaction() as con:
        stats = field_stats(con)
        keep = frozenset(f for (f,) in con.execute(
            "SELECT DISTINCT field FROM field_aliases WHERE decided_by = 'user' UNION "
            "SELECT DISTINCT raw_attribute FROM field_aliases WHERE decided_by = 'user'").fetchall())
        # joins first: a field two devices of one stream share ("air temp" beside "mallards, greylag" and
        # beside "Ducks, Gs.") is their anchor; then one field per kind of record that still never meets
        # (a label two kinds share from their first rounds); then the joins the split allows
        alike = round_text_likeness(con)
        # an unlabelled text ("item": named by its place in a log line) beside the numbers of two kinds of
        # record that never meet is two fields, before any join gives it a printed label's name (the openings'
        # names and the games' opponents both open their log lines)
        item_splits = plan_item_splits(con, keep, alike, _names_taken(con))
        for sp in item_splits:
            split_field(con, sp.field, sp.sense, sp.rounds, sp.evidence)
        if item_splits:
            recompute_field_stats(con)
            stats = field_stats(con)
        # a text label placed early on little evidence goes to the place whose values it holds; then the
        # fields it left may be joined as one (an "outcome" label into the unlabelled place of "win", "loss")
        moves = plan_label_moves(label_texts(con), stats, keep)
        _apply_moves(con, moves, stats)
        if moves:
            recompute_field_stats(con)
            stats = field_stats(con)
        merges = list(moves) + _join(con, stats, encoder, keep)
        splits = plan_splits(fields_by_round(con), keep, alike, _names_taken(con))
        for sp in splits:
            split_field(con, sp.field, sp.sense, sp.rounds, sp.evidence)
        splits = item_splits + splits
        if splits:
            recompute_field_stats(con)
            merges += _join(con, field_stats(con), encoder, keep)
        # a join changes the joined fields' company and ranges: what they now pair with is joined too
        # ("species~2" back into "species seen" lets a second device's "IND." pair with "total birds")
        for _ in range(JOIN_PASSES):
            more = _join(con, field_stats(con), encoder, keep) if merges else []
            if not more:
                break
            merges += more
        if merges or splits:
            rebuild(store, config, llm=llm)
    return RealignReport(tuple(merges), bool(merges or splits), round(time.perf_counter() - t0, 3), tuple(splits))
