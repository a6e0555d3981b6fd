"""Answer spans: what a question asks for, and the shortest piece of a sentence that gives it.

`frame(question)` reads the question's expected answer type from its wh-word
and cue words (who/name -> a name, where -> a place, how much + pay -> money,
what colour -> a colour word, when -> a date, how many -> a number, what/which
X -> a noun phrase like X, why -> a reason, what did ... advise -> a clause),
its head noun ("dish" in "which dish"), its content tokens, the key entities
it presupposes ("my sister's husband" -> [sister], [husband]) and the names it
mentions. `extract(f, sentence, ...)` returns the best typed `Span` of one
sentence (or None when the sentence holds nothing of the asked type);
`entity_support(f, unit_text, sentence, speaker, speakers)` says whether the
evidence mentions what the question takes for granted, the basis for refusing.

Everything here is rule-based and knows no subject matter: the word lists are
closed English classes (colours, currencies, function words, common verbs).
"""
from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Callable, Sequence

import numpy as np

from .dates import MONTHS, WEEKDAYS, fmt_day
from .scoring import STOPWORDS, stem, tokens

# ---------------------------------------------------------------- closed word classes

COLOURS = frozenset("""
red orange yellow green blue purple violet pink brown black white grey gray beige teal turquoise navy maroon
magenta cyan gold golden silver crimson scarlet lavender lilac olive mint cream ivory tan khaki burgundy indigo
coral peach amber emerald charcoal bronze copper rose aqua
""".split())
CONTAINERS = frozenset("""
bowl plate cup glass mug slice piece box bag basket stack pile pair jar bottle tray pot pan bunch handful set
couple lot bit kind type sort can pack packet carton loaf serving portion sheet row
""".split())
PLACE_HEADS = frozenset("""
city town country state place village island region province neighbourhood neighborhood area street road
restaurant cafe bar pub shop store market mall beach lake park trail mountain river hotel museum school
university college gym venue airport station church club bakery hospital clinic office campus destination
""".split())
LOC_PREPS = frozenset("on at in near under behind beside from inside outside by over into onto".split())
TYPE_WORDS = frozenset("name named call called colour color kind type sort brand flavour flavor model".split())
# words that say the asked type is money ("what did the plumber fee come to": a sum of money is the answer,
# whatever word the round uses, "cost", "was", "call-out")
MONEY_TYPE_WORDS = frozenset("price cost costs pay paid spend spent charge charged fee amount come came".split())
# words of what is computed over the records, not of what the records are: aggregates, superlatives,
# ordinals and comparatives ("my average X", "my highest X", "my first X") are no entity to look for
OPERATOR_WORDS = frozenset("""
average avg mean median total sum overall cumulative typical usual highest lowest largest smallest biggest
greatest maximum minimum max min most least top best worst longest shortest fastest slowest heaviest
lightest earliest latest last first recent previous final initial higher lower larger smaller bigger more
less fewer
""".split())
ADJ_SKIP = frozenset("new old first last favourite favorite best little big current latest previous other own "
                     "younger older elder eldest youngest".split())
AUX = frozenset("is are was were be been being am do does did done have has had will would can could should "
                "shall may might must".split())
PRONOUNS = frozenset("i me my mine we us our you your he him his she her it its they them their this that these "
                     "those there here who whom whose which what something anything everything someone anyone "
                     "everyone nothing i'm i've i'll i'd you're you've it's that's we're we've they're "
                     "they've he's she's there's what's let's".split())
PREPS = frozenset("at in on to from for by about after before into onto over under near during since until "
                  "through across around between behind beside without within against toward towards upon via "
                  "while because so but or and then than if when where as like".split())
TIME_WORDS = frozenset("today tonight yesterday tomorrow morning afternoon evening night day days week weeks "
                       "weekend month months year years minute minutes hour hours every each always often "
                       "usually sometimes never again later now ago soon last next recently".split())
# base forms of frequent verbs: a possessive noun chain stops at them ("my physio recommend")
VERBS = frozenset("""
recommend suggest advise say tell think know want need like love hate buy get make do go live work eat drink
have take give see saw meet visit move play watch read write call name use find feel keep start stop finish
try learn teach help show bring send pay cost spend sell own rent wear run ride walk swim cook bake paint
draw sing study plan decide choose pick order book join leave come return stay travel fly drive adopt
celebrate mention describe recommend prescribe diagnose remind ask answer look sound seem become grow
""".split())
SENTENCE_STARTERS = frozenset("""
met saw got had went bought made took found finally just also still then so well oh wow yes no yeah hey hi
hello thanks thank sure great nice good cool awesome congrats congratulations really actually back new
today tonight yesterday tomorrow this that these those there here what when where why how who which
lunch dinner breakfast round game
""".split())
TITLES = ("Dr", "Mr", "Mrs", "Ms", "Prof", "St", "Mt")
_MONEY_RE = re.compile(
    r"(?:[$€£¥]\s?\d[\d,]*(?:\.\d+)?(?:\s?(?:k|m|million|thousand))?"
    r"|\b\d[\d,]*(?:\.\d+)?\s?(?:k\s)?(?:dollars?|usd|euros?|eur|pounds?|gbp|bucks|cents?|yen|rupees?|francs?|"
    r"chf|cad|aud)\b)", re.IGNORECASE)
_NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
                 "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "fifteen": 15, "twenty": 20, "thirty": 30,
                 "forty": 40, "fifty": 50, "hundred": 100, "dozen": 12, "once": 1, "twice": 2}
_NUM_RE = re.compile(r"\b(?:\d[\d,]*(?:\.\d+)?|" + "|".join(_NUMBER_WORDS) + r")\b", re.IGNORECASE)
_MONTH_ALT = "|".join(sorted((m for m in MONTHS if len(m) > 2), key=len, reverse=True))
_DAY_MONTH_RE = re.compile(
    r"\b(?:(?P<m1>" + _MONTH_ALT + r")\.?\s+(?P<d1>\d{1,2})(?:st|nd|rd|th)?(?:,?\s+(?P<y1>\d{4}))?"
    r"|(?P<d2>\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<m2>" + _MONTH_ALT + r")\.?(?:,?\s+(?P<y2>\d{4}))?"
    r"|(?P<iso>\d{4}-\d{2}-\d{2}))\b", re.IGNORECASE)
_RELATIVE_RE = re.compile(
    r"\b(?P<rel>yesterday|tomorrow|tonight|today|this morning|last night|"
    r"(?:last|next|this)\s+(?:week(?:end)?|month|year|(?:" + "|".join(WEEKDAYS) + r"))|"
    r"(?:(?:a|one|two|three|a few|couple of)\s+(?:days?|weeks?|months?|years?)\s+ago)|"
    r"(?:on\s+)?(?:" + "|".join(WEEKDAYS) + r"))\b", re.IGNORECASE)
_SPEAKER_RE = re.compile(r"^\s*([A-Z][\w .'-]{0,38}|user|assistant|system):\s+(.*)$")
_SPLIT_RE = re.compile(r"(?<!\b(?:Dr|Mr|Ms|St|Mt|vs)\.)(?<!\bMrs\.)(?<!\bProf\.)(?<=[.!?])\s+(?=[\"'A-Z0-9])")
_CAP_TOKEN = r"(?:(?:Dr|Mr|Mrs|Ms|Prof|St|Mt)\.?\s+)?[A-Z][\w'’&-]*(?:\.[A-Z])*"


def _hs(word: str) -> str:
    t = toks(word)
    return t[0] if t else word


def toks(text: str, keep_stopwords: bool = False) -> list[str]:
    """tokens() with e-final stems merged ("prescribe" / "prescribed" -> "prescrib")."""
    return [t[:-1] if len(t) > 3 and t.endswith("e") else t for t in tokens(text, keep_stopwords=keep_stopwords)]


# ---------------------------------------------------------------- question frame

@dataclass(frozen=True)
class QuestionFrame:
    """What a question asks for and takes for granted."""

    question: str
    atype: str  # person|name|place|money|colour|date|number|quantity|thing|clause|reason|yesno|open
    head: str | None  # the noun the answer is an instance of ("dish", "lake"), if named
    qtokens: frozenset[str]  # stemmed content tokens (question words removed)
    entities: tuple[tuple[str, ...], ...]  # noun chains the evidence must mention (stemmed)
    names: tuple[str, ...]  # capitalized names in the question
    focus: str | None = None  # what the question is about in "what colour are the laces": "lace"
    circumstances: tuple[tuple[str, ...], ...] = ()  # possessive chains after a preposition ("on my hike")
    verb: str | None = None  # the main verb of "what did X <verb>" questions

    @property
    def support_tokens(self) -> frozenset[str]:
        """The content tokens evidence should share: without the asked type's own words ("city", "name")."""
        drop = set(toks(" ".join(TYPE_WORDS)))
        if self.atype == "money":
            drop |= set(toks(" ".join(MONEY_TYPE_WORDS)))
        if self.head and self.atype == "place":
            drop |= set(toks(self.head))
        return frozenset(self.qtokens - drop) or self.qtokens


_QWORDS = frozenset(toks("what which who whom whose when where why how did does do was were is are ever has "
                           "have had tell remember mention name kind type sort", keep_stopwords=True))


# words that tell how to answer ("Please", "Only return ..."), never names
_INSTRUCTION_WORDS = frozenset("please kindly only just simply return answer respond reply give provide use write "
                               "output format express state separate round infer inferring".split())


def _names(question: str) -> tuple[str, ...]:
    out = []
    for m in re.finditer(r"\b[A-Z][\w'-]*", question):
        w = re.sub(r"'s$|’s$", "", m.group())
        sentence_start = m.start() == 0 or re.search(r"[.?!]\s*$", question[:m.start()])
        if sentence_start or w in ("I", "I'm", "I've") or w.lower() in _QWORDS or w.lower() in STOPWORDS \
                or w.lower() in _INSTRUCTION_WORDS:
            continue
        if w.lower() in MONTHS or w.lower() in WEEKDAYS:
            continue
        out.append(w)
    return tuple(dict.fromkeys(out))


_SOFT_PREPS = frozenset("on in at during for from after before since until near over into".split())
# nouns about the conversation itself: "Lin's sweater shopping session" presupposes the shopping, not a word
# "session" in what was said
_DISCOURSE_NOUNS = frozenset("conversation conversations discussion discussions session sessions chat chats "
                             "dialogue dialogues dialog talk talks exchange".split())


def _entities(question: str, soft: bool = False) -> tuple[tuple[str, ...], ...]:
    """Noun chains after a possessive ("my new running shoes" -> (run, shoe)).

    soft=False: the chains the question is about (subject, object: "my cardiologist", "my sister's
    husband"); soft=True: circumstantial ones after a preposition ("on my hike", "for my calf")."""
    q = question.replace("’", "'")
    words = re.findall(r"[A-Za-z0-9-]+(?:'s)?|[?.,!]", q)
    chains: list[tuple[str, ...]] = []
    i = 0
    while i < len(words):
        w = words[i]
        low = w.lower()
        start = low in ("my", "your", "his", "her", "their", "our") or (low.endswith("'s") and i > 0)
        if not start:
            i += 1
            continue
        chain: list[str] = []
        j = i + 1
        while j < len(words) and len(chain) < 4:
            raw = words[j]
            x = raw.lower()
            bare = x[:-2] if x.endswith("'s") else x
            nxt = words[j + 1].lower() if j + 1 < len(words) else ""
            gerund = bare.endswith("ing") and re.match(r"[a-z]", nxt) and nxt not in STOPWORDS and nxt not in PREPS
            if (not re.match(r"[a-z0-9]", bare) or bare in STOPWORDS or bare in AUX or bare in PREPS or bare in TIME_WORDS
                    or bare in _QWORDS or (chain and not gerund and (bare in VERBS or stem(bare) in VERBS))
                    or (bare.endswith("ed") and len(bare) > 4) or bare in _DISCOURSE_NOUNS):
                break
            if bare not in ADJ_SKIP and bare not in TYPE_WORDS and bare not in OPERATOR_WORDS:
                chain.extend(toks(bare))
            if x.endswith("'s"):
                break  # "sister's husband": two chains
            j += 1
        is_soft = i > 0 and words[i - 1].lower() in _SOFT_PREPS
        last = words[j - 1].lower() if j - 1 > i else ""
        if len(chain) > 1 and last.endswith("ing") and toks(last) and chain[-1] == toks(last)[-1]:
            # "Lin's winter sweater shopping": the activity is what happened; the thing it was about is
            # what the evidence names ("sweater"), the activity word itself it need not say
            chain.pop()
        if chain and is_soft == soft:
            chains.append(tuple(chain))
        i = j if j > i + 1 else i + 1
    return tuple(dict.fromkeys(chains))


_SUBJ_PRON = frozenset("i you he she we they it".split())


def _main_verb(question: str) -> str | None:
    """The verb of "what did <subject> <verb> ...?" ("prescribe" in "What did my dentist prescribe?")."""
    m = re.search(r"\b(?:did|does|do|will|would|can|could|should|has|have|had|is|are|was|were)\s+(.*)",
                  question.replace("’", "'"), flags=re.IGNORECASE)
    if not m:
        return None
    ws = re.findall(r"[A-Za-z][\w'-]*", m.group(1))
    run: list[str] = []
    i = 0
    if ws and ws[0].lower() in _SUBJ_PRON:
        i = 1
    elif ws and ws[0].lower() in ("my", "your", "his", "her", "their", "our", "the", "a", "an", "this", "that"):
        i = 1
    while i < len(ws):
        w = ws[i].lower()
        if w in PREPS or w in PRONOUNS or w in STOPWORDS or w in AUX:
            break
        if w not in OPERATOR_WORDS:  # "my average odometer": no verb, an operator and a noun
            run.append(w)
        i += 1
    if not run:
        return None
    for w in run:
        if w in VERBS or stem(w) in VERBS:
            return w
    if ws and ws[0].lower() in _SUBJ_PRON:
        return run[0]
    return run[-1] if len(run) > 1 else None


def _head_after(low: str, pattern: str) -> str | None:
    m = re.search(pattern, low)
    if not m:
        return None
    for w in re.findall(r"[a-z][a-z-]*", low[m.end():]):
        if w in STOPWORDS or w in AUX or w in ADJ_SKIP:
            continue
        return w
    return None


def frame(question: str) -> QuestionFrame:
    """The answer type, head noun, content tokens, presupposed entities and names of a question."""
    q = " ".join(question.replace("’", "'").split())
    low = q.lower()
    head: str | None = None
    focus: str | None = None
    qt = frozenset(toks(q)) - _QWORDS
    atype = "open"
    # "which specific brand of ...", "what exact move": a word of precision before the head is not the head
    precise = r"(?:(?:specific|exact|particular|precise)\s+)?"
    m_which = re.search(r"\b(?:what|which)\s+" + precise + r"(?:kind|type|sort|brand|flavou?r|model)\s+of\s+([a-z-]+)",
                        low)
    m_head = re.search(r"\b(?:what|which)\s+" + precise + r"([a-z-]+)", low)
    if re.match(r"\s*(?:who|whom|whose)\b", low) or re.search(r"\bwith whom\b|\bwho\b", low):
        atype = "person"
    elif re.search(r"\bwhat\s+colou?rs?\b|\bwhich\s+colou?rs?\b|\bcolou?r\s+(?:is|are|was|were)\b", low):
        atype = "colour"
        focus = _head_after(low, r"\bcolou?rs?\s+(?:is|are|was|were|did|does)?\s*")
    elif re.search(r"\bhow much\b", low) and (
            re.search(r"\bhow much\s+(?:did|do|does|was|were|is|are|had|has|have|money|will|would)\b", low)
            or re.search(r"\b(?:pay|paid|cost|spend|spent|price|charge|fee)\b", low)):
        atype = "money"
    elif re.search(r"\b(?:price|cost|paid|fee)\b", low) and re.match(r"\s*what", low):
        atype = "money"
    elif re.match(r"\s*when\b", low) or re.search(r"\b(?:what|which)\s+(?:date|day|year|month)\b", low):
        atype = "date"
    elif re.search(r"\bhow many\b", low):
        atype = "number"
        head = _head_after(low, r"\bhow many\b")
    elif re.search(r"\bhow (?:long|far|old|big|tall|heavy|often|fast|much)\b", low):
        atype = "quantity"
    elif re.search(r"\bname\b|\bnamed?\b|\bcalled\b|\bcall\b", low) and re.match(r"\s*(?:what|which)", low):
        atype = "name"
        head = (_head_after(low, r"\bname of\b") or _head_after(low, r"\b(?:what|which)\s+(?:is|was|are|were)\b")
                or _head_after(low, r"\bdid\s+(?:i|we|you|he|she|they)\s+name\b"))
        if head in TYPE_WORDS:
            head = None
    elif re.match(r"\s*where\b", low) or (m_head and m_head.group(1) in PLACE_HEADS):
        atype = "place"
        head = m_head.group(1) if m_head and m_head.group(1) in PLACE_HEADS else None
    elif re.match(r"\s*why\b", low):
        atype = "reason"
    elif re.match(r"\s*(?:did|do|does|is|was|are|were|has|have|had|can|could|will|would|should)\b", low):
        atype = "yesno"
    elif m_which:
        atype, head = "thing", m_which.group(1)
        if re.search(r"\bflavou?r\b", low) and not re.search(r"\bflavou?r\s+of\b", low):
            head = "flavour"
    elif re.search(r"\bwhat\s+(?:did|does|do|has|have|had|will|would)\b.*\b(?:advise|advice|recommend|suggest|"
                   r"say|tell|told|do|think|plan|decide|want|ask|learn|realize|realise)\w*\b", low):
        atype = "clause"
    elif m_head and m_head.group(1) not in AUX and m_head.group(1) not in PRONOUNS and \
            m_head.group(1) not in STOPWORDS and not m_head.group(1).endswith("'s"):
        atype, head = "thing", m_head.group(1)
        if head in ("flavour", "flavor"):
            head = "flavour"
    if head is None and atype == "thing":
        atype = "open"
    verb = _main_verb(q)
    vt = toks(verb)[0] if verb and toks(verb) else None
    # the verb is not part of the entity the question presupposes ("my dentist prescribe")
    ents = tuple(c for c in (tuple(x for x in ch if x != (vt or "")) for ch in
                             ((tuple(toks(" ".join(ch))) for ch in _entities(q)))) if c)
    return QuestionFrame(q, atype, head, frozenset(toks(q)) - _QWORDS, ents, _names(q), focus,
                         _entities(q, soft=True), vt)


# ---------------------------------------------------------------- sentences

@dataclass(frozen=True)
class Sentence:
    text: str
    speaker: str | None  # "user", "assistant", a person's name, "image", "ocr" or None
    context: bool = False  # from the [before]/[after] window of a located event


def split_unit(text: str) -> list[Sentence]:
    """The sentences of an evidence unit's text, each with its speaker."""
    out: list[Sentence] = []
    for raw in (text or "").splitlines():
        line = raw.strip()
        ctx = False
        m = re.match(r"^\[(before|after|event)\]\s*", line)
        if m:
            ctx = m.group(1) != "event"
            line = line[m.end():]
        # a context window joins several turns on one line: split at "Speaker: "
        parts = re.split(r"\s+(?=(?:user|assistant|[A-Z][a-z]+):\s)", line) if ctx else [line]
        for part in parts:
            speaker = None
            if part.lower().startswith("text in image:"):
                speaker, part = "ocr", part[len("text in image:"):]
            elif part.lower().startswith("image:"):
                speaker, part = "image", part[len("image:"):]
            else:
                sm = _SPEAKER_RE.match(part)
                if sm:
                    speaker, part = sm.group(1).strip(), sm.group(2)
            part = re.sub(r"\s*\[names:[^\]]*\]\s*$", "", part)
            for s in _SPLIT_RE.split(part):
                s = s.strip()
                if len(s) > 2:
                    out.append(Sentence(s, speaker, ctx))
    return out


# ---------------------------------------------------------------- spans

@dataclass(frozen=True)
class Span:
    text: str
    kind: str
    start: int  # character offset in the sentence (-1 when derived, e.g. a resolved date)
    score: float = 0.0


def _word_spans(s: str) -> list[tuple[str, int, int]]:
    return [(m.group(), m.start(), m.end()) for m in re.finditer(r"[A-Za-z0-9][\w'’.-]*[\w]|[A-Za-z0-9]", s)]


def _is_starter(word: str) -> bool:
    w = word.lower().rstrip(".")
    return (w in STOPWORDS or w in SENTENCE_STARTERS or w in AUX or w in PRONOUNS or w in VERBS
            or stem(w) in VERBS or w.endswith(("ed", "ing", "ly")) or w in _NUMBER_WORDS)


def capitalized_phrases(s: str) -> list[Span]:
    """Runs of capitalized words ("Dr. Okafor", "Silver Lake", "University of Oregon"), minus a common
    sentence-initial word, "I", months and weekdays."""
    rx = re.compile(_CAP_TOKEN + r"(?:\s+(?:of|de|la|du|von|van|the)\s+" + _CAP_TOKEN + r"|\s+" + _CAP_TOKEN
                    + r"|\s+\d+[A-Za-z]*)*")
    out = []
    for m in rx.finditer(s):
        text, start = m.group(), m.start()
        first = text.split()[0]
        at_start = not s[:start].strip() or re.search(r"[.!?:;\"]\s*$", s[:start])
        variants = [(text, start, 0.0)]
        if at_start and first.rstrip(".") not in TITLES:
            rest = text[len(first):].strip()
            rest = re.sub(r"^(?:of|de|la|du|von|van|the)\s+", "", rest)
            if _is_starter(first):
                variants = []
            else:
                for v in variants:
                    variants = [(v[0], v[1], -0.3)]
            if rest:
                variants.append((rest, start + text.index(rest), 0.0))
        for text, st, pen in list(variants):
            # "View of Silver Lake": the part after "of" is a candidate too
            m2 = re.search(r"\s+(?:of|de|la|du|von|van|the)\s+", text)
            if m2:
                variants.append((text[m2.end():], st + m2.end(), pen))
        for text, st, pen in variants:
            text = re.sub(r"['’]s$", "", text).rstrip(".")
            words = text.split()
            if not words or all(w in ("I", "I'm", "I've", "I'll", "I'd") or w.lower() in MONTHS
                                or w.lower() in WEEKDAYS or w.lower() in ("image", "text") for w in words):
                continue
            if re.fullmatch(r"(?:I['’](?:m|ve|ll|d)|I)", words[0]):
                continue
            out.append(Span(text, "cap", st, pen))
    return out


def _resolve_date(s: str, ref: date | None) -> list[Span]:
    out = []
    for m in _DAY_MONTH_RE.finditer(s):
        try:
            if m.group("iso"):
                d = date.fromisoformat(m.group("iso"))
            else:
                mon = MONTHS[(m.group("m1") or m.group("m2")).lower().rstrip(".")]
                day = int(m.group("d1") or m.group("d2"))
                y = m.group("y1") or m.group("y2")
                if y:
                    d = date(int(y), mon, day)
                elif ref is not None:
                    # the occurrence nearest the mention: "on April 5" said in February is the coming one
                    cands = [date(ref.year + k, mon, day) for k in (-1, 0, 1)]
                    d = min(cands, key=lambda c: abs((c - ref).days))
                else:
                    continue
        except (ValueError, KeyError):
            continue
        out.append(Span(fmt_day(d), "date", m.start(), 1.0))
    if ref is None:
        return out
    for m in _RELATIVE_RE.finditer(s):
        rel = m.group("rel").lower().replace("on ", "")
        text = None
        if rel == "yesterday" or rel == "last night":
            text = fmt_day(ref - timedelta(days=1))
        elif rel == "tomorrow":
            text = fmt_day(ref + timedelta(days=1))
        elif rel in ("today", "tonight", "this morning"):
            text = fmt_day(ref)
        elif rel == "last year":
            text = str(ref.year - 1)
        elif rel == "next year":
            text = str(ref.year + 1)
        elif rel == "this year":
            text = str(ref.year)
        elif rel == "last month":
            pm = (ref.replace(day=1) - timedelta(days=1))
            text = f"{calendar.month_name[pm.month]} {pm.year}"
        elif rel == "next month":
            nm = (ref.replace(day=28) + timedelta(days=4)).replace(day=1)
            text = f"{calendar.month_name[nm.month]} {nm.year}"
        elif rel in ("last week", "last weekend"):
            text = f"the {rel.split()[1]} before {fmt_day(ref)}"
        elif rel in ("next week", "next weekend"):
            text = f"the {rel.split()[1]} after {fmt_day(ref)}"
        elif rel.endswith("ago"):
            n_word, unit = rel.split()[0:2] if not rel.startswith(("a few", "couple")) else ("3", rel.split()[2])
            n = 1 if n_word in ("a", "one") else _NUMBER_WORDS.get(n_word, None) or int(n_word)
            unit = unit.rstrip("s")
            days = {"day": 1, "week": 7, "month": 30, "year": 365}[unit] * n
            d = ref - timedelta(days=days)
            text = str(d.year) if unit == "year" else fmt_day(d)
        else:
            wd = rel.split()[-1]
            if wd in WEEKDAYS:
                delta = (ref.weekday() - WEEKDAYS[wd]) % 7
                if rel.startswith("next") or (not rel.startswith(("last", "this")) and False):
                    d = ref + timedelta(days=(WEEKDAYS[wd] - ref.weekday()) % 7 or 7)
                    text = f"{fmt_day(d)} (the {wd.capitalize()} after {fmt_day(ref)})"
                else:
                    d = ref - timedelta(days=delta or 7)
                    text = f"{fmt_day(d)} (the {wd.capitalize()} before {fmt_day(ref)})"
        if text:
            out.append(Span(text, "date", m.start(), 0.8))
    return out


# closed-class adverbs and degree words: never a thing's name ("really", "even", "maybe")
ADVERBS = frozenset("""
even really such here there maybe perhaps also pretty quite very just still already lately rather almost only
ever never always often sometimes usually soon again too enough instead anyway somewhat mostly nearly actually
probably definitely certainly especially totally completely simply truly clearly basically
""".split())


def _chunks(s: str, q: QuestionFrame) -> list[Span]:
    """Noun-phrase-like chunks: runs of words between function words, verbs-ish words and punctuation."""
    out = []
    words = _word_spans(s)
    cur: list[tuple[str, int, int]] = []

    def flush():
        while cur and (cur[0][0].lower() in CONTAINERS or cur[0][0].lower() in ADJ_SKIP - {"new"}
                       or cur[0][0].lower() in STOPWORDS):
            cur.pop(0)
        while cur and (cur[-1][0].lower().endswith(("ing", "ed")) and len(cur) > 1 or
                       cur[-1][0].lower() in STOPWORDS):
            cur.pop()
        if cur:
            out.append(Span(s[cur[0][1]:cur[-1][2]], "np", cur[0][1]))
        cur.clear()

    prev_end = 0
    for w, a, b in words:
        lw = w.lower().rstrip(".")
        gap = s[prev_end:a]
        if re.search(r"[,;:!?()\"]|\.\s", gap):
            flush()
        prev_end = b
        if lw == "of" and cur and cur[-1][0].lower() in CONTAINERS:
            cur.clear()  # "a bowl of X" -> X
            continue
        if (lw in PREPS or lw in AUX or lw in PRONOUNS or lw in TIME_WORDS or lw in ("with", "of", "not") or lw in ADVERBS
                or (len(lw) > 6 and lw.endswith("ly") and not lw.endswith(("ily", "fly", "lly")))  # "regularly"
                or lw in ("a", "an", "the", "some", "any") or (lw in STOPWORDS and lw not in ("new",))):
            flush()
            continue
        if lw in VERBS or stem(lw) in VERBS or (lw.endswith("ed") and len(lw) > 4 and not cur):
            flush()
            continue
        cur.append((w, a, b))
    flush()
    return out


def _trim_known(text: str, q: QuestionFrame, keep_head: bool) -> str:
    """Drop leading/trailing words the question already says (keep the head noun when asked)."""
    ws = text.split()
    def known(w):
        t = toks(w)
        return bool(t) and all(x in q.qtokens for x in t)
    while len(ws) > 1 and known(ws[0]):
        ws.pop(0)
    while len(ws) > 1 and known(ws[-1]) and not (keep_head and q.head and stem(ws[-1].lower()) == stem(q.head)):
        ws.pop()
    return " ".join(ws)


def _novel(text: str, q: QuestionFrame) -> float:
    t = toks(text)
    return (sum(1 for x in t if x not in q.qtokens) / len(t)) if t else 0.0


def _proximity(s: str, start: int, q: QuestionFrame) -> float:
    """1 near a word of the question, falling off with the distance in words."""
    words = _word_spans(s)
    pos = [i for i, (w, a, b) in enumerate(words) if any(t in q.qtokens for t in toks(w))]
    if not pos:
        return 0.0
    k = next((i for i, (w, a, b) in enumerate(words) if a >= start), len(words) - 1)
    d = min(abs(k - p) for p in pos)
    return 1.0 / (1.0 + 0.5 * d)


def typed_spans(q: QuestionFrame, s: str, ref: date | None = None,
                embed: Callable[[list[str]], np.ndarray] | None = None) -> list[Span]:
    """Every span of `s` of the asked type, scored (higher is better)."""
    t = q.atype
    cands: list[Span] = []
    if t == "money":
        for m in _MONEY_RE.finditer(s):
            cands.append(Span(m.group().strip(), "money", m.start(), 1.0 + _proximity(s, m.start(), q)))
    elif t == "colour":
        words = _word_spans(s)
        focus = stem(q.focus) if q.focus else None
        fpos = [i for i, (w, a, b) in enumerate(words) if focus and stem(w.lower()) == focus]
        for i, (w, a, b) in enumerate(words):
            if w.lower() in COLOURS:
                text = w.lower()
                if i + 2 < len(words) and words[i + 1][0].lower() in ("and", "-") and words[i + 2][0].lower() in COLOURS:
                    text = f"{text} and {words[i + 2][0].lower()}"
                d = min((abs(i - p) + (0 if p > i else 2) for p in fpos), default=3)
                cands.append(Span(text, "colour", a, 1.0 + 1.0 / (1 + d) + 0.3 * _proximity(s, a, q)))
    elif t in ("number", "quantity"):
        for m in _NUM_RE.finditer(s):
            tail = re.match(r"\s*(%|[A-Za-z/]+(?:\s+[A-Za-z]+)?)", s[m.end():])
            text = m.group()
            if tail and not tail.group(1).lower().split()[0] in STOPWORDS | PREPS:
                text += (tail.group(1) if tail.group(1) == "%" else " " + tail.group(1).split()[0])
            bonus = 0.5 if q.head and tail and stem(tail.group(1).lower().split()[0]) == stem(q.head) else 0.0
            cands.append(Span(text, t, m.start(), 1.0 + bonus + _proximity(s, m.start(), q)))
    elif t == "date":
        for sp in _resolve_date(s, ref):
            cands.append(Span(sp.text, "date", sp.start, sp.score + 0.5 * _proximity(s, sp.start, q)))
    elif t in ("person", "name", "place"):
        for sp in capitalized_phrases(s):
            sp_t = toks(sp.text)
            if sp_t and all(x in q.qtokens for x in sp_t) and not (q.head and _hs(q.head) in sp_t):
                continue  # the question's own name
            before = s[:sp.start].lower().split()[-2:]
            prep = bool(before) and before[-1] in ("in", "at", "to", "from", "near", "visiting", "visit",
                                                   "around", "of", "towards")
            score = 1.0 + sp.score + 0.5 * _proximity(s, sp.start, q)
            # "moving to Denver" answers "where is X moving to": the question's verb and preposition
            dangling = re.search(r"\b(in|at|to|from|on)\s*\?*\s*$", q.question.lower())
            if dangling and before and before[-1] == dangling.group(1):
                score += 0.4
            if len(before) == 2 and before[-1] in ("in", "at", "to", "from") and toks(before[0]) and \
                    all(x in q.qtokens for x in toks(before[0])):
                score += 0.4
            if t == "place":
                score += 0.6 if prep else 0.0
            elif t == "person":
                score += -0.4 if prep else 0.2 if re.match(r"(?:Dr|Mr|Mrs|Ms|Prof)\b", sp.text) else 0.0
            else:
                score += 0.2 if not prep else 0.0
            if q.head and _hs(q.head) in sp_t:
                score += 0.8
            cands.append(Span(sp.text, "cap", sp.start, score))
        if t == "name" and q.head:
            # "named it X" / "called X" with a lower-case name is still a name
            for m in re.finditer(r"\b(?:named|called|name is|named it|call (?:him|her|it))\s+(\w+)", s):
                cands.append(Span(m.group(1), "cap", m.start(1), 1.2))
    elif t == "thing":
        chunks = [c for c in _chunks(s, q) if _novel(c.text, q) > 0]
        if not chunks:
            return []
        sims = np.zeros(len(chunks))
        if embed is not None and q.head:
            vecs = np.asarray(embed([q.head] + [c.text for c in chunks]), dtype=np.float32)
            sims = vecs[1:] @ vecs[0]
        for k, (c, sim) in enumerate(zip(chunks, sims)):
            text = c.text
            # "on a wooden table", "at the cooking class": a location modifier, rarely the thing asked
            prev = [w for w in re.findall(r"[a-z]+", s[:c.start].lower())[-3:] if w not in ("a", "an", "the", "my",
                                                                                          "his", "her", "their")]
            loc = -0.4 if prev and prev[-1] in LOC_PREPS and q.head not in PLACE_HEADS else 0.0
            first = 0.2 if k == 0 else 0.0
            # the object of the question's own verb ("recommended calf raises" for "what did X recommend")
            obj = 0.4 if prev and any(stem(w) in q.qtokens and (stem(w) in VERBS or w.endswith("ed"))
                                      for w in prev[-2:]) else 0.0
            # "what kind of ramen": "spicy miso ramen" keeps the head noun that follows
            nxt = s[c.start + len(c.text):].split()[:1]
            if q.head and nxt and stem(re.sub(r"\W", "", nxt[0].lower())) == stem(q.head):
                text = f"{text} {re.sub(r'[^A-Za-z-]', '', nxt[0])}"
            text = _trim_known(text, q, keep_head=True)
            cands.append(Span(text, "np", c.start, 1.0 + 1.2 * float(sim) + 0.3 * _proximity(s, c.start, q)
                              + 0.2 * _novel(text, q) + loc + first + obj))
    return sorted(cands, key=lambda c: -c.score)


_SPEECH = re.compile(r"\b(?:told|tells|asked|advised|recommended|recommends|suggested|suggests|said|says|"
                     r"wants|wanted|decided|plans|planned|learned|learnt|realized|realised)\b(?:\s+(?:me|us|him|her|them))?"
                     r"(?:\s+(?:to|that))?\s+", re.IGNORECASE)


def clause(q: QuestionFrame, s: str) -> str:
    """The part of `s` that answers an open question: after the question's verb or a speech/plan verb,
    the clause that shares words with the question and adds new ones; else the whole sentence."""
    body = s.rstrip(".!? ")
    cut = None
    if q.verb:
        for w, a, b in _word_spans(body):
            if _hs(w.lower()) == q.verb and b < len(body):
                cut = b
                break
    m = _SPEECH.search(body)
    if cut is None and m and m.end() < len(body):
        cut = m.end()
    if cut is not None:
        rest = re.sub(r"^\s*(?:me|us|him|her|them|that|to)\b\s*", "", body[cut:]).strip(" ,;:-")
        if len(toks(rest)) >= 1:
            body = rest
    parts = [p.strip(" ,;") for p in re.split(r",\s*(?:and|but|so)?\s*|;\s*|\s+[-–—]\s+|\s+(?:but|so|because|which)\s+"
                                             + (r"|\s+and\s+" if cut is not None else ""), body)
             if p and len(p.strip(" ,;")) > 1]
    parts = [p for p in parts if _novel(p, q) > 0 and len(toks(p)) >= 1] or parts
    if len(parts) <= 1:
        return (parts[0] if parts else body).strip()
    scored = [(min(len(set(toks(p)) & q.qtokens), 2), min(sum(1 for t in toks(p) if t not in q.qtokens), 3),
               -len(p), p) for p in parts]
    best = max(scored)
    if best[0] == 0 and cut is None:
        return body.strip()
    return best[3]


@dataclass(frozen=True)
class Extraction:
    text: str
    typed: bool  # the span is of the asked type (False: a clause or the sentence)
    score: float


def extract(q: QuestionFrame, s: str, ref: date | datetime | None = None,
            embed: Callable[[list[str]], np.ndarray] | None = None) -> Extraction | None:
    """The answer span of one sentence; None when a typed question finds nothing of its type in it."""
    refd = ref.date() if isinstance(ref, datetime) else ref
    if q.atype in ("money", "colour", "number", "quantity", "person", "name", "place", "thing"):
        spans = typed_spans(q, s, refd, embed)
        if spans:
            return Extraction(spans[0].text, True, spans[0].score)
        if q.atype in ("money", "colour", "number", "quantity", "person", "name", "place"):
            return None
    if q.atype == "date":
        spans = typed_spans(q, s, refd)
        if spans:
            return Extraction(spans[0].text, True, spans[0].score)
        return Extraction(fmt_day(refd), False, 0.0) if refd else None
    if q.atype == "reason":
        m = re.search(r"\b(?:because|since|so that|as|due to|to)\b\s+(.*)", s)
        if m:
            return Extraction(m.group(1).rstrip(".!? "), False, 0.5)
    if q.atype == "yesno":
        return Extraction(s.rstrip(), False, 0.0)
    return Extraction(clause(q, s), False, 0.0)


_FIRST_PERSON = frozenset("i me my mine we us our ours i'm i've i'll i'd myself".split())
_SECOND_PERSON = frozenset("you your yours you're you've yourself".split())


def strip_vocatives(text: str, names: Sequence[str]) -> str:
    """The sentence without names used to address someone ("Thanks, Mel!", "Hey Caroline,")."""
    for n in names:
        if not n:
            continue
        text = re.sub(r"(?:^|,|\b(?:hey|hi|hello|thanks|thank you|wow|oh|congrats|yes|yeah|aw+|bye|sure))\s*"
                      + re.escape(n) + r"\w{0,4}\s*(?=[!,.?]|$)", " ", text, flags=re.IGNORECASE)
    return text


def is_person(name: str, people: Sequence[str]) -> bool:
    """Whether `name` is one of `people` ("Maya" of "Maya Lopez", or the full name), ignoring case."""
    low = name.lower().strip()
    for p in people:
        pl = str(p).lower().strip()
        if pl and (low == pl or low in pl.split() or pl in low.split()):
            return True
    return False


def entity_support(q: QuestionFrame, unit_text: str, sentence: Sentence,
                   speakers: Sequence[str] = (), people: Sequence[str] = ()) -> tuple[bool, str]:
    """(True, "") when the evidence mentions what the question takes for granted, else (False, why).

    Each possessive noun chain needs its head noun (last word) or half its words in the unit text.
    A question naming one of the conversation's speakers needs a sentence about that speaker: said
    by them in the first person, or said to them ("you") or about them (their name, not as a mere
    address like "Thanks, Mel!") by someone else. Facts about the other speaker are not about them.
    A name of one of `people` (the memory's people, e.g. the user, who speaks as "user") that is not a
    speaker of the evidence needs no mention: it is who the memory is about, not missing content.
    """
    have = set(toks(unit_text)) | set(toks(sentence.speaker or ""))
    for chain in q.entities:
        if chain[-1] in have:
            continue
        if len(chain) > 1 and sum(1 for c in chain if c in have) * 2 >= len(chain) and chain[-1] not in q.qtokens:
            continue
        return False, f"no mention of {' '.join(chain)!r}"
    sp_low = {s.lower() for s in speakers}
    plain = strip_vocatives(sentence.text, list(speakers) + [s.split()[0][:3] for s in speakers if len(s) > 3])
    sent_toks = set(toks(plain))
    words = set(re.findall(r"[a-z']+", plain.lower().replace("’", "'")))
    for name in q.names:
        nt = toks(name)
        if not nt:
            continue
        if name.lower() not in sp_low and is_person(name, people):
            continue
        if name.lower() in sp_low and len(sp_low) > 1:
            named = all(x in sent_toks for x in nt)
            if (sentence.speaker or "").lower() == name.lower():
                if not (words & _FIRST_PERSON) and not named:
                    return False, f"{name} says the best sentence but not about themselves"
            elif not named and not (words & _SECOND_PERSON):
                return False, f"the best sentence is not about {name}"
        elif not all(x in have for x in nt):
            return False, f"no mention of {name!r}"
    return True, ""


__all__ = ["QuestionFrame", "Sentence", "Span", "Extraction", "frame", "split_unit", "typed_spans",
           "capitalized_phrases", "clause", "extract", "entity_support", "is_person", "strip_vocatives", "toks", "COLOURS"]
