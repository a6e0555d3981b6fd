"""Answers from executed plans: direct answers from computed results, extractive answers from memories.

`RuleAnswerer` needs no model: a Compute result becomes a sentence with its
unit and scope ("6.4 hours on average over 23 days in March 2026"), ranked
rows a date and value, filtered rows a short list; retrieved memory units
give the sentence that best matches the question (word overlap + embedding
cosine). When nothing supports an answer it says exactly "Not mentioned." (support
below SUPPORT_MIN, a presupposed entity or a yes/no question's content absent from
the evidence; a name of the memory's `people` is never missing content). Answers
take the shape the question asks (core.planning.shape): "Yes"/"No" first, a date
in the requested format, one of the offered options, the id(s) of the evidence
rounds' best-matching images (`round_images`). `LLMAnswerer` asks a model (core.prompts.answer) and
falls back to the rule answer when the call fails; in guided mode it checks
the model's answer against the computed values (`check_answer`).
"""
from __future__ import annotations

import calendar
import re
from datetime import date, datetime
from dataclasses import dataclass, replace
from typing import Callable, Sequence

import numpy as np

from .. import prompts
from ..errors import LLMError
from ..model import EvidenceUnit
from ..lexicon import singular
from ..protocols import LLM, TextEncoder
from .dates import _DATE_RE, fmt_day, parse_date
from .intent import analyze, find_event_clause, order_choice, order_clauses
from .located import best_event, event_supported
from .shape import AUXILIARIES, Shape, about_a_claim, format_date, shape
from .metadata import words
from .scoring import tokens
from .counted import count_pictures, counted_phrase
from .pictured import about_the_picture, like_units, pictured_answer
from .depicted import asks_description, describe
from .span import (Extraction, Sentence, entity_support, extract, frame, is_person, split_unit, strip_vocatives,
                   toks)
from .tools import ANALYTIC_TOOLS, RETRIEVAL_TOOLS
from .trace import Answer, StepRecord

REFUSAL = "Not mentioned"
# An extractive answer needs this share of the question's content words in one sentence of the
# evidence, or a sentence cosine of at least SUPPORT_COS (checked against LoCoMo, see report).
SUPPORT_MIN = 0.34
SUPPORT_COS = 0.62
MAX_SENTENCES = 200
TOP_SENTENCES = 12  # sentences considered for the answer span, best-ranked first
TYPED_BONUS = 0.6  # preference, within a unit, for a sentence holding a span of the asked type
VERB_BONUS = 0.25  # for open questions, a sentence with the question's main verb
CHATTER_PENALTY = 0.15  # a sentence with fewer than 3 content words
_PICTURE_LINES = frozenset({"image", "ocr"})  # a unit's lines that describe its picture, not what was said
PICTURED_BONUS = 0.3  # a sentence of a unit showing a picture like the question's own
TOP_UNITS = 5  # units searched for a typed span, best first
UNIT_MARGIN = 0.12  # a lower unit may answer a typed question when its match is this close to the best
TYPED = frozenset({"money", "colour", "number", "quantity", "person", "name", "place", "thing", "date"})
MUST_TYPE = frozenset({"money", "colour", "name"})  # refuse when the evidence holds nothing of the type
_ROLE_SPEAKERS = frozenset({"user", "assistant", "system", "image", "ocr"})
QUESTION_WORDS = frozenset(toks("what which who whom whose when where why how did does do was were is are "
                                  "ever has have had tell remember mention name kind type", keep_stopwords=True))


def fmt_num(x) -> str:
    """At least four significant digits, two decimals at most above 10: 1.6413 -> '1.641',
    6.4333 -> '6.433', 64.333 -> '64.33', 93402.224 -> '93402.22', 7.0 -> '7' (a price per litre or a
    pH written to three decimals must not lose its last one)."""
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return str(x)
    if float(x).is_integer():
        return str(int(x))
    decimals = 2 if abs(x) >= 10 else 3 if abs(x) >= 0.1 else 4
    return f"{x:.{decimals}f}".rstrip("0").rstrip(".")


def _day(value) -> date | None:
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    if isinstance(value, str) and value:
        try:
            return datetime.fromisoformat(value).date()
        except ValueError:
            return None
    return None


def fmt_when(value) -> str:
    d = _day(value)
    return fmt_day(d) if d else str(value)


def scope_text(args: dict) -> str:
    """The time scope and conditions of an analytic call as words ('in March 2026', 'where km > 8')."""
    filters = list(args.get("optional_column_filters") or args.get("column_filters") or [])
    kv = args.get("key_values") or {}
    filters += [{"column": k, "op": "=", "value": v} for k, v in kv.items()]
    parts, conds = [], []
    for f in filters:
        col, op, v = f.get("column"), f.get("op"), f.get("value")
        if col == "time":
            if op == "between" and isinstance(v, list) and len(v) == 2:
                a, b = _day(v[0]), _day(v[1])
                if a and b:
                    if a == b:
                        parts.append(f"on {fmt_day(a)}")
                    elif a.day == 1 and b.month == a.month and b.year == a.year and \
                            b.day == calendar.monthrange(b.year, b.month)[1]:
                        parts.append(f"in {calendar.month_name[a.month]} {a.year}")
                    else:
                        parts.append(f"from {fmt_day(a)} to {fmt_day(b)}")
                    continue
            d = _day(v) if not isinstance(v, list) else None
            if d:
                word = {"=": "on", ">": "after", ">=": "since", "<": "before", "<=": "until"}.get(op, op)
                parts.append(f"{word} {fmt_day(d)}")
                continue
        if op in ("=", "in") and (isinstance(v, str) or (isinstance(v, list) and all(isinstance(x, str) for x in v))):
            # a category names the rows: "(ride)", not "where activity = ride"
            vals = v if isinstance(v, list) else [v]
            parts.append(f"({' / '.join(dict.fromkeys(str(x) for x in vals[:3]))})")
            continue
        shown = ", ".join(map(str, v)) if isinstance(v, list) else fmt_num(v) if isinstance(v, float) else str(v)
        conds.append(f"{words(str(col))} {op} {shown}")
    out = " ".join(parts)
    if conds:
        out = (out + " " if out else "") + "where " + " and ".join(conds)
    return out


def n_days_one(v: dict) -> bool:
    return v.get("n_days") == 1


def _unit(u: str | None) -> str:
    return f" {u}" if u else ""


def plural(noun: str, n: int = 2) -> str:
    """English plural of a noun phrase's last word ('harvest' -> harvests, 'entry' -> entries)."""
    if n == 1 or not noun:
        return noun
    head, _, last = noun.rpartition(" ")
    if last.endswith("s") and not last.endswith("ss"):
        p = last
    elif re.search(r"(?:s|x|z|ch|sh)$", last):
        p = last + "es"
    elif re.search(r"[^aeiou]y$", last):
        p = last[:-1] + "ies"
    else:
        p = last + "s"
    return f"{head} {p}" if head else p


def rows_noun(table: str | None, n: int, asked: str | None = None) -> str:
    """'18 harvests': the counted noun of the question when it names rows, else the table's own noun
    (its name without _log), never 'days' for rounds."""
    from .columns import record_noun

    base = (asked or "").strip().lower()
    if not base or base in ("times", "time"):
        base = record_noun(table) if table else "record"
    if n == 1:
        return f"1 {_singular(base)}"
    return f"{n} {plural(base, n) if not base.endswith('s') else base}"


def _singular(noun: str) -> str:
    """'expenses' -> 'expense', 'fill ups' -> 'fill up', 'batches' -> 'batch'; the last word only."""
    head, _, last = noun.rpartition(" ")
    last = singular(last)
    return f"{head} {last}" if head else last


def period_text(first, last) -> str:
    """'3 May - 29 Aug 2026' (one day: 'on 3 May 2026'); '' without times."""
    a, b = _day(first), _day(last)
    if not a or not b:
        return ""
    if a == b:
        return f"on {fmt_day(a)}"
    return f"{fmt_day(a)} - {fmt_day(b)}"


def _unitish(noun: str) -> bool:
    from .columns import asked_units

    return bool(asked_units("how many " + noun))


def _deciding_first(rounds: tuple[str, ...], deciding) -> tuple[str, ...]:
    """The evidence rounds with the round that decided a latest/first/extreme value first."""
    if not deciding:
        return rounds
    return tuple(dict.fromkeys((str(deciding),) + tuple(rounds)))


# ---------------------------------------------------------------------- answer shapes
PEOPLE_NOTE = "people of the memory: "  # a step note naming the memory's people (see people_from_steps)
REFUSAL_TEXT = REFUSAL + "."  # a refusal is this phrase alone; why is in the Answer's notes (when it has them)
YESNO_EVIDENCE_WORDS = 14  # words of evidence in the notes of a "Yes." / "No."
MAX_IMAGE_IDS = 5
IMAGE_MARGIN = 0.12  # further images answer a "which images" question when this close to the best one
_NEGATION = re.compile(r"\b(?:not|no|never|none|nothing|nobody|neither|nor|without|cannot)\b|n't\b", re.IGNORECASE)
# words of showing and sharing pictures: they say that a picture is asked for, not what it shows
_PICTURE_WORDS = frozenset(toks("picture pictures image images photo photos photograph photographs pic pics "
                                "snapshot snapshots screenshot screenshots shot shots show shows showed shown "
                                "depict depicts depicted share shared sharing send sent post posted take taken "
                                "took contain contains feature features about one ones id ids image_id",
                                keep_stopwords=True))
YESNO_COVER = 0.6  # share of a yes/no question's content words one evidence unit must hold
# words about the conversation itself, not about its content
DISCOURSE_WORDS = frozenset(toks("conversation conversations dialogue dialog chat mention mentioned mentions discuss "
                                 "discussed talk talked say said tell told share shared describe described "
                                 "description according based information still ever", keep_stopwords=True))
_NUMBER_WORD = {"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
                "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "once": 1, "twice": 2}


def people_from_steps(steps: Sequence[StepRecord]) -> tuple[str, ...]:
    """The people a step's note names ("people of the memory: Maya, Leo"), else ()."""
    for s in steps:
        for n in getattr(s, "notes", ()) or ():
            if isinstance(n, str) and n.startswith(PEOPLE_NOTE):
                return tuple(x.strip() for x in n[len(PEOPLE_NOTE):].split(",") if x.strip())
    return ()


def refusal(base: Answer, why: str = "") -> Answer:
    """`base` as the standard refusal: the text is exactly "Not mentioned."; the reason (`why`, or what
    base.text said after the phrase) goes to the Answer's notes."""
    reason = why or base.text[len(REFUSAL):].strip(" .:()") if base.text.startswith(REFUSAL) else why or base.text
    out = replace(base, text=REFUSAL_TEXT, kind="refusal", refused=True)
    if reason:
        out = replace(out, notes=base.notes + (f"refused: {reason}",))
    return out


def negated(text: str) -> bool:
    return bool(_NEGATION.search(text.replace("’", "'")))


def _short(text: str, n: int) -> str:
    ws = text.split()
    return " ".join(ws[:n]).rstrip(" ,;:.!?") + (" ..." if len(ws) > n else "")


def yes_no(question: str, base: Answer) -> Answer:
    """"Yes." or "No." (the short answer a yes/no question asks for) with the evidence sentence it rests
    on in the answer's notes: a negated statement answers a plain question no (and the other way
    round); an answer that already starts with yes or no says which."""
    said = re.match(r"\s*(yes|no)\b[\s,.:;!-]*", base.text, re.IGNORECASE)
    if said:
        word, ev = said.group(1).capitalize(), base.text[said.end():]
    else:
        word = "No" if negated(question) != negated(base.text) else "Yes"
        ev = base.text
    ev = _short(ev, YESNO_EVIDENCE_WORDS)
    return replace(base, text=f"{word}.", notes=base.notes + ((f"the evidence says: {ev}",) if ev else ()))


def unsupported_yesno(question: str, steps: Sequence[StepRecord], people: Sequence[str] = ()) -> str:
    """Why the evidence cannot answer a yes/no question about what happened, or "" when it can.

    "Did X bring brownies?" presupposes what it asks about: the evidence must hold it. Refused when a
    content word of the question is in no retrieved unit, or no unit holds YESNO_COVER of them (weighted
    by how few of the retrieved units hold each: the rare words say what is asked) together with the
    rarest of them. Words
    about the conversation ("mention", "discuss"), adverbs (-ly), the memory's people and questions
    about a statement ("Is there a contradiction in ...", whose statement may be false) are exempt."""
    if about_a_claim(question):
        return ""
    units = _units_in_order(steps)
    if not units:
        return ""
    f = frame(question)
    qt = {t for t in f.support_tokens if not re.search(r"ly$", t)} - DISCOURSE_WORDS - QUESTION_WORDS
    qt -= {t for p in people for t in toks(p)}
    if not qt:
        return ""
    texts = [u.text for u in units]
    subject = re.match(r"\s*(?:" + "|".join(AUXILIARIES) + r")\s+([A-Z][\w'’-]*)", question)
    if subject and people and is_person(re.sub(r"['’]s$", "", subject.group(1)), people):
        # "Did Lin say she was fluent?": about the user, so in what the user said (or showed), not in the
        # assistant's replies
        texts = ["\n".join(ln for ln in t.splitlines() if not re.match(r"\s*(?:\[\w+\]\s*)?assistant:", ln))
                 for t in texts]
    else:
        texts = _said_by_subject(question, texts)
    have = [set(toks(t)) for t in texts]
    absent = sorted(qt - set().union(*have))
    if absent:
        return f"no mention of {', '.join(absent)!r} in the evidence"
    # words in few of the retrieved units say most about what is asked ("yogurt" vs "baking")
    n = len(have)
    idf = {t: float(np.log((n + 1) / (sum(t in h for h in have) + 0.5))) for t in qt}
    total = sum(idf.values()) or 1.0
    rarest = {t for t in qt if idf[t] >= max(idf.values()) - 1e-9}
    covers = [sum(idf[t] for t in qt & h) / total for h in have]
    if not any(c >= YESNO_COVER and rarest <= h for c, h in zip(covers, have)):
        return (f"no unit holds the question's content together (best {max(covers):.2f}; rarest words "
                f"{', '.join(sorted(rarest))})")
    return ""


_LINE_SPEAKER = re.compile(r"^\s*(?:\[\w+\]\s*)?([^\s:][^:]{0,40}):\s")


def _said_by_subject(question: str, texts: list[str]) -> list[str]:
    """`texts` cut to the lines of the speaker the question is about ("Did the user mention ...?" when the
    evidence has a speaker "user"; the image lines stay: a speaker shows what they share), else unchanged."""
    m = re.match(r"\s*(?:" + "|".join(AUXILIARIES) + r")\s+(?:the\s+)?([\w'’-]+)", question, re.IGNORECASE)
    if not m:
        return texts
    who = m.group(1).lower()
    spoken = {sm.group(1).strip().lower() for t in texts for ln in t.splitlines() if (sm := _LINE_SPEAKER.match(ln))}
    if who not in spoken - {"image", "text in image"}:
        return texts
    keep = {who, "image", "text in image"}
    return ["\n".join(ln for ln in t.splitlines() if (sm := _LINE_SPEAKER.match(ln)) and sm.group(1).strip().lower() in keep)
            for t in texts]


ORDER_COVER = 0.5  # share of an event clause's content words its evidence unit must hold


def event_order(a_part: str, b_part: str, units: Sequence, people: Sequence[str] = ()) -> tuple[bool, object, object] | None:
    """(A came first, A's unit, B's unit) for two clauses of a question ("did A ... before B"): the best
    unit for each by word overlap (ORDER_COVER of the clause's own content words), compared by time.
    None when either clause has no such unit or both are the same moment."""
    a_part = re.sub(r"^\s*(?:" + "|".join(AUXILIARIES) + r")\b", "", a_part, flags=re.IGNORECASE)
    drop = QUESTION_WORDS | DISCOURSE_WORDS | {t for p in people for t in toks(p)}
    ta, tb = set(toks(a_part)) - drop, set(toks(b_part)) - drop
    ta, tb = ta - tb or ta, tb - ta or tb
    if not ta or not tb or not units:
        return None

    def best(ts):
        sc = [(len(ts & set(toks(u.text))), -k, u) for k, u in enumerate(units)]
        top = max(sc, key=lambda x: (x[0], x[1]))
        # half the clause's words, and two of them when it has more than one
        return top[2] if top[0] >= max(ORDER_COVER * len(ts), min(2, len(ts))) else None

    ua, ub = best(ta), best(tb)
    if ua is None or ub is None or not ua.time or not ub.time or str(ua.time) == str(ub.time):
        return None
    return str(ua.time) < str(ub.time), ua, ub


def located_order(question: str, steps: Sequence[StepRecord],
                  people: Sequence[str] = ()) -> tuple[bool, object, object] | None:
    """(A came first, A's unit, B's unit) for "did A happen before B" (or "which came first: A or B") from
    the EventLocate steps that located each side on its own (the rule plan does: `order_clauses`,
    `order_choice`): each side's best located event
    (`located.best_event`) if it matches its side (`located.event_supported`), ordered by time, then
    by round order within a day; the memory's `people` are no words a side must match (the user is
    rarely named in what they say). None when a side was not located or not matched, or both are the
    same round."""
    sides = order_clauses(question, find_event_clause(" ".join(question.split())))
    if sides is None:
        choice = order_choice(question)
        sides = choice.sides if choice is not None else None
    if sides is None:
        return None

    names = frozenset(t for p in people for t in tokens(p))  # as event_supported reads the side

    def found(text: str):
        for s in steps:
            if s.status == "ok" and s.tool == "EventLocate" and s.units and \
                    " ".join(str(s.args.get("query_content", "")).split()) == text:
                u = best_event(s.units, text)
                return u if event_supported(u.text, u.score, text, ignore=names) else None
        return None

    ua, ub = found(sides[0]), found(sides[1])
    if ua is None or ub is None or not ua.time or not ub.time:
        return None

    def when(u) -> tuple[str, int]:
        return str(u.time)[:19], int(dict(u.data).get("round_order", -1)) if u.data else -1

    ka, kb = when(ua), when(ub)
    if ka == kb or (ka[0] == kb[0] and -1 in (ka[1], kb[1])):
        return None
    return ka < kb, ua, ub


def temporal_yes_no(question: str, steps: Sequence[StepRecord], people: Sequence[str] = ()) -> Answer | None:
    """"Yes." / "No." for "Did A (happen) before/after B?" from the times of the evidence for A and for B
    (which rounds, in the answer's notes); None when the question is not of that form or the order
    cannot be read."""
    m = re.search(r"\s(before|after|earlier than|later than|prior to)\s+(?!or\b)", question, re.IGNORECASE)
    if not m or re.search(r"\bbefore\s+or\s+after\b", question, re.IGNORECASE):
        return None
    # the evidence as a whole is read for A and B only when it holds what the question asks happened first;
    # the events located for each side on their own are matched with their side alone
    said = not unsupported_yesno(question[:m.start()].rstrip(" ,") + "?", steps, people)
    order = (event_order(question[:m.start()], question[m.end():], _units_in_order(steps), people) if said
             else None) or located_order(question, steps, people)
    if order is None:
        return None
    a_first, ua, ub = order
    asks_first = m.group(1).lower() in ("before", "earlier than", "prior to")
    word = "Yes" if a_first == asks_first else "No"
    # the short answer a yes/no question asks for; why, in the answer's notes (the app shows them)
    return Answer(f"{word}.", "extractive", 0.5, (ua.unit_id, ub.unit_id),
                  tuple(dict.fromkeys(ua.rounds[:1] + ub.rounds[:1])), notes=(order_note(a_first, ua, ub),))


def ordered_choice(question: str, steps: Sequence[StepRecord], people: Sequence[str] = ()) -> Answer | None:
    """The option a "which came first (last): A or B?" question asks for (intent.order_choice), from the
    times of the events located for A and for B (`located_order`; which rounds, in the notes); None when
    the question is not of that form or a side was not located."""
    choice = order_choice(question)
    order = located_order(question, steps, people) if choice is not None else None
    if order is None:
        return None
    a_first, ua, ub = order
    pick = choice.options[0] if a_first == choice.first else choice.options[1]
    return Answer(pick[:1].upper() + pick[1:] + ".", "extractive", 0.5, (ua.unit_id, ub.unit_id),
                  tuple(dict.fromkeys(ua.rounds[:1] + ub.rounds[:1])), notes=(order_note(a_first, ua, ub),))


def order_note(a_first: bool, ua, ub) -> str:
    """'D7:3 (September 30, 2024) came before D7:12 (September 30, 2024)': the two located events of an
    order question, by round and day."""
    def said(u) -> str:
        return f"{u.rounds[0] if u.rounds else u.unit_id} ({fmt_when(u.time)})"
    return f"{said(ua)} came {'before' if a_first else 'after'} {said(ub)}"


def digits(text: str) -> str:
    """Number words written as digits ("Three." -> "3")."""
    return re.sub(r"\b(" + "|".join(_NUMBER_WORD) + r")\b",
                  lambda m: str(_NUMBER_WORD[m.group(1).lower()]), text, flags=re.IGNORECASE)


def _units_in_order(steps: Sequence[StepRecord]) -> list:
    seen, out = set(), []
    for s in steps:
        if s.status != "ok" or s.tool not in RETRIEVAL_TOOLS:
            continue
        for u in s.units:
            if u.unit_id not in seen:
                seen.add(u.unit_id)
                out.append(u)
    return out


def answer_date(base: Answer, steps: Sequence[StepRecord]) -> date | None:
    """The date an answer states (its first written date, read relative to its evidence's time), else the
    time of the evidence unit it rests on."""
    units = {u.unit_id: u for s in steps for u in s.units}
    ref = next((_day(units[i].time) for i in base.unit_ids if i in units and units[i].time), None)
    m = _DATE_IN_TEXT.search(base.text)
    if m:
        d = parse_date(m.group(0), ref)
        if d is not None:
            return d
    return ref


class _Shaper:
    """The shaping half of RuleAnswerer (kept apart so the extractive code stays as it was)."""

    encoder: TextEncoder
    round_images: Callable | None
    people: tuple[str, ...]

    def _shaped(self, base: Answer, sh: Shape, steps: Sequence[StepRecord], now, people: tuple[str, ...] = ()) -> Answer:
        if sh.image_ids:
            img = self.image_answer(sh, steps, now, people)
            if img is not None:
                return img
        elif not sh.yesno and asks_description(sh.question):
            shown = self.described(sh, steps, now, people)
            if shown is not None:
                return shown
        if base.kind not in ("extractive", "refusal"):
            # a computed, ranked or row answer says what the tools found in its own words
            if sh.date_format and not base.refused:
                d = answer_date(base, steps)
                if d is not None:
                    return replace(base, text=format_date(d, sh.date_format), span=False)
            return base
        chosen = ordered_choice(sh.question, steps, people)
        if chosen is not None:
            return chosen
        if sh.options:
            pick = self.option(sh, steps, base, people)
            if pick:
                return replace(base, text=pick, kind="extractive", refused=False)
        if sh.yesno:
            # "did A happen before B": the evidence times answer it, whatever the best sentence says
            when = temporal_yes_no(sh.question, steps, people)
            if when is not None:
                return when
        if base.refused and sh.yesno and about_a_claim(sh.question):
            # whether a statement holds: the statement need not be in the memory; the best evidence answers
            units = _units_in_order(steps)
            if units:
                first = next((x.text for x in split_unit(units[0].text) if not x.text.rstrip().endswith("?")), "")
                base = Answer(first or units[0].text, "extractive", 0.0, (units[0].unit_id,), units[0].rounds,
                              span=True)
        if base.refused:
            return refusal(base)
        if sh.yesno:
            why = unsupported_yesno(sh.question, steps, people)
            if why:
                return refusal(base, why)
            return yes_no(sh.question, base)
        if sh.date_format:
            d = answer_date(base, steps)
            if d is not None:  # a date worked out from the round's time: computed, not a span
                return replace(base, text=format_date(d, sh.date_format), span=False)
        if sh.digits:
            return replace(base, text=digits(base.text))
        return base

    def option(self, sh: Shape, steps: Sequence[StepRecord], base: Answer, people: Sequence[str] = ()) -> str | None:
        """One of the question's options: for "did A happen before or after B", the order of the best
        evidence for A and for B; else the option the answer or its evidence names."""
        m = re.search(r"\b(before|earlier|sooner|first)\s+or\s+(?:after|later|second)\b", sh.question, re.IGNORECASE)
        if m and len(sh.options) == 2:
            order = event_order(sh.question[:m.start()], sh.question[m.end():], _units_in_order(steps), people) \
                or located_order(sh.question, steps, people)
            if order is not None:
                return sh.options[0] if order[0] else sh.options[1]
        low = base.text.lower()
        named = [o for o in sh.options if re.search(r"\b" + re.escape(o.lower()) + r"\b", low)]
        return named[0] if len(named) == 1 else None

    def described(self, sh: Shape, steps: Sequence[StepRecord], now, people: Sequence[str] = ()) -> Answer | None:
        """What the picture the question asks about showed: its caption (core.planning.depicted), within
        the question's time range when it names one — among the evidence rounds' images and, with
        `period_images`, every image of those days. None without images or a way to read them."""
        if self.round_images is None:
            return None
        units = _units_in_order(steps)
        rounds = list(dict.fromkeys(r for u in units for r in u.rounds))
        if not rounds:
            return None
        try:
            imgs = self.round_images(rounds)
        except Exception:  # noqa: BLE001 - a broken image reader must not lose the answer
            return None
        tr = analyze(sh.question, now or date.today()).time_range
        if tr is not None and self.period_images is not None:
            try:
                extra = [i for i in self.period_images(tr.start, tr.end) if i.round_id not in rounds]
            except Exception:  # noqa: BLE001 - a broken image reader must not lose the answer
                extra = []
            if extra:
                # the day's pictures retrieval did not rank: units of their own, after the evidence
                units = list(units) + [EvidenceUnit(f"ev:{i.round_id}", "event", i.said, (i.round_id,), 0.0, i.time)
                                       for i in {x.round_id: x for x in extra}.values()]
                imgs = list(imgs) + extra
        drop = frozenset(QUESTION_WORDS) | frozenset(t for p in people for t in toks(p))
        return describe(sh.question, units, imgs, tr, self.encoder, drop)

    def image_answer(self, sh: Shape, steps: Sequence[StepRecord], now, people: Sequence[str] = ()) -> Answer | None:
        """The id(s) of the evidence rounds' images that best match the question (caption and OCR text:
        word overlap and embedding cosine, the retrieval rank as a tie-break), within the question's
        time range when it names one. None without images (or without a way to read them)."""
        if self.round_images is None:
            return None
        units = _units_in_order(steps)
        rank: dict[str, int] = {}
        when: dict[str, str | None] = {}
        said: dict[str, set] = {}  # the words of the unit a round comes from (what was said about its images)
        for k, u in enumerate(units):
            for r in u.rounds:
                rank.setdefault(r, k)
                when.setdefault(r, u.time)
                said.setdefault(r, set(toks(u.text)))
        if not rank:
            return None
        try:
            imgs = [i for i in self.round_images(list(rank)) if getattr(i, "image_id", None)]
        except Exception:  # noqa: BLE001 - a broken image reader must not lose the answer
            return None
        if not imgs:
            return None
        tr = analyze(sh.question, now or date.today()).time_range
        if tr is not None:
            inside = [i for i in imgs if (d := _day(when.get(i.round_id))) is None or tr.start <= d <= tr.end]
            imgs = inside or imgs
        drop = _PICTURE_WORDS | QUESTION_WORDS | {t for p in people for t in toks(p)}
        qt = set(toks(sh.question)) - drop
        texts = [getattr(i, "text", "") or getattr(i, "caption", "") or "" for i in imgs]
        cos = np.zeros(len(imgs))
        if any(texts):
            vecs = np.asarray(self.encoder.encode([sh.question] + [t or "-" for t in texts]), dtype=np.float32)
            cos = vecs[1:] @ vecs[0]
        over = np.array([len(qt & set(toks(t))) / len(qt) if qt else 0.0 for t in texts])
        prior = np.array([0.05 / (1 + rank.get(i.round_id, len(rank))) for i in imgs])
        context = np.array([len(qt & said.get(i.round_id, set())) / len(qt) if qt else 0.0 for i in imgs])
        score = 0.4 * cos + 0.4 * over + 0.2 * context + prior
        order = list(np.argsort(-score, kind="stable"))
        n = 1
        if sh.many:
            m = re.search(r"\b(?:which|what)\s+(two|three|four|five)\b", sh.original.lower())
            if m:
                n = _NUMBER_WORD[m.group(1)]
            else:
                n = sum(1 for k in order if score[k] >= score[order[0]] - IMAGE_MARGIN)
        chosen = [imgs[k] for k in order[: max(1, min(n, MAX_IMAGE_IDS))]]
        rounds = tuple(dict.fromkeys(i.round_id for i in chosen))
        ids = tuple(u.unit_id for u in units if set(u.rounds) & set(rounds))
        return Answer(", ".join(i.image_id for i in chosen), "extractive", float(min(1.0, max(0.0, score[order[0]]))),
                      ids, rounds)


class RuleAnswerer(_Shaper):
    """Answers without a model. `encoder` scores sentences for extractive answers."""

    name = "rules"

    def __init__(self, encoder: TextEncoder, round_images: Callable[[Sequence[str]], Sequence] | None = None,
                 people: Sequence[str] = (), period_images: Callable | None = None):
        self.encoder = encoder
        # (start, end) dates -> the images of those days' rounds (images.images_between): a question about
        # "my photo from 5 May" reads that day's pictures even when retrieval ranked other rounds first
        self.period_images = period_images
        # rounds -> their images (core.planning.images.RoundImage: round_id, image_id, caption, ocr_text);
        # the engine passes functools.partial(images.round_images, con). None: answers cannot name images.
        self.round_images = round_images
        # the names the memory gives its people (the user first): no name of theirs is missing content
        self.people = tuple(people)

    def answer(self, question: str, steps: Sequence[StepRecord], now: datetime | date | None = None, *,
               people: Sequence[str] | None = None, image_caption: str = "") -> Answer:
        """The answer the executed steps support, shaped as the question asks (see core.planning.shape):
        "Yes"/"No" first for a yes/no question, a date in the requested format, image ids for a question
        asking which picture shows something; or exactly "Not mentioned." (why: `refusal_reason`).

        The question's own instructions ("Return in the format YYYY-MM-DD.") are removed before it is
        parsed. `people`: the names of the memory's people (default: self.people, else a "people of the
        memory: ..." note of a step). `image_caption`: the caption of the question's own picture; a question
        asking what it shows is answered with the name the rounds showing a like picture give it
        (core.planning.pictured)."""
        sh = shape(question)
        ppl = tuple(people) if people is not None else self.people or people_from_steps(steps)
        if image_caption.strip() and not sh.yesno and not sh.image_ids and about_the_picture(sh.question or question) \
                and not any(s.status == "ok" and s.tool in ANALYTIC_TOOLS for s in steps):
            named = pictured_answer(sh.question or question, image_caption, _units_in_order(steps), self.encoder)
            if named is not None:
                return named
        base = self._answer(sh.question or question, steps, now, ppl, original=question, caption=image_caption)
        return self._shaped(base, sh, steps, now, ppl)

    def _answer(self, question: str, steps: Sequence[StepRecord], now, people: tuple[str, ...] = (), *,
                original: str | None = None, caption: str = "") -> Answer:
        ok = [s for s in steps if s.status == "ok"]
        analytic = [s for s in ok if s.tool in ANALYTIC_TOOLS]
        if analytic:
            # the whole question: an instruction may ask for the date ("Which game was shortest? Give the date.")
            return self._analytic(original or question, analytic[-1], now)
        skipped = [s for s in steps if s.status == "skipped" and s.tool in ANALYTIC_TOOLS]
        units = [(s, u) for s in ok if s.tool in RETRIEVAL_TOOLS for u in s.units]
        if skipped and not any(s.tool == "SemanticMatch" for s in ok):
            return Answer(f"{REFUSAL}: {skipped[0].summary or 'the event was not found'}.", "refusal", refused=True)
        if units:
            return self._picture_count(question, units, people) or \
                self._extractive(question, units, now, people, caption=caption)
        return Answer(REFUSAL, "refusal", refused=True, notes=("refused: no step found any evidence",))

    def _picture_count(self, question: str, units, people: tuple[str, ...] = ()) -> Answer | None:
        """"How many <pictures of X>": the number of evidence rounds whose pictures show X (core.planning.counted),
        with those rounds as the evidence; None when the question counts no pictures, the memory has no
        pictures to read, or no evidence picture shows X."""
        words = counted_phrase(question, people)
        if not words or self.round_images is None:
            return None
        rounds = list(dict.fromkeys(r for _, u in units for r in u.rounds))
        pc = count_pictures(words, self.round_images(rounds))
        if pc is None or pc.n == 0:
            return None
        ids = tuple(u.unit_id for _, u in units if set(u.rounds) & set(pc.rounds))
        return Answer(str(pc.n), "computed", 1.0, ids, pc.rounds,
                      notes=(f"counted the pictures that show {' '.join(pc.words)}: {', '.join(pc.images)}",))

    # ------------------------------------------------------------------ analytic
    def _analytic(self, question: str, s: StepRecord, now) -> Answer:
        scope = scope_text(s.args)
        scope_sfx = f" {scope}" if scope else ""
        ids = tuple(u.unit_id for u in s.units)
        rounds = tuple(dict.fromkeys(r for u in s.units for r in u.rounds))
        a = analyze(question, now or date.today())
        if s.tool == "Compute":
            v = s.value or {}
            op, n, val, unit = v.get("operator"), v.get("n_rows", 0), v.get("value"), v.get("unit")
            col = words(str(v.get("column", "")))
            asked = (a.how_many_noun or "").lower()
            times = asked in ("times", "time")
            if asked and (times or _unitish(asked)):
                asked = ""
            if op == "count":
                # "how many times did I ...": so many times, not so many rows of a table named after a field
                noun = f"{n} time{'s' if n != 1 else ''}" if times else rows_noun(s.table, n, asked)
                return Answer(f"{noun}{scope_sfx}", "computed", 1.0, ids, rounds)
            if not n or val is None:
                return Answer(f"{REFUSAL}: no {col} records{scope_sfx}.", "refusal", 0.0, ids, rounds, refused=True)
            # in the question's own noun when it names the records ("over every expense": "29 expenses")
            noun = rows_noun(s.table, n, (a.records or "").replace("-", " ") or None)
            period = period_text(v.get("first_time"), v.get("last_time"))
            if period and not scope:
                noun = f"{noun}, {period}"
            if op == "avg" and n == 1:
                # one record's value ("my X on May 5"): the value itself, not an average of one
                text = f"{fmt_num(val)}{_unit(unit)} ({col}){scope_sfx}"
            elif op == "avg":
                text = f"{fmt_num(val)}{_unit(unit)} on average over {noun}{scope_sfx}"
            elif op == "sum":
                text = (f"{fmt_num(val)}{_unit(unit)}{scope_sfx}" if n == 1 else
                        f"{fmt_num(val)}{_unit(unit)} in total over {noun}{scope_sfx}")
                if n == 1 and a.asks_date is False:
                    text = f"{fmt_num(val)}{_unit(unit)}{scope_sfx}"
            elif op in ("min", "max"):
                at = v.get("at_time")
                rounds = _deciding_first(rounds, v.get("at_source"))
                text = (f"{fmt_num(val)}{_unit(unit)} ({'lowest' if op == 'min' else 'highest'}"
                        f"{', on ' + fmt_when(at) if at else ''}){scope_sfx}")
                if a.asks_date and at:
                    text = f"{fmt_when(at)} ({fmt_num(val)}{_unit(unit)})"
            elif op in ("first", "latest"):
                t = v.get("first_time") if op == "first" else v.get("last_time")
                rounds = _deciding_first(rounds, v.get("first_source") if op == "first" else v.get("last_source"))
                shown = fmt_num(val) if not isinstance(val, str) else val
                if isinstance(val, str) and _day(val) and a.asks_date:
                    text = fmt_when(val)
                elif scope.startswith("on ") and n_days_one(v):
                    # the day the question named, said again after a number; a word stands alone ("Japanese",
                    # not "Japanese on April 18, 2025": the question said the day)
                    text = shown if isinstance(val, str) else f"{shown}{_unit(unit)}{scope_sfx}"
                else:
                    text = f"{fmt_num(val) if not isinstance(val, str) else val}{_unit(unit)} " \
                           f"({op}, recorded on {fmt_when(t)})"
            elif op == "change":
                direction = v.get("direction", "")
                fv, lv = v.get("first_value"), v.get("last_value")
                sign = "+" if isinstance(val, (int, float)) and val > 0 else ""
                verb = {"up": "went up", "down": "went down", "unchanged": "stayed the same"}.get(direction, "changed")
                text = (f"{verb.capitalize()}: from {fmt_num(fv)}{_unit(unit)} ({fmt_when(v.get('first_time'))}) "
                        f"to {fmt_num(lv)}{_unit(unit)} ({fmt_when(v.get('last_time'))}), "
                        f"{sign}{fmt_num(val)}{_unit(unit)} over {noun}{scope_sfx}")
            else:
                text = f"{fmt_num(val)}{_unit(unit)}{scope_sfx}"
            return Answer(text, "computed", 1.0, ids, rounds)
        if s.tool == "Rank":
            v = s.value or {}
            vals = v.get("values") or []
            if not s.units:
                return Answer(f"{REFUSAL}: no {words(str(v.get('column', '')))} records{scope_sfx}.", "refusal",
                              0.0, ids, rounds, refused=True)
            unit = v.get("unit")
            items = []
            for u, val in zip(s.units, vals):
                if v.get("column") == "time":
                    items.append(fmt_when(u.time))
                else:
                    items.append(f"{fmt_when(u.time)} ({fmt_num(val)}{_unit(unit)})")
            if len(items) == 1 and not a.asks_date and v.get("column") != "time":
                word = "highest" if v.get("order") == "desc" else "lowest"
                text = f"{fmt_num(vals[0])}{_unit(unit)} ({word}, on {fmt_when(s.units[0].time)})"
            else:
                text = "; ".join(items)
            return Answer(text, "ranked", 1.0, ids, rounds)
        # Filter / Lookup rows
        if not s.units:
            if a.kind == "yesno":
                return Answer(f"No: no records{scope_sfx}.", "rows", 1.0, ids, rounds)
            return Answer(f"None: no records{scope_sfx}.", "rows", 1.0, ids, rounds)
        shown = []
        for u in s.units[:5]:
            data = dict(u.data)
            vals = [f"{words(k)} {fmt_num(val)}" for k, val in data.items()
                    if k not in ("source", "round_order", "time", "captions") and val is not None]
            shown.append(f"{fmt_when(u.time)} ({', '.join(vals[:3])})")
        more = f" and {s.n_matched - len(shown)} more" if s.n_matched > len(shown) else ""
        prefix = f"Yes, {s.n_matched} time(s): " if a.kind == "yesno" else ""
        return Answer(prefix + "; ".join(shown) + more, "rows", 1.0, ids, rounds)

    # ------------------------------------------------------------------ extractive
    def _extractive(self, question: str, units, now, people: tuple[str, ...] = (), caption: str = "") -> Answer:
        """The span of the best-supported sentence that answers the question, or a refusal.

        Sentences are ranked by their own match with the question (word overlap, embedding cosine,
        retrieval score) and their unit's best match, so a short sentence next to the matching one
        ("Paid 1,450 dollars.") can answer. A typed question (money, colour, a name, ...) prefers
        sentences holding a span of its type. Refuses when the question's presupposed entities
        ("my cardiologist", a speaker's name) are not in the evidence, when no unit matches the
        question well enough, or when a money/colour/name question finds nothing of that type.
        With the question's own picture (`caption`), a unit showing a like picture (core.planning.pictured
        `like_units`) is what the question is about: it ranks first and supports the answer whatever
        words the question uses ("what category is the clothing in the picture?" shares none with the
        round that shows that dress).
        """
        f = frame(question)
        qtok = set(f.support_tokens) or set(toks(question)) - QUESTION_WORDS
        sents: list[tuple[Sentence, object, int]] = []
        unit_list: list = []
        for s, u in units:
            k = len(unit_list)
            unit_list.append(u)
            for sent in split_unit(u.text):
                sents.append((sent, u, k))
            if len(sents) >= MAX_SENTENCES:
                break
        if not sents:
            return Answer(REFUSAL, "refusal", refused=True, notes=("refused: the evidence holds no sentence",))
        speakers = sorted({x.speaker for x, _, _ in sents if x.speaker and x.speaker.lower() not in _ROLE_SPEAKERS})
        # a speaker's name is in every line they say, and a person's name need not be written at all (the
        # user speaks as "user"): neither is evidence of content
        qtok -= {t for sp in list(speakers) + list(people) for t in toks(sp)}
        qtok = qtok or set(f.support_tokens)
        texts = [x.text for x, _, _ in sents]
        lower_words = {w for t in texts for w in re.findall(r"\b[a-z][a-z'’-]*\b", t)}
        qv = self.encoder.encode([question])[0]
        cos = np.asarray(self.encoder.encode(texts)) @ qv
        voc = speakers + [sp[:3] for sp in speakers if len(sp) > 3]
        own = [set(toks(strip_vocatives(t, voc) if voc else t)) | set(toks(x.speaker or ""))
               for t, (x, _, _) in zip(texts, sents)]
        overlap = np.array([len(qtok & o) / len(qtok) if qtok else 0.0 for o in own])
        uscore = np.array([float(u.score or 0.0) for _, u, _ in sents])
        base = 0.45 * cos + 0.45 * overlap + 0.1 * uscore
        base -= np.array([0.1 if x.context else 0.0 for x, _, _ in sents])
        base -= np.array([0.05 if (x.speaker or "").lower() in ("assistant", "system") else 0.0 for x, _, _ in sents])
        # small talk ("Thanks, Mel!", "Wow!") answers nothing
        base -= np.array([CHATTER_PENALTY if len(o - set(toks(x.speaker or ""))) < 3 else 0.0
                          for o, (x, _, _) in zip(own, sents)])
        if f.verb and f.atype not in TYPED:
            # "what did X prescribe": the sentence with the question's verb holds its object
            base += np.array([VERB_BONUS if f.verb in o else 0.0 for o in own])
        pictured = {s.unit.unit_id: s.sim for s in like_units(caption, unit_list, self.encoder)} if caption else {}
        if pictured:
            base += np.array([PICTURED_BONUS if u.unit_id in pictured else 0.0 for _, u, _ in sents])
        n_units = len(unit_list)
        unit_best = np.full(n_units, -1.0)
        unit_cos = np.full(n_units, -1.0)
        unit_words: list[set] = [set() for _ in range(n_units)]
        for i, (x, _, k) in enumerate(sents):
            unit_best[k] = max(unit_best[k], base[i])
            if not x.context and not x.text.rstrip().endswith("?"):
                unit_cos[k] = max(unit_cos[k], cos[i])
                unit_words[k] |= own[i]
        unit_overlap = np.array([len(qtok & w) / len(qtok) if qtok else 0.0 for w in unit_words])
        # unit first (an event is one round), then the sentence of that unit that holds the answer
        unit_order = [k for k in np.argsort(-unit_best, kind="stable") if unit_best[k] > -1.0][:TOP_UNITS]
        by_unit: dict[int, list[int]] = {}
        for i, (_, _, k) in enumerate(sents):
            by_unit.setdefault(k, []).append(i)
        best = None  # (key, sentence index, extraction)
        fallback = None
        why_not = ""
        top = unit_best[unit_order[0]] if unit_order else 0.0
        for k in unit_order:
            u = unit_list[k]
            cands = []
            for i in by_unit.get(k, []):
                x = sents[i][0]
                if x.text.rstrip().endswith("?") and f.atype != "yesno":
                    continue  # a question asks; it does not state the answer
                if u.unit_id in pictured and (x.speaker or "").lower() in _PICTURE_LINES:
                    continue  # a like picture's caption describes it like the question's own; the talk names it
                ok, why = entity_support(f, u.text, x, speakers, people)
                if not ok:
                    why_not = why_not or why
                    continue
                ext = extract(f, x.text, _day(u.time), self.encoder.encode if f.atype == "thing" else None)
                if ext is not None and f.atype in NAME_TYPES and _capital_by_position(ext.text, x.text, lower_words):
                    ext = None  # "Wash the car first.": capitalised because it starts the sentence, not a name
                if ext is None:
                    why_not = why_not or f"no {f.atype} in the evidence"
                    continue
                bonus = (TYPED_BONUS * (0.5 if x.context else 1.0) + 0.2 * min(ext.score, 3.0)) if ext.typed else 0.0
                cands.append((base[i] + bonus, i, ext))
            if not cands:
                continue
            c = max(cands, key=lambda t: t[0])
            if fallback is None:
                fallback = c
            if c[2].typed or f.atype not in TYPED:
                if unit_best[k] >= top - UNIT_MARGIN:
                    best = c
                break
        best = best or fallback
        if best is None:
            u0 = unit_list[unit_order[0]] if unit_order else unit_list[0]
            return Answer(f"{REFUSAL} ({why_not or 'no evidence sentence states an answer'})", "refusal", 0.0,
                          (u0.unit_id,), u0.rounds, refused=True)
        if f.atype in MUST_TYPE and not best[2].typed:
            u0 = sents[best[1]][1]
            return Answer(f"{REFUSAL} (no {f.atype} in the evidence)", "refusal", 0.0, (u0.unit_id,), u0.rounds,
                          refused=True)
        _, i, ext = best
        x, u, k = sents[i]
        ov, cs = float(unit_overlap[k]), float(unit_cos[k])
        support = float(max(ov, cs / SUPPORT_COS * SUPPORT_MIN if cs > 0 else 0.0))
        if ov < SUPPORT_MIN and cs < SUPPORT_COS and u.unit_id not in pictured:
            why = (f"the best evidence ({', '.join(u.rounds[:1]) or u.unit_id}) holds {ov:.0%} of the question's "
                   f"words (needs {SUPPORT_MIN:.0%}) and matches it at cosine {cs:.2f} (needs {SUPPORT_COS:.2f})")
            return Answer(f"{REFUSAL} ({why})", "refusal", support, (u.unit_id,), u.rounds, refused=True)
        text = " ".join(ext.text.split()[:40]) or x.text
        notes = (f"{u.rounds[0] if u.rounds else u.unit_id} shows a picture like the question's (caption similarity "
                 f"{pictured[u.unit_id]:.2f})",) if u.unit_id in pictured else ()
        # a date read relative to the round's day ("yesterday" -> March 3) is worked out, not a span
        worked_out = ext.typed and f.atype == "date"
        return Answer(text, "extractive", min(1.0, support), (u.unit_id,), u.rounds, span=not worked_out, notes=notes)


NAME_TYPES = ("name", "person", "place")


def _capital_by_position(span: str, sentence: str, lower_words: set[str]) -> bool:
    """True for a one-word span that opens its sentence and is written in lower case elsewhere in the
    evidence: English capitalises the first word of a sentence, so that capital says nothing of a name."""
    word = span.strip(" *_\"'“”")
    return (" " not in word and sentence.lstrip(" *_\"'“”").startswith(word)
            and word[:1].isupper() and word.lower() in lower_words)


# ---------------------------------------------------------------------- checking a model's answer
_ISO_TIME = re.compile(r"(\d{4}-\d{1,2}-\d{1,2})[T ]\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?")
_DATE_IN_TEXT = re.compile(r"\b" + _DATE_RE + r"\b", re.IGNORECASE)
_CLOCK = re.compile(r"\b\d{1,2}:\d{2}(?::\d{2})?\b")
_NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?")
# the same quantity in another unit: min <-> h, s <-> min, m <-> km, a share <-> per cent, s <-> h
UNIT_FACTORS = (1.0, 60.0, 1 / 60, 1000.0, 1 / 1000, 100.0, 1 / 100, 3600.0, 1 / 3600)
MAX_KEY_UNITS = 5  # rows of a Rank/Filter/Lookup result whose dates and values are the answer


@dataclass(frozen=True)
class Values:
    """The checkable content of a text or a tool result: numbers, calendar days and text values."""

    numbers: tuple[float, ...] = ()
    days: tuple[tuple[int, int], ...] = ()  # (month, day): a model may drop or guess the year
    texts: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.numbers or self.days or self.texts)

    def __or__(self, other: "Values") -> "Values":
        return Values(self.numbers + other.numbers, self.days + other.days, self.texts + other.texts)


def text_values(text: str) -> Values:
    """Dates and numbers written in `text` (dates first, so 2026-03-09 is not read as three numbers)."""
    s = _ISO_TIME.sub(r"\1", str(text))
    days = []
    for m in _DATE_IN_TEXT.finditer(s):
        d = parse_date(m.group(0), date(2000, 12, 31))
        if d is not None:
            days.append((d.month, d.day))
    s = _CLOCK.sub(" ", _DATE_IN_TEXT.sub(" ", s))
    nums = []
    for m in _NUMBER.finditer(s):
        try:
            nums.append(float(m.group(0).replace(",", "")))
        except ValueError:
            continue
    return Values(tuple(nums), tuple(days))


def _value_of(v) -> Values:
    """One value of a tool result (a number, a date, a text value) as Values."""
    if isinstance(v, bool) or v is None:
        return Values()
    if isinstance(v, (int, float)):
        return Values((float(v),)) if v == v else Values()
    d = _day(v) if isinstance(v, (str, date, datetime)) else None
    if d is not None:
        return Values(days=((d.month, d.day),))
    if isinstance(v, str) and v.strip():
        return Values(texts=(v.strip().lower(),))
    return Values()


def computed_values(steps: Sequence[StepRecord]) -> Values:
    """What the rule-instantiated analytic steps computed, as the rule answer states it: the Compute
    value (the count for count; the day of a min/max; first, last and change for a trend), the ranked
    values and their days, the matched rows' days and values. Steps the model instantiated do not
    count (their arguments are the model's output, as untrusted as its answer). Empty when no such
    step succeeded."""
    out = Values()
    for s in steps:
        if s.status != "ok" or s.tool not in ANALYTIC_TOOLS or s.planner != "rules":
            continue
        v = s.value if isinstance(s.value, dict) else {}
        if s.tool == "Compute":
            op = v.get("operator")
            if op == "count":
                out |= _value_of(v.get("n_rows"))
                continue
            out |= _value_of(v.get("value"))
            if op in ("min", "max"):
                out |= _value_of(v.get("at_time"))
            if op == "change":
                out |= _value_of(v.get("first_value")) | _value_of(v.get("last_value"))
        elif s.tool == "Rank":
            if v.get("column") != "time":
                for x in (v.get("values") or [])[:MAX_KEY_UNITS]:
                    out |= _value_of(x)
            for u in s.units[:MAX_KEY_UNITS]:
                out |= _value_of(u.time)
        else:  # Filter / Lookup: the rows
            for u in s.units[:MAX_KEY_UNITS]:
                out |= _value_of(u.time)
                for k, x in u.data:
                    if k not in ("source", "round_order", "time", "captions"):
                        out |= _value_of(x)
    return out


def _same_number(x: float, v: float) -> bool:
    """x is v as an answer would write it: rounded, or in another unit of the same quantity."""
    for f in UNIT_FACTORS:
        y = v * f
        if abs(x - y) <= max(0.01 * abs(y), 0.05):
            return True
    return False


def mentions(answer: Values, answer_text: str, key: Values) -> bool:
    """Whether the answer states one of the key values (a number, a day or a text value)."""
    low = answer_text.lower()
    return (any(_same_number(x, v) for x in answer.numbers for v in key.numbers)
            or bool(set(answer.days) & set(key.days))
            or any(t and re.search(r"\b" + re.escape(t) + r"\b", low) for t in key.texts))


def supported(answer_text: str, answer: Values, steps: Sequence[StepRecord]) -> bool:
    """Whether a tool result other than the analytic computation supports the answer: every number and
    day it gives is in a retrieved memory unit, or (an answer without numbers or days) its content
    words are. A refusal has no content and is never supported."""
    units = [u for s in steps if s.status == "ok" and s.tool in RETRIEVAL_TOOLS for u in s.units]
    if not units:
        return False
    ev = Values()
    words_ev: set[str] = set()
    for u in units:
        ev |= text_values(u.text) | _value_of(u.time)
        words_ev |= set(toks(u.text))
    if answer.numbers or answer.days:
        return (all(any(x == y or _same_number(x, y) for y in ev.numbers) for x in answer.numbers)
                and all(d in ev.days for d in answer.days))
    content = set(toks(answer_text))
    return bool(content) and len(content & words_ev) >= max(1, round(len(content) * 2 / 3))


def check_answer(text: str, draft: Answer | None, steps: Sequence[StepRecord]) -> str | None:
    """Why the model's answer `text` must not replace the rule-based `draft`, or None when it may.

    The model's output is untrusted: when the draft states a value an analytic tool computed with
    rule-instantiated arguments (kind computed/ranked/rows; see `computed_values`) and the model's
    answer neither states one of those values (rounded or in another unit of the same quantity) nor
    gives values a retrieved memory supports, the draft stands.
    """
    if draft is None or draft.refused or draft.kind not in ("computed", "ranked", "rows"):
        return None
    key = computed_values(steps)
    if not key:
        return None
    got = text_values(text)
    if mentions(got, text, key):
        return None
    if supported(text, got, steps):
        return None
    if text.lower().startswith(REFUSAL.lower()):
        return "it says the answer is not mentioned"
    shown = ", ".join([fmt_num(x) for x in got.numbers[:3]]
                      + [f"{calendar.month_abbr[m]} {d}" for m, d in got.days[:2]])
    return f"it gives {shown}, which no tool result supports" if shown else "it states no computed value"


_ISO = re.compile(r"^(\d{4})-(\d{2})-(\d{2})(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?\.?$")


def _spoken_date(text: str) -> str:
    """A model answer that is only an ISO date or timestamp (copied from an evidence line's time) as
    a date people write ("2022-11-04T15:56:00" -> "November 4, 2022"); any other text unchanged."""
    m = _ISO.match(text.strip())
    if m is None:
        return text
    try:
        d = date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
    except ValueError:
        return text
    return f"{calendar.month_name[d.month]} {d.day}, {d.year}"


class LLMAnswerer:
    """Answers with a model from the plan and its evidence; falls back to `fallback` on LLMError.

    draft=True (Config.llm_mode "guided"): the model gets the rule-based answer as a draft to keep
    or correct, and its answer is checked against the computed values (`check_answer`): an answer
    that drops or contradicts an analytic tool's value without a tool result supporting it is
    replaced by the draft, with a fallback note. `images` (optional): round ids -> encoded image
    bytes (at most `max_images`, already downscaled); called only for a model with `vision` true,
    so a text-only model gets the captions and OCR text that the evidence units hold.
    """

    def __init__(self, llm: LLM, fallback: RuleAnswerer, *, draft: bool = False,
                 images: Callable[[Sequence[str]], Sequence[bytes]] | None = None, max_images: int = 3):
        self.llm = llm
        self.fallback = fallback
        self.draft = draft
        self.images = images
        self.max_images = max_images
        self.name = f"llm:{getattr(llm, 'model', '?')}"

    def evidence_text(self, steps: Sequence[StepRecord]) -> str:
        lines = []
        for s in steps:
            lines.append(f"Step {s.index + 1} [{s.tool}] goal: {s.goal}; status: {s.status}; {s.summary}")
            for u in s.units:
                when = f" ({u.time})" if u.time else ""
                lines.append(f"  - [{u.kind} {u.unit_id}{when}] {u.text[:800]}")
        return "\n".join(lines) or "(no evidence)"

    def evidence_images(self, steps: Sequence[StepRecord]) -> list[bytes]:
        """The evidence rounds' images for a vision model (best-ranked rounds first), else []."""
        if self.images is None or not getattr(self.llm, "vision", False) or self.max_images <= 0:
            return []
        rounds = list(dict.fromkeys(r for s in steps if s.status == "ok" for u in s.units for r in u.rounds))
        return list(self.images(rounds))[: self.max_images] if rounds else []

    def answer(self, question: str, steps: Sequence[StepRecord], now=None,
               options: Sequence[tuple[str, str]] = (), *, draft: Answer | None = None) -> tuple[Answer, str | None]:
        """(answer, fallback note or None). Never raises LLMError.

        `draft`: the rule-based answer (the engine passes the one the rules would give, composite
        answers included); with draft=True and none given, `fallback` computes it. It is used as
        the draft only when self.draft; it replaces the model's answer when the call fails or
        (self.draft) the check rejects it.
        """
        if self.draft and not options and draft is None:
            draft = self.fallback.answer(question, steps, now)
        shown = draft if self.draft and not options else None
        units = tuple(u for s in steps for u in s.units)
        # a value a tool computed (a ranked name, rows, a date comparison, pictures) is a draft to keep;
        # a span the rules picked from a round is not (the model writes the answer from the evidence
        # itself). A rule refusal is not shown: told to keep it, the 1.5B model refused answerable
        # Mem-Gallery questions and still answered LoCoMo's unanswerable ones (bench/llm_eval.py)
        keep = shown is not None and not shown.refused and not shown.span
        msgs, schema = prompts.answer(question, self.evidence_text(steps), options=options,
                                      question_time=now.isoformat() if isinstance(now, (date, datetime)) else None,
                                      draft=shown.text if keep else None,
                                      hint=shown.text if shown is not None and shown.span and not shown.refused
                                      else None,
                                      unit_ids=[u.unit_id for u in units])
        try:
            res = self.llm.complete_json(prompts.ANSWER, msgs, schema,
                                         prompt_version=prompts.PROMPT_VERSION[prompts.ANSWER],
                                         images=self.evidence_images(steps))
            text = str((res.data or {}).get("answer", "")).strip()
            if not text:
                raise LLMError("empty answer")
        except LLMError as e:
            fb = draft if draft is not None else self.fallback.answer(question, steps, now)
            return fb, f"answer: LLM failed ({str(e)[:120]}); rule-based answer used"
        tok = dict(prompt_tokens=res.prompt_tokens, completion_tokens=res.completion_tokens)
        if shown is not None:
            why = check_answer(text, shown, steps)
            if why is not None:
                return replace(shown, **tok), (
                    f"answer: LLM answer contradicted the computed value ({why}; LLM said {text[:80]!r}); "
                    f"rule-based draft kept: {shown.text[:80]!r}")
        refused = text.lower().startswith("not mentioned")
        if refused:
            text = REFUSAL_TEXT  # the standard phrase alone
        text = _spoken_date(text)
        known = {u.unit_id for u in units}
        used = (res.data or {}).get("used") if isinstance(res.data, dict) else None
        # untrusted: only ids that were shown, each once, at most MAX_CITED (a refusal rests on none)
        cited = () if refused or not isinstance(used, list) else tuple(
            dict.fromkeys(str(i) for i in used if str(i) in known))[: prompts.MAX_CITED]
        return Answer(text, "llm", 0.0 if refused else 1.0, tuple(u.unit_id for u in units),
                      tuple(dict.fromkeys(r for u in units for r in u.rounds)), refused=refused, cited=cited,
                      **tok), None


__all__ = ["RuleAnswerer", "LLMAnswerer", "REFUSAL", "REFUSAL_TEXT", "PEOPLE_NOTE", "refusal", "yes_no",
           "answer_date", "people_from_steps", "fmt_num", "scope_text", "check_answer", "computed_values",
           "text_values"]
