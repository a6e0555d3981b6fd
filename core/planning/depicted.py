"""What a picture of the memory showed: "What was in my photo from 5 May?", "Describe the picture I sent
on July 8", "What did the screenshot I shared last week show?".

`asks_description(question)` says whether a question asks what one of the memory's own pictures showed
(not which picture shows something: that is answered with image ids, core.planning.shape.asks_image;
not what the question's own picture shows: core.planning.pictured).

`describe(question, units, images, time_range, encoder)` picks the picture and answers with its caption
(or, for an image without one, its OCR text): among the images of the evidence rounds (the answerer adds
every image of the named days, core.planning.images.images_between), those inside the question's time
range when it names one, the one whose round is said to hold the kind of picture asked
for ("photo" vs "screenshot": the round's own words, and how much text the image holds — a screenshot is
mostly text, a photo little), whose caption matches the question's content words, and whose round the
retrieval ranked first. None when no evidence round holds an image.

Only English words for pictures and for describing them: nothing here knows what the pictures are of.
"""
from __future__ import annotations

import re
from datetime import date
from typing import Sequence

import numpy as np

from ..protocols import TextEncoder
from .dates import MONTHS, WEEKDAYS
from .shape import IMAGE_NOUNS
from .span import toks
from .trace import Answer

_IMG = "|".join(IMAGE_NOUNS)
# pictures of a scene vs pictures of a screen or a document
SCREEN_NOUNS = frozenset(("screenshot", "screenshots", "screen", "screens", "screengrab", "scan", "scans"))
SCENE_NOUNS = frozenset(("photo", "photos", "photograph", "photographs", "picture", "pictures", "pic", "pics",
                         "snapshot", "snapshots", "shot", "shots", "snap", "selfie"))
# an image whose OCR text has this many words or more reads as a screen or a document
TEXT_HEAVY_WORDS = 8
DESCRIBE_VERBS = r"show|shows|showed|shown|depict|depicts|depicted|contain|contains|contained|feature|features|" \
                 r"featured|capture|captures|captured|display|displays|displayed|have|has|had"
_ASKS = (
    # "what was in my photo", "what is on the screenshot", "what's in that picture"
    re.compile(r"\bwhat(?:'s|\s+(?:was|is|were|are))\s+(?:there\s+)?(?:in|on)\s+(?:the|my|that|this|your|a|our|"
               r"his|her|their)\s+(?:\w+\s+){0,2}?(?:" + _IMG + r")\b"),
    # "what did the photo I shared on 5 May show", "what does my picture depict"
    re.compile(r"\bwhat\s+(?:did|does|do)\s+(?:the|my|that|this|your|our|his|her|their)\s+(?:\w+\s+){0,2}?(?:"
               + _IMG + r")\b.*\b(?:" + DESCRIBE_VERBS + r")\b"),
    # "describe the picture I sent", "tell me what my photo showed"
    re.compile(r"\b(?:describe|recall|summari[sz]e)\s+(?:the|my|that|this|your|our|his|her|their)\s+"
               r"(?:\w+\s+){0,2}?(?:" + _IMG + r")\b"),
    # "what was shown in the photo", "what was pictured in my snapshot"
    re.compile(r"\bwhat\s+(?:was|is|were|are)\s+(?:shown|pictured|depicted|captured|visible)\s+(?:in|on)\s+"
               r"(?:the|my|that|this|your|our|his|her|their)\s+(?:\w+\s+){0,2}?(?:" + _IMG + r")\b"),
)


def asks_description(question: str) -> bool:
    """Whether `question` asks what one of the memory's pictures showed (see the module docstring)."""
    low = " ".join(str(question).lower().split())
    return any(p.search(low) for p in _ASKS)


def asked_kind(question: str) -> str | None:
    """"screen" when the question asks about a screenshot or a scan, "scene" for a photo or picture,
    None when it says only "image"."""
    words = set(re.findall(r"[a-z]+", question.lower()))
    if words & SCREEN_NOUNS:
        return "screen"
    if words & SCENE_NOUNS:
        return "scene"
    return None


_NOT_CONTENT = frozenset(toks(" ".join(SCREEN_NOUNS | SCENE_NOUNS | frozenset(IMAGE_NOUNS)) + " "
                             + DESCRIBE_VERBS.replace("|", " ") + " describe recall summarise summarize tell "
                             "share shared sharing send sent post posted take took taken upload uploaded",
                             keep_stopwords=True))


def content_words(question: str) -> set[str]:
    """The question's words about what the picture shows: without picture and describing words, dates,
    month and weekday names and numbers."""
    return {t for t in toks(question) if t not in _NOT_CONTENT and not t.isdigit()
            and t not in MONTHS and t not in WEEKDAYS and not re.fullmatch(r"\d+(?:st|nd|rd|th)", t)}


def _kind_score(kind: str | None, said: str, text: str) -> float:
    """How well an image fits the asked kind: what its round calls it (that kind or the other) and how much
    text its OCR found, half each; without a word for it in the round, the text alone decides (a screen is
    mostly text; a caption, written by whoever described the image, says nothing of that)."""
    if kind is None:
        return 0.5
    words = set(re.findall(r"[a-z]+", said.lower()))
    screen, scene = bool(words & SCREEN_NOUNS), bool(words & SCENE_NOUNS)
    heavy = min(1.0, len(text.split()) / TEXT_HEAVY_WORDS)
    by_text = heavy if kind == "screen" else 1.0 - heavy
    if screen != scene:
        # what the round calls it and what the image holds, half each ("see picture" under a screen of text)
        return 0.5 * (1.0 if (kind == "screen") == screen else 0.0) + 0.5 * by_text
    return by_text


def _day(value) -> date | None:
    if value is None:
        return None
    try:
        return date.fromisoformat(str(value)[:10])
    except ValueError:
        return None


def describe(question: str, units: Sequence, images: Sequence, time_range=None,
             encoder: TextEncoder | None = None, drop_words: frozenset = frozenset()) -> Answer | None:
    """The caption of the picture `question` asks about (see the module docstring).

    `units`: the evidence units in retrieval order (`rounds`, `time`, `text`); `images`: RoundImage-like
    objects (round_id, image_id, caption, ocr_text) of their rounds; `time_range`: an object with `start`
    and `end` dates, or None; `drop_words`: words of the question that are not about the picture's content
    (question words, names of people). None when no unit's round holds an image."""
    rank: dict[str, int] = {}
    when: dict[str, date | None] = {}
    said: dict[str, str] = {}
    for k, u in enumerate(units):
        for r in u.rounds:
            rank.setdefault(r, k)
            when.setdefault(r, _day(u.time))
            said.setdefault(r, u.text or "")
    imgs = [i for i in images if getattr(i, "image_id", None) and i.round_id in rank]
    if not imgs:
        return None
    # the image's own round says what it is and when it came (an evidence unit may span several rounds)
    said.update({i.round_id: i.said for i in imgs if getattr(i, "said", "")})
    when.update({i.round_id: d for i in imgs if (d := _day(getattr(i, "time", None))) is not None})
    if time_range is not None:
        inside = [i for i in imgs if (d := when.get(i.round_id)) is not None and time_range.start <= d <= time_range.end]
        if not inside:
            return None  # the question names a time and no picture of that time is in the evidence
        imgs = inside
    kind = asked_kind(question)
    content = content_words(question) - drop_words
    texts = [(i.caption or i.ocr_text or "").strip() for i in imgs]
    over = np.array([len(content & set(toks(t))) / len(content) if content else 0.0 for t in texts])
    cos = np.zeros(len(imgs))
    if encoder is not None and content and any(texts):
        vecs = np.asarray(encoder.encode([" ".join(sorted(content))] + [t or "-" for t in texts]), dtype=np.float32)
        cos = vecs[1:] @ vecs[0]
    fit = np.array([_kind_score(kind, said.get(i.round_id, ""), i.ocr_text or "") for i in imgs])
    prior = np.array([1.0 / (1 + rank[i.round_id]) for i in imgs])
    score = 0.4 * fit + 0.25 * over + 0.25 * cos + 0.1 * prior
    best = int(np.argmax(score))
    img = imgs[best]
    text = texts[best]
    if not text:
        return None
    text = re.sub(r"\s+", " ", text).strip()
    unit_ids = tuple(u.unit_id for u in units if img.round_id in u.rounds)
    return Answer(text, "extractive", float(min(1.0, max(0.0, score[best]))), unit_ids, (img.round_id,),
                  notes=(f"the caption of image {img.image_id} (round {img.round_id})",))


__all__ = ["asks_description", "asked_kind", "describe"]
