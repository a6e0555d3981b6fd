"""Extractive descriptions of hierarchy nodes (used when no LLM is configured).

A description is meant for a person skimming the memory and for the planner
ranking episodes: the most central sentences of the member texts
(TextRank-lite over token-overlap TF-IDF vectors, deterministic and
model-free, so it costs no encoder call), followed by the main named entities
and quantities in a bracket:

    "Melanie: I painted a lake at sunrise last Saturday. Caroline: ...
     [names: Melanie, Caroline; quantities: 5 km, 3 kids]"

The whole string is bounded by `max_chars` (300 by default). Descriptions of
descriptions (a topic from its episodes) read the bracket back, so the names
and quantities of the members carry up.
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Sequence

import numpy as np

MAX_CHARS = 300

_STOP = frozenset(
    """a about above after again against all am an and any are as at be because been before being below
    between both but by can could did do does doing down during each few for from further had has have having
    he her here hers herself him himself his how i if in into is it its itself just me more most my myself no
    nor not now of off on once only or other our ours ourselves out over own same she should so some such than
    that the their theirs them themselves then there these they this those through to too under until up very
    was we were what when where which while who whom why will with would you your yours yourself yourselves
    also really yeah yes oh wow hey hi hello thanks thank ok okay got get gets getting go going gone like im
    ive dont thats its lot much many one well sure s t ll re ve d m let lets""".split()
)
# Capitalized words that are not names: sentence openers, pronouns, speaker roles, months and days
# (dates are reported as quantities, and "May" is ambiguous).
_NOT_NAMES = frozenset(
    """i i'm i've i'll i'd the a an and but so oh hey hi hello wow yes yeah no not thanks thank that this it
    its it's there what when where who why how my your our we you they he she his her their just well sure
    okay ok great good nice cool awesome sounds congrats congratulations by the way also do did does can
    could would will was were is are have has had let let's maybe totally absolutely definitely really
    user assistant image photo text picture names quantities
    january february march april may june july august september october november december
    monday tuesday wednesday thursday friday saturday sunday today yesterday tomorrow""".split()
)
_UNITS = frozenset(
    """% km m cm mm mi miles mile kg g mg mcg lb lbs oz kcal cal calories l ml liters litres hours hour h hrs min
    mins minutes minute sec secs seconds s days day weeks week months month years year yrs bpm mmhg steps
    reps sets times pages books kids children people am pm usd eur dollars euros pounds bucks degrees °c °f
    c f k x""".split()
)
_MONTHS = frozenset(
    "jan feb mar apr may jun jul aug sep sept oct nov dec january february march april june july august "
    "september october november december".split()
)

_LABEL = re.compile(r"^\s*([A-Za-z][\w .'’-]{0,40}?):\s+(.*)$")
# line labels written by roles rather than people (core.hierarchy.event_text writes the image ones)
_ROLE_LABELS = frozenset({"user", "assistant", "system", "image", "text in image"})
_OCR_LABEL = "text in image"
_SENT_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[\"'“‘(]?[A-Z0-9])")
_TOKEN = re.compile(r"[a-z0-9]+")
_NAME = re.compile(r"\b[A-Z][\w’'-]*(?:\s+(?:of\s+|de\s+|van\s+|von\s+)?[A-Z][\w’'-]*)*")
_QUANT = re.compile(
    r"(?<![\w.:/])([$€£]\s?)?(\d+(?:[.,:/]\d+)*)(?:\s?(%|°[CF]|[A-Za-z]+(?:/[A-Za-z]+)?))?"
)
_BRACKET = re.compile(r"\s*\[((?:names|quantities): [^\[\]]*)\]\s*$")


@dataclass(frozen=True)
class _Sentence:
    text: str  # as displayed, with its "Speaker: " label when it had one
    body: str  # without the label
    label: str | None
    position: int


def strip_bracket(description: str) -> tuple[str, list[str], list[str]]:
    """Split a description into its sentence part and the names / quantities in its bracket."""
    # most texts (event texts) end without a bracket: skip the regex, which tries every position
    m = _BRACKET.search(description) if description and description.rstrip().endswith("]") else None
    if not m:
        return (description or "").strip(), [], []
    names: list[str] = []
    quants: list[str] = []
    for part in m.group(1).split("; "):
        key, _, vals = part.partition(": ")
        items = [v.strip() for v in vals.split(", ") if v.strip()]
        (names if key == "names" else quants).extend(items)
    return description[: m.start()].strip(), names, quants


def _sentences(texts: Sequence[str]) -> list[_Sentence]:
    out: list[_Sentence] = []
    for text in texts:
        for line in (text or "").splitlines():
            line = line.strip()
            if not line:
                continue
            label = None
            for s in _SENT_SPLIT.split(line):
                s = s.strip()
                # a label opens a line ("Caroline: ...") or, in a joined description, a sentence
                m = _LABEL.match(s)
                if m:
                    label, s = m.group(1).strip(), m.group(2).strip()
                if s:
                    out.append(_Sentence(f"{label}: {s}" if label else s, s, label, len(out)))
    return out


def _render(sents: Sequence[_Sentence]) -> str:
    """Join sentences, naming the speaker only when it changes."""
    parts: list[str] = []
    prev: str | None = None
    for s in sents:
        text = s.text if s.label and s.label != prev else s.body
        # sentences from different lines join into one: keep them apart
        parts.append(text if text[-1] in ".!?…\"'”)" else text + ".")
        prev = s.label
    return " ".join(parts)


def _tokens(s: str) -> list[str]:
    return [t for t in _TOKEN.findall(s.lower()) if len(t) > 1 and t not in _STOP]


def centrality(sentences: Sequence[str], iterations: int = 30, damping: float = 0.85) -> np.ndarray:
    """TextRank-lite score of each sentence: PageRank over TF-IDF cosine similarities.

    Returns one non-negative score per sentence (uniform when nothing overlaps);
    an empty input gives an empty array.
    """
    n = len(sentences)
    if n == 0:
        return np.zeros(0)
    toks = [_tokens(s) for s in sentences]
    vocab: dict[str, int] = {}
    for ts in toks:
        for t in ts:
            vocab.setdefault(t, len(vocab))
    if not vocab:
        return np.full(n, 1.0 / n)
    tf = np.zeros((n, len(vocab)), dtype=np.float64)
    for i, ts in enumerate(toks):
        for t in ts:
            tf[i, vocab[t]] += 1.0
    df = (tf > 0).sum(axis=0)
    tfidf = tf * np.log((1.0 + n) / (1.0 + df) + 1.0)
    norms = np.linalg.norm(tfidf, axis=1, keepdims=True)
    unit = np.divide(tfidf, norms, out=np.zeros_like(tfidf), where=norms > 0)
    sim = unit @ unit.T
    np.fill_diagonal(sim, 0.0)
    rows = sim.sum(axis=1, keepdims=True)
    trans = np.divide(sim, rows, out=np.full_like(sim, 1.0 / n), where=rows > 0)
    score = np.full(n, 1.0 / n)
    for _ in range(iterations):
        score = (1 - damping) / n + damping * (trans.T @ score)
    # a sentence with almost no content ("Hi Mel!") should not win on a tie
    content = np.array([min(len(ts), 4) / 4.0 for ts in toks])
    return score * (0.25 + 0.75 * content)


def main_names(sentences: Sequence[_Sentence], extra: Sequence[str] = (), limit: int = 5) -> list[str]:
    """Capitalized names and places, most frequent first (speaker labels count once per sentence)."""
    counts: Counter[str] = Counter()
    first: dict[str, int] = {}
    midsentence: set[str] = set()
    found: list[tuple[str, bool]] = []
    for s in sentences:
        if s.label and s.label.lower() not in _ROLE_LABELS and all(w[:1].isupper() for w in s.label.split()):
            found.append((s.label, True))
        if s.label and s.label.lower() == _OCR_LABEL:
            continue  # screen text capitalizes headings ("Total", "Deep"): no names from it
        for m in _NAME.finditer(s.body):
            found.append((re.sub(r"[’']s$", "", m.group(0)).strip(" '’-"), m.start() > 0))
    seen_mid = {name for name, mid in found if mid}
    for k, (name, mid) in enumerate(found):
        if not mid and " " in name and name not in seen_mid:
            # "Anytime Nate", "Thanks Mel": a sentence's first word is capitalized anyway
            found[k] = (name.split(" ", 1)[1], True)
    for name in extra:
        found.append((name, True))
    for name, mid in found:
        if mid:
            midsentence.add(name)
    for name, mid in found:
        words = name.split()
        while words and words[0].lower() in _NOT_NAMES:
            words = words[1:]
        while words and words[-1].lower() in _NOT_NAMES:
            words = words[:-1]
        name = " ".join(words)
        if len(name) < 2 or name.lower() in _NOT_NAMES:
            continue
        # a lone capitalized word opening a sentence is usually an ordinary word
        if len(words) == 1 and name not in midsentence and not name.isupper():
            continue
        counts[name] += 1
        first.setdefault(name, len(first))
    return sorted(counts, key=lambda k: (-counts[k], first[k]))[:limit]


def main_quantities(sentences: Sequence[_Sentence], extra: Sequence[str] = (), limit: int = 3) -> list[str]:
    """Numbers with their units ("5 km", "120/80 mmHg", "$30"), most frequent first; bare numbers last."""
    counts: Counter[str] = Counter()
    shown: dict[str, str] = {}
    first: dict[str, int] = {}
    with_unit: set[str] = set()

    def add(text: str, has_unit: bool) -> None:
        key = text.lower()
        counts[key] += 1
        shown.setdefault(key, text)
        first.setdefault(key, len(first))
        if has_unit:
            with_unit.add(key)

    for s in sentences:
        for m in _QUANT.finditer(s.body):
            cur, num, unit = m.group(1) or "", m.group(2), m.group(3)
            if unit and unit.lower() not in _UNITS and unit.lower() not in _MONTHS:
                # a following ordinary word is kept as the counted thing ("3 cats"), a stopword is not
                if unit.lower() in _STOP or len(unit) > 12 or not unit.islower():
                    unit = None
            text = f"{cur}{num}" + (("" if unit in ("%",) else " ") + unit if unit else "")
            add(text.replace("$ ", "$"), bool(unit or cur))
    for q in extra:
        add(q, True)
    ranked = sorted(counts, key=lambda k: (k not in with_unit, -counts[k], first[k]))
    return [shown[k] for k in ranked[:limit]]


def _truncate(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text[: max(limit - 1, 0)]
    if " " in cut[limit // 2 :]:
        cut = cut[: cut.rfind(" ")]
    return cut.rstrip(" ,;:") + "…"


def _bracket(names: list[str], quants: list[str]) -> str:
    parts = []
    if names:
        parts.append("names: " + ", ".join(names))
    if quants:
        parts.append("quantities: " + ", ".join(quants))
    return f" [{'; '.join(parts)}]" if parts else ""


def describe(texts: Sequence[str], max_chars: int = MAX_CHARS) -> str:
    """An extractive description of `texts` (member texts or member descriptions), at most `max_chars` long.

    The most central sentences (see `centrality`) in their original order, then
    the main names and quantities in a bracket. Brackets found at the end of the
    inputs (descriptions of members) are merged instead of repeated as text.
    Empty input gives "".
    """
    bodies: list[str] = []
    extra_names: list[str] = []
    extra_quants: list[str] = []
    for t in texts:
        body, names, quants = strip_bracket(t)
        bodies.append(body)
        extra_names.extend(names)
        extra_quants.extend(quants)
    sents = _sentences(bodies)
    if not sents:
        return _bracket(extra_names[:5], extra_quants[:3]).strip()[:max_chars]
    names = main_names(sents, extra_names)
    quants = main_quantities(sents, extra_quants)
    bracket = _bracket(names, quants)
    while len(bracket) > max_chars // 2 and (names or quants):
        if len(names) > 1 or not quants:
            names = names[:-1]
        else:
            quants = quants[:-1]
        bracket = _bracket(names, quants)
    budget = max_chars - len(bracket)
    scores = centrality([s.body for s in sents])  # speaker labels would make every line alike
    order = sorted(range(len(sents)), key=lambda i: (-scores[i], i))
    chosen: list[int] = []
    used = 0
    seen_bodies: set[str] = set()
    n_content = [len(_tokens(s.body)) for s in sents]
    substantial = any(n >= 3 for n in n_content)
    floor = float(scores.mean())  # filler below average centrality (greetings, asides) is left out
    for i in order:
        s = sents[i]
        key = s.body.lower()
        if key in seen_bodies or (substantial and n_content[i] < 3) or (chosen and scores[i] < floor):
            continue
        cost = len(s.text) + 2  # a separating space and perhaps a closing period
        if used + cost <= budget:
            chosen.append(i)
            seen_bodies.add(key)
            used += cost
        if budget - used < 20:
            break
    if not chosen:  # the most central sentence alone is too long: shorten it
        return _truncate(sents[order[0]].text, budget) + bracket
    return _render([sents[i] for i in sorted(chosen)]) + bracket


def short_label(description: str, max_chars: int = 60) -> str:
    """A one-line label for a tree view: the description's first sentence, shortened; else its names."""
    body, names, quants = strip_bracket(description or "")
    if body:
        first = _SENT_SPLIT.split(body.splitlines()[0].strip())[0]
        return _truncate(first, max_chars)
    return _truncate(", ".join(names + quants), max_chars)

