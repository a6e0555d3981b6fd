"""Retrieval memory: events, episodes, topics, fused similarity, descriptions, search.

Unit tests use the conftest fakes (HashEmbedder: texts sharing words are
similar; FakeImageEncoder: images by hash) on a real DuckDB file; one slow
test uses the real MiniLM.
"""
from __future__ import annotations

import re
from datetime import datetime, timedelta

import numpy as np
import pytest

from conftest import HashEmbedder, QueuedLLM, _word_vec
from core.config import DEFAULT
from core.describe import describe, short_label, strip_bracket
from core.errors import LLMError
from core.hierarchy import Hierarchy, event_text, fused_scores, fused_similarity
from core.model import ImageRef, Round, Utterance
from core.store import Store

T0 = datetime(2024, 3, 1, 9, 0)


def rnd(i: int, text: str, time: datetime, images: tuple[ImageRef, ...] = (), speaker: str = "user") -> Round:
    return Round(f"S1:R{i}", "S1", time, (Utterance(speaker, text),), images, index_in_session=i)


def img(i: int, k: int, data: bytes | None, caption: str = "a photo") -> ImageRef:
    return ImageRef(f"S1:R{i}:I{k}", caption=caption, data=data)


@pytest.fixture
def store(tmp_path):
    s = Store(tmp_path / "memory.duckdb")
    yield s
    s.close()


def snapshot(con) -> dict[str, tuple]:
    rows = con.execute("SELECT * FROM nodes ORDER BY node_id").fetchall()
    return {r[0]: r for r in rows}


def same_nodes(a: dict, b: dict) -> None:
    """Two snapshots hold the same nodes with the same values (embeddings to 1e-6)."""
    assert a.keys() == b.keys()
    for k in a:
        for x, y in zip(a[k], b[k]):
            if isinstance(x, list) and x and isinstance(x[0], float):
                np.testing.assert_allclose(x, y, atol=1e-6)
            else:
                assert x == y, (k, x, y)


def build(h: Hierarchy, rounds: list[Round], start: int = 1) -> list:
    return [h.insert(start + k, r, {}) for k, r in enumerate(rounds)]


# ---------------------------------------------------------------- fused similarity
def test_fused_similarity_omits_missing_visual_instead_of_zeroing():
    rng = np.random.default_rng(0)
    a_t, b_t = rng.standard_normal(8), rng.standard_normal(8)
    a_v, b_v = rng.standard_normal(4), rng.standard_normal(4)
    cos_t = float(a_t @ b_t / np.linalg.norm(a_t) / np.linalg.norm(b_t))
    cos_v = float(a_v @ b_v / np.linalg.norm(a_v) / np.linalg.norm(b_v))

    omitted = fused_similarity(a_t, a_v, b_t, None, 0.6, 0.4)
    zeroed = fused_similarity(a_t, a_v, b_t, np.zeros(4), 0.6, 0.4)
    both = fused_similarity(a_t, a_v, b_t, b_v, 0.6, 0.4)

    assert omitted == pytest.approx(cos_t)  # renormalized over text alone
    assert zeroed == pytest.approx(0.6 * cos_t)  # what a zero vector would wrongly give
    assert omitted != pytest.approx(zeroed)
    assert both == pytest.approx(0.6 * cos_t + 0.4 * cos_v)
    assert fused_similarity(a_t, None, b_t, b_v, 0.6, 0.4) == pytest.approx(cos_t)
    assert fused_similarity(None, None, None, None, 0.6, 0.4) == 0.0
    with pytest.raises(ValueError):
        fused_similarity(a_t, None, np.ones(3), None, 0.6, 0.4)


def test_vectorized_scores_agree_with_pairwise_rule():
    rng = np.random.default_rng(1)
    text = rng.standard_normal((5, 8)).astype(np.float32)
    text /= np.linalg.norm(text, axis=1, keepdims=True)
    vis = rng.standard_normal((5, 4)).astype(np.float32)
    vis /= np.linalg.norm(vis, axis=1, keepdims=True)
    has_vis = np.array([True, False, True, False, True])
    vis[~has_vis] = 0
    q_t, q_v = rng.standard_normal(8), rng.standard_normal(4)
    got = fused_scores(q_t, q_v, text, vis, has_vis, 0.6, 0.4)
    want = [fused_similarity(q_t, q_v, text[i], vis[i] if has_vis[i] else None, 0.6, 0.4) for i in range(5)]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------- episodes
def test_time_gap_over_a_day_starts_new_episode_even_for_identical_text(store, embedder, image_encoder):
    h = Hierarchy(store.con, embedder, image_encoder, DEFAULT)
    text = "morning run in the park 5 km"
    res = build(h, [
        rnd(1, text, T0),
        rnd(2, text, T0 + timedelta(hours=24)),  # exactly the limit: same episode
        rnd(3, text, T0 + timedelta(hours=48, minutes=1)),  # 24 h 1 min after the previous: new episode
    ])
    assert res[1].similarity > DEFAULT.theta_epi and not res[1].opened_episode
    assert res[2].opened_episode and res[2].closed_episode == "ep:S1:R1"
    assert res[2].similarity > DEFAULT.theta_epi  # similar, yet split by time
    assert res[2].gap_hours > DEFAULT.episode_max_gap_hours
    eps = {n.node_id: n for n in h.tree(["episode"])}
    assert eps["ep:S1:R1"].n_members == 2 and eps["ep:S1:R3"].n_members == 1


def test_dissimilar_content_starts_new_episode_and_closes_the_old_one(store, embedder, image_encoder):
    h = Hierarchy(store.con, embedder, image_encoder, DEFAULT)
    res = build(h, [
        rnd(1, "blood pressure reading this morning", T0),
        rnd(2, "blood pressure reading this evening", T0 + timedelta(minutes=5)),
        rnd(3, "new recipe for lemon cake with almonds", T0 + timedelta(minutes=10)),
    ])
    assert not res[1].opened_episode
    assert res[2].opened_episode and res[2].similarity <= DEFAULT.theta_epi
    old = h.node("ep:S1:R1")
    assert old.closed and old.parent_id == res[2].topic_id and old.n_members == 2
    assert not h.node("ep:S1:R3").closed and h.node("ep:S1:R3").parent_id is None


def test_topic_assignment_follows_the_threshold(tmp_path, embedder, image_encoder):
    a = "hiking trail mountain lake sunrise"
    b = "tax forms invoice accountant deadline"
    c = "hiking trail mountain river sunset"  # shares 3 of 5 words with a
    s = float(embedder.encode([f"user: {a}"])[0] @ embedder.encode([f"user: {c}"])[0])
    assert 0.2 < s < 0.95

    def topic_of_c(theta: float) -> tuple[str | None, str | None]:
        st = Store(tmp_path / f"t{theta}.duckdb")
        h = Hierarchy(st.con, embedder, image_encoder, DEFAULT.with_(theta_topic=theta))
        build(h, [rnd(1, a, T0), rnd(2, b, T0 + timedelta(days=2)), rnd(3, c, T0 + timedelta(days=4)),
                  rnd(4, b, T0 + timedelta(days=6))])
        out = h.node("ep:S1:R3").parent_id, h.node("ep:S1:R1").parent_id
        st.close()
        return out

    joined, first = topic_of_c(s - 0.02)
    assert joined == first == "tp:S1:R1"
    alone, first = topic_of_c(s + 0.02)
    assert alone == "tp:S1:R3" and first == "tp:S1:R1"


def test_topics_compare_with_all_topics_not_only_the_latest(store, embedder, image_encoder):
    h = Hierarchy(store.con, embedder, image_encoder, DEFAULT)
    a, b = "piano lesson scales chords practice", "garden tomatoes watering compost soil"
    build(h, [rnd(1, a, T0), rnd(2, b, T0 + timedelta(days=2)), rnd(3, a, T0 + timedelta(days=4)),
              rnd(4, b, T0 + timedelta(days=6))])
    assert h.node("ep:S1:R3").parent_id == "tp:S1:R1"  # back to the older topic
    assert h.counts()["topic"] == 2


def test_visual_embeddings_pool_only_image_bearing_members(store, embedder, image_encoder):
    # unrelated random image vectors would split the episode: group everything
    h = Hierarchy(store.con, embedder, image_encoder, DEFAULT.with_(theta_epi=-1.0))
    text = "photo of the dinner plate salmon rice"
    build(h, [
        rnd(1, text, T0, (img(1, 1, b"plate-1"), img(1, 2, b"plate-2"))),
        rnd(2, text, T0 + timedelta(minutes=1), (img(2, 1, None, "no bytes here"),)),  # caption only
        rnd(3, text, T0 + timedelta(minutes=2), (img(3, 1, b"plate-3"),)),
    ])
    rows = snapshot(store.con)
    vis = {nid: (np.asarray(r[5], np.float32) if r[5] is not None else None) for nid, r in rows.items()}
    enc = image_encoder.encode_images([b"plate-1", b"plate-2", b"plate-3"])
    ev1 = enc[0] + enc[1]
    ev1 /= np.linalg.norm(ev1)
    np.testing.assert_allclose(vis["ev:S1:R1"], ev1, atol=1e-6)
    assert vis["ev:S1:R2"] is None  # an image without bytes gives no visual embedding
    ep = ev1 + enc[2]
    ep /= np.linalg.norm(ep)
    np.testing.assert_allclose(vis["ep:S1:R1"], ep, atol=1e-6)
    assert h.node("ep:S1:R1").n_members == 3  # all three are one episode
    assert h.images("ep:S1:R1") == ["S1:R1:I1", "S1:R1:I2", "S1:R2:I1", "S1:R3:I1"]


def test_precomputed_image_vectors_are_used(store, embedder, image_encoder):
    h = Hierarchy(store.con, embedder, image_encoder, DEFAULT)
    v = np.zeros(image_encoder.dim, np.float32)
    v[3] = 2.0
    h.insert(1, rnd(1, "a picture", T0, (img(1, 1, b"bytes"),)), {}, image_vectors={"S1:R1:I1": v})
    stored = np.asarray(store.con.execute("SELECT vis_emb FROM nodes WHERE node_id = 'ev:S1:R1'").fetchone()[0])
    np.testing.assert_allclose(stored, v / 2.0)


# ---------------------------------------------------------------- incrementality
@pytest.mark.parametrize("mode", ["description", "centroid"])
def test_one_round_touches_only_its_event_episode_and_topic(store, image_encoder, mode):
    enc = HashEmbedder()
    h = Hierarchy(store.con, enc, image_encoder, DEFAULT.with_(hierarchy_compare=mode))
    run, tax = "long run along the river trail 10 km", "tax return forms due accountant"
    # episodes: run 1-2, tax 3-5, run 6-8 (joins the run topic), tax 9-11, run 12 (open)
    build(h, [rnd(i, run if i % 6 < 3 else tax, T0 + timedelta(minutes=i)) for i in range(1, 13)])
    topic = h.finalize()
    assert topic == "tp:S1:R1" and h.node(topic).n_members == 3  # provisionally holds the open episode

    # first round after finalize: the provisional attachment is undone (one topic refresh)
    before, calls = snapshot(store.con), len(enc.calls)
    res = h.insert(13, rnd(13, run, T0 + timedelta(minutes=13)), {})
    after = snapshot(store.con)
    assert not res.opened_episode and res.episode_id == "ep:S1:R12"
    assert {k for k in after if before.get(k) != after[k]} == {"ev:S1:R13", "ep:S1:R12", topic}
    # event text, episode description, and in centroid mode the topic's description from its closed
    # members (the paper-exact mode kept it from when the topic last gained a member)
    assert len(enc.calls) - calls == (3 if mode == "centroid" else 2)
    assert h.node(topic).n_members == 2

    # an appending round: its event and its episode only
    before, calls = snapshot(store.con), len(enc.calls)
    h.insert(14, rnd(14, run, T0 + timedelta(minutes=14)), {})
    after = snapshot(store.con)
    assert {k for k in after if before.get(k) != after[k]} == {"ev:S1:R14", "ep:S1:R12"}
    assert len(enc.calls) - calls == 2  # the event's text, the episode's new description

    # with a precomputed text vector only the episode is embedded
    vec = HashEmbedder().encode([event_text(rnd(15, run, T0), {})])[0]
    calls = len(enc.calls)
    h.insert(15, rnd(15, run, T0 + timedelta(minutes=15)), {}, text_vector=vec)
    assert len(enc.calls) - calls == 1

    # a closing round: new event, new episode, the closed episode and the topic it joins
    before, calls = snapshot(store.con), len(enc.calls)
    res = h.insert(16, rnd(16, tax, T0 + timedelta(minutes=16)), {})
    after = snapshot(store.con)
    assert res.opened_episode and res.closed_episode == "ep:S1:R12" and res.topic_id == topic
    assert {k for k in after if before.get(k) != after[k]} == {"ev:S1:R16", "ep:S1:R16", "ep:S1:R12", topic}
    assert len(enc.calls) - calls == 2  # the event, the topic's new description (new episode reuses the event's)


def test_insert_is_idempotent_and_in_round_order(store, embedder, image_encoder):
    h = Hierarchy(store.con, embedder, image_encoder, DEFAULT)
    build(h, [rnd(1, "alpha", T0), rnd(2, "alpha beta", T0)])
    before = snapshot(store.con)
    assert h.insert(2, rnd(2, "alpha beta", T0), {}).skipped
    assert snapshot(store.con) == before
    with pytest.raises(ValueError, match=r"S1:R9.*order 1"):
        h.insert(1, rnd(9, "late", T0), {})
    with pytest.raises(ValueError, match="text_vector"):
        h.insert(3, rnd(3, "x", T0), {}, text_vector=np.zeros(5))


def test_writes_join_the_callers_transaction(store, embedder, image_encoder):
    h = Hierarchy(store.con, embedder, image_encoder, DEFAULT)
    with store.transaction():
        build(h, [rnd(1, "kept round", T0)])
    assert h.search("kept round", "event", 5)[0][0] == "ev:S1:R1"
    with pytest.raises(RuntimeError):
        with store.transaction():
            h.insert(2, rnd(2, "rolled back round", T0), {})
            assert len(h.search("rolled back", "event", 5)) == 2
            raise RuntimeError("abort")
    assert [n.node_id for n in h.tree(["event"])] == ["ev:S1:R1"]
    assert [i for i, _ in h.search("rolled back", "event", 5)] == ["ev:S1:R1"]  # no stale cache


SCRIPT = [
    # (text, minutes after T0); several episodes, a return to an older topic, a day gap
    ("morning run river trail 10 km pace", 0),
    ("run river trail 10 km pace felt good", 5),
    ("blood pressure cuff reading 128 84 mmHg", 10),
    ("blood pressure cuff reading 131 86 mmHg", 15),
    ("morning run river trail 8 km pace", 60 * 30),
    ("run river trail 8 km pace slower", 60 * 30 + 5),
    ("run river trail 12 km pace long", 60 * 30 + 9),
    ("blood pressure cuff reading 125 80 mmHg", 60 * 30 + 20),
    ("grocery list apples bread milk", 60 * 30 + 30),
    ("blood pressure cuff reading 122 79 mmHg", 60 * 80),
    ("blood pressure cuff reading 127 83 mmHg", 60 * 80 + 3),
    ("run river trail 5 km pace easy", 60 * 80 + 9),
]


def _script_rounds() -> list[Round]:
    return [
        rnd(i, text, T0 + timedelta(minutes=m), (img(i, 1, f"img-{text.split()[0]}".encode()),) if i % 3 == 0 else ())
        for i, (text, m) in enumerate(SCRIPT, start=1)
    ]


def _rows(path) -> dict[str, tuple]:
    st = Store(path)
    rows = snapshot(st.con)
    st.close()
    return rows


def test_two_halves_with_reopen_equal_one_build(tmp_path, image_encoder):
    rounds = _script_rounds()
    whole = Store(tmp_path / "whole.duckdb")
    h = Hierarchy(whole.con, HashEmbedder(), image_encoder, DEFAULT)
    with whole.transaction():
        build(h, rounds)
        h.finalize()
    whole.close()

    split = 7  # inside the run episode of the second day, which has an older run topic to join
    first = Store(tmp_path / "halves.duckdb")
    h1 = Hierarchy(first.con, HashEmbedder(), image_encoder, DEFAULT)
    with first.transaction():
        build(h1, rounds[:split - 1])
        topic = h1.finalize()
    open_ep = first.con.execute("SELECT node_id, parent_id FROM nodes WHERE level = 'episode' AND NOT closed").fetchone()
    assert open_ep[1] == topic  # the open episode is visible under a topic
    n_members = first.con.execute("SELECT n_members FROM nodes WHERE node_id = ?", [topic]).fetchone()[0]
    assert n_members >= 2  # it joined an existing topic, so reopening must undo that join
    first.close()

    second = Store(tmp_path / "halves.duckdb")
    h2 = Hierarchy(second.con, HashEmbedder(), image_encoder, DEFAULT)
    with second.transaction():
        build(h2, rounds[split - 1:], start=split)
        h2.finalize()
    second.close()

    a, b = _rows(tmp_path / "whole.duckdb"), _rows(tmp_path / "halves.duckdb")
    same_nodes(a, b)
    assert len({r[2] for r in a.values() if r[1] == "episode"}) >= 2  # more than one topic was used


def test_finalize_founds_a_provisional_topic_that_the_next_round_removes(store, embedder, image_encoder):
    h = Hierarchy(store.con, embedder, image_encoder, DEFAULT)
    assert h.finalize() is None  # nothing to place
    h.insert(1, rnd(1, "swimming pool laps", T0), {})
    assert h.finalize() == "tp:S1:R1" and h.finalize() == "tp:S1:R1"
    topic = h.node("tp:S1:R1")
    assert not topic.closed and topic.n_members == 1  # it holds the open episode
    assert [t.node_id for t in h.tree(["topic"])] == ["tp:S1:R1"]
    h.insert(2, rnd(2, "swimming pool laps again", T0), {})
    assert h.counts()["topic"] == 0 and h.node("ep:S1:R1").parent_id is None
    assert h.finalize() == "tp:S1:R1" and h.node("tp:S1:R1").n_members == 1


def test_tree_is_complete_after_finalize(store, embedder, image_encoder):
    h = Hierarchy(store.con, embedder, image_encoder, DEFAULT)
    build(h, _script_rounds())
    h.finalize()
    tree = h.tree()
    by_id = {n.node_id: n for n in tree}
    assert sum(n.level == "event" for n in tree) == len(SCRIPT)
    for n in tree:
        if n.level != "topic":
            assert by_id[n.parent_id].level == ("episode" if n.level == "event" else "topic")
    for n in tree:
        if n.level != "event":
            assert n.n_members == sum(m.parent_id == n.node_id for m in tree)
            assert n.label and len(n.label) <= 61
    ev = "ev:S1:R4"
    assert h.path(ev)[0].startswith("tp:") and h.path(ev)[-1] == ev
    assert [m.node_id for m in h.members(by_id[ev].parent_id)][:2] == ["ev:S1:R3", "ev:S1:R4"]


# ---------------------------------------------------------------- descriptions
LONG_EPISODE = [
    ("Melanie", "Hey Caroline, good to see you again!"),
    ("Caroline", "Hi! How was the weekend?"),
    ("Melanie", "I ran the Riverside charity race on Saturday, it was 12 km along the river."),
    ("Caroline", "A 12 km race along the river sounds hard, how long did the race take you?"),
    ("Melanie", "The race took me 71 minutes, and the charity race raised $450 for the shelter."),
    ("Caroline", "The shelter must be thrilled with the race money."),
    ("Melanie", "Next year I want to run the race faster than 65 minutes."),
]


def test_episode_description_is_central_not_a_prefix(store, embedder, image_encoder):
    # identical time, and a low θ_epi so all rounds form one episode
    h = Hierarchy(store.con, embedder, image_encoder, DEFAULT.with_(theta_epi=-1.0))
    rounds = [Round(f"S1:R{i}", "S1", T0, (Utterance(sp, tx),), ()) for i, (sp, tx) in enumerate(LONG_EPISODE, 1)]
    build(h, rounds)
    full = "\n".join(r.text for r in rounds)
    ep = h.node("ep:S1:R1")
    assert ep.n_members == len(rounds)
    d = ep.description
    body, names, quants = strip_bracket(d)
    assert len(d) <= 300
    assert not full.startswith(body[:40])  # not the opening greeting
    assert "12 km" in d  # the main quantity
    assert "Riverside" in names and "Melanie" in names
    assert "race" in body.lower()
    # the description is what the episode is embedded from
    np.testing.assert_allclose(
        np.asarray(store.con.execute("SELECT text_emb FROM nodes WHERE node_id='ep:S1:R1'").fetchone()[0]),
        embedder.encode([d])[0], atol=1e-6,
    )


def test_single_event_episode_shares_the_event_text_and_vector(store, embedder, image_encoder):
    h = Hierarchy(store.con, embedder, image_encoder, DEFAULT)
    calls = len(embedder.calls)
    h.insert(1, rnd(1, "just one short round", T0), {})
    assert len(embedder.calls) - calls == 1
    rows = snapshot(store.con)
    assert rows["ep:S1:R1"][3] == rows["ev:S1:R1"][3] == "user: just one short round"
    assert rows["ep:S1:R1"][4] == rows["ev:S1:R1"][4]


def test_topic_description_merges_member_descriptions():
    d1 = describe(["Melanie: I ran a 5 km race in Boston for charity.", "Caroline: Boston races are fun."])
    d2 = describe(["Melanie: Another 5 km race in Boston next month with my 3 kids."])
    topic = describe([d1, d2])
    body, names, quants = strip_bracket(topic)
    assert "Boston" in names and "5 km" in quants
    assert topic.count("[") == 1 and len(topic) <= 300
    assert short_label(topic) and "[" not in short_label(topic)


def test_describe_bounds_a_single_long_sentence():
    long = "Melanie: " + " ".join(f"word{i}" for i in range(200)) + " 42 kg."
    d = describe([long], max_chars=120)
    assert len(d) <= 120 and "42 kg" in d


def test_llm_descriptions_and_fallback(store, embedder, image_encoder):
    llm = QueuedLLM([{"description": "Two runs by the river, 10 km each."}, LLMError("down")])
    h = Hierarchy(store.con, embedder, image_encoder, DEFAULT.with_(theta_epi=-1.0), llm=llm)
    build(h, [rnd(1, "run 10 km river", T0), rnd(2, "run 10 km river again", T0)])
    assert h.node("ep:S1:R1").description == "Two runs by the river, 10 km each."
    assert llm.calls[0]["task"] == "episode_description"
    assert "run 10 km river again" in llm.calls[0]["messages"][-1]["content"]
    h.insert(3, rnd(3, "run 12 km river", T0), {})
    assert "12 km" in h.node("ep:S1:R1").description  # extractive after the failure
    assert h.fallbacks and "down" in h.fallbacks[0]


# ---------------------------------------------------------------- search
class TextImageEncoder:
    """A fake open_clip: images and texts share one hashed word space."""

    name = "fake-clip"
    supports_text = True
    dim = 32

    def _vec(self, words: str) -> np.ndarray:
        v = sum(_word_vec(w, self.dim) for w in re.findall(r"[a-z]+", words.lower()))
        return (v / np.linalg.norm(v)).astype(np.float32)

    def encode_images(self, images):
        return np.stack([self._vec(b.decode()) for b in images])

    def encode_text(self, texts):
        return np.stack([self._vec(t) for t in texts])


def test_search_scopes_and_ranking(store, embedder, image_encoder):
    h = Hierarchy(store.con, embedder, image_encoder, DEFAULT)
    build(h, _script_rounds())
    h.finalize()
    for scope, prefix in (("event", "ev:"), ("episode", "ep:"), ("topic", "tp:")):
        hits = h.search("grocery list apples bread milk", scope, 3)
        assert hits and all(i.startswith(prefix) for i, _ in hits)
        assert [s for _, s in hits] == sorted((s for _, s in hits), reverse=True)
    assert h.search("grocery apples bread milk", "event", 1)[0][0] == "ev:S1:R9"
    everything = h.search("blood pressure", "all", 1000)
    assert len(everything) == sum(h.counts().values())
    assert {i[:3] for i, _ in everything} == {"ev:", "ep:", "tp:"}
    with pytest.raises(ValueError, match="scope"):
        h.search("x", "session", 3)
    q = h.query_vectors("grocery apples")
    assert h.search("ignored", "event", 2, query_vectors=q) == h.search("grocery apples", "event", 2)


def test_text_to_image_only_with_a_text_branch(tmp_path, embedder):
    rounds = [
        rnd(1, "look at this", T0, (img(1, 1, b"sunset over the beach"),)),
        rnd(2, "look at this", T0 + timedelta(days=2), (img(2, 1, b"kitchen table breakfast"),)),
    ]
    clip_store = Store(tmp_path / "clip.duckdb")
    clip = Hierarchy(clip_store.con, embedder, TextImageEncoder(), DEFAULT)
    build(clip, rounds)
    hits = clip.search("beach sunset", "event", 2)
    assert hits[0][0] == "ev:S1:R1" and hits[0][1] > hits[1][1]

    plain_store = Store(tmp_path / "plain.duckdb")
    vis_only = TextImageEncoder()
    vis_only.supports_text = False
    plain = Hierarchy(plain_store.con, embedder, vis_only, DEFAULT)
    build(plain, rounds)
    hits = plain.search("beach sunset", "event", 2)
    assert hits[0][1] == pytest.approx(hits[1][1])  # same text: images cannot be searched by text


def test_locate_events_returns_neighbours(store, embedder, image_encoder):
    h = Hierarchy(store.con, embedder, image_encoder, DEFAULT)
    build(h, _script_rounds())
    found = h.locate_events("grocery apples bread milk", k=1, window=2)
    assert found[0].event_id == "ev:S1:R9" and found[0].round_id == "S1:R9"
    assert found[0].context == tuple(f"ev:S1:R{i}" for i in range(7, 12))
    assert found[0].time == T0 + timedelta(minutes=60 * 30 + 30)
    edge = h.locate_events("morning run river trail 10 km pace", k=1, window=1)[0]
    assert edge.event_id == "ev:S1:R1" and edge.context == ("ev:S1:R1", "ev:S1:R2")


# ---------------------------------------------------------------- real MiniLM
@pytest.mark.slow
def test_real_minilm_hierarchy(tmp_path):
    torch = pytest.importorskip("torch")
    torch.set_num_threads(1)
    from core.encoders import MiniLMEncoder, load_minilm

    enc = MiniLMEncoder(load_minilm())
    st = Store(tmp_path / "minilm.duckdb")
    h = Hierarchy(st.con, enc, None, DEFAULT)
    texts = [
        "I went for a 5 km run in the park this morning.",
        "My morning run in the park was 5 km long and I felt great.",
        "I baked a chocolate cake for my sister's birthday party.",
        "I went for a 5 km run in the park this morning.",
    ]
    times = [T0, T0 + timedelta(minutes=5), T0 + timedelta(minutes=10), T0 + timedelta(days=3)]
    with st.transaction():
        res = build(h, [rnd(i, t, tm) for i, (t, tm) in enumerate(zip(texts, times), 1)])
        h.finalize()
    assert not res[1].opened_episode  # paraphrase joins
    assert res[2].opened_episode  # cake starts a new episode
    assert res[3].opened_episode  # three days later
    assert h.node("ep:S1:R4").parent_id == h.node("ep:S1:R1").parent_id  # the run topic again
    assert h.search("jogging outdoors", "event", 1)[0][0] in {"ev:S1:R1", "ev:S1:R2", "ev:S1:R4"}
    st.close()


# ---------------------------------------------------------------- what a new event is compared with
def _stored_text(con, node_id: str) -> np.ndarray:
    return np.asarray(con.execute("SELECT text_emb FROM nodes WHERE node_id = ?", [node_id]).fetchone()[0],
                      np.float32)


@pytest.mark.parametrize("mode", ["description", "centroid"])
def test_an_event_is_compared_with_the_episode_description_in_the_paper_mode(store, mode):
    enc = HashEmbedder()
    h = Hierarchy(store.con, enc, None, DEFAULT.with_(hierarchy_compare=mode, theta_epi=-1.0))
    texts = ["morning run river trail 5 km", "run felt easy, knee fine, river trail", "after the run: oat milk latte",
             "trail run again next week with Sam"]
    differs = 0
    for i, text in enumerate(texts, start=1):
        before = None
        if i > 2:  # the open episode has two events or more: its description is not one event's text
            before = _stored_text(store.con, "ep:S1:R1")
            desc = store.con.execute("SELECT description FROM nodes WHERE node_id = 'ep:S1:R1'").fetchone()[0]
            from_desc = enc.encode([desc])[0]
            from_desc /= np.linalg.norm(from_desc)
            if mode == "description":  # eq. 11 after each insertion: the stored vector is the description's
                np.testing.assert_allclose(before, from_desc, atol=1e-6)
        res = h.insert(i, rnd(i, text, T0 + timedelta(minutes=i)), {})
        if before is not None:
            ev = _stored_text(store.con, f"ev:S1:R{i}")
            events = [_stored_text(store.con, f"ev:S1:R{k}") for k in range(1, i)]
            centroid = np.sum(events, axis=0)
            centroid /= np.linalg.norm(centroid)
            want = before if mode == "description" else centroid
            assert res.similarity == pytest.approx(float(ev @ want), abs=1e-5)
            differs += abs(float(ev @ before) - float(ev @ centroid)) > 1e-4
    assert differs  # the two modes really compare with different vectors here


def test_the_paper_mode_compares_a_closing_episode_with_each_topic_description(store):
    enc = HashEmbedder()
    h = Hierarchy(store.con, enc, None, DEFAULT.with_(theta_topic=-1.0))  # every episode joins topic 1
    for i in range(1, 6):  # one-round episodes two days apart
        h.insert(i, rnd(i, f"swim pool laps lane {i} and a note {i * 7}", T0 + timedelta(days=2 * i)), {})
        topics = h.tree(["topic"])
        if i > 2:  # the topic has two closed episodes or more
            tid = topics[0].node_id
            desc = h.node(tid).description
            v = enc.encode([desc])[0]
            v /= np.linalg.norm(v)
            np.testing.assert_allclose(_stored_text(store.con, tid), v, atol=1e-6)
            # what the next closing episode is compared with is that description's embedding
            best, score = h._state.topics.best(v, None, 1.0, 0.0)
            assert best == tid and score == pytest.approx(1.0, abs=1e-5)


@pytest.mark.parametrize("first,second", [("centroid", "description"), ("description", "centroid")])
def test_a_memory_built_in_one_mode_continues_in_the_other(tmp_path, image_encoder, first, second):
    rounds = _script_rounds()
    st = Store(tmp_path / "m.duckdb")
    h = Hierarchy(st.con, HashEmbedder(), image_encoder, DEFAULT.with_(hierarchy_compare=first))
    with st.transaction(), h.batch():
        build(h, rounds[:7])
    h2 = Hierarchy(st.con, HashEmbedder(), image_encoder, DEFAULT.with_(hierarchy_compare=second))
    with st.transaction(), h2.batch():
        build(h2, rounds[7:], start=8)
    with st.transaction():
        h2.finalize()
    missing = st.con.execute("SELECT count(*) FROM nodes WHERE text_emb IS NULL").fetchone()[0]
    events = st.con.execute("SELECT count(*) FROM nodes WHERE level = 'event'").fetchone()[0]
    orphans = st.con.execute("SELECT count(*) FROM nodes WHERE level <> 'topic' AND parent_id IS NULL").fetchone()[0]
    assert (missing, events, orphans) == (0, len(rounds), 0)
    st.close()
