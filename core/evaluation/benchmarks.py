"""The benchmarks' own metrics, computed as their authors compute them.

One job: score a prediction (and a list of retrieved rounds) the way the
benchmark's published evaluation script does, so that figures here can be put
beside the papers' tables. The engine's own scorer (scoring.score_answer) is a
different, stricter-by-kind judgement and stays where it is.

Sources (read, not copied):
- Mem-Gallery: `benchmark/memengine/evaluate/evaluation.py` of
  YuanchenBei/Mem-Gallery (normalize_answer_universal, f1_score,
  exact_match_score, bleu_score with weights (1, 0, 0, 0),
  calculate_retrieval_metrics, the per-category means of main()).
- LoCoMo: `task_eval/evaluation.py` of snap-research/locomo (normalize_answer,
  f1_score, f1 [multi-answer], eval_question_answering's per-category rules).

Pure functions, no I/O. NLTK's PorterStemmer and sentence_bleu need no data
download. Every scorer returns a float in [0, 1].
"""
from __future__ import annotations

import re
import statistics
import string
from collections import Counter
from typing import Iterable, Sequence

from nltk.stem import PorterStemmer
from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

_PORTER = PorterStemmer()  # both scripts: `ps = PorterStemmer()` at module level
_PUNCT = set(string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the|and)\b")  # both scripts remove a|an|the|and as whole words

MEM_GALLERY = "mem-gallery"
LOCOMO = "locomo"


def _f1(pred_tokens: Sequence[str], gold_tokens: Sequence[str]) -> float:
    """Token-multiset F1; 0 when nothing overlaps (both scripts: `if num_same == 0: return 0`,
    so two empty strings score 0, not 1)."""
    same = sum((Counter(pred_tokens) & Counter(gold_tokens)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(pred_tokens), same / len(gold_tokens)
    return 2 * precision * recall / (precision + recall)


# ---------------------------------------------------------------- Mem-Gallery

_DOT, _US = "DOTPLACEHOLDER", "UNDERSCOREPLACEHOLDER"  # fixed, punctuation-free, upper case after lower()


def normalize_answer_universal(s: object) -> str:
    """Mem-Gallery's normalize_answer_universal: lower case; protect a '.' between digits ("3.14")
    and every '_' ("IMG_001"); remove a/an/the/and as whole words (before punctuation is touched,
    so "D1:the" keeps no "the" but "the-end" loses it); every other string.punctuation char
    becomes a space; restore the protected chars; collapse whitespace."""
    s = str(s).lower()
    s = re.sub(r"(?<=\d)\.(?=\d)", _DOT, s)  # step 3 of theirs
    s = s.replace("_", _US)  # step 4
    s = _ARTICLES.sub(" ", s)  # step 5: articles BEFORE punctuation
    s = "".join(" " if ch in _PUNCT else ch for ch in s)  # step 6
    s = s.replace(_DOT, ".").replace(_US, "_")  # step 7
    return " ".join(s.split())  # step 8


def mg_f1(prediction: str, gold: str) -> float:
    """Mem-Gallery f1_score: F1 over Porter-stemmed tokens of the normalised strings."""
    p = [_PORTER.stem(w) for w in normalize_answer_universal(prediction).split()]
    g = [_PORTER.stem(w) for w in normalize_answer_universal(gold).split()]
    return _f1(p, g)


def mg_em(prediction: str, gold: str) -> float:
    """Mem-Gallery exact_match_score: 1.0 when the normalised strings are equal (no stemming)."""
    return float(normalize_answer_universal(prediction) == normalize_answer_universal(gold))


def mg_bleu1(prediction: str, gold: str) -> float:
    """Mem-Gallery bleu_score(weights=(1, 0, 0, 0)): NLTK sentence_bleu of the normalised tokens
    against the one reference, smoothing method1; 0.0 when either side has no token."""
    pred = normalize_answer_universal(prediction).split()
    ref = normalize_answer_universal(gold).split()
    if not pred or not ref:
        return 0.0
    return float(sentence_bleu([ref], pred, weights=(1, 0, 0, 0),
                               smoothing_function=SmoothingFunction().method1))


def retrieval_at_k(retrieved: Iterable[str], clues: Iterable[str], k: int = 10) -> dict[str, float]:
    """Mem-Gallery calculate_retrieval_metrics: cut the retrieved ids to k, then de-duplicate
    (their order: cut first); precision = hits / max(1, returned), recall = hits / |clues|
    (0.0 without clues), hitrate = 1.0 when any clue is hit."""
    got = list(dict.fromkeys(str(x) for x in list(retrieved)[:k]))
    gold = {str(c) for c in clues}
    hits = sum(1 for x in got if x in gold)
    return {"precision_k": hits / max(1, len(got)), "recall_k": hits / len(gold) if gold else 0.0,
            "hitrate_k": 1.0 if hits else 0.0}


def mem_gallery_scores(prediction: str, gold: str) -> dict[str, float]:
    """The three answer metrics Mem-Gallery's main() computes per sample: f1, em, bleu1."""
    return {"f1": mg_f1(prediction, gold), "em": mg_em(prediction, gold), "bleu1": mg_bleu1(prediction, gold)}


# ---------------------------------------------------------------- LoCoMo

LOCOMO_REFUSALS = ("no information available", "not mentioned")  # eval_question_answering, category 5


def locomo_normalize(s: object) -> str:
    """LoCoMo's normalize_answer: drop ',' ; lower; delete punctuation (no space put in);
    remove a/an/the/and; collapse whitespace."""
    s = str(s).replace(",", "").lower()
    s = "".join(ch for ch in s if ch not in _PUNCT)
    s = _ARTICLES.sub(" ", s)
    return " ".join(s.split())


def locomo_f1_score(prediction: str, gold: str) -> float:
    """LoCoMo f1_score: F1 over Porter-stemmed tokens of the normalised strings."""
    p = [_PORTER.stem(w) for w in locomo_normalize(prediction).split()]
    g = [_PORTER.stem(w) for w in locomo_normalize(gold).split()]
    return _f1(p, g)


def locomo_multi_f1(prediction: str, gold: str) -> float:
    """LoCoMo f1 (category 1, multi-answer): both split at ','; the mean over gold parts of the
    best f1_score against any prediction part (empty gold parts are kept and score 0, as theirs)."""
    preds = [p.strip() for p in str(prediction).split(",")]
    golds = [g.strip() for g in str(gold).split(",")]
    return statistics.fmean(max(locomo_f1_score(p, g) for p in preds) for g in golds)


def locomo_refused(prediction: str) -> bool:
    """LoCoMo's category-5 rule: the lower-cased output contains 'no information available'
    or 'not mentioned'."""
    low = str(prediction).lower()
    return any(phrase in low for phrase in LOCOMO_REFUSALS)


def locomo_score(prediction: str, gold: object, category: int) -> float:
    """One LoCoMo QA as eval_question_answering scores it: category 3 takes the gold before ';';
    2, 3, 4: f1_score; 1: multi-answer f1; 5: 1.0 when locomo_refused. Raises ValueError for a
    category outside 1..5 (theirs raises ValueError too)."""
    prediction, gold = str(prediction or ""), str(gold)
    if category == 3:
        gold = gold.split(";")[0].strip()
    if category in (2, 3, 4):
        return locomo_f1_score(prediction, gold)
    if category == 1:
        return locomo_multi_f1(prediction, gold)
    if category == 5:
        return 1.0 if locomo_refused(prediction) else 0.0
    raise ValueError(f"locomo_score: category must be 1..5, got {category!r}")


# ---------------------------------------------------------------- aggregation

def _means(rows: list[dict], keys: Sequence[str]) -> dict:
    return {"n": len(rows), **{k: round(statistics.fmean(r[k] for r in rows), 4) for k in keys}}


def aggregate(rows: Iterable[dict]) -> dict:
    """Per benchmark, as both scripts report: the mean of each metric over all its questions and per
    question type (Mem-Gallery: `point`; LoCoMo: category). `rows`: {"benchmark": name,
    "type": str, metric: float, ...}; rows of one benchmark carry the same metric keys.
    Returns {name: {"n", metric..., "by_type": {type: {"n", metric...}}}}; {} for no rows."""
    by_bench: dict[str, list[dict]] = {}
    for r in rows:
        by_bench.setdefault(r["benchmark"], []).append(r)
    out = {}
    for name, rs in sorted(by_bench.items()):
        keys = [k for k in rs[0] if k not in ("benchmark", "type")]
        types: dict[str, list[dict]] = {}
        for r in rs:
            types.setdefault(r["type"], []).append(r)
        out[name] = {**_means(rs, keys), "by_type": {t: _means(v, keys) for t, v in sorted(types.items())}}
    return out
