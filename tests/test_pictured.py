"""What a question's own picture shows (core.planning.pictured): the name the rounds showing a like picture
give it. Hand-written rounds about sea shells and kites (not any benchmark's), HashEmbedder fake."""
from __future__ import annotations


from conftest import HashEmbedder, built_memory

from core.model import EvidenceUnit, ImageRef
from core.planning.answer import REFUSAL_TEXT, RuleAnswerer
from core.planning.pictured import about_the_picture, like_units, pictured_answer
from core.planning.trace import StepRecord

SHELL_ROUND = (
    "user: Look what I picked up on the beach this morning, a spiral shell with orange ridges!\n"
    "assistant: What a find! That one is called a **whelk**. A whelk shell coils to the right and its ridges "
    "catch the light.\n"
    "Image: A spiral sea shell with orange ridges lying on wet sand beside a small pebble.")
SHELL_ROUND_2 = (
    "user: Here is the second whelk from the same walk, a paler one.\n"
    "assistant: This pale whelk has a lovely smooth lip.\n"
    "Image: A pale spiral sea shell with faint ridges on a wooden table.")
KITE_ROUND = (
    "user: My nephew flew his new kite at the park.\n"
    "assistant: That delta kite looks great against the clouds.\n"
    "Image: A red triangular kite flying high in a cloudy sky above green grass.")
UNNAMED_ROUND = (
    "user: I found this on the beach this morning, look at the orange ridges!\n"
    "assistant: Beautiful colours, the ridges really catch the light.\n"
    "Image: A spiral sea shell with orange ridges lying on wet sand beside a small pebble.")

QUESTION_CAPTION = "A spiral shell with bright orange ridges resting on damp sand near the water."


def _units(*texts: str) -> list[EvidenceUnit]:
    return [EvidenceUnit(f"ev:D1:{i + 1}", "event", t, (f"D1:{i + 1}",), 0.9 - 0.1 * i, "2025-05-02T10:00:00")
            for i, t in enumerate(texts)]


def test_the_round_with_a_like_picture_names_it(embedder):
    units = _units(KITE_ROUND, SHELL_ROUND)
    like = like_units(QUESTION_CAPTION, units, embedder)
    assert like[0].unit.unit_id == "ev:D1:2"  # the shell round, not the kite round
    a = pictured_answer("What kind of shell is shown in the picture?", QUESTION_CAPTION, units, embedder)
    assert a is not None and a.text == "Whelk"
    assert a.kind == "extractive" and a.unit_ids == ("ev:D1:2",) and a.rounds == ("D1:2",)


def test_a_name_repeated_across_like_rounds(embedder):
    units = _units(KITE_ROUND, SHELL_ROUND_2, SHELL_ROUND)
    a = pictured_answer("What is the thing in this photo?", QUESTION_CAPTION, units, embedder)
    assert a is not None and a.text == "Whelk"
    assert "ev:D1:3" in a.unit_ids


def test_no_name_in_the_dialogue_is_no_answer(embedder):
    assert pictured_answer("What kind of shell is shown in the picture?", QUESTION_CAPTION,
                           _units(UNNAMED_ROUND), embedder) is None
    # no round shows a like picture
    assert pictured_answer("What kind of shell is shown in the picture?", QUESTION_CAPTION,
                           _units(KITE_ROUND), embedder) is None


def test_questions_about_the_picture():
    assert about_the_picture("What kind of shell is shown in the picture?")
    assert about_the_picture("According to the conversation, what category is the item in the image?")
    assert about_the_picture("Do you know what this is called?")
    assert not about_the_picture("Who collected the shell in the picture?")
    assert not about_the_picture("Based on the photos, in which town was the shell found?")
    assert not about_the_picture("What did I eat for lunch?")


def test_rule_answerer_uses_the_question_caption(embedder):
    steps = [StepRecord(0, "retrieve", "SemanticMatch", {}, "ok", "rules",
                        units=tuple(_units(KITE_ROUND, SHELL_ROUND)))]
    ra = RuleAnswerer(embedder)
    q = "What kind of shell is shown in the picture?"
    assert ra.answer(q, steps, image_caption=QUESTION_CAPTION).text == "Whelk"
    # a yes/no question is not asked what the picture shows
    assert ra.answer("Is the shell in the picture a whelk?", steps, image_caption=QUESTION_CAPTION).text != "Whelk"
    # without the caption nothing changes
    assert ra.answer(q, steps).text == REFUSAL_TEXT


MEMORY = {
    "character_profile": {"name": "Tove"},
    "multi_session_dialogues": [
        {"session_id": "D1", "date": "2024-06-03", "dialogues": [
            {"round": "D1:1", "user": "Look what I picked up on the beach, a spiral shell with orange ridges!",
             "assistant": "That one is called a **whelk**. A whelk shell coils to the right.",
             "image_id": ["D1:IMG_001"],
             "image_caption": ["A spiral sea shell with orange ridges lying on wet sand beside a small pebble."]},
            {"round": "D1:2", "user": "My nephew flew his new kite at the park.",
             "assistant": "That delta kite looks great against the clouds.", "image_id": ["D1:IMG_002"],
             "image_caption": ["A red triangular kite flying high in a cloudy sky above green grass."]},
        ]},
    ],
    "human-annotated QAs": [],
}


def test_engine_passes_the_question_picture(tmp_path):
    with built_memory(tmp_path, "tove", MEMORY) as (store, eng):
        t = eng.ask("What kind of shell is shown in the picture?",
                    image=ImageRef("Q:IMG_1", caption=QUESTION_CAPTION))
        assert t.answer.text == "Whelk"
        assert "D1:1" in t.answer.rounds


def test_a_question_about_its_picture_is_answered_from_the_round_showing_a_like_one(embedder):
    """"Who was the giver of the object in the photo?" shares no word with the round that shows it: the like picture,
    not the words, says which round the question is about; its dialogue (not its caption) answers."""
    gift = ("user: My aunt Delphine gave me this for my birthday, I love the orange ridges.\n"
            "assistant: What a thoughtful present.\n"
            "Image: A spiral sea shell with orange ridges lying on wet sand beside a small pebble.")
    steps = [StepRecord(0, "retrieve", "SemanticMatch", {}, "ok", "rules", units=tuple(_units(KITE_ROUND, gift)))]
    ra = RuleAnswerer(embedder)
    q = "Who was the giver of the object in the photo?"
    with_picture = ra.answer(q, steps, image_caption=QUESTION_CAPTION)
    assert not with_picture.refused and with_picture.rounds == ("D1:2",), with_picture
    assert "Delphine" in with_picture.text and "shows a picture like" in " ".join(with_picture.notes)
    # without its picture the question matches no round well enough: refused, and the note says why
    alone = ra.answer(q, steps)
    assert alone.refused and alone.text == REFUSAL_TEXT and any(n.startswith("refused: ") for n in alone.notes)
