"""LoCoMo JSON -> History, one per conversation sample.

A file holds one sample, either flat (`speaker_a`, `speaker_b`, `session_N`,
`session_N_date_time`, `qa`, ...) or nested (`{"conversation": {...}, "qa":
[...], "sample_id": ...}` as in locomo10.json), or a list of samples.
Each turn becomes one round (round id = its `dia_id`, session id `D<N>`,
time = the session's time; `index_in_session` keeps turn order). A turn's
picture is only described: `blip_caption` becomes the ImageRef caption and the
`img_url` stays in `path` as text, never fetched.
"""
from __future__ import annotations

import re
from datetime import datetime
from itertools import zip_longest

from ..model import QA, History, ImageRef, Round, Session, Utterance
from .dates import parse_datetime
from .jsonpath import TOP, Reader, at

FORMAT = "locomo"
REFUSAL_ANSWER = "Not mentioned"
ADVERSARIAL = 5
_SESSION = re.compile(r"session_(\d+)\Z")
_EVIDENCE_SPLIT = re.compile(r"[;,\s]+")


def looks_like(obj: object) -> bool:
    """A LoCoMo sample or a non-empty list whose first item is one."""
    if isinstance(obj, list):
        return bool(obj) and _is_sample(obj[0])
    return _is_sample(obj)


def _is_sample(obj: object) -> bool:
    if not isinstance(obj, dict):
        return False
    if isinstance(obj.get("conversation"), dict):
        return True
    return "speaker_a" in obj or any(_SESSION.match(k) for k in obj if isinstance(k, str))


def parse(obj: object, r: Reader, source: str, stem: str) -> list[History]:
    """One History per sample read by `r` (its file is named in errors).

    Raises InputError when the top level is neither a sample nor a non-empty
    list of samples. Every other fault is recorded in `r` (one per sample
    header, session header, turn or QA, reading on with the next;
    `r.raise_faults()` raises them): mistyped fields, a sample without
    `session_N` keys, a session with turns but no readable
    `session_N_date_time`, duplicate dia ids (both places named), QAs
    without a question or (outside category 5) an answer. A turn with
    neither text nor a picture is a warning in `r`. The result leaves out
    the items that had a fault.
    """
    if isinstance(obj, list):
        if not obj:
            raise r.fail("", "empty list: expected LoCoMo samples")
        out = []
        seen: dict[str, str] = {}
        for i, sample in enumerate(obj):
            with r.guard():
                r.check(sample, at("", i), (dict,))
                name = _sample_name(sample, i)
                if name in seen:
                    raise r.fail(at(at("", i), "sample_id"), f"duplicate sample id {name!r} (also at {seen[name]})")
                seen[name] = at("", i)
                out.append(_sample(r, sample, at("", i), f"{source}#{name}", name))
        return out
    r.check(obj, "", (dict,))
    assert isinstance(obj, dict)
    name = str(obj["sample_id"]) if isinstance(obj.get("sample_id"), (str, int)) else stem
    return [_sample(r, obj, "", source, name)]


def count_rounds(obj: object) -> int:
    """Turns in a document without validating it (for limits checked before parsing)."""
    samples = obj if isinstance(obj, list) else [obj]
    n = 0
    for s in samples:
        if not isinstance(s, dict):
            continue
        conv = s.get("conversation") if isinstance(s.get("conversation"), dict) else s
        n += sum(len(v) for k, v in conv.items() if isinstance(k, str) and _SESSION.match(k) and isinstance(v, list))
    return n


def _sample_name(sample: dict, i: int) -> str:
    sid = sample.get("sample_id")
    return str(sid) if isinstance(sid, (str, int)) and str(sid).strip() else f"sample{i + 1}"


def _sample(r: Reader, sample: dict, place: str, source: str, name: str) -> History:
    if "conversation" in sample:
        conv_place = at(place, "conversation")
        conv = r.check(sample["conversation"], conv_place, (dict,))
    else:
        conv_place, conv = place, sample
    speakers = [r.optional(conv, k, conv_place, (str,), "") for k in ("speaker_a", "speaker_b")]

    numbered = []
    for key, value in conv.items():
        m = _SESSION.match(key)
        if m:
            numbered.append((int(m[1]), key, value))
    numbered.sort()
    if not numbered:
        # e.g. a MemEye file read with --format locomo: say so instead of "building" nothing
        raise r.fail(conv_place or TOP, "no LoCoMo sessions: expected keys session_1, session_2, ... "
                     "holding lists of turns")
    seen: dict[str, str] = {}
    sessions: list[Session] = []
    for n, key, turns in numbered:
        with r.guard():
            session = _session(r, conv, conv_place, n, key, turns, seen)
            if session is not None:
                sessions.append(session)

    qas: tuple[QA, ...] = ()
    with r.guard():
        qas = _qas(r, sample.get("qa"), at(place, "qa"), name)
    profile = "speakers: " + ", ".join(s for s in speakers if s) if any(speakers) else ""
    return History(source=source, format=FORMAT, sessions=tuple(sessions), qas=qas, profile=profile,
                   people=tuple(s for s in speakers if s))


def _session(r: Reader, conv: dict, conv_place: str, n: int, key: str, turns: object,
             seen: dict[str, str]) -> Session | None:
    """Session `key` (None when it holds no turn); a header fault raises, a turn's fault is recorded in `r`."""
    sp = at(conv_place, key)
    r.check(turns, sp, (list,))
    assert isinstance(turns, list)
    if not turns:
        return None  # a session announced but never held
    dt_key = f"{key}_date_time"
    dt_text = r.required(conv, dt_key, conv_place, (str,))
    when = parse_datetime(dt_text)
    if when is None:
        raise r.fail(at(conv_place, dt_key), f"unreadable date/time {dt_text!r} (expected e.g. '1:56 pm on 8 May, 2023')")
    sid = f"D{n}"
    rounds = []
    for ti, turn in enumerate(turns):
        with r.guard():
            rounds.append(_turn(r, turn, at(sp, ti), sid, when, ti, seen))
    return Session(session_id=sid, date=when.date(), rounds=tuple(rounds))


def _turn(r: Reader, turn: object, tp: str, sid: str, when: datetime, ti: int, seen: dict[str, str]) -> Round:
    """One turn as a round; raises InputError at its first fault."""
    r.check(turn, tp, (dict,))
    assert isinstance(turn, dict)
    speaker = r.required(turn, "speaker", tp, (str,))
    text = r.required(turn, "text", tp, (str,))
    rid = r.required(turn, "dia_id", tp, (str,)).strip()
    if not rid:
        raise r.fail(at(tp, "dia_id"), "empty dia id")
    if rid in seen:
        raise r.fail(at(tp, "dia_id"), f"duplicate dia id {rid!r} (also at {seen[rid]})")
    seen[rid] = at(tp, "dia_id")
    captions = r.text_list(turn, "blip_caption", tp)
    urls = r.text_list(turn, "img_url", tp)
    images = tuple(
        ImageRef(image_id=f"{rid}:img{k + 1}", caption=cap or "", path=url or None)
        for k, (cap, url) in enumerate(zip_longest(captions, urls))
    )
    if not text.strip() and not images:
        r.warn(f"round {tp} has no text")
    return Round(round_id=rid, session_id=sid, time=when, dialogue=(Utterance(speaker, text),), images=images,
                 index_in_session=ti)


def _qas(r: Reader, raw: object, place: str, name: str) -> tuple[QA, ...]:
    if raw is None:
        return ()
    r.check(raw, place, (list,))
    assert isinstance(raw, list)
    out = []
    for i, q in enumerate(raw):
        with r.guard():
            out.append(_qa(r, q, at(place, i), i, name))
    return tuple(out)


def _qa(r: Reader, q: object, qp: str, i: int, name: str) -> QA:
    """One question; raises InputError at its first fault."""
    r.check(q, qp, (dict,))
    assert isinstance(q, dict)
    question = r.required(q, "question", qp, (str,))
    category = r.optional(q, "category", qp, (int,))
    if category == ADVERSARIAL:
        # The right response is a refusal; adversarial_answer is the trap, never the gold answer.
        answer, refusal = REFUSAL_ANSWER, True
    else:
        if q.get("answer") is None:
            raise r.fail(at(qp, "answer"), "missing required field")
        answer, refusal = r.scalar_text(q["answer"], at(qp, "answer")), False
    evidence = [e for item in r.text_list(q, "evidence", qp) for e in _EVIDENCE_SPLIT.split(item) if e]
    return QA(
        qa_id=f"{name}:q{i + 1}", question=question, answer=answer, clues=tuple(evidence),
        qtype=f"locomo-cat{category}" if category is not None else "locomo",
        category=category, refusal=refusal, answer_kind="refusal" if refusal else "",
    )
