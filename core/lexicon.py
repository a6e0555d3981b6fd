"""The general vocabulary the engine reads: English grammar words and units, in one place.

Nothing here belongs to one domain (DESIGN.md "Extraction"): pronouns,
determiners, connectives, auxiliaries, prepositions, time and calendar words,
number words, the past forms of English irregular verbs, the words people use
for records themselves ("log", "entry"), identifier words ("No.", "ID",
"Ref"), and unit spellings with their dimensions (SI prefixes x base units,
common imperial units, currencies, percent). A word belongs here only when it
helps a history about anything (plants, invoices, chess, a sport nobody here
plays).

`load(path)` returns the built-in `Lexicon`, or the built-in one changed by a
JSON file (Config.lexicon):

    {"extend": {"irrealis_words": ["someday"], "units": {"furlong": ["furlong", "distance", 1]}},
     "replace": {"record_words": ["log", "journal"]}}

A top-level key that is neither "extend" nor "replace" is read as "extend".
Word-list keys take a list of strings; "irregular_verbs" takes an object
{past form: lemma}; "units" takes {spelling: [unit, dimension, factor]}.
A bad file raises `InputError` naming the file, the key and the fault.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, fields, replace
from functools import lru_cache
from types import MappingProxyType
from typing import Mapping

from core.errors import InputError


def _ws(s: str) -> frozenset[str]:
    return frozenset(s.split())


# --------------------------------------------------------------------------- grammar words

PRONOUNS = _ws("i you he she we they it me him us them that which who whom there here what i'm i've i'd "
               "it's that's we're you're they're he's she's we've they've you've")
FIRST_PERSON = _ws("i me myself mine i'm im i've i'd")
PLURAL_FIRST_PERSON = _ws("we us our ours we're we've")
DETERMINERS = _ws("my our your his her their the today's todays this yesterday's tonight's last its a an "
                  "another these those that")
POSSESSIVES = _ws("my our your his her their its")
# words that link a label to its value ("X was 5", "X: 5", "X came out at 5", "X averaged 5")
CONNECTIVES = _ws(": = - – ~ ≈ was is were are be been of at to about around approximately approx roughly "
                  "nearly almost over under just only averaged averaging hit reached measured read reads "
                  "came in stood sits sat stayed dropped rose went climbed fell a an the now still again "
                  "exactly like by from up down out totaled totalled logged recorded showed shows")
# connectives that do not by themselves tie a value to the words before it
WEAK_CONNECTIVES = _ws("a an the about around approximately approx roughly nearly almost over under just only "
                       "~ ≈ - – now still again exactly like by from up down out in to at went stayed sat")
AVERAGE_WORDS = _ws("averaged averaging average avg mean")
# words that end a label when read right to left (conjunctions, prepositions, auxiliaries, modals, ...)
BOUNDARY_WORDS = _ws(
    "and but or so then while because if when after before during with for on into than as since until per "
    "each every not no have had has got get did do does made make saw see took take need want think feel felt "
    "maybe probably also too very really all some many much more less can could will would should might must "
    "let's lets let is was are were be been about around like just only of at to in by from a an the my our "
    "your his her their this these those showing shows with out back off away home wow yes yeah oh hey hi ok "
    "okay against versus vs")
AUXILIARIES = _ws("be am is are was were been being have has had having do does did done will would shall "
                  "should can could may might must 'll 've 'd")
# light verbs: they do not name what was done ("did a 10 km hike", "got 7 hours of study", "took me 39 min")
LIGHT_VERBS = _ws("do does did done get gets got gotten have has had take takes took taken make makes made "
                  "go goes went gone give gave given keep kept come came be is was were are been")
# words of a clause that make its numbers plans, wishes or hypotheses, not records
IRREALIS_WORDS = _ws("will won't 'll shall going gonna tomorrow tomorrow's next need needs want wants wanna "
                     "plan plans planning hope hopes should would could might must let's lets remind if "
                     "maybe perhaps soon upcoming")
QUESTION_WORDS = _ws("is are was were do does did can could should would will shall how what why when which "
                     "who whom any isn't aren't wasn't don't doesn't")
HEDGES = _ws("about around approx approximately roughly nearly almost just only exactly some")
PREPOSITIONS = _ws("of for in on at to per with from by into over under between against versus vs via")
# time words date a record, they never name its quantity
TIME_WORDS = _ws("today tonight morning evening afternoon night nights yesterday week weekend month year now "
                 "earlier later ago recently daily weekly monthly nightly monday tuesday wednesday thursday "
                 "friday saturday sunday")
# calendar nouns: "4 years", "3 days" are not measured here (ages, spans of life)
CALENDAR_NOUNS = _ws("day days week weeks month months year years decade decades century centuries")
# comparatives after a value make it a change, not a reading ("27 percent higher than last month")
COMPARATIVES = _ws("higher lower more less fewer better worse bigger smaller larger longer shorter faster "
                   "slower up down above below greater")
# modifiers that say which statistic a label means ("average 141 mg/dL")
MODIFIERS = _ws("average avg mean max min maximum minimum peak lowest highest median")
# words about records themselves: a heading "Plant log:", "Daily summary" names no quantity
RECORD_WORDS = _ws("log logs entry entries record records summary report update notes note overview")
# words for the medium a record came through, not what it records ("a screenshot of the dashboard")
MEDIA_WORDS = _ws("screenshot screenshots screen screens photo photos picture pictures pic pics image images "
                  "snapshot snap capture dashboard app display readout printout")
# words for an occasion of recording anything ("today's session", "a quick check", "the latest update")
OCCASION_WORDS = _ws("session sessions check checks checkin update updates entry entries time times day days")
# prepositions of circumstance: a noun after them says when or where, not what ("before work", "at the office")
CIRCUMSTANCE_PREPOSITIONS = _ws("before after during until till since at in on from to by near around "
                                "outside inside behind between via through")
# verbs that say a value was written down, not what it measures ("121/79 mmHg noted", "5 logged")
REPORTING_VERBS = _ws("noted logged recorded measured tracked registered reported entered saved added read "
                      "checked written counted")
# identifier words: the number after them is a code, not a measure ("Order No. 4821", "Ref 5530", "ID 77")
IDENTIFIER_WORDS = _ws("no nr nº # id ids ref reference number num code serial")
# label words dropped by normalize_attribute (grammar only)
STOP_WORDS = _ws("a an the my our your his her their its this that these those today todays today's "
                 "yesterday yesterdays yesterday's tonight tonight's last night nights of for in on at to was "
                 "is were are be been i we me and with per about around approx approximately roughly nearly "
                 "almost just only got get had have has did do so far current currently according")
# words that name a duration dimension: "<x> time", "<x> hours" -> <x>_duration
DURATION_WORDS = _ws("time duration length hours minutes seconds hour minute")
# label words that make an h:mm value a duration rather than a time of day
DURATION_LABEL_WORDS = _ws("duration elapsed length total")
# --- words field alignment reads (core/align.py)
# Words that say how a value is measured, not what: the extractor names an unlabelled value by its
# unit's dimension ("dilut_volume" for "diluted in 2.7 L"), so a trailing one of these may be left
# out when two names are compared (weaker evidence then). Unit dimensions are general, not a domain.
MEASURE_WORDS = _ws(
    "value reading level amount volume mass weight duration time distance length temperature percent "
    "speed pace energy power pressure count total concentration illuminance frequency voltage area dose "
    "conductance efficiency consumption")

# Words that set two quantities apart when they are all that differs between two names ("my value" /
# "other value", "min temp" / "max temp", "start time" / "end time"): whose, which end, which extreme,
# which side. English grammar and general modifiers, no domain.
CONTRAST_WORDS = _ws(
    "my your his her their our its other another own first second third last next previous prior "
    "start end begin beginning final initial min max minimum maximum high low highest lowest peak top "
    "bottom upper lower before after pre post in out inner outer up down left right front back old new "
    "net gross morning evening day night am pm opening closing entry exit")

# contrast words on one side of their scale say the same of a quantity ("max power" is "peak power")
HIGH_WORDS = _ws("max maximum high highest peak top upper")
LOW_WORDS = _ws("min minimum low lowest bottom lower")
# ... and of a course of time ("start gravity" is "original gravity", not "final gravity")
START_WORDS = _ws("start starting begin beginning initial original opening entry")
END_WORDS = _ws("end ending final finishing closing exit")

# Names that say nothing about which quantity they are: what the extractor calls a value nobody
# labelled ("$12.50" -> amount), or a bare "total"/"value".
EMPTY_WORDS = _ws("amount value total count number level reading")

NUMBER_WORDS = MappingProxyType({w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty".split())})

# English irregular verbs, past (and participle) form = lemma. Grammar, not a domain: any history uses them.
_IRREGULAR = """
was=be were=be been=be had=have did=do done=do went=go gone=go got=get gotten=get made=make took=take
taken=take came=come saw=see seen=see knew=know known=know gave=give given=give found=find thought=think
told=tell became=become felt=feel brought=bring began=begin begun=begin kept=keep held=hold wrote=write
written=write stood=stand heard=hear meant=mean met=meet ran=run paid=pay sat=sit spoke=speak spoken=speak
led=lead grew=grow grown=grow lost=lose fell=fall fallen=fall sent=send built=build understood=understand
drew=draw drawn=draw broke=break broken=break spent=spend rose=rise risen=rise drove=drive driven=drive
bought=buy wore=wear worn=wear chose=choose chosen=choose sought=seek threw=throw thrown=throw caught=catch
dealt=deal won=win forgot=forget forgotten=forget sold=sell fought=fight taught=teach ate=eat eaten=eat
sang=sing sung=sing rode=ride ridden=ride swam=swim swum=swim drank=drink drunk=drink slept=sleep flew=fly
flown=fly shot=shoot hung=hang hid=hide hidden=hide bit=bite bitten=bite blew=blow blown=blow fed=feed
lit=light shook=shake shaken=shake stole=steal stolen=steal stuck=stick struck=strike swung=swing wept=weep
woke=wake woken=wake bore=bear borne=bear beaten=beat bent=bend bled=bleed bred=breed burnt=burn dug=dig
dreamt=dream froze=freeze frozen=freeze knelt=kneel laid=lay lent=lend leapt=leap mown=mow proven=prove
shone=shine shrank=shrink shrunk=shrink sank=sink sunk=sink slid=slide spun=spin sprang=spring sprung=spring
stung=sting swept=sweep swore=swear sworn=swear tore=tear torn=tear overcame=overcome underwent=undergo
withdrew=withdraw forgave=forgive forgiven=forgive froze=freeze sped=speed spelt=spell spilt=spill
"""
IRREGULAR_VERBS = MappingProxyType(dict(p.split("=") for p in _IRREGULAR.split()))
# verbs whose past form is their base form ("put", "cut", "hit", "set", "read", "cost")
SAME_PAST = _ws("put cut hit set let read cost quit shut hurt bet split spread beat cast")

# --------------------------------------------------------------------------- units

# (unit, dimension, factor to the canonical unit). Durations have one canonical unit, minutes; every other
# unit keeps its own canonical spelling (8.2 km stays km) so values stay source-faithful.
SI_PREFIXES = MappingProxyType({"k": "k", "M": "M", "G": "G", "m": "m", "c": "c", "d": "d", "µ": "µ", "u": "µ",
                                "n": "n"})
# base symbol -> (canonical symbol, dimension, prefixes allowed)
SI_BASE = MappingProxyType({
    "m": ("m", "distance", "kmcµun"), "g": ("g", "mass", "kmµu"), "L": ("L", "volume", "mcdµu"),
    "l": ("L", "volume", "mcd"), "W": ("W", "power", "kMGm"), "Wh": ("Wh", "energy", "kMG"),
    "J": ("J", "energy", "kM"), "Pa": ("Pa", "pressure", "kMh"), "V": ("V", "voltage", "km"),
    "A": ("A", "current", "mµ"), "Hz": ("Hz", "frequency", "kMG"), "S": ("S", "conductance", "mµ"),
    "mol": ("mol", "amount", "mµn"), "B": ("B", "data", "kMGT"), "cal": ("cal", "energy", "k"),
})
_UNIT_LINES = """
s sec secs second seconds = min duration 0.016666666666666666
min mins minute minutes = min duration 1
h hr hrs hour hours = min duration 60
ms msec millisecond milliseconds = ms duration_ms 1
kms kilometer kilometers kilometre kilometres = km distance 1
meter meters metre metres = m distance 1
centimeter centimeters centimetre centimetres = cm distance 1
millimeter millimeters millimetre millimetres = mm distance 1
mi mile miles = mi distance 1
ft feet foot = ft distance 1
yd yds yard yards = yd distance 1
inch inches = in distance 1
kgs kilogram kilograms kilo kilos = kg mass 1
gram grams gr grs = g mass 1
milligram milligrams = mg mass 1
lb lbs pound pounds = lb mass 1
oz ounce ounces = oz mass 1
st stone = st mass 1
ml milliliter milliliters millilitre millilitres = mL volume 1
liter liters litre litres ltr ltrs = L volume 1
gal gallon gallons = gal volume 1
m3 m³ = m³ volume 1
cm3 cm³ cc = cm³ volume 1
ft3 ft³ = ft³ volume 1
m2 m² = m² area 1
cm2 cm² = cm² area 1
sqft ft² = ft² area 1
qt quart quarts = qt volume 1
floz fl.oz = fl oz volume 1
kcal kcals calorie calories cals = kcal energy 1
kwh = kWh energy 1
kj = kJ energy 1
% percent pct percentage = % percent 1
ppm = ppm concentration 1
ppb = ppb concentration 1
°c ºc ℃ °℃ celsius degc C deg_c = °C temperature 1
°f ºf ℉ °℉ fahrenheit degf F deg_f = °F temperature 1
degrees deg ° = ° angle 1
km/h kph kmh = km/h speed 1
mph = mph speed 1
m/s = m/s speed 1
min/km /km = min/km pace 1
min/mi /mi = min/mi pace 1
bpm = bpm rate 1
rpm = rpm rate 1
mmhg = mmHg pressure 1
psi = psi pressure 1
bar = bar pressure 1
hpa = hPa pressure 1
mpg = mpg efficiency 1
l/100km = L/100km consumption 1
db = dB level 1
lux lx = lx illuminance 1
iu = IU dose 1
$ usd dollar dollars bucks = $ currency 1
€ eur euro euros = € currency 1
£ gbp = £ currency 1
¥ jpy yen = ¥ currency 1
₹ inr rupee rupees = ₹ currency 1
chf francs = CHF currency 1
cad = CAD currency 1
aud = AUD currency 1
sek = SEK currency 1
x = x ratio 1
"""


def _unit_table() -> dict[str, tuple[str, str, float]]:
    out: dict[str, tuple[str, str, float]] = {}
    for base, (canon, dim, prefixes) in SI_BASE.items():
        out.setdefault(base, (canon, dim, 1.0))
        for p in prefixes:
            out.setdefault(p + base, (SI_PREFIXES.get(p, p) + canon, dim, 1.0))
    for line in _UNIT_LINES.strip().splitlines():
        names, rhs = line.split(" = ")
        *unit, dim, factor = rhs.split()
        for n in names.split():
            out[n.replace("_", " ")] = (" ".join(unit), dim, float(factor))  # "deg_c" spells "deg c"
    return out


UNITS = MappingProxyType(_unit_table())
CURRENCY_SYMBOLS = "$€£¥₹"
# unit spellings that are also common words or letters: a number with one of them needs a label
WEAK_UNITS = _ws("x ° % st in a s m l b g S A V B J")
# dimensions whose values say what they measure only with a label ("82%", "3 degrees", "5x")
WEAK_DIMENSIONS = _ws("percent angle ratio level")


# --------------------------------------------------------------------------- the lexicon


@dataclass(frozen=True, eq=False)
class Lexicon:
    """Every word list the rule extractor and field alignment read. Hashable by identity (compiled patterns are cached per
    lexicon)."""

    pronouns: frozenset[str] = PRONOUNS
    first_person: frozenset[str] = FIRST_PERSON
    plural_first_person: frozenset[str] = PLURAL_FIRST_PERSON
    determiners: frozenset[str] = DETERMINERS
    possessives: frozenset[str] = POSSESSIVES
    connectives: frozenset[str] = CONNECTIVES
    weak_connectives: frozenset[str] = WEAK_CONNECTIVES
    average_words: frozenset[str] = AVERAGE_WORDS
    boundary_words: frozenset[str] = BOUNDARY_WORDS
    auxiliaries: frozenset[str] = AUXILIARIES
    light_verbs: frozenset[str] = LIGHT_VERBS
    irrealis_words: frozenset[str] = IRREALIS_WORDS
    question_words: frozenset[str] = QUESTION_WORDS
    hedges: frozenset[str] = HEDGES
    prepositions: frozenset[str] = PREPOSITIONS
    time_words: frozenset[str] = TIME_WORDS
    calendar_nouns: frozenset[str] = CALENDAR_NOUNS
    comparatives: frozenset[str] = COMPARATIVES
    modifiers: frozenset[str] = MODIFIERS
    record_words: frozenset[str] = RECORD_WORDS
    reporting_verbs: frozenset[str] = REPORTING_VERBS
    media_words: frozenset[str] = MEDIA_WORDS
    occasion_words: frozenset[str] = OCCASION_WORDS
    circumstance_prepositions: frozenset[str] = CIRCUMSTANCE_PREPOSITIONS
    identifier_words: frozenset[str] = IDENTIFIER_WORDS
    stop_words: frozenset[str] = STOP_WORDS
    duration_words: frozenset[str] = DURATION_WORDS
    duration_label_words: frozenset[str] = DURATION_LABEL_WORDS
    same_past: frozenset[str] = SAME_PAST
    weak_units: frozenset[str] = WEAK_UNITS
    weak_dimensions: frozenset[str] = WEAK_DIMENSIONS
    measure_words: frozenset[str] = MEASURE_WORDS
    contrast_words: frozenset[str] = CONTRAST_WORDS
    high_words: frozenset[str] = HIGH_WORDS
    low_words: frozenset[str] = LOW_WORDS
    start_words: frozenset[str] = START_WORDS
    end_words: frozenset[str] = END_WORDS
    empty_words: frozenset[str] = EMPTY_WORDS
    number_words: Mapping[str, int] = field(default_factory=lambda: NUMBER_WORDS)
    irregular_verbs: Mapping[str, str] = field(default_factory=lambda: IRREGULAR_VERBS)
    units: Mapping[str, tuple[str, str, float]] = field(default_factory=lambda: UNITS)
    source: str = ""  # the JSON file it was loaded from, "" = built-in

    # --- derived look-ups
    def lemma(self, word: str) -> str:
        """The lemma of a verb form: irregular table, else English -ed/-ing/-s morphology ('played' -> play)."""
        return lemma(word, self.irregular_verbs)

    def is_past(self, word: str) -> bool:
        """A past-tense (or past-participle) verb form: 'slept', 'played', 'put'."""
        w = word.lower()
        if w in self.irregular_verbs or w in self.same_past:
            return w not in ("been",)
        return len(w) > 4 and w.endswith("ed") and not w.endswith("eed")


def _vowel_groups(s: str) -> int:
    return len(re.findall(r"[aeiouy]+", s))


def first_and_consonant(short: str, long: str) -> bool:
    """Two letters that are a word's first letter and its only other consonant ("gs" for geese; not "gs" for
    gravel, whose consonants after the g are r, v, l): an abbreviation by spelling, for words of four
    letters or more."""
    return (len(short) == 2 and short.isalpha() and len(long) >= 4 and short[0] == long[0]
            and re.sub(r"[aeiouy]", "", long[1:]) == short[1])


# plurals made with "-es" after a hissing sound (boxes, batches, dishes, buzzes, glasses); "aches" is
# ache + s (headaches, caches)
_ES_PLURAL = re.compile(r"(?:ch|sh|x|zz|ss)es$")
# nouns whose singular is their plural
_SAME_IN_PLURAL = frozenset({"species", "series", "means", "news", "headquarters"})


def singular(word: str, min_len: int = 4) -> str:
    """English singular of a lower-case plural noun by regular morphology: 'boxes' -> box, 'batches'
    -> batch, 'entries' -> entry, 'plants' -> plant; 'glass', 'status', 'analysis' and words shorter
    than `min_len` are left as they are (a word that is no plural may lose a final s: 'gas' is kept
    only by the length)."""
    w = word
    if len(w) < min_len or not w.endswith("s") or w.endswith(("ss", "us", "is")) or w in _SAME_IN_PLURAL:
        return w
    if w.endswith("ies") and len(w) > 4 and w[-4] not in "aeiou":
        return w[:-3] + "y"
    if _ES_PLURAL.search(w) and not w.endswith("aches"):
        return w[:-2]
    return w[:-1]


def lemma(word: str, irregular: Mapping[str, str] = IRREGULAR_VERBS) -> str:
    """English verb lemma by the irregular table and regular morphology; other words lower-cased."""
    w = word.lower().replace("\u2019", "'")
    if w in irregular:
        return irregular[w]
    for suf in ("ied", "ed", "ing"):
        if suf == "ed" and w.endswith("eed"):
            continue  # "feed", "need", "speed" are base forms ("agreed" is left as it is)
        if w.endswith(suf) and len(w) > len(suf) + 1:
            stem = w[: -len(suf)]
            if suf == "ied":
                return stem + "y"
            if len(stem) >= 3 and stem[-1] == stem[-2] and stem[-1] not in "lsz":
                return stem[:-1]  # stopped -> stop, running -> run
            if (_vowel_groups(stem) == 1 and len(stem) >= 2 and stem[-1] not in "aeiouwxy"
                    and stem[-2] in "aeiou" and (len(stem) < 3 or stem[-3] not in "aeiou")):
                return stem + "e"  # biked -> bike, hiked -> hike, baking -> bake
            if suf == "ed" and stem.endswith(("at", "iz", "is", "ur", "v", "ag", "uc", "rg", "dg", "chang", "rang",
                                              "lleng", "ung")) and not stem.endswith("ee"):
                return stem + "e"  # created -> create, realized -> realize, moved -> move, changed -> change
            return stem
    return w


def agent_noun(lem: str) -> str:
    """The noun of who does a verb: win -> winner, ride -> rider, play -> player, score -> scorer."""
    w = lem.lower()
    if w.endswith("e"):
        return w + "r"
    if w.endswith("y") and len(w) > 2 and w[-2] not in "aeiou":
        return w[:-1] + "ier"
    if _vowel_groups(w) == 1 and len(w) >= 3 and w[-1] not in "aeiouwxy" and w[-2] in "aeiou" and w[-3] not in "aeiou":
        return w + w[-1] + "er"
    return w + "er"


BUILTIN = Lexicon()
_LIST_KEYS = {f.name for f in fields(Lexicon) if f.type in ("frozenset[str]",)}
_MAP_KEYS = {"number_words", "irregular_verbs", "units"}


def _bad(path: str, key: str, fault: str) -> InputError:
    return InputError(path, key, fault)


def _apply(lex: Lexicon, changes: object, mode: str, path: str) -> Lexicon:
    if not isinstance(changes, dict):
        raise _bad(path, mode, "expected an object of lexicon keys")
    upd: dict = {}
    for key, val in changes.items():
        where = f"{mode}.{key}" if mode else key
        if key in _LIST_KEYS:
            if not isinstance(val, list) or not all(isinstance(x, str) and x.strip() for x in val):
                raise _bad(path, where, "expected a list of non-empty strings")
            words = frozenset(x.strip().lower() if key not in ("weak_units",) else x.strip() for x in val)
            upd[key] = words if mode == "replace" else getattr(lex, key) | words
        elif key in _MAP_KEYS:
            if not isinstance(val, dict):
                raise _bad(path, where, "expected an object")
            new: dict = {}
            for k, v in val.items():
                if not isinstance(k, str) or not k.strip():
                    raise _bad(path, where, f"bad entry name {k!r}")
                if key == "units":
                    if (not isinstance(v, list) or len(v) != 3 or not isinstance(v[0], str) or not isinstance(v[1], str)
                            or isinstance(v[2], bool) or not isinstance(v[2], (int, float)) or v[2] <= 0):
                        raise _bad(path, f"{where}.{k}", "expected [unit, dimension, factor > 0]")
                    new[k.strip()] = (v[0], v[1], float(v[2]))
                elif key == "number_words":
                    if isinstance(v, bool) or not isinstance(v, int):
                        raise _bad(path, f"{where}.{k}", "expected an integer")
                    new[k.strip().lower()] = v
                else:
                    if not isinstance(v, str) or not v.strip():
                        raise _bad(path, f"{where}.{k}", "expected a lemma (a non-empty string)")
                    new[k.strip().lower()] = v.strip().lower()
            base = {} if mode == "replace" else dict(getattr(lex, key))
            base.update(new)
            upd[key] = MappingProxyType(base)
        else:
            known = ", ".join(sorted(_LIST_KEYS | _MAP_KEYS))
            raise _bad(path, where, f"unknown lexicon key (known: {known})")
    return replace(lex, **upd)


@lru_cache(maxsize=16)
def _load_cached(path: str, mtime: float) -> Lexicon:
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except OSError as e:
        raise _bad(path, "", f"cannot read lexicon file ({e.strerror or e})") from e
    except ValueError as e:
        raise _bad(path, "", f"not valid JSON ({e})") from e
    if not isinstance(data, dict):
        raise _bad(path, "$", "a lexicon file must be a JSON object")
    lex = BUILTIN
    rest = {k: v for k, v in data.items() if k not in ("extend", "replace")}
    if "replace" in data:
        lex = _apply(lex, data["replace"], "replace", path)
    if "extend" in data:
        lex = _apply(lex, data["extend"], "extend", path)
    if rest:
        lex = _apply(lex, rest, "", path)
    return replace(lex, source=path)


def load(path: str = "") -> Lexicon:
    """The built-in lexicon ("" ) or the built-in one extended/replaced by the JSON file at `path`."""
    if not path:
        return BUILTIN
    import os

    try:
        mtime = os.path.getmtime(path)
    except OSError as e:
        raise _bad(path, "", f"cannot read lexicon file ({e.strerror or e})") from e
    return _load_cached(path, mtime)


__all__ = ["Lexicon", "BUILTIN", "load", "lemma", "agent_noun"]
