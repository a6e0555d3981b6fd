"""Answers from executed plans: direct answers from computed results, extractive answers from memories.

`RuleAnswerer` needs no model: a Compute result becomes a sentence with its
unit and scope ("6.4 hours on average over 23 days in March 2026"), ranked
rows a date and value, filtered rows a short list; retrieved memory units
give the sentence that best matches the question (word overlap + embedding
cosine). When nothing supports an answer it says "Not mentioned" (support
below SUPPORT_MIN). `LLMAnswerer` asks a model (core.prompts.answer) and
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
from ..protocols import LLM, TextEncoder
from .dates import _DATE_RE, fmt_day, parse_date
from .intent import analyze
from .metadata import words
from .scoring import tokens
from .span import Extraction, Sentence, entity_support, extract, frame, split_unit, strip_vocatives, toks
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
    return f"{n} {plural(base, n) if not base.endswith('s') or n == 1 else base}"


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


class RuleAnswerer:
    """Answers without a model. `encoder` scores sentences for extractive answers."""

    name = "rules"

    def __init__(self, encoder: TextEncoder):
        self.encoder = encoder

    def answer(self, question: str, steps: Sequence[StepRecord], now: datetime | date | None = None) -> Answer:
        """The answer the executed steps support, or a refusal ('Not mentioned ...')."""
        ok = [s for s in steps if s.status == "ok"]
        analytic = [s for s in ok if s.tool in ANALYTIC_TOOLS]
        if analytic:
            return self._analytic(question, analytic[-1], now)
        skipped = [s for s in steps if s.status == "skipped" and s.tool in ANALYTIC_TOOLS]
        units = [(s, u) for s in ok if s.tool in RETRIEVAL_TOOLS for u in s.units]
        if skipped and not any(s.tool == "SemanticMatch" for s in ok):
            return Answer(f"{REFUSAL}: {skipped[0].summary or 'the event was not found'}.", "refusal", refused=True)
        if units:
            return self._extractive(question, units, now)
        return Answer(REFUSAL, "refusal", refused=True)

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
            if asked and (asked in ("times", "time") or _unitish(asked)):
                asked = ""
            if op == "count":
                noun = rows_noun(s.table, n, asked)
                return Answer(f"{noun}{scope_sfx}", "computed", 1.0, ids, rounds)
            if not n or val is None:
                return Answer(f"{REFUSAL}: no {col} records{scope_sfx}.", "refusal", 0.0, ids, rounds, refused=True)
            noun = rows_noun(s.table, n)
            period = period_text(v.get("first_time"), v.get("last_time"))
            if period and not scope:
                noun = f"{noun}, {period}"
            if op == "avg":
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
                    text = f"{shown}{_unit(unit)}{scope_sfx}"
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
    def _extractive(self, question: str, units, now) -> Answer:
        """The span of the best-supported sentence that answers the question, or a refusal.

        Sentences are ranked by their own match with the question (word overlap, embedding cosine,
        retrieval score) and their unit's best match, so a short sentence next to the matching one
        ("Paid 1,450 dollars.") can answer. A typed question (money, colour, a name, ...) prefers
        sentences holding a span of its type. Refuses when the question's presupposed entities
        ("my cardiologist", a speaker's name) are not in the evidence, when no unit matches the
        question well enough, or when a money/colour/name question finds nothing of that type.
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
            return Answer(REFUSAL, "refusal", refused=True)
        speakers = sorted({x.speaker for x, _, _ in sents if x.speaker and x.speaker.lower() not in _ROLE_SPEAKERS})
        # a speaker's name is in every line they say: it is no evidence of content
        qtok -= {t for sp in speakers for t in toks(sp)}
        qtok = qtok or set(f.support_tokens)
        texts = [x.text for x, _, _ in sents]
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
                ok, why = entity_support(f, u.text, x, speakers)
                if not ok:
                    why_not = why_not or why
                    continue
                ext = extract(f, x.text, _day(u.time), self.encoder.encode if f.atype == "thing" else None)
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
            return Answer(f"{REFUSAL} ({why_not})" if why_not else REFUSAL, "refusal", 0.0,
                          (u0.unit_id,), u0.rounds, refused=True)
        if f.atype in MUST_TYPE and not best[2].typed:
            u0 = sents[best[1]][1]
            return Answer(f"{REFUSAL} (no {f.atype} in the evidence)", "refusal", 0.0, (u0.unit_id,), u0.rounds,
                          refused=True)
        _, i, ext = best
        x, u, k = sents[i]
        ov, cs = float(unit_overlap[k]), float(unit_cos[k])
        support = float(max(ov, cs / SUPPORT_COS * SUPPORT_MIN if cs > 0 else 0.0))
        if ov < SUPPORT_MIN and cs < SUPPORT_COS:
            return Answer(REFUSAL, "refusal", support, (u.unit_id,), u.rounds, refused=True)
        text = " ".join(ext.text.split()[:40]) or x.text
        return Answer(text, "extractive", min(1.0, support), (u.unit_id,), u.rounds)


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
        msgs, schema = prompts.answer(question, self.evidence_text(steps), options=options,
                                      question_time=now.isoformat() if isinstance(now, (date, datetime)) else None,
                                      draft=shown.text if shown is not None and not shown.refused else None)
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
        units = tuple(u for s in steps for u in s.units)
        return Answer(text, "llm", 0.0 if refused else 1.0, tuple(u.unit_id for u in units),
                      tuple(dict.fromkeys(r for u in units for r in u.rounds)), refused=refused, **tok), None


__all__ = ["RuleAnswerer", "LLMAnswerer", "REFUSAL", "fmt_num", "scope_text", "check_answer", "computed_values",
           "text_values"]
