"""Units: a spelling's canonical unit and dimension, and conversion between units of one dimension.

One vocabulary for the whole engine: the extractor's unit table (core.lexicon via
core.extract.normalize) for spellings and dimensions, and below the factors between canonical
units (SI prefixes, a few exact non-SI factors). Used by the planner (a unit the question names) and
by late re-alignment (two devices printing one quantity in mL and L).
"""
from __future__ import annotations

import re

# SI prefixes and a few exact non-SI factors between canonical units of one dimension
_PREFIX = {"k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "h": 1e2, "d": 1e-1, "c": 1e-2, "m": 1e-3, "µ": 1e-6,
           "u": 1e-6, "n": 1e-9}
_CROSS = {("mi", "km"): 1.609344, ("lb", "kg"): 0.45359237, ("oz", "g"): 28.349523125, ("ft", "m"): 0.3048,
          ("in", "cm"): 2.54, ("yd", "m"): 0.9144, ("st", "kg"): 6.35029318, ("gal", "L"): 3.785411784,
          ("qt", "L"): 0.946352946, ("fl oz", "mL"): 29.5735295625, ("min/mi", "min/km"): 1 / 1.609344,
          ("mph", "km/h"): 1.609344, ("m/s", "km/h"): 3.6, ("psi", "kPa"): 6.894757, ("bar", "kPa"): 100.0,
          ("mmHg", "kPa"): 0.133322, ("kcal", "kJ"): 4.184, ("cal", "J"): 4.184,
          ("m³", "L"): 1000.0, ("cm³", "mL"): 1.0, ("ft³", "L"): 28.316846592, ("m²", "cm²"): 1e4,
          ("ft²", "m²"): 0.09290304,
          # parts per million of water by mass: a milligram per litre (test kits print either)
          ("ppm", "mg/L"): 1.0, ("ppb", "µg/L"): 1.0}
_UNIT_SPELLINGS = {"kilometres": "km", "kilometers": "km", "kilometre": "km", "kilometer": "km",
                   "percent": "%", "percentage": "%", "beats": "bpm", "hrs": "h"}


def unit_info(unit: str | None):
    """(canonical unit, dimension, factor to the canonical unit) of a unit spelling, or None."""
    if not unit:
        return None
    from .extract.normalize import parse_unit  # the extractor's unit table: one vocabulary (imported late: it imports the lexicon)

    u = unit.strip()
    u = _UNIT_SPELLINGS.get(u.lower(), u)
    info = parse_unit(u)
    if info is None and u.lower().endswith("s") and len(u) > 2:
        info = parse_unit(u[:-1])
    return info


# a symbol of two units of different dimensions: "m" is metres beside "km", minutes beside "1 h 20 min"
_OTHER_READING = {"m": "min"}


def read_beside(unit: str | None, others) -> str | None:
    """What `unit` means among the units `others` of the same field: its other reading ("m" as minutes)
    when another of them has that reading's dimension and none has its own, a count rate written by its
    count's initial as the one rate of that initial beside it ("bps" as "bubbles/s"); otherwise `unit`."""
    alt = _OTHER_READING.get(unit or "")
    if alt is None:
        return _count_named(unit, others)
    dims = {unit_dimension(u) for u in others if u and u != unit}
    return alt if unit_dimension(alt) in dims and unit_dimension(unit) not in dims else unit


_TIME_INITIAL = {"s": "s", "m": "min", "h": "h"}


def _count_named(unit: str | None, others) -> str | None:
    """A count rate known by its count's initial ("bps") beside the one count rate of that initial and time
    in `others` ("bubbles/s"): that rate; otherwise `unit` itself."""
    m = re.fullmatch(r"([a-z])p([smh])", unit or "")
    if m is None or unit_dimension(unit) != "count_per_duration":
        return unit
    per = _TIME_INITIAL[m[2]]
    named = {u for u in others if u and u != unit and re.fullmatch(rf"{m[1]}[a-z]+/{per}", u)}
    return named.pop() if len(named) == 1 else unit


def unit_dimension(unit: str | None) -> str | None:
    info = unit_info(unit)
    return info.dimension if info else None


def _split_prefix(unit: str) -> list[tuple[float, str]]:
    out = [(1.0, unit)]
    # (a prefix of a squared or cubed unit is squared or cubed too: "cm³" is no 0.01 m³; their factors
    # are listed whole)
    if len(unit) > 1 and unit[0] in _PREFIX and not any(ch in unit for ch in "²³"):
        out.append((_PREFIX[unit[0]], unit[1:]))
    return out


def _canon_factor(a: str, b: str) -> float | None:
    """How many b one a is, for canonical units of one dimension (km -> m: 1000; mi -> km: 1.609)."""
    if a == b:
        return 1.0
    for fa, ba in _split_prefix(a):
        for fb, bb in _split_prefix(b):
            if ba == bb and not (fa == 1.0 and fb == 1.0):
                return fa / fb
    for (x, y), k in _CROSS.items():
        for fa, ba in _split_prefix(a):
            for fb, bb in _split_prefix(b):
                for fx, bx in _split_prefix(x):
                    for fy, by in _split_prefix(y):
                        if (ba, bb) == (bx, by):
                            return fa / fx * k * fy / fb
                        if (ba, bb) == (by, bx):
                            return fa / fy / k * fx / fb
    return None


def convert(value: float, from_unit: str | None, to_unit: str | None) -> float | None:
    """`value` in from_unit expressed in to_unit (7 hours -> 420 min, 5 mi -> 8.05 km); None when
    the units are of different dimensions or unknown."""
    a, b = unit_info(from_unit), unit_info(to_unit)
    if a is None or b is None or a.dimension != b.dimension:
        return None
    canon = value * a.factor  # in a's canonical unit
    if a.unit != b.unit:
        k = _canon_factor(a.unit, b.unit)
        if k is None:
            return None
        canon *= k
    return canon / b.factor
