"""Display names of hierarchy nodes: what a person reads in a tree view, nothing the engine searches.

A topic or an episode is named by 2-3 distinctive words of its description
(the extractive or LLM summary of its members' texts), weighted by TF-IDF
against its sibling nodes (the other topics; the other episodes of the same
topic), so two neighbouring nodes read differently:

    "parcel, mistake, apartment"     "heating, bill, higher"     "repotting, soil, roots"

Words are counted without speaker labels ("user:", "Melanie:"), English
grammar and chat words, numbers and the units after them; an assistant's or an
image's OCR lines count half (they echo the user or are noisy). An event is
named by its round's first non-assistant line, shortened at a word boundary
with "…" (never mid-word).

Names are a pure function of the descriptions (ties go to the word seen
first), so they are the same whichever view lists the node. They are
computed at read time and never stored: descriptions, embeddings and
search stay as they are.
"""
from __future__ import annotations

import math
import re
from collections import Counter
from functools import lru_cache
from typing import Sequence

from .. import lexicon
from ..describe import strip_bracket

NAME_WORDS = 3  # words in a topic or episode name
NAME_CHARS = 40  # longest topic or episode name (three long words are shortened, see trim_words)
EVENT_CHARS = 60  # longest event name, "…" included

# English words that name nothing: the lexicon's grammar lists plus the usual stop words and the
# acknowledgements of a chat ("thanks, got it"). Grammar, not a domain.
_ENGLISH = frozenset(
    """about above after again against all also always am an and any anything are around as at away back be
    because been before being below between both but by can cannot could did does doing done down during each
    either else even ever every few for from further had has have having here how however into its itself just
    least less let lot lots many may maybe might more most much must myself never next nor not nothing now off
    often once one only onto other others otherwise our ours out over own perhaps please quite rather same
    several shall she should since some something sometimes soon still such than that the their theirs them
    then there these they thing things this those though through thus till too toward towards under until upon
    very via was well were what whatever when whenever where whether which while who whole whom whose why will
    with within without would yet you your yours yourself
    thanks thank nice great good cool okay sure yeah yes wow hey hello sounds fun glad awesome amazing
    right fine really totally definitely absolutely exactly pretty kind bit stuff gonna wanna lol haha
    someone somebody anyone anybody everyone everybody everything
    today yesterday tomorrow tonight mon tue tues wed thu thur thurs fri sat sun jan feb mar apr jun jul aug
    sep sept oct nov dec january february march april june july august september october november december""".split()
)
_STOP = frozenset().union(
    _ENGLISH, lexicon.PRONOUNS, lexicon.DETERMINERS, lexicon.CONNECTIVES, lexicon.BOUNDARY_WORDS,
    lexicon.AUXILIARIES, lexicon.LIGHT_VERBS, lexicon.QUESTION_WORDS, lexicon.HEDGES, lexicon.PREPOSITIONS,
    lexicon.TIME_WORDS, lexicon.CALENDAR_NOUNS, lexicon.STOP_WORDS, lexicon.REPORTING_VERBS,
    lexicon.NUMBER_WORDS,
)
_UNITS = frozenset(u.lower() for u in lexicon.UNITS)
# a speaker or line label at the start of a sentence: "user: ...", "Melanie: ...", "Text in image: ..."
# (no digits: "Round 3: Sam played" is a sentence, not a speaker)
_LABEL = re.compile(r"^([A-Za-z][A-Za-z .'’-]{0,40}?):\s+")
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_POSSESSIVE = re.compile(r"['’]s$")
_WORD = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*")
# lines of these labels echo or transcribe: they count half
_HALF_WEIGHT = frozenset({"assistant", "system", "text in image"})
_NOT_DIALOGUE = frozenset({"assistant", "system", "image", "text in image"})


def trim_words(text: str, max_chars: int) -> str:
    """`text` on one line, at most `max_chars` long, cut at a word boundary and ended with "…" when cut.

    Never cuts inside a word: a first word longer than `max_chars` is kept whole (then "…").
    Raises ValueError for max_chars < 2.
    """
    if max_chars < 2:
        raise ValueError(f"max_chars must be >= 2, got {max_chars}")
    text = " ".join((text or "").split())
    if len(text) <= max_chars:
        return text
    cut = text[: max_chars]  # one more than fits with the "…": tells whether the cut falls on a space
    if " " in cut:
        cut = cut[: cut.rfind(" ")]
    else:
        cut = text.split(" ", 1)[0]
    return cut.rstrip(" ,;:.!?-–—") + "…"


def _segments(description: str):
    """(label or None, sentence text) of a description, a label carried until the next one; the
    names of its bracket (see core.describe) come last, labelled "names"."""
    body, names, _quants = strip_bracket(description or "")
    label = None
    for line in body.splitlines():
        for sent in _SENTENCE.split(line.strip()):
            m = _LABEL.match(sent)
            if m:
                label, sent = m.group(1).strip().lower(), sent[m.end():]
            if sent:
                yield label, sent
    for name in names:  # the bracket's names: proper names of the members, worth a mention each
        yield "names", name


def _key(word: str) -> str | None:
    """The counted form of a word (lower case, possessive and plural -s off), None for a word naming nothing."""
    w = word.lower().replace("’", "'")
    if w.endswith("'s"):
        w = w[:-2]
    if "'" in w or w in _STOP or (len(w) < 3 and not (len(word) == 2 and word.isupper())):
        return None
    if len(w) > 4 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    return None if w in _STOP else w


@lru_cache(maxsize=8192)  # a page lists the same descriptions run after run
def _terms(description: str) -> tuple[dict[str, float], dict[str, int], dict[str, str]]:
    """(weight of each counted word, its first position, its display form) in one description."""
    weight: dict[str, float] = {}
    first: dict[str, int] = {}
    forms: dict[str, Counter] = {}
    openers: dict[str, str] = {}  # the form of a word seen only opening a sentence
    pos = 0
    for label, sent in _segments(description):
        w8 = 0.5 if label in _HALF_WEIGHT else 1.0
        for i, m in enumerate(_WORD.finditer(sent)):
            word = m.group(0)
            key = _key(word)
            pos += 1
            if key is None or (word.lower() in _UNITS and sent[: m.start()].rstrip()[-1:].isdigit()):
                continue  # a unit after its number ("27 percent") names no subject
            weight[key] = weight.get(key, 0.0) + w8
            first.setdefault(key, pos)
            # a capital opening a sentence says nothing; elsewhere it marks a name ("Anna", "CGM")
            if i > 0 or label == "names" or word.isupper():
                forms.setdefault(key, Counter())[_POSSESSIVE.sub("", word)] += 1
            else:
                openers.setdefault(key, _POSSESSIVE.sub("", word.lower()))
    # the most frequent form, lower case on a tie ("Heart Coffee" and "coffee" -> coffee)
    shown = {k: min(c.items(), key=lambda kv: (-kv[1], not kv[0].islower(), kv[0]))[0] for k, c in forms.items()}
    for k, form in openers.items():
        shown.setdefault(k, form)
    return weight, first, shown


def sibling_names(descriptions: Sequence[str], words: int = NAME_WORDS) -> list[str]:
    """A name for each of a set of sibling nodes: its `words` words of highest TF-IDF weight against the others.

    The words are listed in the order they first appear in the description,
    the name is at most NAME_CHARS long. A description without a counted word is named by its first sentence,
    shortened (see trim_words); an empty one gets "". Raises ValueError for words < 1.
    """
    if words < 1:
        raise ValueError(f"words must be >= 1, got {words}")
    terms = [_terms(d or "") for d in descriptions]
    df: Counter = Counter()
    for weight, _first, _shown in terms:
        df.update(weight.keys())
    n = len(terms)
    out = []
    for d, (weight, first, shown) in zip(descriptions, terms):
        if not weight:
            out.append(event_name(d or "", NAME_CHARS))
            continue
        score = {k: w * (math.log((1 + n) / (1 + df[k])) + 1.0) for k, w in weight.items()}
        top = sorted(score, key=lambda k: (-score[k], first[k]))[:words]
        out.append(trim_words(", ".join(shown[k] for k in sorted(top, key=first.__getitem__)), NAME_CHARS))
    return out


def event_name(text: str, max_chars: int = EVENT_CHARS) -> str:
    """An event's name: its first dialogue line that is not the assistant's, without its speaker label,
    shortened at a word boundary (trim_words). Falls back to the first line (an image caption, say);
    "" for an empty text."""
    fallback = None
    for line in (text or "").splitlines():
        line = line.strip()
        if not line:
            continue
        m = _LABEL.match(line)
        label = m.group(1).strip().lower() if m else None
        body = line[m.end():] if m else line
        if label not in _NOT_DIALOGUE and body:
            return trim_words(body, max_chars)
        if fallback is None and body:
            fallback = body
    return trim_words(fallback or "", max_chars)


def node_names(rows: Sequence[tuple[str, str, str | None, str]]) -> dict[str, str]:
    """Names of nodes given as (node_id, level, parent_id, description) rows.

    Events are named alone (event_name); topics and episodes against the
    other rows of the same level and parent (sibling_names), so pass every
    sibling of a node to get its usual name.
    """
    groups: dict[tuple[str, str | None], list[tuple[str, str]]] = {}
    out: dict[str, str] = {}
    for node_id, level, parent_id, description in rows:
        if level == "event":
            out[node_id] = event_name(description or "")
        else:
            groups.setdefault((level, parent_id), []).append((node_id, description or ""))
    for members in groups.values():
        out.update(zip((m[0] for m in members), sibling_names([m[1] for m in members])))
    return out
