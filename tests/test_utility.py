"""Learned utility: accumulation from rated answers, persistence in the memory file, utility-aware ranking."""
from __future__ import annotations

import duckdb
import pytest

from core.attribution import AttributionResult, UnitValue, attribute
from core.config import DEFAULT
from core.errors import InputError
from core.planning import NodeTableRetrieval, QueryEngine
from core.store import Store
from core.utility import (UtilityRankedRetrieval, UtilityStore, learn_from_qas, rerank, rewards_from_rating,
                          unit_key)
from test_planning_data import memory_path  # noqa: F401


def result(*values, reference="answer"):
    return AttributionResult(values=tuple(UnitValue(u, v, (f"R{i}",), kind) for i, (u, v, kind) in enumerate(values)),
                             v_full=1.0, v_empty=0.0, calls=3, exact=True, reference=reference)


@pytest.fixture
def store(tmp_path):
    s = Store(tmp_path / "mem.duckdb")
    yield s
    s.close()


def test_accumulation_is_a_running_mean(store):
    u = UtilityStore(store.con)
    assert u.is_empty() and u.get("a").mean == 0.0
    u.add({"a": 1.0, "b": 0.5})
    u.add({"a": -0.5})
    u.add({"a": 0.25, "c": -1.0})
    a = u.get("a")
    assert (a.sum, a.count) == (pytest.approx(0.75), 3)
    assert a.mean == pytest.approx(0.25)
    assert u.utilities(["a", "b", "c", "never"]) == pytest.approx({"a": 0.25, "b": 0.5, "c": -1.0, "never": 0.0})
    assert [x.unit_key for x in u.all()] == ["b", "a", "c"]
    with pytest.raises(InputError, match="finite"):
        u.add({"a": float("nan")})
    assert u.get("a").count == 3  # nothing half-written


def test_rating_flips_the_sign_for_wrong_answers_and_skips_computed_units(store):
    res = result(("ev:1", 0.75, "event"), ("sleep_log:S1:R1", 0.25, "row"), ("sleep_log:avg(x)", 1.0, "computed"))
    assert rewards_from_rating(res, True) == {"ev:1": 0.75, "sleep_log:S1:R1": 0.25}
    assert rewards_from_rating(res, False) == {"ev:1": -0.75, "sleep_log:S1:R1": -0.25}
    assert rewards_from_rating(res.to_list(), False) == {"ev:1": -0.75, "sleep_log:S1:R1": -0.25}
    u = UtilityStore(store.con)
    u.rate(res, correct=True)
    u.rate(res, correct=False)
    u.rate(res, correct=True)
    assert u.get("ev:1").mean == pytest.approx(0.75 / 3) and u.get("ev:1").count == 3
    assert u.get("sleep_log:avg(x)").count == 0
    with pytest.raises(InputError, match="gold"):
        rewards_from_rating(result(("ev:1", 1.0, "event"), reference="gold"), True)


def test_rating_the_same_answer_again_replaces_its_rewards(store):
    res = result(("ev:1", 0.75, "event"), ("sleep_log:S1:R1", 0.25, "row"))
    other = result(("ev:1", 0.5, "event"))
    u = UtilityStore(store.con)
    u.rate(other, correct=True, rating_id="trace-B")  # another answer's rating stays throughout
    u.rate(res, correct=True, rating_id="trace-A")
    u.rate(res, correct=True, rating_id="trace-A")  # a double click
    assert (u.get("ev:1").sum, u.get("ev:1").count) == (pytest.approx(1.25), 2)
    u.rate(res, correct=False, rating_id="trace-A")  # a changed verdict replaces the first
    assert (u.get("ev:1").sum, u.get("ev:1").count) == (pytest.approx(-0.25), 2)
    assert (u.get("sleep_log:S1:R1").sum, u.get("sleep_log:S1:R1").count) == (pytest.approx(-0.25), 1)
    u.add({}, rating_id="trace-A")  # withdrawn: only the other answer's reward is left
    assert (u.get("ev:1").sum, u.get("ev:1").count) == (pytest.approx(0.5), 1)
    assert u.get("sleep_log:S1:R1").count == 0 and "sleep_log:S1:R1" not in {x.unit_key for x in u.all()}


def test_unit_keys():
    assert unit_key({"unit": "ev:S1:R1", "kind": "event"}) == "ev:S1:R1"
    assert unit_key({"unit_id": "workout:S2:R1", "kind": "row"}) == "workout:S2:R1"
    assert unit_key({"unit_id": "workout:count(*)", "kind": "computed"}) is None


def test_utilities_persist_across_reopen_of_the_file(tmp_path):
    path = tmp_path / "persist.duckdb"
    with Store(path) as s:
        UtilityStore(s.con).add({"ev:S1:R1": 0.5, "T-life": -0.25})
    with Store(path) as s:
        u = UtilityStore(s.con)
        assert (u.get("ev:S1:R1").sum, u.get("ev:S1:R1").count) == (0.5, 1)
        u.add({"ev:S1:R1": 1.0})
    con = duckdb.connect(str(path), read_only=True)
    try:
        ro = UtilityStore(con)
        assert not ro.writable
        assert ro.utilities(["ev:S1:R1", "T-life"]) == pytest.approx({"ev:S1:R1": 0.75, "T-life": -0.25})
        with pytest.raises(InputError, match="read-only"):
            ro.add({"ev:S1:R1": 1.0})
    finally:
        con.close()


def test_read_only_memory_without_the_table_has_zero_utilities(tmp_path):
    path = tmp_path / "old.duckdb"
    Store(path).close()
    con = duckdb.connect(str(path), read_only=True)
    try:
        u = UtilityStore(con)
        assert u.is_empty() and u.utilities(["x"]) == {"x": 0.0} and u.all() == []
    finally:
        con.close()


HITS = [("a", 0.90), ("b", 0.85), ("c", 0.60), ("d", 0.20)]


def test_rerank_only_moves_hits_when_utilities_differ():
    assert rerank(HITS, {"a": 0.3, "b": 0.3, "c": 0.3, "d": 0.3}, 0.8) == HITS
    assert rerank(HITS, {}, 0.8) == HITS
    # b: sim-hat 0.9286, U-hat 1 -> 0.943 beats a: 0.8 * 1 + 0.2 * 0 = 0.8
    out = rerank(HITS, {"b": 1.0}, 0.8)
    assert [k for k, _ in out] == ["b", "a", "c", "d"]
    assert out[0][1] == pytest.approx(0.8 * (0.85 - 0.2) / 0.7 + 0.2)
    # a small utility edge cannot overturn a large similarity gap (only the hats matter, not raw scales)
    assert [k for k, _ in rerank(HITS, {"d": 1.0, "c": 0.0}, 0.8)] == ["a", "b", "c", "d"]
    assert [k for k, _ in rerank(HITS, {"d": 1.0}, 0.3)][0] == "d"


def test_rerank_toggle_off_restores_the_similarity_order(store):
    u = UtilityStore(store.con)
    u.add({"d": 1.0, "a": -1.0})
    assert [k for k, _ in rerank(HITS, u, 0.5)] != [k for k, _ in HITS]
    assert rerank(HITS, u, 0.5, enabled=False) == HITS
    assert rerank(HITS, u, 1.0) == HITS
    with pytest.raises(ValueError, match="alpha"):
        rerank(HITS, u, 1.5)


def test_utility_ranked_retrieval_promotes_a_rated_event_into_the_top_k(memory_path, embedder):  # noqa: F811
    con = duckdb.connect(str(memory_path))
    try:
        base = NodeTableRetrieval(con, embedder, DEFAULT.lambda_meta)
        plain = base.search("swim workout", "event", 15)
        promoted = plain[12][0]  # outside the top 10, inside the over-fetched pool (3 x 10)
        store = UtilityStore(con)
        wrapped = UtilityRankedRetrieval(base, store, alpha=0.5)
        assert wrapped.search("swim workout", "event", 10) == plain[:10]  # nothing rated yet
        store.add({promoted: 1.0})
        top = [k for k, _ in wrapped.search("swim workout", "event", 10)]
        assert promoted in top and promoted not in [k for k, _ in plain[:10]]
        off = UtilityRankedRetrieval(base, store, alpha=0.5, enabled=False)
        assert off.search("swim workout", "event", 10) == plain[:10]
        assert wrapped.node(promoted) == base.node(promoted)
        # the engine ranks its own retrieval by utility (DG-Mem eq. 5); alpha = 1 turns it off
        trace = QueryEngine(con, embedder, DEFAULT.with_(utility_alpha=0.5), retrieval=base).ask(
            "swim workout", ablation="rag")
        assert promoted in [u.unit_id for u in trace.evidence]
        trace = QueryEngine(con, embedder, DEFAULT.with_(utility_alpha=1.0), retrieval=base).ask(
            "swim workout", ablation="rag")
        assert promoted not in [u.unit_id for u in trace.evidence]
    finally:
        con.close()


def test_rated_attribution_updates_the_units_it_rests_on(memory_path, embedder):  # noqa: F811
    con = duckdb.connect(str(memory_path))
    try:
        engine = QueryEngine(con, embedder, DEFAULT)
        trace = engine.ask("What did I name my kitten?")
        res = attribute(engine, trace)
        kitten = max(res.values, key=lambda u: u.value).unit
        store = UtilityStore(con)
        store.rate(res, correct=True)
        assert store.get(kitten).mean == pytest.approx(1.0)
        others = [u.unit for u in res.values if u.unit != kitten]
        assert all(store.get(k).count == 1 and store.get(k).mean == pytest.approx(0.0) for k in others)
        store.rate(res, correct=False)
        assert (store.get(kitten).sum, store.get(kitten).count) == (pytest.approx(0.0), 2)
    finally:
        con.close()


def test_a_store_for_reading_writes_nothing_until_the_first_rating(tmp_path):
    path = tmp_path / "lazy.duckdb"
    with Store(path) as s:
        u = UtilityStore(s.con, create=False)
        assert u.utilities(["x"]) == {"x": 0.0} and u.is_empty()
        # migration 2 made the table; reading writes no row
        assert s.con.execute("SELECT count(*) FROM unit_utility").fetchone() == (0,)
        u.add({"x": 0.5})
        assert u.get("x").mean == 0.5


def test_learning_from_gold_answers(memory_path, embedder):  # noqa: F811
    from core.model import QA

    con = duckdb.connect(str(memory_path))
    try:
        engine = QueryEngine(con, embedder, DEFAULT)
        store = UtilityStore(con)
        best_day = engine.ask("Which day did I sleep the most?")
        row = best_day.evidence[0].unit_id
        qas = [QA("q1", "Which day did I sleep the most?", best_day.evidence[0].time[:10], answer_kind="date"),
               QA("q2", "What did I name my kitten?", "Miso"),
               QA("q3", "What was my cholesterol level in March?", "", refusal=True)]
        seen = []
        out = learn_from_qas(engine, qas, store, graded=True, progress=lambda *a: seen.append(a))
        assert out["questions"] == 3 and seen[-1] == ("utility", 3, 3)
        assert store.get(row).mean == pytest.approx(1.0)
        kitten = next(u for u in engine.ask("What did I name my kitten?").evidence if "Miso" in u.text).unit_id
        # graded: the rule answer is a whole sentence, so its token F1 against "Miso" is the kitten's credit
        assert 0 < store.get(kitten).mean < 1
        assert store.get(kitten).mean == max(u.mean for u in store.all() if u.unit_key.startswith("ev:"))
        # a wrong gold gives no credit: no subset of the evidence reaches it
        wrong = UtilityStore(con)
        before = {u.unit_key: u.sum for u in wrong.all()}
        learn_from_qas(engine, [QA("q4", "Which day did I sleep the most?", "1999-01-01", answer_kind="date")], wrong)
        assert wrong.get(row).sum == pytest.approx(before[row]) and wrong.get(row).count == 2
    finally:
        con.close()
