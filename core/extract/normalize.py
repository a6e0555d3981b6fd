"""Attribute-name and unit normalization.

The same quantity named the same way in different rounds must become one
attribute (DESIGN.md "Extraction"), so every label goes through
`normalize_attribute`: lower snake_case, units split off ("Sleep Time (hrs)"
-> sleep_time + h), stop words dropped, a small table of abbreviations and
synonyms applied ("resting HR" -> resting_heart_rate, "avg glucose" ->
average_glucose). The tables are deliberately small and general: they hold
abbreviations and spelling variants, never the names of one data set.

Units: `parse_unit` maps a unit spelling to (canonical unit, dimension,
factor). Durations have one canonical unit, minutes ("7h 12m" -> 432 min);
every other unit keeps its own canonical spelling without conversion (8.2 km
stays km, 5 mi stays mi) so values stay source-faithful.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

DURATION_UNIT = "min"

# abbreviation / spelling variant -> words (applied word by word)
_WORD_MAP: dict[str, str] = {
    "avg": "average", "ave": "average", "mean": "average",
    "hr": "heart rate", "hrv": "heart rate variability", "rhr": "resting heart rate",
    "bp": "blood pressure", "temp": "temperature", "wt": "weight",
    "dist": "distance", "cals": "calories", "cal": "calories", "kcal": "calories", "kcals": "calories",
    "calorie": "calories", "approx": "", "est": "estimated", "max": "max", "min": "min",
    "maximum": "max", "minimum": "min", "bg": "blood glucose", "spo2": "spo2", "o2": "oxygen",
    "pct": "percent", "no": "number", "num": "number", "qty": "quantity", "vol": "volume",
    "elev": "elevation", "dur": "duration", "hrs": "hours", "mins": "minutes", "secs": "seconds",
    "cv": "variability", "steps": "steps", "step": "steps", "kms": "km", "sys": "systolic", "dia": "diastolic",
    "bpm": "heart rate", "wake": "wake", "woke": "wake", "slept": "sleep", "sleeping": "sleep",
    "ran": "run", "running": "run", "runs": "run", "walked": "walk", "walking": "walk",
    "cycled": "cycle", "cycling": "cycle", "biked": "bike", "biking": "bike", "rode": "ride",
    "riding": "ride", "swam": "swim", "swimming": "swim", "hiked": "hike", "hiking": "hike",
    "rowed": "row", "rowing": "row", "meditated": "meditation", "meditating": "meditation",
    "spent": "spending", "weighed": "weight", "weigh": "weight", "weighs": "weight",
    "burned": "burned", "burnt": "burned", "colour": "color", "colours": "color", "colors": "color",
}

# whole normalized phrase -> canonical phrase (after the word map)
_PHRASE_MAP: dict[str, str] = {
    "resting heart rate": "resting_heart_rate",
    "heart rate resting": "resting_heart_rate",
    "heart rate": "heart_rate",
    "pulse": "heart_rate",
    "blood glucose": "glucose",
    "blood sugar": "glucose",
    "sugar": "glucose",
    "number steps": "steps",
    "steps count": "steps",
    "steps taken": "steps",
    "daily steps": "steps",
    "calories burned": "calories_burned",
    "burned calories": "calories_burned",
    "active calories": "active_calories",
    "calories intake": "calories_intake",
    "calories eaten": "calories_intake",
    "body weight": "weight",
    "body temperature": "temperature",
    "oxygen saturation": "spo2",
    "blood oxygen": "spo2",
    "bedtime": "bedtime",
    "bed time": "bedtime",
    "bed": "bedtime",
    "wake up time": "wake_time",
    "wake up": "wake_time",
    "wake": "wake_time",
    "woke up": "wake_time",
    "time asleep": "sleep time",
    "asleep": "sleep",
}
# single words that name a sleep stage when their value is a duration ("Deep: 1h 10m", "(deep 92 min)")
_DURATION_PHRASES = {"deep": "deep sleep", "rem": "rem sleep", "light": "light sleep", "core": "core sleep"}

_STOP = {
    "a", "an", "the", "my", "our", "your", "his", "her", "their", "its", "this", "that", "these",
    "those", "today", "todays", "today's", "yesterday", "yesterdays", "yesterday's", "tonight",
    "last", "night", "nights", "of", "for", "in", "on", "at", "to", "was", "is", "were", "are",
    "be", "been", "i", "we", "me", "and", "with", "per", "about", "around", "approx",
    "approximately", "roughly", "nearly", "almost", "just", "only", "total", "got", "get",
    "had", "have", "has", "did", "do", "reading", "readings", "current", "currently", "so", "far",
    "up", "app", "dashboard", "tracker", "screenshot", "log", "summary", "report", "according",
}
# "up" is kept inside "wake up" by matching phrases before stop-word removal.
_KEEP_PHRASES = ("wake up", "woke up", "time in range", "warm up", "cool down", "set up")

# words that name a duration dimension: dropped/replaced when the value is a duration
DURATION_WORDS = {"time", "duration", "length", "hours", "minutes", "seconds", "hour", "minute"}


@dataclass(frozen=True)
class UnitInfo:
    unit: str  # canonical spelling
    dimension: str  # duration, distance, mass, energy, rate, percent, currency, count, ...
    factor: float = 1.0  # multiply the number by this to express it in `unit`


_UNITS: dict[str, UnitInfo] = {}


def _add(names: str, unit: str, dim: str, factor: float = 1.0) -> None:
    for n in names.split():
        _UNITS[n] = UnitInfo(unit, dim, factor)


_add("s sec secs second seconds", DURATION_UNIT, "duration", 1 / 60)
_add("min mins minute minutes", DURATION_UNIT, "duration", 1.0)
_add("h hr hrs hour hours", DURATION_UNIT, "duration", 60.0)
_add("km kms kilometer kilometers kilometre kilometres", "km", "distance")
_add("mi mile miles", "mi", "distance")
_add("m meter meters metre metres", "m", "distance")
_add("ft feet foot", "ft", "distance")
_add("yd yds yard yards", "yd", "distance")
_add("kg kgs kilogram kilograms kilo kilos", "kg", "mass")
_add("lb lbs pound pounds", "lb", "mass")
_add("g gram grams", "g", "mass")
_add("oz ounce ounces", "oz", "mass")
_add("kcal kcals cal cals calorie calories", "kcal", "energy")
_add("kj", "kJ", "energy")
_add("bpm", "bpm", "heart_rate")
_add("ms", "ms", "duration_ms")
_add("mg/dl", "mg/dL", "concentration")
_add("mmol/l", "mmol/L", "concentration")
_add("mmhg", "mmHg", "pressure")
_add("% percent pct", "%", "percent")
_add("°c ºc celsius", "°C", "temperature")
_add("°f ºf fahrenheit", "°F", "temperature")
_add("degrees deg", "°", "temperature")
_add("km/h kph", "km/h", "speed")
_add("mph", "mph", "speed")
_add("min/km /km", "min/km", "pace")
_add("min/mi /mi", "min/mi", "pace")
_add("ml", "mL", "volume")
_add("l liter liters litre litres", "L", "volume")
_add("steps step", "steps", "count")
_add("reps rep", "reps", "count")
_add("sets", "sets", "count")
_add("laps lap", "laps", "count")
_add("floors", "floors", "count")
_add("cups cup", "cups", "count")
_add("glasses", "glasses", "count")
_add("servings serving", "servings", "count")
_add("pages", "pages", "count")
_add("pts points", "points", "count")
_add("rpm", "rpm", "rate")
_add("w watts", "W", "power")
_add("$ usd dollars dollar bucks", "$", "currency")
_add("€ eur euros euro", "€", "currency")
_add("£ gbp pounds_sterling", "£", "currency")
_add("¥ jpy yen", "¥", "currency")
_add("mg", "mg", "mass")
_add("iu", "IU", "dose")
_add("units", "units", "dose")
_add("x", "x", "ratio")

# units that name the quantity by themselves (a number with one of these is a record even without a label)
STRONG_UNITS = {
    "min", "km", "mi", "kg", "lb", "kcal", "kJ", "bpm", "mg/dL", "mmol/L", "mmHg", "°C", "°F",
    "km/h", "mph", "min/km", "min/mi", "steps", "reps", "laps", "$", "€", "£", "mL", "L", "ms", "points",
}

# the attribute a strong unit implies when no label is present
UNIT_DEFAULT_ATTRIBUTE = {
    "kcal": "calories", "kJ": "energy", "bpm": "heart_rate", "mg/dL": "glucose", "mmol/L": "glucose",
    "mmHg": "blood_pressure", "°C": "temperature", "°F": "temperature", "steps": "steps",
    "reps": "reps", "laps": "laps", "km/h": "speed", "mph": "speed", "min/km": "pace",
    "min/mi": "pace", "kg": "weight", "lb": "weight", "km": "distance", "mi": "distance",
    "min": "duration", "$": "amount", "€": "amount", "£": "amount", "mL": "volume", "L": "volume",
    "ms": "heart_rate_variability", "points": "points",
}


def parse_unit(raw: str | None) -> UnitInfo | None:
    """Canonical unit for a spelling ("hrs" -> min x60, "Km" -> km); None when unknown."""
    if not raw:
        return None
    key = raw.strip().lower().rstrip(".")
    key = re.sub(r"\s+", "", key) if "/" in key else key
    return _UNITS.get(key)


# unit words that may end a label ("Weight kg"); ambiguous abbreviations (hr, m, s, g, cal) are not among them
_LABEL_TAIL_UNITS = {"km", "kg", "kgs", "lb", "lbs", "kcal", "bpm", "%", "mg/dl", "mmol/l", "mmhg", "mi",
                     "miles", "ml", "mph", "km/h", "°c", "°f", "usd", "$"}
_LABEL_DURATION_UNITS = {"hours", "hrs", "minutes", "mins", "seconds", "secs"}
_PAREN_UNIT = re.compile(r"\(([^)]*)\)|\[([^\]]*)\]")
_SNAKE_SPLIT = re.compile(r"[^a-z0-9%_]+")


def split_label_unit(label: str) -> tuple[str, UnitInfo | None]:
    """Split a unit off a label: "Sleep Time (hrs)" -> ("Sleep Time", h), "Distance km" -> ("Distance", km)."""
    unit = None
    m = _PAREN_UNIT.search(label)
    if m:
        inner = (m.group(1) or m.group(2) or "").strip()
        unit = parse_unit(inner)
        label = (label[: m.start()] + label[m.end():]).strip()
    words = label.split()
    # a trailing unit word ("Weight kg", "Distance, km"), never the only word
    if unit is None and len(words) > 1:
        last = words[-1].strip(",:").lower()
        tail = parse_unit(last)
        if last in _LABEL_DURATION_UNITS:
            unit = tail  # "Sleep hours": the word names the unit and stays in the name
        elif tail is not None and last in _LABEL_TAIL_UNITS:
            unit = tail
            label = " ".join(words[:-1])
    return label.strip(" ,:-"), unit


def _words(label: str) -> list[str]:
    text = label.lower().replace("’", "'").replace("'s ", " ").replace("-", " ")
    for phrase in _KEEP_PHRASES:
        text = text.replace(phrase, phrase.replace(" ", "_"))
    return [w for w in _SNAKE_SPLIT.split(text) if w]


_SUBPHRASES = sorted((p for p in _PHRASE_MAP if " " in p), key=len, reverse=True)


def _apply_phrases(phrase: str) -> str:
    """Whole-phrase synonyms first; multi-word synonyms also inside longer labels ("avg blood sugar")."""
    if phrase in _PHRASE_MAP:
        return _PHRASE_MAP[phrase]
    for sub in _SUBPHRASES:
        phrase = re.sub(rf"(?<![a-z_]){re.escape(sub)}(?![a-z_])", _PHRASE_MAP[sub], phrase)
    return phrase


def normalize_attribute(label: str, *, value_kind: str = "number", dimension: str | None = None) -> str | None:
    """A label as an attribute name (lower snake_case), or None when nothing meaningful is left.

    `dimension` (from the value's unit) refines names: a duration value names
    its quantity "<x>_duration" ("Sleep Time (hrs)", "slept", "hours of sleep"
    -> sleep_duration) so the same quantity stated as a label, a verb or a
    phrase is one attribute.
    """
    label, _ = split_label_unit(label)
    words: list[str] = []
    for w in _words(label):
        if "_" in w:  # kept phrase
            words.extend(w.split("_"))
            continue
        if w in _STOP or w.isdigit():
            continue
        mapped = _WORD_MAP.get(w, w)
        words.extend(mapped.split())
    if not words:
        return None
    phrase = " ".join(words)
    phrase = _apply_phrases(phrase)
    if dimension == "duration" and phrase in _DURATION_PHRASES:
        phrase = _DURATION_PHRASES[phrase]
    words = phrase.replace("_", " ").split()
    if dimension == "duration" and value_kind == "number":
        if words and words[-1] in DURATION_WORDS and words != ["time"] and phrase != "time in range":
            words = words[:-1] + ["duration"]
        elif len(words) == 1 and words[0] not in {"duration", "pace", "split", "lap", "elapsed", "time"}:
            words = words + ["duration"]
        if words == ["time"]:
            words = ["duration"]
    name = "_".join(words)
    name = re.sub(r"_+", "_", name).strip("_")
    if not name or not re.match(r"[a-z]", name):
        return None
    return name[:60]


# ---------------------------------------------------------------------- text values
# First-person words: a text value that names the speaker ("I won") is stored as "me", the user.
FIRST_PERSON = frozenset({"i", "me", "myself", "mine", "i'm", "im"})
SELF_VALUE = "me"
# Inflections and everyday synonyms of common activity words -> one canonical form. Small and general
# (exercise vocabulary, British spellings); never the values of one data set.
_TEXT_CANON_GROUPS = {
    "run": "run runs ran running jog jogs jogged jogging",
    "ride": "ride rides rode riding ridden bike bikes biked biking cycle cycles cycled cycling bicycle",
    "walk": "walk walks walked walking",
    "hike": "hike hikes hiked hiking",
    "swim": "swim swims swam swimming",
    "row": "row rows rowed rowing",
    "win": "win wins won winning",
    "lose": "lose loses lost losing",
    "gray": "gray grey",
    "color": "color colour",
}
TEXT_CANON: dict[str, str] = {w: canon for canon, ws in _TEXT_CANON_GROUPS.items() for w in ws.split()}


def canonical_word(word: str) -> str:
    """One word's canonical form: 'Rode' -> 'ride', 'I' -> 'me', 'runs' -> 'run'; else lower case."""
    w = word.strip().lower().replace("’", "'")
    if w in FIRST_PERSON:
        return SELF_VALUE
    if w in TEXT_CANON:
        return TEXT_CANON[w]
    return w


def canonical_text(raw: str | None) -> str | None:
    """The normalized form of a short text value (Observation.text_value), or None for no value.

    First-person values name the user ("I" -> "me"); activity words are reduced
    to one form ("Bike"/"Ride"/"rode" -> "ride", "Ran" -> "run"); other values, and
    values of several words, keep their spelling (names, colours: "Sam", "red", "road bike").
    """
    if raw is None:
        return None
    s = " ".join(str(raw).split()).strip(" .,;:!")
    if not s:
        return None
    if " " not in s:
        low = s.lower().replace("\u2019", "'")
        if low in FIRST_PERSON or low in TEXT_CANON:
            return canonical_word(s)
    return s

WORD_MAP = _WORD_MAP  # public: the planner reads questions with the same abbreviations
