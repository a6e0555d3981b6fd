"""What a picture of the memory showed (core.planning.depicted): "What was in my photo from 5 May?",
"Describe the picture I sent on July 8". Hand-written histories (a pottery studio, a garden log), the
HashEmbedder fake for unit tests; the last test builds a memory and asks through the engine, where the
period search must reach a day whose rounds say nothing of what the question asks.
"""
from __future__ import annotations

from datetime import date

from conftest import HashEmbedder, built_memory

from core.model import EvidenceUnit
from core.planning.answer import RuleAnswerer
from core.planning.depicted import asked_kind, asks_description, content_words, describe
from core.planning.images import RoundImage
from core.planning.dates import TimeRange
from core.planning.trace import StepRecord


def _unit(i: int, text: str, rounds: tuple[str, ...], day: str) -> EvidenceUnit:
    return EvidenceUnit(f"ev:{i}", "event", text, rounds, 0.9 - 0.05 * i, f"{day}T10:00:00")


def _day(d: str) -> TimeRange:
    x = date.fromisoformat(d)
    return TimeRange(x, x, d, f"on {d}")


def test_which_questions_ask_for_a_description():
    for q in ("What was in my photo from May 5, 2025?", "What did the photo I shared on 8 July show?",
              "Describe the picture I sent on July 13.", "What's on that screenshot from last week?",
              "What was shown in the image I posted yesterday?", "What did my snapshot from the trip depict?"):
        assert asks_description(q), q
    for q in ("Which image shows the blue vase?", "What did I photograph on Sunday?", "How many photos did I send?",
              "What colour was the vase?", "Did the photo show a vase?"):
        assert not asks_description(q), q


def test_asked_kind_and_content_words():
    assert asked_kind("What was on the screenshot from May 2?") == "screen"
    assert asked_kind("What was in my photo from May 2?") == "scene"
    assert asked_kind("What was in the image from May 2?") is None
    # dates, numbers and picture words are not what the picture shows
    assert content_words("What did the photo I shared on September 2, 2025 show?") <= {"what", "did", "the", "i", "on"}
    assert "kiln" in content_words("Describe the photo of the kiln from May 2.")


def test_the_days_photo_not_its_screenshot_and_not_another_days():
    units = [_unit(0, "user: Screenshot of my kiln log.\nImage: The kiln app.", ("S1:R2",), "2025-05-02"),
             _unit(1, "user: Look at this!\nImage: A green bowl on a shelf.", ("S1:R1",), "2025-05-02"),
             _unit(2, "user: Sharing a photo.\nImage: A teapot by the window.", ("S2:R1",), "2025-05-09")]
    images = [RoundImage("S1:R2", "S1:R2:I1", "The kiln app.", "Kiln Log\nPeak 1222 C\nRamp 150/h\nCone 6 hold 10 min",
                         "user: Screenshot of my kiln log.", "2025-05-02 10:05:00"),
              RoundImage("S1:R1", "S1:R1:I1", "A green bowl on a shelf.", "", "user: Look at this!", "2025-05-02 09:00:00"),
              RoundImage("S2:R1", "S2:R1:I1", "A teapot by the window.", "", "user: Sharing a photo.", "2025-05-09 09:00:00")]
    enc = HashEmbedder()
    a = describe("What was in my photo from May 2, 2025?", units, images, _day("2025-05-02"), enc)
    assert a.text == "A green bowl on a shelf." and a.rounds == ("S1:R1",)
    s = describe("What did the screenshot from May 2 show?", units, images, _day("2025-05-02"), enc)
    assert s.text == "The kiln app."
    # no picture of the named day among the evidence: no answer (never another day's picture)
    assert describe("What was in my photo from May 3?", units, images, _day("2025-05-03"), enc) is None
    # without a time: the question's content words pick the picture
    t = describe("Describe the photo of the teapot.", units, images, None, enc)
    assert t.text == "A teapot by the window."
    # an image without a caption answers with its OCR text; no image at all: None
    bare = [RoundImage("S1:R2", "S1:R2:I1", "", "Kiln Log Peak 1222 C", "user: Screenshot.", "2025-05-02 10:05:00")]
    assert describe("What was on the screenshot from May 2?", units, bare, _day("2025-05-02"), enc).text \
        == "Kiln Log Peak 1222 C"
    assert describe("What was in my photo from May 2?", units, [], _day("2025-05-02"), enc) is None


def test_the_answerer_describes_through_its_image_reader():
    images = [RoundImage("S1:R1", "S1:R1:I1", "A green bowl on a shelf.", "", "user: Look at this!", "2025-05-02 09:00:00")]
    units = (_unit(0, "user: Look at this!\nImage: A green bowl on a shelf.", ("S1:R1",), "2025-05-02"),)
    steps = [StepRecord(0, "retrieve", "SemanticMatch", {}, "ok", "rules", units=units)]
    ans = RuleAnswerer(HashEmbedder(), round_images=lambda rounds: [i for i in images if i.round_id in rounds])
    a = ans.answer("Describe the picture I sent on May 2, 2025.", steps, now=date(2025, 6, 1))
    assert a.text == "A green bowl on a shelf." and not a.refused
    # without an image reader the answer comes from the text, as before (never an invented caption)
    plain = RuleAnswerer(HashEmbedder()).answer("Describe the picture I sent on May 2, 2025.", steps, now=date(2025, 6, 1))
    assert plain.kind in ("extractive", "refusal")


def _garden_history(n_days: int = 130) -> dict:
    """130 days of watering notes (more events than a period search reads at first) (each names 'the picture' so retrieval prefers them) and, on one day,
    a photo whose round says nothing the question asks for."""
    sessions = []
    for d in range(n_days):
        day = date(2025, 1, 1).toordinal() + d
        iso = date.fromordinal(day).isoformat()
        rounds = [{"round": f"S{d}:R1", "time": f"{iso}T08:00:00",
                   "user": f"Watered the tomatoes, {300 + d} ml; I sent the picture of the log to my sister.",
                   "assistant": "Noted."}]
        if d == 107:
            rounds.append({"round": f"S{d}:R2", "time": f"{iso}T09:00:00", "user": "Isn't this nice?",
                           "assistant": "Lovely.", "image_id": [f"S{d}:R2:I1"],
                           "image_caption": ["A ladybird on a basil leaf."]})
        sessions.append({"session_id": f"S{d}", "date": iso, "dialogues": rounds})
    return {"character_profile": {"name": "Ada"}, "multi_session_dialogues": sessions, "human-annotated QAs": []}


def test_engine_reads_the_named_day_even_when_its_rounds_score_low(tmp_path):
    from core.planning.images import round_images

    with built_memory(tmp_path, "garden", _garden_history()) as (store, eng):
        eng.rule_answerer.round_images = lambda rounds: round_images(store.con, rounds)
        from core.planning.images import images_between

        assert [i.image_id for i in images_between(store.con, date(2025, 4, 18), date(2025, 4, 18))] == ["S107:R2:I1"]
        assert images_between(store.con, date(2025, 4, 19), date(2025, 4, 30)) == []
        t = eng.ask("Describe the picture I sent on April 18, 2025.")
        assert t.answer.text == "A ladybird on a basil leaf.", t.answer
        assert "S107:R2" in t.answer.rounds
        # a day with no picture at all is not answered with another day's picture
        other = eng.ask("Describe the picture I sent on April 19, 2025.")
        assert "ladybird" not in other.answer.text


def test_the_days_pictures_are_read_even_when_retrieval_ranked_other_rounds():
    # the evidence holds only the day's screenshot; the photo of that day comes from the period reader
    shot = RoundImage("S1:R2", "S1:R2:I1", "The kiln app.", "Kiln Log\nPeak 1222 C\nRamp 150/h\nCone 6 hold",
                      "user: Screenshot of my kiln log.", "2025-05-02 10:05:00")
    photo = RoundImage("S1:R5", "S1:R5:I1", "A green bowl on a shelf.", "", "user: Look at this!", "2025-05-02 16:00:00")
    units = (_unit(0, "user: Screenshot of my kiln log.\nImage: The kiln app.", ("S1:R2",), "2025-05-02"),)
    steps = [StepRecord(0, "retrieve", "SemanticMatch", {}, "ok", "rules", units=units)]
    seen = []

    def period(start, end):
        seen.append((start, end))
        return [shot, photo]
    ans = RuleAnswerer(HashEmbedder(), round_images=lambda rounds: [i for i in (shot, photo) if i.round_id in rounds],
                       period_images=period)
    a = ans.answer("What was in my photo from May 2, 2025?", steps, now=date(2025, 6, 1))
    assert a.text == "A green bowl on a shelf." and a.rounds == ("S1:R5",)
    assert seen == [(date(2025, 5, 2), date(2025, 5, 2))]
    # without the period reader only the evidence's screenshot is there: no photo of that day to describe
    plain = RuleAnswerer(HashEmbedder(), round_images=lambda rounds: [i for i in (shot, photo) if i.round_id in rounds])
    assert plain.answer("What was in my photo from May 2, 2025?", steps, now=date(2025, 6, 1)).text != "A green bowl on a shelf."
