"""Counting pictures: "How many mallow images did I share?" is answered by counting the evidence rounds whose
pictures show the thing asked about, not by an extracted span.

What is counted is the question's phrase around its picture noun ("mallow images", "pictures of red clothes",
"photos ... related to chocolate desserts") less grammar, the memory's people's names and time words. A
picture counts when its caption, its OCR text or what was said with it holds every one of those words (as
words, plural or not). Words no evidence picture holds at all ("during the autumn outing") say when or
where, not what: they are left out, but at least one word must remain. Only English grammar and the
picture nouns of `shape.IMAGE_NOUNS`: nothing here knows what pictures are of.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

from .images import RoundImage
from .shape import IMAGE_NOUNS, POLITE

_IMG = "|".join(IMAGE_NOUNS)
# "how many <...> images", "how many images/photos <...>", "how many of the photos <...>"
_HOW_MANY_PICTURES = re.compile(r"\bhow\s+many\b(?P<rest>.*)$", re.IGNORECASE | re.DOTALL)
_HAS_PICTURE = re.compile(rf"\b(?:{_IMG})\b", re.IGNORECASE)
# grammar of a question about pictures: function words, verbs of showing and sharing a picture, counting words
_GRAMMAR = frozenset("""
a an the of in on at to and or but by for from with without about into over under during before after since
until through across between among is are was were be been being do does did have has had i me my mine we us
our you your he him his she her they them their it its this that these those which what who how many much
any some all each every other another more most total altogether overall in-total there here ever
share shares shared sharing send sends sent sending upload uploads uploaded post posts posted show shows
showed shown showing take took taken taking snap snapped send related relate relating about depict depicts
depicted depicting feature features featured featuring contain contains contained containing include
includes included including display displays displayed conversation conversations chat chats dialogue
dialogues memory memories user assistant number count
""".split())
_TIME_WORDS = frozenset("""
january february march april may june july august september october november december jan feb mar apr jun
jul aug sep sept oct nov dec monday tuesday wednesday thursday friday saturday sunday today yesterday week
weeks weekend month months year years day days morning evening night afternoon early late mid middle first
last recent recently
""".split())


@dataclass(frozen=True)
class PictureCount:
    n: int
    words: tuple[str, ...]  # what every counted picture shows
    rounds: tuple[str, ...]  # the rounds of the counted pictures, in evidence order
    images: tuple[str, ...]  # their image ids


def _norm(w: str) -> str:
    """A word without its plural ending ("desserts" -> dessert, "clothes" -> cloth, "dresses" -> dress)."""
    w = w.lower()
    if len(w) > 4 and w.endswith("ies"):
        return w[:-3] + "y"
    if len(w) > 4 and re.search(r"(?:ss|sh|ch|x)es$", w):
        return w[:-2]
    if len(w) > 3 and w.endswith("s") and not w.endswith("ss"):
        return w[:-1]
    return w


def _words(text: str) -> set[str]:
    return {_norm(w) for w in re.findall(r"[A-Za-z][A-Za-z'-]*", text)}


# "how many <things> did Lin review / view / look at": things a person looked through are shown in pictures
_HOW_MANY_VIEWED = re.compile(
    r"\bhow\s+many\s+(?P<rest>.+?)\s+(?:did|do|does|have|has|had)\s+(?:\w+\s+){1,3}?(?:view|review|examine|"
    r"browse|see|look\s+(?:at|through)|check\s+out|try\s+on|compare|consider|show|share)\b", re.IGNORECASE | re.DOTALL)


def counted_phrase(question: str, people: Sequence[str] = ()) -> tuple[str, ...] | None:
    """The words of what a "how many pictures" question counts, in order; None when the question does not
    count pictures (no "how many", or no picture noun after it, nor a verb of looking at the things
    counted: "How many midi dresses did Lin review?")."""
    m = _HOW_MANY_PICTURES.search(question)
    if not m or not _HAS_PICTURE.search(m.group("rest")):
        m = _HOW_MANY_VIEWED.search(question)
        if not m or re.fullmatch(r"\s*times?\s*", m.group("rest"), re.IGNORECASE):
            return None  # ("how many times did I see the dentist" counts occasions, not pictures)
    names = {w.lower() for p in people for w in re.findall(r"[A-Za-z]+", p)}
    out = []
    for w in re.findall(r"[A-Za-z][A-Za-z'-]*", m.group("rest")):
        lw = w.lower().strip("'-")
        if not lw or lw in _GRAMMAR or lw in _TIME_WORDS or lw in POLITE or lw in names \
                or lw in IMAGE_NOUNS or len(lw) < 2:
            continue
        n = _norm(lw)
        if n not in out:
            out.append(n)
    return tuple(out)


def count_pictures(words: Sequence[str], images: Sequence[RoundImage]) -> PictureCount | None:
    """The evidence pictures showing every word of `words` that some evidence picture shows (the others say
    when or where). One count per round (several images of one round show one thing). None when no word is
    shown by any picture."""
    shown = [(img, _words(" ".join((img.caption, img.ocr_text, img.said)))) for img in images]
    every = set().union(*(ws for _, ws in shown)) if shown else set()
    kept = tuple(w for w in words if w in every)
    if not kept:
        return None
    rounds: dict[str, str] = {}
    for img, ws in shown:
        if img.round_id not in rounds and all(w in ws for w in kept):
            rounds[img.round_id] = img.image_id
    return PictureCount(len(rounds), kept, tuple(rounds), tuple(rounds.values()))
