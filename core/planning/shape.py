"""The shape a question asks its answer to take, and the question without its instructions.

`shape(question)` splits a question into what it asks and how the answer must look:

- instruction sentences ("Return in the format YYYY-MM-DD.", "Only return the image_id.", "Please answer
  using an Arabic numeral (e.g., 2 instead of two).", "Use 'Before' or 'After'.") and inline format
  phrases ("in the format MM/DD") are removed from the question that is searched and parsed, so their
  capitalised words are not taken for names and their words do not steer retrieval;
- a leading politeness word ("Please list ...") is dropped;
- the answer's form: a date pattern (YYYY-MM-DD, MM/DD, DD.MM.YYYY, ...), a month, year or weekday
  ("which month"), image ids ("which picture shows ...", "the image_id"), a yes/no question (an
  auxiliary opening the main clause, also after a leading clause: "Based on X, did ..."), fixed
  options ("'Before' or 'After'"), digits for numbers ("an Arabic numeral").

Only English grammar and format words: nothing here knows what a history is about.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

from .dates import MONTHS

AUXILIARIES = ("is", "are", "was", "were", "am", "do", "does", "did", "has", "have", "had", "can", "could",
               "will", "would", "should", "shall", "may", "might", "must")
# imperative verbs that tell how to answer (not what to find)
INSTRUCTION_VERBS = ("return", "answer", "respond", "reply", "give", "provide", "use", "write", "output",
                     "format", "express", "state", "separate", "round", "infer", "inferring", "put", "respond",
                     "list", "sort", "order", "name", "keep", "include")
POLITE = ("please", "kindly", "only", "just", "simply")
IMAGE_NOUNS = ("picture", "pictures", "image", "images", "photo", "photos", "photograph", "photographs", "pic",
               "pics", "snapshot", "snapshots", "screenshot", "screenshots", "shot", "shots")
_IMG = "|".join(IMAGE_NOUNS)
_AUX = "|".join(AUXILIARIES)
_DATE_TOKEN = r"(?:YYYY|YY|MM|DD|M|D|Mon|MMM|Month)"
DATE_PATTERN = re.compile(r"(?<![A-Za-z])" + _DATE_TOKEN + r"(?:[-/. ]" + _DATE_TOKEN + r"){1,2}(?![A-Za-z])")
_SENT = re.compile(r"(?<=[.?!])\s+(?=\S)")
_QUOTED = re.compile(r"[\"'“‘]([^\"'”’]{1,30})[\"'”’]")
# "(e.g., “2” instead of “Two”)": an example of the form, not part of the question
_PAREN = re.compile(r"\s*\((?:e\.g\.|i\.e\.|for example|for instance|such as|like)[^)]*\)", re.IGNORECASE)
_INLINE_FORMAT = re.compile(
    r"[,;]?\s*\(?\b(?:in|using|with|as)\s+(?:the\s+)?(?:format|form)\s*(?::\s*)?(?:of\s+)?"
    r"(?:" + DATE_PATTERN.pattern + r"|[\"'“‘][^\"'”’]+[\"'”’])\)?", re.IGNORECASE)


@dataclass(frozen=True)
class Shape:
    """What a question asks for, the way its answer must look, and the question without instructions."""

    question: str  # the question to search and parse (instructions and examples removed)
    original: str
    instructions: tuple[str, ...] = ()  # the removed instruction sentences and phrases
    date_format: str | None = None  # "YYYY-MM-DD", "MM/DD", ... or "month" | "year" | "weekday"
    image_ids: bool = False  # the answer is the id(s) of images
    many: bool = False  # several ids / items may answer ("which two images", "separated by commas")
    yesno: bool = False
    options: tuple[str, ...] = ()  # the answer is one of these ("Before", "After")
    digits: bool = False  # numbers as digits ("an Arabic numeral")


def _is_instruction(sentence: str) -> bool:
    low = sentence.strip().lower()
    if low.endswith("?"):
        return False
    words = re.findall(r"[a-z_]+", low)
    while words and words[0] in POLITE:
        words = words[1:]
    if not words or words[0] not in INSTRUCTION_VERBS:
        return False
    if words[0] in ("list", "sort", "order", "name", "keep", "include"):
        # "Please list them in the order ...": an instruction about the answer (it points back at it);
        # "Please list the baked goods ..." is the question itself
        return len(words) > 1 and words[1] in ("them", "it", "these", "those", "each", "the answer", "answers")
    return True


def strip_instructions(question: str) -> tuple[str, tuple[str, ...]]:
    """(the question without its instruction sentences, inline format phrases, examples of the answer's
    form and leading politeness words; the removed parts). The first sentence is kept when it is the
    only one that is not an instruction."""
    q = " ".join(str(question).split())
    removed: list[str] = []
    for m in _PAREN.finditer(q):
        removed.append(m.group().strip())
    q = _PAREN.sub("", q)
    sents = [s for s in _SENT.split(q) if s.strip()]
    keep = [s for s in sents if not _is_instruction(s)]
    removed += [s for s in sents if _is_instruction(s)]
    if not keep:  # the question is only an instruction ("Return the holiday name."): keep it whole
        keep, removed = sents, removed[: len(removed) - len(sents)]
    out = []
    for s in keep:
        m = _INLINE_FORMAT.search(s)
        if m:
            removed.append(m.group().strip(" ,;()"))
            s = (s[:m.start()] + s[m.end():]).strip()
        s = re.sub(r"^(?:(?:please|kindly)\s*,?\s+)", "", s, flags=re.IGNORECASE)
        if s:
            out.append(s[0].upper() + s[1:])
    return " ".join(out), tuple(removed)


def _main_clause(q: str) -> str:
    """The clause that asks: after leading clauses set off by commas ("Based on X, did ...")."""
    parts = [p.strip() for p in re.split(r",\s*", q) if p.strip()]
    for p in parts[1:]:
        if re.match(r"(?:" + _AUX + r"|what|which|who|whom|whose|when|where|why|how)\b", p, re.IGNORECASE):
            return p
    return q


# a request to judge a statement is a yes/no question too ("Determine whether the following conflicts with
# ...: <statement>", "Help me perform conflict detection: <statement>")
_ASKS_WHETHER = re.compile(r"\s*(?:help\s+me\s+|please\s+|can\s+you\s+)?(?:(?:determine|decide|judge|check|verify|"
                           r"confirm|tell\s+me)\s+(?:whether|if)\b|(?:perform|do|run)\s+(?:an?\s+)?"
                           r"(?:conflict|contradiction|consistency)\s+(?:detection|check)\b)", re.IGNORECASE)


def is_yesno(question: str) -> bool:
    """A question answered yes or no: its main clause opens with an auxiliary ("Did ...", "Is there ...",
    "According to X, has ..."), and it offers no alternatives ("... before or after ...")."""
    q = _main_clause(strip_instructions(question)[0])
    if _ASKS_WHETHER.match(q):
        return not alternatives(q)
    if not re.match(r"\s*(?:" + _AUX + r")(?:n't)?\b", q, re.IGNORECASE):
        return False
    # "Do you remember what ...", "Can you tell me which ...": a wh-question inside a polite frame
    if re.match(r"\s*(?:" + _AUX + r")\s+(?:\w+\s+){0,2}?(?:remember|recall|know|tell|say|mention|think|wonder|"
                r"explain|describe|notice|see|understand|guess|imagine)\s+(?:me\s+|us\s+)?"
                r"(?:what|which|who|whom|whose|where|when|why|how)\b", q, re.IGNORECASE):
        return False
    return not alternatives(q)


CLAIM_WORDS = ("contradiction", "contradict", "contradicts", "contradictory", "conflict", "conflicts",
               "conflicting", "consistent", "inconsistent", "inconsistency", "claim", "statement", "true", "false",
               "accurate", "correct", "wrong")


def about_a_claim(question: str) -> bool:
    """Whether a question asks if a statement holds ("Is there a contradiction ...", "Does the claim that
    ... conflict with ...", "Is it true that ..."): what the statement says need not be in the memory."""
    low = question.lower()
    return bool(re.search(r"\b(?:" + "|".join(CLAIM_WORDS) + r")\b", low) or re.search(r"\bto say that\b", low))


def alternatives(question: str) -> tuple[str, ...]:
    """The options a question offers: quoted ones ("Use 'Before' or 'After'") or a pair of opposite
    temporal words ("did X happen before or after Y")."""
    quoted = [m.group(1).strip() for m in _QUOTED.finditer(question)]
    if len(quoted) >= 2 and re.search(r"[\"'”’]\s*(?:or|and)\s*[\"'“‘]", question):
        return tuple(dict.fromkeys(quoted))
    m = re.search(r"\b(before|earlier|sooner|first)\s+or\s+(after|later|second)\b", question, re.IGNORECASE)
    if m:
        return (m.group(1).capitalize(), m.group(2).capitalize())
    # "Is it going up or down?", "Was it higher or lower in March?": two single words joined by "or"
    # (not inside a "whether" clause of a yes/no question: "Does it contain statements about whether AI can
    # feel longing or vulnerability?")
    m = re.search(r"\b([a-z]+)\s+or\s+([a-z]+)\b", question.strip(), re.IGNORECASE)
    if m and re.search(r"\bwhether\b", question[:m.start()], re.IGNORECASE) and \
            re.match(r"\s*(?:" + _AUX + r")\b", question, re.IGNORECASE):
        m = None
    if m and m.group(2).lower() not in ("not", "no", "so", "more", "less", "two", "else", "other", "the", "a", "an",
                                        "my", "your", "his", "her", "their", "our", "its", "this", "that", "some"):
        return (m.group(1).capitalize(), m.group(2).capitalize())
    return ()


def asks_image(question: str) -> bool:
    """A question answered with image ids: it names the image id, or asks which picture / image / photo
    shows something ("Which image shows ...", "Which of the pictures ... is about ...", "Among the photos
    ..., which one ...", "Search for photos of ...")."""
    low = question.lower()
    if re.search(r"\bimage[_ ]?ids?\b", low):
        return True
    if re.search(r"\b(?:which|what)\s+(?:\w+\s+)?(?:" + _IMG + r")\b", low):
        return True
    if re.search(r"\bwhich\s+(?:one|ones|two|three|\w+)?\s*of\s+(?:the|these|those|my|your|her|his|their|our)\s+"
                 r"(?:\w+\s+)?(?:" + _IMG + r")\b", low):
        return True
    if re.search(r"\b(?:" + _IMG + r")\b", low) and re.search(r"\bwhich\s+(?:one|ones)\b", low):
        return True
    return bool(re.search(r"\b(?:search|find|look)\s+(?:for\s+)?(?:all\s+)?(?:the\s+)?(?:\w+\s+)?"
                          r"(?:" + _IMG + r")\b", low))


def date_format(question: str) -> str | None:
    """The form a date answer must take: a written pattern ("YYYY-MM-DD", "MM/DD"), else "month",
    "year" or "weekday" when the question asks for that part only; None otherwise."""
    m = DATE_PATTERN.search(question)
    if m and re.search(r"[YMD]", m.group()):
        return m.group()
    low = question.lower()
    if re.search(r"\b(?:which|what)\s+month\b|\bin which month\b", low):
        return "month"
    if re.search(r"\b(?:which|what)\s+year\b|\bin which year\b", low):
        return "year"
    if re.search(r"\b(?:which|what)\s+day of the week\b|\b(?:which|what)\s+weekday\b", low):
        return "weekday"
    return None


def format_date(d: date, fmt: str) -> str:
    """`d` written as `fmt` asks: a pattern of YYYY/YY/MM/DD/M/D/Mon/Month tokens, or "month" (e.g. "July
    2024"), "year", "weekday"."""
    import calendar

    if fmt == "month":
        return f"{calendar.month_name[d.month]} {d.year}"
    if fmt == "year":
        return str(d.year)
    if fmt == "weekday":
        return calendar.day_name[d.weekday()]
    repl = {"YYYY": f"{d.year:04d}", "YY": f"{d.year % 100:02d}", "MM": f"{d.month:02d}", "DD": f"{d.day:02d}",
            "M": str(d.month), "D": str(d.day), "Mon": calendar.month_abbr[d.month],
            "MMM": calendar.month_abbr[d.month], "Month": calendar.month_name[d.month]}
    return re.sub(r"YYYY|YY|MMM|Month|Mon|MM|DD|M|D", lambda m: repl[m.group()], fmt)


def shape(question: str) -> Shape:
    """The Shape of `question` (see the module docstring)."""
    core, removed = strip_instructions(question)
    full = " ".join(str(question).split())
    instr = " ".join(removed)
    img = asks_image(full)
    many = bool(re.search(r"\b(?:ids|separated by commas|comma-separated|all)\b", instr.lower())) or bool(
        re.search(r"\b(?:which|what)\s+(?:two|three|four|five|several)\b|\ball\s+(?:the\s+)?(?:\w+\s+)?(?:"
                  + _IMG + r")\b|\b(?:" + "|".join(n for n in IMAGE_NOUNS if n.endswith("s")) + r")\s+(?:show|are)\b",
                  full.lower()))
    opts = alternatives(instr) or alternatives(core)
    return Shape(question=core, original=full, instructions=removed, date_format=date_format(full),
                 image_ids=img, many=many and img, yesno=is_yesno(full) and not img, options=opts,
                 digits=bool(re.search(r"\b(?:arabic\s+numerals?|digits?|numerals?)\b", instr.lower())))


def month_word(text: str) -> bool:
    return text.lower().rstrip(".") in MONTHS


__all__ = ["Shape", "shape", "strip_instructions", "is_yesno", "about_a_claim", "alternatives", "asks_image", "date_format",
           "format_date", "AUXILIARIES"]
