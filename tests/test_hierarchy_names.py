"""Display names of hierarchy nodes: topics and episodes by their distinctive words, events by a readable text.

Built with the conftest fakes (HashEmbedder: texts sharing words are similar) on a real DuckDB file.
"""
from __future__ import annotations

import re
from datetime import datetime, timedelta

import pytest

from core.config import DEFAULT
from core.hierarchy import Hierarchy
from core.hierarchy.naming import event_name, node_names, sibling_names, trim_words
from core.model import Round, Utterance
from core.store import Store

T0 = datetime(2024, 3, 1, 9, 0)
ACK = "Got it, I've added that to your notes."  # the same reply to every round: it names nothing
PARCELS = [f"My neighbour's parcel came to me by mistake, apartment {n}." for n in (205, 466, 448)]
VIOLIN = [f"Violin lesson went well, practised scales and the Vivaldi concerto for {n} minutes." for n in (30, 45, 20)]


def chat(i: int, user: str, time: datetime) -> Round:
    return Round(f"S1:R{i}", "S1", time, (Utterance("user", user), Utterance("assistant", ACK)), (), i)


@pytest.fixture
def hierarchy(tmp_path, embedder, image_encoder):
    """Two topics, each of three one-round episodes two days apart (parcels, violin lessons), interleaved."""
    store = Store(tmp_path / "memory.duckdb")
    h = Hierarchy(store.con, embedder, image_encoder, DEFAULT)
    texts = [t for pair in zip(PARCELS, VIOLIN) for t in pair]
    for i, text in enumerate(texts, start=1):
        h.insert(i, chat(i, text, T0 + timedelta(days=2 * i)), {})
    h.finalize()
    yield h
    store.close()


def words(name: str) -> list[str]:
    return [w for part in name.split(", ") for w in part.split()]


def test_topics_are_named_by_their_distinctive_words_not_by_a_cut_utterance(hierarchy):
    topics = hierarchy.tree(["topic"])
    named: dict[str, list[set[str]]] = {"parcel": [], "violin": []}
    for t in topics:
        members = " ".join(hierarchy.node(m.node_id).description for m in hierarchy.members(t.node_id)).lower()
        name = t.label
        assert 2 <= len(words(name)) <= 4, name
        assert ":" not in name and "…" not in name and not re.search(r"\d", name), name
        assert all(w.lower() in members for w in words(name)), name  # words of its own members
        assert not {w.lower() for w in words(name)} & {"assistant", "user", "got", "added", "notes", "my"}, name
        named["parcel" if "parcel" in members else "violin"].append({w.lower() for w in words(name)})
    assert named["parcel"] and named["violin"]
    assert all(n & {"parcel", "neighbour", "apartment", "mistake"} for n in named["parcel"])
    assert all(n & {"violin", "lesson", "scales", "vivaldi", "concerto"} for n in named["violin"])


def test_an_event_is_named_by_its_user_text_cut_at_a_word_boundary(hierarchy):
    ev = next(n for n in hierarchy.tree(["event"]) if n.node_id == "ev:S1:R2")
    full = VIOLIN[0]
    assert ev.label.endswith("…") and len(ev.label) <= 60
    kept = ev.label[:-1]
    assert full.startswith(kept) and full[len(kept)] == " "  # cut between two words, never inside one
    assert "assistant" not in ev.label and ACK not in ev.label


def test_a_node_has_the_same_name_in_the_tree_its_parent_and_its_details(hierarchy):
    tree = {n.node_id: n.label for n in hierarchy.tree()}
    for t in hierarchy.tree(["topic"]):
        assert hierarchy.node(t.node_id).label == tree[t.node_id]
        for m in hierarchy.members(t.node_id):
            assert m.label == tree[m.node_id] == hierarchy.node(m.node_id).label


def test_names_leave_descriptions_alone(hierarchy):
    texts = [t for pair in zip(PARCELS, VIOLIN) for t in pair]
    for i, text in enumerate(texts, start=1):
        info = hierarchy.node(f"ev:S1:R{i}")
        assert info.description == chat(i, text, T0).text  # what search reads is the whole round
        assert info.label != info.description


# ---------------------------------------------------------------- the naming functions
def test_sibling_names_prefer_the_words_that_set_a_node_apart():
    shared = "assistant: Got it, I've added that to your list. user: The garden needs water"
    names = sibling_names([f"{shared}, the tomatoes are red.", f"{shared}, the cucumbers are long."])
    assert "tomatoes" in names[0] and "cucumbers" not in names[0]
    assert "cucumbers" in names[1] and "tomatoes" not in names[1]
    assert names == sibling_names([f"{shared}, the tomatoes are red.", f"{shared}, the cucumbers are long."])


def test_sibling_names_skip_numbers_units_and_labels_and_keep_names_capitalized():
    (name,) = sibling_names(["Caroline: Went hiking 12 km with Anna near Lake Tahoe, 3 hours."])
    assert "Caroline" not in name and not re.search(r"\d|\bkm\b|hours", name), name
    assert "Anna" in name or "Tahoe" in name, name
    assert sibling_names(["", "user: 12 34."]) == ["", "12 34."]
    with pytest.raises(ValueError, match="words must be >= 1"):
        sibling_names(["x"], words=0)


def test_event_name_takes_the_first_line_that_is_not_the_assistant():
    text = "assistant: Welcome back!\nuser: Lunch at the new ramen place\nImage: a bowl of ramen"
    assert event_name(text) == "Lunch at the new ramen place"
    assert event_name("Image: a bowl of ramen on a table") == "a bowl of ramen on a table"
    assert event_name("") == ""


def test_node_names_name_events_alone_and_others_among_their_siblings():
    rows = [("t1", "topic", None, "user: tomatoes tomatoes garden"), ("t2", "topic", None, "user: cucumbers garden"),
            ("e1", "event", "x", "user: Planted tomatoes today.\nassistant: Nice.")]
    names = node_names(rows)
    assert names["e1"] == "Planted tomatoes today."
    assert names["t1"].split(", ")[0] == "tomatoes" and "cucumbers" in names["t2"]


def test_trim_words_never_cuts_inside_a_word():
    assert trim_words("short text", 20) == "short text"
    cut = trim_words("alpha beta gamma delta epsilon", 14)
    assert cut == "alpha beta…" and len(cut) <= 14
    assert trim_words("Supercalifragilistic word", 8) == "Supercalifragilistic…"  # one long word stays whole
    with pytest.raises(ValueError, match="max_chars"):
        trim_words("x", 1)
