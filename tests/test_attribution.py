"""Shapley attribution of evidence units: the axioms, the sampled estimator, and answers over a real memory."""
from __future__ import annotations

import itertools
import json
import math
import random
import re

import duckdb
import pytest

from core.attribution import (AttributionResult, attribute, attribute_trace, kernel_shap, restrict_steps,
                              shapley_exact, shapley_sampled)
from core.config import DEFAULT
from core.errors import InputError
from core.planning import QueryEngine
from core.planning.tools import ANALYTIC_TOOLS
from test_planning_data import SLEEP, memory_path  # noqa: F401


# ---------------------------------------------------------------- reference and games

def shapley_by_permutations(players, v):
    """The paper's eq.: the mean marginal contribution over all n! orderings (independent reference)."""
    phi = {p: 0.0 for p in players}
    perms = list(itertools.permutations(players))
    for order in perms:
        before: set = set()
        for p in order:
            phi[p] += v(frozenset(before | {p})) - v(frozenset(before))
            before.add(p)
    return {p: x / len(perms) for p, x in phi.items()}


def random_game(players, seed):
    rng = random.Random(seed)
    table = {frozenset(s): rng.random() for k in range(len(players) + 1)
             for s in itertools.combinations(players, k)}
    return table.__getitem__


def answer_game(s):
    """Like an extractive answer: u0 alone suffices, or u1 and u2 together; u3..u9 never matter."""
    return float("u0" in s or ("u1" in s and "u2" in s))


class Recorder:
    def __init__(self, v):
        self.v = v
        self.seen: list[frozenset] = []

    def __call__(self, s):
        self.seen.append(s)
        return self.v(s)


# ---------------------------------------------------------------- axioms of the exact values

@pytest.mark.parametrize("n,seed", [(1, 0), (2, 1), (4, 2), (6, 3)])
def test_exact_matches_the_permutation_formula_and_is_efficient(n, seed):
    players = [f"p{i}" for i in range(n)]
    v = random_game(players, seed)
    phi = shapley_exact(players, v)
    ref = shapley_by_permutations(players, v)
    assert all(math.isclose(phi[p], ref[p], abs_tol=1e-12) for p in players)
    assert math.isclose(sum(phi.values()), v(frozenset(players)) - v(frozenset()), abs_tol=1e-12)


def test_exact_evaluates_each_subset_once():
    players = list("abcde")
    rec = Recorder(answer_game)
    shapley_exact(players, rec)
    assert len(rec.seen) == len(set(rec.seen)) == 2 ** 5


def test_symmetry_interchangeable_units_get_equal_values():
    # b and c are interchangeable: either one together with a gives the answer
    v = lambda s: float("a" in s and ("b" in s or "c" in s))  # noqa: E731
    phi = shapley_exact(list("abcd"), v)
    assert math.isclose(phi["b"], phi["c"], abs_tol=1e-12)
    assert phi["b"] > 0 and phi["a"] > phi["b"]


def test_null_player_gets_zero():
    players = [f"u{i}" for i in range(7)]
    phi = shapley_exact(players, answer_game)
    for p in players[3:]:
        assert abs(phi[p]) < 1e-12
    assert phi["u0"] > phi["u1"] > 0


def test_bad_players_and_budgets_are_refused():
    with pytest.raises(ValueError, match="distinct"):
        shapley_exact(["a", "b", "a"], answer_game)
    with pytest.raises(ValueError, match="too many"):
        shapley_exact([f"p{i}" for i in range(17)], answer_game)
    with pytest.raises(ValueError, match="budget"):
        shapley_sampled(["a", "b"], answer_game, 1)
    with pytest.raises(ValueError, match="empty and the full"):
        kernel_shap(["a", "b"], {frozenset(): 0.0})


# ---------------------------------------------------------------- the sampled batch

def test_batch_holds_empty_and_full_and_never_repeats():
    players = [f"u{i}" for i in range(8)]
    rec = Recorder(answer_game)
    phi, calls = shapley_sampled(players, rec, 20, random.Random(5))
    assert calls == len(rec.seen) == 20
    assert len(set(rec.seen)) == 20
    assert frozenset() in rec.seen and frozenset(players) in rec.seen
    middle = [s for s in rec.seen if s not in (frozenset(), frozenset(players))]
    assert all(1 <= len(s) <= 7 for s in middle)
    assert math.isclose(sum(phi.values()), 1.0, abs_tol=1e-9)  # efficiency holds for the estimate too


def test_full_budget_batch_is_the_powerset_and_the_fit_is_exact():
    players = [f"p{i}" for i in range(5)]
    v = random_game(players, 11)
    est, calls = shapley_sampled(players, v, 10_000, random.Random(0))
    exact = shapley_exact(players, v)
    assert calls == 2 ** 5
    assert max(abs(est[p] - exact[p]) for p in players) < 1e-9


@pytest.mark.parametrize("game,n", [("random", 6), ("random", 8), ("answer", 10)])
def test_sampled_estimate_converges_to_exact(game, n):
    players = [f"u{i}" for i in range(n)]
    v = random_game(players, 3) if game == "random" else answer_game
    exact = shapley_exact(players, v)
    # (below ~2^n / 4 the minimum-norm equal split dominates and the error need not fall monotonically)
    budgets = [2 ** n // 4, 2 ** n // 2, 3 * 2 ** n // 4, 2 ** n - 4]
    errors = []
    for b in budgets:
        errs = []
        for seed in range(12):
            est, calls = shapley_sampled(players, v, b, random.Random(seed))
            assert calls <= b
            errs.append(max(abs(est[p] - exact[p]) for p in players))
        errors.append(sum(errs) / len(errs))
    assert all(later < earlier for earlier, later in zip(errors, errors[1:])), errors
    assert errors[-1] < 0.1, errors


def test_small_budget_still_ranks_the_decisive_unit_first():
    players = [f"u{i}" for i in range(10)]
    hits = 0
    for seed in range(20):
        est, calls = shapley_sampled(players, answer_game, 32, random.Random(seed))
        hits += max(est, key=est.get) == "u0"
    assert hits >= 18


# ---------------------------------------------------------------- over a real memory

@pytest.fixture
def engine(memory_path, embedder):  # noqa: F811
    con = duckdb.connect(str(memory_path))
    yield QueryEngine(con, embedder, DEFAULT)
    con.close()


def test_kitten_answer_rests_on_the_kitten_round(engine):
    trace = engine.ask("What did I name my kitten?")
    assert "Miso" in trace.answer.text
    res = attribute(engine, trace)
    assert isinstance(res, AttributionResult) and res.exact
    n = len({u.unit_id for u in trace.evidence})
    assert n >= 3 and len(res.values) == n
    assert res.calls == 2 ** n - 1  # every subset but the full set, which is the trace's own answer
    kitten = [u for u in trace.evidence if "Miso" in u.text]
    assert len(kitten) == 1
    best = max(res.values, key=lambda u: u.value)
    assert best.unit == kitten[0].unit_id
    assert best.round == kitten[0].rounds[0]
    assert math.isclose(sum(u.value for u in res.values), res.v_full - res.v_empty, abs_tol=1e-9)
    assert (res.v_full, res.v_empty) == (1.0, 0.0)
    for u in res.values:
        if u.unit != best.unit:
            assert abs(u.value) < 1e-9  # workout and sleep rounds never change the answer
    own = attribute(engine, trace, scorer=lambda text: float("miso" in text.lower()), threshold=0.5)
    assert own.reference == "gold" and own.value_of(best.unit) == pytest.approx(1.0)


def test_restricting_to_all_units_reproduces_the_answer(engine):
    trace = engine.ask("What is my sourdough starter called?")
    ids = {u.unit_id for u in trace.evidence}
    assert restrict_steps(trace.steps, ids) == tuple(trace.steps)
    now = engine.rule_answerer.answer(trace.question, restrict_steps(trace.steps, ids),
                                      __import__("datetime").datetime.fromisoformat(trace.now))
    assert now.text == trace.answer.text
    assert restrict_steps(trace.steps, set()) == tuple(s for s in trace.steps if not s.units)


def test_computed_answer_rests_on_its_one_unit_and_gold_is_used(engine):
    trace = engine.ask("How many hours did I sleep on average in March?")
    step = [s for s in trace.steps if s.tool in ANALYTIC_TOOLS and s.status == "ok"][-1]
    march = [r["sleep_hours"] for r in SLEEP if r["day"].year == 2026 and r["day"].month == 3]
    gold = f"{sum(march) / len(march):.2f} hours"
    res = attribute(engine, trace, gold=gold, kind="number", tolerance=0.01)
    assert res.reference == "gold" and res.v_full == 1.0 and res.v_empty == 0.0
    assert res.value_of(step.units[0].unit_id) == pytest.approx(1.0)
    wrong = attribute(engine, trace, gold="3.1 hours", kind="number", tolerance=0.01)
    assert wrong.v_full == 0.0 and all(abs(u.value) < 1e-12 for u in wrong.values)
    with pytest.raises(InputError, match="gold"):
        attribute(engine, trace, gold="no number here", kind="number")


def test_interchangeable_rows_share_the_credit_and_graded_values_add_up(engine):
    trace = engine.ask("Which days did I sleep more than 9 hours?")
    rows = [u for u in trace.evidence if u.kind == "row"]
    assert len(rows) >= 2
    res = attribute(engine, trace)
    vals = [res.value_of(u.unit_id) for u in rows]
    assert all(v > 0 for v in vals)
    assert math.isclose(sum(vals), 1.0, abs_tol=1e-9)
    graded = attribute(engine, trace, graded=True)
    assert graded.graded and 0.0 <= graded.v_empty < graded.v_full == 1.0
    assert math.isclose(sum(u.value for u in graded.values), graded.v_full - graded.v_empty, abs_tol=1e-9)


def test_attribute_trace_for_the_cli(engine):
    trace = engine.ask("What did I name my kitten?")
    rows = attribute_trace(engine, trace)
    json.dumps(rows)
    assert [r["unit"] for r in rows] == list(dict.fromkeys(u.unit_id for u in trace.evidence))
    assert all(r["round"] in trace.evidence_rounds for r in rows)
    assert {"unit", "round", "value"} <= set(rows[0])


class EvidenceLLM:
    """An LLM answerer that answers from what it is shown: a name when the evidence holds it."""

    model = "fake-evidence"

    def __init__(self):
        self.calls = 0

    def complete_json(self, task, messages, schema, *, prompt_version="1", images=()):
        from core.protocols import LLMResult

        self.calls += 1
        text = "\n".join(str(m.get("content", "")) for m in messages)
        evidence = text.split("Question:")[0]
        m = re.search(r"named her (\w+)", evidence)
        return LLMResult(data={"answer": m.group(1) if m else "Not mentioned"}, model=self.model,
                         prompt_tokens=10, completion_tokens=2)


def test_llm_answerer_is_sampled_within_the_budget(engine):
    trace = engine.ask("What did I name my kitten?")
    llm = EvidenceLLM()
    engine.llm = llm  # answer from subsets with the LLM answerer (the trace came from the rule answerer)
    trace = type(trace)(**{**trace.__dict__, "answer": type(trace.answer)(text="Miso", kind="llm")})
    n = len({u.unit_id for u in trace.evidence})
    res = attribute(engine, trace, budget=24, seed=3)
    assert not res.exact and res.answerer.startswith("llm:")
    assert res.calls == llm.calls <= 23  # the full set reuses the trace's answer
    assert 2 ** n > 24
    kitten = next(u.unit_id for u in trace.evidence if "Miso" in u.text)
    assert max(res.values, key=lambda u: u.value).unit == kitten
    assert math.isclose(sum(u.value for u in res.values), res.v_full - res.v_empty, abs_tol=1e-9)
    with pytest.raises(InputError, match="budget"):
        attribute(engine, trace, budget=1)


@pytest.mark.slow
def test_real_minilm_and_hierarchy_attribution(tmp_path):
    import torch

    torch.set_num_threads(1)
    from core.encoders.text import MiniLMEncoder, load_minilm
    from core.hierarchy import Hierarchy
    from core.utility import UtilityRankedRetrieval, UtilityStore
    from test_planning_data import build_memory

    minilm = MiniLMEncoder(load_minilm())
    path = build_memory(tmp_path / "real.duckdb", minilm)
    con = duckdb.connect(str(path))
    try:
        store = UtilityStore(con)
        retrieval = UtilityRankedRetrieval(Hierarchy(con, minilm, None, DEFAULT), store, DEFAULT.utility_alpha)
        eng = QueryEngine(con, minilm, DEFAULT, retrieval=retrieval)
        trace = eng.ask("What did I name my kitten?")
        assert "Miso" in trace.answer.text
        res = attribute(eng, trace)
        kitten = next(u for u in trace.evidence if "Miso" in u.text)
        assert res.exact and max(res.values, key=lambda u: u.value).unit == kitten.unit_id
        assert math.isclose(sum(u.value for u in res.values), res.v_full - res.v_empty, abs_tol=1e-9)
        store.rate(res, correct=True)
        assert store.get(kitten.unit_id).mean > 0
        assert "Miso" in eng.ask("What did I name my kitten?").answer.text  # ranking with utility still answers
    finally:
        con.close()


def test_a_deciding_unit_is_named_with_the_answer_given_without_it(engine):
    trace = engine.ask("What did I name my kitten?")
    res = attribute(engine, trace)
    kitten = next(u for u in trace.evidence if "Miso" in u.text)
    assert res.decisive == kitten.unit_id
    assert res.answer_without is not None and "Miso" not in res.answer_without
    assert res.to_dict()["decisive"] == kitten.unit_id


def test_shared_credit_has_no_deciding_unit(engine):
    trace = engine.ask("Which days did I sleep more than 9 hours?")
    res = attribute(engine, trace)
    assert res.decisive is None and res.answer_without is None
