"""MemEye / Mem-Gallery JSON -> History (images still unresolved).

Layout (DESIGN.md "Input formats"):
`{"character_profile": {...}, "multi_session_dialogues": [{"session_id", "date",
"dialogues": [{"round", "time"?, "user", "assistant", "image_id"[], "input_image"[],
"image_caption"[]}]}], "human-annotated QAs": [{"question", "answer", "clue",
"options", "query_type", "sample_id", ...}]}`.

`parse` checks structure and types and returns the History whose ImageRefs
carry the file's `input_image` reference in `path` (data None) plus the JSON
place of each image, so the caller can resolve and validate the image files.
"""
from __future__ import annotations

import json
import re
from datetime import date, datetime, time

from ..model import QA, History, ImageRef, Round, Session, Utterance
from .dates import parse_date, parse_datetime
from .jsonpath import Reader, at, kind

FORMAT = "memeye"
DIALOGUES = "multi_session_dialogues"
QAS = "human-annotated QAs"

# Gold answers that mean "the history does not say" (normalized: lower case, no punctuation).
# The answer kinds scoring understands (core/evaluation/scoring.py ANSWER_KINDS).
ANSWER_KINDS = ("number", "date", "updown", "yesno", "text", "refusal")

REFUSALS = frozenset({
    "not mentioned", "not mentioned in the conversation", "not mentioned in the dialogue",
    "not mentioned in the history", "no information", "no information available",
    "information not available", "not available", "not answerable", "unanswerable",
    "cannot be determined", "can not be determined", "cannot be answered", "unknown",
    "i dont know", "not enough information", "insufficient information", "none mentioned",
})


def is_refusal(answer: str) -> bool:
    """True when a gold answer is a refusal phrase such as "Not mentioned."."""
    norm = " ".join(re.sub(r"[^\w\s]", "", answer.lower()).split())
    return norm in REFUSALS


def looks_like(obj: object) -> bool:
    return isinstance(obj, dict) and DIALOGUES in obj


def parse(obj: object, r: Reader, source: str, stem: str) -> tuple[History, dict[str, str]]:
    """The History of one MemEye document and {image_id: JSON place} for images with a file.

    `r` reads the file (its name is in errors), `source` becomes History.source, `stem`
    prefixes the ids of QAs without a `sample_id` (f"{stem}:q{i}", i from 1).

    Raises InputError when the top level is not an object with a list of
    sessions. Every other fault is recorded in `r` (one per session header,
    round or QA, reading on with the next; `r.raise_faults()` raises them):
    wrong types, missing fields, duplicate session/round/image/QA ids,
    unreadable dates, image lists of different lengths. A round with neither
    user text nor an image is a warning in `r`; the History leaves out the
    items that had a fault.
    """
    r.check(obj, "", (dict,))
    assert isinstance(obj, dict)
    sessions_raw = r.required(obj, DIALOGUES, "", (list,))
    profile = _profile(obj.get("character_profile"))
    people = _people(obj.get("character_profile"))

    seen_sessions: dict[str, str] = {}
    seen_rounds: dict[str, str] = {}
    seen_images: dict[str, str] = {}
    image_places: dict[str, str] = {}
    sessions: list[Session] = []
    for si, s in enumerate(sessions_raw):
        with r.guard():
            sessions.append(_session(r, s, at(DIALOGUES, si), seen_sessions, seen_rounds, seen_images,
                                     image_places))

    qas: tuple[QA, ...] = ()
    with r.guard():
        qas = _qas(r, obj.get(QAS), stem)
    return History(source=source, format=FORMAT, sessions=tuple(sessions), qas=qas, profile=profile,
                   people=people), image_places


def _session(r: Reader, s: object, sp: str, seen_sessions: dict[str, str], seen_rounds: dict[str, str],
             seen_images: dict[str, str], image_places: dict[str, str]) -> Session:
    """One session; a fault in its header raises, a fault in one of its rounds is recorded in `r`."""
    r.check(s, sp, (dict,))
    assert isinstance(s, dict)
    sid = r.required(s, "session_id", sp, (str, int))
    sid = str(sid).strip()
    if not sid:
        raise r.fail(at(sp, "session_id"), "empty session id")
    if sid in seen_sessions:
        raise r.fail(at(sp, "session_id"), f"duplicate session id {sid!r} (also at {seen_sessions[sid]})")
    seen_sessions[sid] = at(sp, "session_id")
    sdate: date | None = None
    date_text = r.optional(s, "date", sp, (str,))
    if date_text is not None and date_text.strip():
        sdate = parse_date(date_text)
        if sdate is None:
            raise r.fail(at(sp, "date"), f"unreadable date {date_text!r} (expected e.g. 2025-02-03)")
    dialogues = r.required(s, "dialogues", sp, (list,))
    rounds: list[Round] = []
    for ri, d in enumerate(dialogues):
        with r.guard():
            rounds.append(_round(r, d, at(at(sp, "dialogues"), ri), sid, sdate, ri, seen_rounds, seen_images,
                                 image_places))
    if sdate is None and rounds:
        sdate = rounds[0].time.date()
    return Session(session_id=sid, date=sdate, rounds=tuple(rounds))


def count_rounds(obj: object) -> int:
    """Rounds in a document without validating it (for limits checked before parsing)."""
    if not isinstance(obj, dict) or not isinstance(obj.get(DIALOGUES), list):
        return 0
    return sum(
        len(s["dialogues"]) for s in obj[DIALOGUES]
        if isinstance(s, dict) and isinstance(s.get("dialogues"), list)
    )


def _profile(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def _people(value: object) -> tuple[str, ...]:
    """The user's name from a profile object's `name` (a plain-text profile names nobody)."""
    if isinstance(value, dict) and isinstance(value.get("name"), str) and value["name"].strip():
        return (value["name"].strip(),)
    return ()


def _round(r: Reader, d: object, rp: str, sid: str, sdate: date | None, index: int,
           seen_rounds: dict[str, str], seen_images: dict[str, str],
           image_places: dict[str, str]) -> Round:
    r.check(d, rp, (dict,))
    assert isinstance(d, dict)
    raw_id = r.required(d, "round", rp, (str, int))
    # An integer round number is only unique inside its session.
    rid = f"{sid}:{raw_id}" if isinstance(raw_id, int) else raw_id.strip()
    if not rid:
        raise r.fail(at(rp, "round"), "empty round id")
    if rid in seen_rounds:
        raise r.fail(at(rp, "round"), f"duplicate round id {rid!r} (also at {seen_rounds[rid]})")
    seen_rounds[rid] = at(rp, "round")

    when = _time(r, d, rp, sdate)
    dialogue = []
    for speaker in ("user", "assistant"):
        text = r.optional(d, speaker, rp, (str,), "")
        if text.strip():
            dialogue.append(Utterance(speaker, text))

    ids = r.text_list(d, "image_id", rp)
    paths = r.text_list(d, "input_image", rp)
    captions = r.text_list(d, "image_caption", rp)
    lists = {"image_id": ids, "input_image": paths, "image_caption": captions}
    n = max(len(v) for v in lists.values())
    for key, values in lists.items():
        if values and len(values) != n:
            longest = max(lists, key=lambda k: len(lists[k]))
            raise r.fail(at(rp, key), f"has {len(values)} entries but {longest} has {n}")
    images = []
    for k in range(n):
        iid = ids[k].strip() if ids else f"{rid}:img{k + 1}"
        place = at(at(rp, "image_id" if ids else "input_image" if paths else "image_caption"), k)
        if not iid:
            raise r.fail(place, "empty image id")
        if iid in seen_images:
            raise r.fail(place, f"duplicate image id {iid!r} (also at {seen_images[iid]})")
        seen_images[iid] = place
        ref = paths[k].strip() if paths else None
        if paths and not ref:
            raise r.fail(at(at(rp, "input_image"), k), "empty image path")
        if ref:
            image_places[iid] = at(at(rp, "input_image"), k)
        images.append(ImageRef(image_id=iid, caption=captions[k] if captions else "", path=ref))
    if not dialogue and not images:
        raise r.fail(rp, "round has no user text, no assistant text and no image")
    if not images and not any(u.speaker == "user" for u in dialogue):
        r.warn(f"round {rp} has no user text")
    return Round(round_id=rid, session_id=sid, time=when, dialogue=tuple(dialogue),
                 images=tuple(images), index_in_session=index)


def _time(r: Reader, d: dict, rp: str, sdate: date | None) -> datetime:
    text = r.optional(d, "time", rp, (str,))
    if text is None or not text.strip():
        if sdate is None:
            raise r.fail(at(rp, "time"), "round has no time and its session has no date")
        return datetime.combine(sdate, time())
    when = parse_datetime(text, sdate)
    if when is None:
        raise r.fail(at(rp, "time"), f"unreadable time {text!r} (expected e.g. 2025-02-03T08:15:00 or 08:15)")
    return when


def _qas(r: Reader, raw: object, stem: str) -> tuple[QA, ...]:
    if raw is None:
        return ()
    r.check(raw, at("", QAS), (list,))
    assert isinstance(raw, list)
    out: list[QA] = []
    seen: dict[str, str] = {}
    for i, q in enumerate(raw):
        with r.guard():
            out.append(_qa(r, q, at(at("", QAS), i), i, stem, seen))
    return tuple(out)


def _qa(r: Reader, q: object, qp: str, i: int, stem: str, seen: dict[str, str]) -> QA:
    """One question; raises InputError at its first fault."""
    r.check(q, qp, (dict,))
    assert isinstance(q, dict)
    question = r.required(q, "question", qp, (str,))
    if "answer" not in q or q["answer"] is None:
        raise r.fail(at(qp, "answer"), "missing required field")
    answer = r.scalar_text(q["answer"], at(qp, "answer"))
    sample = r.optional(q, "sample_id", qp, (str, int))
    qa_id = str(sample) if sample is not None and str(sample).strip() else f"{stem}:q{i + 1}"
    if qa_id in seen:
        raise r.fail(at(qp, "sample_id"), f"duplicate question id {qa_id!r} (also at {seen[qa_id]})")
    seen[qa_id] = qp
    qtype = ""
    for key in ("query_type", "question_type", "type"):
        value = r.optional(q, key, qp, (str,))
        if value:
            qtype = value
            break
    if not qtype:  # Mem-Gallery / MemEye name the type `point`: one, a list, or nested lists of them
        qtype = "+".join(_point_names(q.get("point")))
    category = r.optional(q, "category", qp, (int,))
    refusal = is_refusal(answer)
    explicit = r.optional(q, "refusal", qp, (bool,))
    if explicit is not None:
        refusal = explicit
    answer_kind = r.optional(q, "answer_kind", qp, (str,), "").strip()
    if answer_kind and answer_kind not in ANSWER_KINDS:
        raise r.fail(at(qp, "answer_kind"), f"unknown answer kind {answer_kind!r} (expected one of {', '.join(ANSWER_KINDS)})")
    tolerance = r.optional(q, "tolerance", qp, (int, float))
    if tolerance is not None and not (tolerance >= 0 and tolerance != float("inf")):
        raise r.fail(at(qp, "tolerance"), f"tolerance must be a finite number >= 0, found {tolerance!r}")
    if answer_kind == "refusal":
        refusal = True
    return QA(
        qa_id=qa_id, question=question, answer=answer, clues=tuple(r.text_list(q, "clue", qp)),
        qtype=qtype, category=category, options=_options(r, q.get("options"), at(qp, "options")),
        refusal=refusal, answer_kind=answer_kind,
        tolerance=float(tolerance) if tolerance is not None else None,
        image=_question_image(r, q, qp, qa_id),
    )


def _point_names(value: object) -> list[str]:
    """The type names in a `point` value (a name, or lists of names at any depth); other values name none."""
    if isinstance(value, str):
        return [value.strip()] if value.strip() else []
    if isinstance(value, list):
        return [n for v in value for n in _point_names(v)]
    return []


def _question_image(r: Reader, q: dict, qp: str, qa_id: str) -> ImageRef | None:
    """The question's own image (`question_image` path, `image_caption`), or None.

    The path is kept as written and not resolved: a question's image is a query, not memory, and
    the benchmark's files usually come without their pictures; the caption is what is searched."""
    paths = r.text_list(q, "question_image", qp)
    captions = r.text_list(q, "image_caption", qp)
    if not paths and not captions:
        return None
    if len(paths) > 1 or len(captions) > 1:
        raise r.fail(at(qp, "question_image" if len(paths) > 1 else "image_caption"),
                     "a question carries at most one image and one caption")
    return ImageRef(image_id=f"{qa_id}:image", caption=captions[0] if captions else "",
                    path=paths[0] if paths else None)


def _options(r: Reader, raw: object, place: str) -> tuple[tuple[str, str], ...]:
    """{"A": "...", ...} in file order, or a list (lettered A, B, ...)."""
    if raw is None:
        return ()
    if isinstance(raw, dict):
        return tuple((str(k), r.scalar_text(v, at(place, str(k)))) for k, v in raw.items())
    if isinstance(raw, list):
        letters = [chr(ord("A") + i) if i < 26 else str(i + 1) for i in range(len(raw))]
        return tuple((letters[i], r.scalar_text(v, at(place, i))) for i, v in enumerate(raw))
    raise r.fail(place, f"expected an object or a list, found {kind(raw)}")
