"""The benchmarks' own metrics (core/evaluation/benchmarks.py) on examples worked out by hand, and on
the first questions of a real Mem-Gallery file (skipped where shared/data is absent)."""
from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from core.evaluation import benchmarks as b

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


# ---------------------------------------------------------------- Mem-Gallery normalisation

def test_universal_normalisation_keeps_ids_and_decimals_and_drops_articles_first():
    # lower -> "the d1:img_003 image"; '_' protected; "the" removed as a word; ':' -> ' '
    assert b.normalize_answer_universal("The D1:IMG_003 image") == "d1 img_003 image"
    # the '.' of 3.14 sits between digits: kept; the final '.' and the ',' become spaces; "and"/"the" go
    assert b.normalize_answer_universal("It costs 3.14 dollars, and the rest.") == "it costs 3.14 dollars rest"
    # articles go BEFORE punctuation: in "the-end" the regex sees \bthe\b (the '-' is a boundary)
    assert b.normalize_answer_universal("the-end") == "end"
    # ... and inside a protected id the '_' glues the word: "img_the" keeps its "the"
    assert b.normalize_answer_universal("IMG_the") == "img_the"


def test_mem_gallery_f1_of_an_id_with_an_extra_word():
    # pred "d1 img_003 image" -> stems [d1, img_003, imag]; gold "d1 img_003" -> [d1, img_003]
    # overlap 2: P = 2/3, R = 2/2 -> F1 = 2·(2/3)·1 / (2/3 + 1) = (4/3)/(5/3) = 0.8
    assert b.mg_f1("The D1:IMG_003 image", "D1:IMG_003") == pytest.approx(0.8)


def test_mem_gallery_f1_stems_with_porter():
    # Porter: running -> run, runs -> run: one token each, all shared -> F1 1.0
    assert b.mg_f1("running", "runs") == 1.0
    # "cakes baked" -> [cake, bake]; "baking a cake" -> [bake, cake] ("a" removed): F1 1.0
    assert b.mg_f1("cakes baked", "baking a cake") == 1.0
    # no overlap -> 0 (and two empty strings also 0: their `if num_same == 0: return 0`)
    assert b.mg_f1("blue", "red") == 0.0 and b.mg_f1("", "") == 0.0


def test_mem_gallery_exact_match_ignores_case_punctuation_and_spaces_only():
    # "chocolate chip!" -> "chocolate chip" == "chocolate  chip" collapsed
    assert b.mg_em("Chocolate chip!", "chocolate  chip") == 1.0
    # EM does not stem: "chips" != "chip"
    assert b.mg_em("chocolate chips", "chocolate chip") == 0.0
    # the decimal point is kept, so 3.5 and 35 differ; "3.5" vs "3 5" too
    assert b.mg_em("3.5", "35") == 0.0 and b.mg_em("3.5 cups", "3.5 cups.") == 1.0


def test_mem_gallery_bleu1_brevity_penalty_on_a_short_prediction():
    # ref "a red velvet cake" -> [red, velvet, cake] (3), pred [red] (1): precision 1/1,
    # BP = exp(1 - 3/1) = e^-2 = 0.1353...
    assert b.mg_bleu1("red", "a red velvet cake") == pytest.approx(math.exp(-2))
    # a longer prediction has BP 1: 3 of 5 unigrams match -> 0.6
    assert b.mg_bleu1("red velvet cake with cream", "red velvet cake") == pytest.approx(0.6)
    # either side empty after normalisation -> 0.0 ("the" is all article)
    assert b.mg_bleu1("the", "cake") == 0.0 and b.mg_bleu1("cake", "") == 0.0


def test_mem_gallery_retrieval_cuts_to_k_before_deduplicating():
    # k = 3 keeps [a, b, a] -> deduplicated [a, b]: 1 hit of 2 returned, 1 of 2 clues
    assert b.retrieval_at_k(["a", "b", "a", "c"], ["a", "c"], k=3) == \
        {"precision_k": 0.5, "recall_k": 0.5, "hitrate_k": 1.0}
    # no clues: recall 0.0 (their rule), hitrate 0.0
    assert b.retrieval_at_k(["a"], [], k=10) == {"precision_k": 0.0, "recall_k": 0.0, "hitrate_k": 0.0}


# ---------------------------------------------------------------- LoCoMo

def test_locomo_normalisation_deletes_punctuation_without_a_space():
    # LoCoMo removes punctuation outright: "D1:IMG_003" -> "d1img003" (Mem-Gallery would keep two words)
    assert b.locomo_normalize("D1:IMG_003") == "d1img003"
    assert b.locomo_normalize("The cat, and a dog.") == "cat dog"


def test_locomo_single_answer_f1_with_porter_stems():
    # "she went running" -> [she, went, run]; "running" -> [run]: P 1/3, R 1 -> F1 = (2/3)/(4/3) = 0.5
    assert b.locomo_score("she went running", "running", 2) == pytest.approx(0.5)


def test_locomo_category_1_is_the_mean_best_match_over_gold_parts():
    # gold parts: hiking, swimming, painting; prediction parts: painting, hiking
    # best per gold part: 1, 0, 1 -> mean 2/3
    assert b.locomo_score("painting, hiking", "hiking, swimming, painting", 1) == pytest.approx(2 / 3)
    # the same answer without the comma is ONE prediction part: "painting hiking" vs each gold part
    # gives F1 2·(1/2)·1/(3/2) = 2/3 for hiking and painting, 0 for swimming -> mean 4/9
    assert b.locomo_score("painting hiking", "hiking, swimming, painting", 1) == pytest.approx(4 / 9)


def test_locomo_category_3_takes_the_gold_before_the_semicolon():
    assert b.locomo_score("Sweden", "Sweden; she moved from there as a child", 3) == 1.0


def test_locomo_category_5_is_the_refusal_phrase_rule():
    assert b.locomo_score("That was not mentioned in the conversation", "anything", 5) == 1.0
    assert b.locomo_score("No information available.", "", 5) == 1.0
    # other refusals do not count under LoCoMo's rule (the engine's is_refusal is wider)
    assert b.locomo_score("I do not know", "", 5) == 0.0


def test_locomo_unknown_category_raises():
    with pytest.raises(ValueError, match="category"):
        b.locomo_score("x", "y", 6)


# ---------------------------------------------------------------- aggregation

def test_aggregate_means_per_benchmark_and_type():
    rows = [{"benchmark": "mem-gallery", "type": "FR", "f1": 1.0, "em": 1.0},
            {"benchmark": "mem-gallery", "type": "FR", "f1": 0.5, "em": 0.0},
            {"benchmark": "mem-gallery", "type": "VS", "f1": 0.0, "em": 0.0},
            {"benchmark": "locomo", "type": "locomo-cat1", "f1": 0.25}]
    agg = b.aggregate(rows)
    assert agg["mem-gallery"]["n"] == 3 and agg["mem-gallery"]["f1"] == 0.5
    assert agg["mem-gallery"]["by_type"]["FR"] == {"n": 2, "f1": 0.75, "em": 0.5}
    assert agg["locomo"] == {"n": 1, "f1": 0.25, "by_type": {"locomo-cat1": {"n": 1, "f1": 0.25}}}
    assert b.aggregate([]) == {}


# ---------------------------------------------------------------- real data

def test_first_questions_of_a_real_mem_gallery_file():
    path = DATA / "mem-gallery" / "Baking_Dessert_Daily_Life_Skill.json"
    if not path.exists():
        pytest.skip(f"Mem-Gallery data absent ({path}); it lives in shared/data, never in the repo")
    qas = json.loads(path.read_text())["human-annotated QAs"][:5]
    assert {q["point"] for q in qas} <= {"FR", "AR", "MR", "VS", "VR", "CD", "TR", "TTL", "KR"}
    for q in qas:
        gold = q["answer"]
        # the gold against itself is perfect by every metric
        assert b.mg_f1(gold, gold) == 1.0 and b.mg_em(gold, gold) == 1.0
        assert b.mg_bleu1(gold, gold) == pytest.approx(1.0)
        # a refusal scores nothing against an answer with content, unless the gold is the refusal
        if "not mentioned" not in gold.lower():
            assert b.mg_em("Not mentioned.", gold) == 0.0
        # the clue rounds retrieved in order give recall 1 when they fit in k
        if 0 < len(q["clue"]) <= 10:
            assert b.retrieval_at_k(q["clue"], q["clue"], 10)["recall_k"] == 1.0
    refusal = [q for q in qas if q["answer"].strip().lower().startswith("not mentioned")]
    assert refusal and b.mg_em("not mentioned", refusal[0]["answer"]) == 1.0
