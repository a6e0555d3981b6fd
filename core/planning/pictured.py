"""What a question's own picture shows, named by the memory's rounds that show a picture like it.

A question may come with its picture (its caption) and ask what it shows ("What kind of X is shown in
the picture?"). The memory then holds rounds whose images look alike (their "Image: ..." caption lines
are close to the question's caption: content-word overlap and the text encoder's cosine) and whose
dialogue names the thing. `pictured_answer` ranks the evidence units by that caption similarity, keeps
the best and those close to it, and returns the noun phrase their dialogue uses for the thing: a phrase
said across those rounds (and in their captions), repeated, said in a naming construction ("called X",
"known as X", "this is a X", "this one is an X"), after a demonstrative ("this soft X") or emphasised
(`**X**`) wins; a word the question's own caption already says is no answer, a phrase of several words
it holds counts less (a proper name the dialogue writes counts in full). None when no unit shows a like
picture or no phrase is named or said enough.

Only English grammar: nothing here knows what the pictures are of.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..model import EvidenceUnit
from ..protocols import TextEncoder
from .shape import IMAGE_NOUNS, _main_clause
from .scoring import STOPWORDS, stem, tokens
from .span import ADJ_SKIP, AUX, COLOURS, PREPS, PRONOUNS, TIME_WORDS, VERBS, split_unit
from .trace import Answer

MIN_CAPTION_SIM = 0.45  # a unit's best image caption must be this close to the question's caption
UNIT_MARGIN = 0.08  # units this close to the best one count as showing the same kind of picture
MAX_UNITS = 6
OVERLAP_WEIGHT = 0.5  # caption similarity = this * token overlap + (1 - this) * cosine
MAX_WORDS = 5  # words of a candidate phrase
NAMING_BONUS = 2.0  # a phrase named by a naming construction / emphasis, per unit
CAPTION_WEIGHT = 0.5  # an occurrence in a unit's caption counts this much of one in its dialogue
LONGER_SHARE = 0.8  # a longer phrase wins when its score is at least this share of a shorter one's
REPEAT_WEIGHT = 0.5  # a phrase said twice or more in a unit's dialogue
PROPER_WEIGHT = 0.5  # a phrase the dialogue writes as a proper name (capitalised inside a sentence)
KNOWN_WEIGHT = 0.6  # a phrase of several words the question's caption already holds
MIN_SCORE = 1.2  # the answer's score, in units of caption similarity (about: said in two rounds, or named)

_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*[A-Za-z]|[A-Za-z]")
_BREAK = re.compile(r"[,;:.!?()\[\]\"“”—–]|\s-\s")
# naming constructions: the phrase after them is a name (general English)
_NAMING = re.compile(r"\b(?:called|named|known as|name is|names? of it is|this is an?|that is an?|it is an?|"
                     r"it's an?|this one is an?|that one is an?|these are|those are)\s+(?:the\s+)?", re.IGNORECASE)
_DEMONSTRATIVE = re.compile(r"\b(?:this|these)\s+", re.IGNORECASE)
DEMO_WEIGHT = 0.5
# general English adjectives of look, size and appraisal: they describe one picture, never name a thing
_DESCRIPTIVE = frozenset("""
light dark pale bright deep soft vivid muted warm cool rich subtle neutral small large big tiny little huge long
short tall wide narrow thin thick simple plain beautiful pretty lovely cute nice great good gorgeous stunning
adorable amazing elegant charming classic modern cozy cosy casual bold fun striking delicate gentle fresh clean
sleek chic stylish perfect favorite favourite lighter darker brighter softer colored coloured multicolored
multicoloured full whole real main
""".split())
# where on a thing: a part of it, not its name ("front pockets" -> not "front")
_POSITIONS = frozenset("front back top tops bottom side sides left right middle end edge".split())
_EMPHASIS = re.compile(r"\*\*([^*]{2,60})\*\*")
_INTENSIFIERS = frozenset("so very super really too quite incredibly extremely pretty rather fairly most more less "
                          "such absolutely totally truly".split())
_NON_NAME = (STOPWORDS | AUX | PRONOUNS | PREPS | VERBS | ADJ_SKIP | TIME_WORDS | _INTENSIFIERS |
             frozenset("one ones another same different kind type sort style thing things way bit lot "
                       "picture pictures image images photo photos shot angle close-up first second third fourth "
                       "fifth sixth last next number inside outside color colour shade tone shape size texture "
                       "pattern look feel vibe piece center centre still even already almost always maybe "
                       "perhaps".split()))
_NOT_DIALOGUE = frozenset({"image", "ocr"})


@dataclass(frozen=True)
class _Seen:
    unit: EvidenceUnit
    sim: float


def _content(text: str) -> set[str]:
    return set(tokens(text))


def _overlap(a: set[str], b: set[str]) -> float:
    return 2 * len(a & b) / (len(a) + len(b)) if a and b else 0.0


def _image_lines(u: EvidenceUnit) -> list[str]:
    return [ln.strip()[len("image:"):].strip() for ln in (u.text or "").splitlines()
            if ln.strip().lower().startswith("image:")]


def _word_ok(w: str) -> bool:
    """A word that may be part of a name: no function word, pronoun, contraction, adverb in -ly, form of a
    frequent verb or past participle (a hyphenated word is judged by its parts' last)."""
    low = w.lower().replace("’", "'")
    if "'" in low and w[0].isupper() and low.endswith("'s") and low[:-2] not in _NON_NAME:
        low = low[:-2]  # a possessive name ("Peter's")
    if "'" in low or len(low) < 2 or low.isdigit() or low in _NON_NAME:
        return False
    last = low.split("-")[-1]
    if "-" not in low and (low.endswith("ly") or (low.endswith("ed") and len(low) > 4)):
        return False
    return stem(last) not in VERBS and last not in _NON_NAME


def _phrases(text: str, cased: bool = False) -> list[tuple[str, ...]]:
    """Candidate phrases of `text`: sub-runs (up to MAX_WORDS words) of runs of words that are no
    function word, verb, pronoun or intensifier, within punctuation; a run never starts with a colour
    or a word after an intensifier ("so bright"). Lower-cased unless `cased`."""
    return [p for p, _ in _cased_phrases(text)] if cased else \
        [tuple(w.lower() for w in p) for p, _ in _cased_phrases(text)]


def _cased_phrases(text: str) -> list[tuple[tuple[str, ...], bool]]:
    """(phrase as written, proper): proper when every word is capitalised and the phrase does not open the
    sentence (`text` is one sentence)."""
    out: list[tuple[tuple[str, ...], bool]] = []
    first = True
    for chunk in _BREAK.split(text.replace("**", " ")):
        words = _WORD.findall(chunk)
        run: list[tuple[str, bool]] = []
        prev = ""
        for w in words + [""]:
            ok = bool(w) and _word_ok(w) and prev.lower() not in _INTENSIFIERS
            if ok:
                run.append((w, first))
            else:
                while run and run[0][0].lower() in COLOURS:
                    run = run[1:]
                for i in range(len(run)):
                    for j in range(i + 1, min(len(run), i + MAX_WORDS) + 1):
                        ws = tuple(x for x, _ in run[i:j])
                        proper = not run[i][1] and all(x[0].isupper() for x in ws)
                        out.append((ws, proper))
                run = []
            if w:
                first = False
            prev = w
    return out


def _run_after(text: str, end: int) -> list[str]:
    """The words that may be part of a name right after offset `end` of `text`, up to the first other word."""
    head = _BREAK.split(text[end:end + 80].replace("**", ""))[0]
    words = []
    for w in _WORD.findall(head):
        if not _word_ok(w):
            break
        words.append(w)
    return words


def _named(text: str) -> dict[tuple[str, ...], float]:
    """Phrases `text` puts forward as names, with their weight: the run of words inside an emphasis or
    right after a naming construction (1), or after a demonstrative ("This soft beige X is ...": DEMO_WEIGHT),
    and the run's tails ("a textured gray coat" -> also "gray coat", "coat")."""
    runs: list[tuple[list[str], float]] = []
    for m in _EMPHASIS.finditer(text):
        runs.append((_WORD.findall(m.group(1)), 1.0))
    for m in _NAMING.finditer(text):
        runs.append((_run_after(text, m.end()), 1.0))
    for m in _DEMONSTRATIVE.finditer(text):
        runs.append((_run_after(text, m.end()), DEMO_WEIGHT))
    out: dict[tuple[str, ...], float] = {}
    for words, weight in runs:
        words = [w.lower() for w in words if _word_ok(w)][-MAX_WORDS:]
        for i in range(len(words)):
            p = tuple(words[i:])
            if _name_like(p):
                out[p] = max(out.get(p, 0.0), weight)
    return out


def _name_like(p: tuple[str, ...]) -> bool:
    """A phrase that may name a thing: it neither starts nor ends with a colour or descriptive adjective."""
    def plain(w: str) -> bool:
        return all(x in COLOURS or x in _DESCRIPTIVE for x in w.split("-") if x)
    return bool(p) and not plain(p[0]) and not plain(p[-1]) and p[-1] not in _POSITIONS


def _key(p: tuple[str, ...]) -> tuple[str, ...]:
    """A phrase as stemmed words, hyphenated words split ("cowl-neck" = "cowl neck")."""
    return tuple(stem(x) for w in p for x in w.lower().split("-") if x)


def _contains(hay: tuple[str, ...], needle: tuple[str, ...]) -> bool:
    n = len(needle)
    return any(hay[i:i + n] == needle for i in range(len(hay) - n + 1))


_ABOUT = re.compile(r"\b(?:" + "|".join(IMAGE_NOUNS) + r"|shown|pictured|depicted|this|these)\b", re.IGNORECASE)


def about_the_picture(question: str) -> bool:
    """Whether a question asks what its own picture shows ("What kind of X is shown in the picture?", "What
    is this called?"): it points at the picture, asks "what"/"which" and asks no relation of it ("in which
    ...", "who designed ...", "when ...")."""
    if not _ABOUT.search(question) or _RELATION.search(question):
        return False
    return bool(re.match(r"\s*(?:what|which)\b", _main_clause(question), re.IGNORECASE)) or \
        bool(re.search(r"\b(?:know|tell|remember|recall)\s+(?:me\s+)?(?:what|which)\b", question, re.IGNORECASE))


_RELATION = re.compile(r"\b(?:in|on|at|from|by|of|to|for|with|into|near)\s+(?:which|what|whom)\b", re.IGNORECASE)


def like_units(caption: str, units: Sequence[EvidenceUnit], encoder: TextEncoder | None) -> list[_Seen]:
    """The evidence units showing a picture most like `caption`, best first (at most MAX_UNITS within
    UNIT_MARGIN of the best, none below MIN_CAPTION_SIM)."""
    seen: dict[str, EvidenceUnit] = {}
    for u in units:
        if u.unit_id not in seen and _image_lines(u):
            seen[u.unit_id] = u
    if not seen or not caption.strip():
        return []
    pool = list(seen.values())
    lines = [(i, c) for i, u in enumerate(pool) for c in _image_lines(u)]
    qtok = _content(caption)
    ov = np.array([_overlap(qtok, _content(c)) for _, c in lines])
    if encoder is not None:
        vec = np.asarray(encoder.encode([caption] + [c for _, c in lines]), dtype=np.float32)
        cos = vec[1:] @ vec[0]
        sim = OVERLAP_WEIGHT * ov + (1 - OVERLAP_WEIGHT) * cos
    else:
        sim = ov
    best = np.full(len(pool), -1.0)
    for (i, _), s in zip(lines, sim):
        best[i] = max(best[i], float(s))
    order = np.argsort(-best)
    top = float(best[order[0]])
    if top < MIN_CAPTION_SIM:
        return []
    return [_Seen(pool[i], float(best[i])) for i in order[:MAX_UNITS] if best[i] >= top - UNIT_MARGIN]


def pictured_answer(question: str, caption: str, units: Sequence[EvidenceUnit],
                    encoder: TextEncoder | None = None) -> Answer | None:
    """The name the memory gives what the question's picture (described by `caption`) shows, from the
    evidence `units` (see the module docstring); None when not confident."""
    like = like_units(caption, units, encoder)
    if not like:
        return None
    known = {stem(w) for w in tokens(caption + " " + question)} | \
        {stem(w.lower()) for w in _WORD.findall(caption + " " + question)}
    scores: dict[tuple[str, ...], float] = {}
    named_in: dict[tuple[str, ...], float] = {}
    surface: dict[tuple[str, ...], str] = {}
    where: dict[tuple[str, ...], list[int]] = {}
    said: set[tuple[str, ...]] = set()  # phrases of the dialogue (a name is said, not only captioned)
    proper: set[tuple[str, ...]] = set()  # phrases the dialogue writes as a proper name
    for k, seen in enumerate(like):
        sents = split_unit(seen.unit.text)
        talk = " ".join(s.text for s in sents if s.speaker not in _NOT_DIALOGUE)
        pics = " ".join(s.text for s in sents if s.speaker == "image")
        got: dict[tuple[str, ...], float] = {}
        mentions: dict[tuple[str, ...], int] = {}
        for sent in (x.text for x in sents if x.speaker not in _NOT_DIALOGUE):
            for p, is_proper in _cased_phrases(sent):
                kp = _key(p)
                said.add(kp)
                mentions[kp] = mentions.get(kp, 0) + 1
                if is_proper:
                    proper.add(kp)
                    surface[kp] = " ".join(p)
                surface.setdefault(kp, " ".join(p).lower())
        for kp, n in mentions.items():
            got[kp] = 1.0 + REPEAT_WEIGHT * (min(n, 2) - 1) + (PROPER_WEIGHT if kp in proper else 0.0)
        for p in _phrases(pics):
            surface.setdefault(_key(p), " ".join(p))
        for kp in {_key(p) for p in _phrases(pics)}:
            got[kp] = got.get(kp, 0.0) + CAPTION_WEIGHT
        for p, weight in _named(talk).items():
            kp = _key(p)
            named_in[kp] = named_in.get(kp, 0.0) + weight
            got.setdefault(kp, 1.0)
            surface.setdefault(kp, " ".join(p))
        for kp, w in got.items():
            scores[kp] = scores.get(kp, 0.0) + w * seen.sim
            where.setdefault(kp, []).append(k)
    cands = []
    for kp, sc in scores.items():
        if kp not in said or not _name_like(tuple(surface[kp].lower().split())):
            continue
        sc += NAMING_BONUS * named_in.get(kp, 0) * like[0].sim
        if kp not in proper and all(w in known for w in kp):
            # the question's caption (or the question) already says it: a word of it is no answer, a phrase
            # of several may be the name it gives too (a proper name said in the dialogue counts in full)
            if len(kp) < 2:
                continue
            sc *= KNOWN_WEIGHT
        cands.append((sc, kp))
    if not cands:
        return None
    cands.sort(key=lambda x: (-x[0], -len(x[1])))
    best_score, best = cands[0]
    # a longer phrase holding the best one, nearly as often said, names it more precisely
    while True:
        longer = [(sc, kp) for sc, kp in cands if len(kp) > len(best) and _contains(kp, best)
                  and sc >= LONGER_SHARE * best_score]
        if not longer:
            break
        best_score, best = max(longer, key=lambda x: (x[0], len(x[1])))
    if best_score < MIN_SCORE * like[0].sim:
        return None
    units_used = [like[k].unit for k in sorted(set(where.get(best, [0])))]
    text = surface[best]
    text = text[0].upper() + text[1:]
    rounds = tuple(dict.fromkeys(r for u in units_used for r in u.rounds))
    return Answer(text, "extractive", min(1.0, best_score / (len(like) or 1)),
                  tuple(u.unit_id for u in units_used), rounds,
                  notes=(f"named by the rounds showing a like picture ({like[0].sim:.2f})",))


__all__ = ["pictured_answer", "like_units", "about_the_picture"]
