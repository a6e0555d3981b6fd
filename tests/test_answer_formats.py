"""Answer shapes (issue 18): the question's instructions, yes/no, requested date formats, image ids, the
standard refusal phrase, and names of the memory's people that are not missing content.

Histories are hand-written (pottery, a book club, bicycles), not any benchmark's; the answerer runs with
the HashEmbedder fake. The last test builds a small MemEye-format file and asks through the engine.
"""
from __future__ import annotations

from datetime import date

import pytest

from conftest import HashEmbedder, built_memory

from core.model import EvidenceUnit
from core.planning.answer import PEOPLE_NOTE, REFUSAL_TEXT, RuleAnswerer, people_from_steps
from core.planning.images import RoundImage
from core.planning.shape import (about_a_claim, alternatives, asks_image, date_format, format_date, is_yesno, shape,
                                 strip_instructions)
from core.planning.span import entity_support, frame, split_unit
from core.planning.trace import StepRecord


def _steps(*texts: str, times=None, notes=()) -> list[StepRecord]:
    units = tuple(EvidenceUnit(f"ev:{i}", "event", t, (f"S{i}:R1",), 0.9 - 0.05 * i,
                               (times[i] if times else "2025-05-02T10:00:00")) for i, t in enumerate(texts))
    return [StepRecord(0, "retrieve", "SemanticMatch", {}, "ok", "rules", units=units, notes=tuple(notes))]


@pytest.fixture
def answerer(embedder):
    return RuleAnswerer(embedder)


# ---------------------------------------------------------------- reading the question

def test_the_two_sides_of_an_order_question():
    from core.planning.intent import find_event_clause, order_clauses

    def sides(q):
        return order_clauses(q, find_event_clause(q))

    assert sides("Did Ines fire the bowl before joining the class?") == ("Ines fire the bowl", "joining the class")
    assert sides("Did I glaze the vase before or after the market? Use 'Before' or 'After'.") == \
        ("I glaze the vase", "the market")
    assert sides("Was the kiln repaired before her first firing?") == ("the kiln repaired", "her first firing")
    # no yes/no question, or nothing on one side: not an order question
    assert sides("What did I glaze after I joined the class?") is None
    assert sides("Have I fired celadon before?") is None


def test_instructions_are_stripped_and_followed():
    q, removed = strip_instructions("When did Ines fire the blue vase? Return in the format YYYY-MM-DD.")
    assert q == "When did Ines fire the blue vase?" and removed == ("Return in the format YYYY-MM-DD.",)
    q, removed = strip_instructions("How many chapters did the club read? Please answer using an Arabic numeral "
                                    "(e.g., “2” instead of “Two”).")
    assert q == "How many chapters did the club read?" and "Two" not in q
    # a politeness word opening the question itself goes, the question stays
    assert strip_instructions("Please list the books we read in May.")[0] == "List the books we read in May."
    # an instruction-only question is kept whole (nothing else to ask)
    assert strip_instructions("Return the holiday name.")[0] == "Return the holiday name."
    # an inline format phrase
    assert strip_instructions("When was the tune-up, in the format MM/DD?")[0].rstrip("?") == "When was the tune-up"


def test_instruction_words_are_not_names():
    assert frame("Which glaze did Ines pick? Only return the glaze name.").names == ("Ines",)
    assert frame(strip_instructions("Which pedal broke? Please answer with one word.")[0]).names == ()
    # a capitalised word after the sentence start is still a name
    assert frame("Did the club meet at Ruth's house?").names == ("Ruth",)


@pytest.mark.parametrize("question,yes", [
    ("Did Ines glaze the bowl?", True),
    ("Was the chain replaced in spring?", True),
    ("Has the club finished the novel?", True),
    ("Can the kiln reach 1200 degrees?", True),
    ("Based on the last meeting, did the club pick a new book?", True),
    ("According to the chat, is the frame aluminium?", True),
    ("What did Ines glaze?", False),
    ("Do you remember which book the club chose?", False),  # a wh-question in a polite frame
    ("Did the tune-up happen before or after the race?", False),  # alternatives, not yes/no
    ("If the bowl cracked, which clay should be used now?", False),
])
def test_yes_no_questions(question, yes):
    assert is_yesno(question) is yes


def test_date_formats_and_options():
    assert date_format("When was it? Return in the format YYYY-MM-DD.") == "YYYY-MM-DD"
    assert date_format("Answer as DD.MM.YYYY: when did we meet?") == "DD.MM.YYYY"
    assert date_format("In which month did the kiln break?") == "month"
    assert date_format("What did Ines make?") is None
    d = date(2024, 7, 8)
    assert format_date(d, "YYYY-MM-DD") == "2024-07-08"
    assert format_date(d, "MM/DD") == "07/08"
    assert format_date(d, "DD.MM.YYYY") == "08.07.2024"
    assert format_date(d, "month") == "July 2024"
    assert alternatives("Did it happen before or after the race? Use 'Before' or 'After'.") == ("Before", "After")
    assert about_a_claim("Is there a contradiction in saying the frame is steel?")
    assert not about_a_claim("Did the club meet on Friday?")


@pytest.mark.parametrize("question,img", [
    ("Which image shows the cracked vase?", True),
    ("Which of the photos from June is about the kiln?", True),
    ("Among the pictures Ines shared, which one shows a teapot?", True),
    ("Which vase is in the picture? Only return the image_id.", True),
    ("How many photos did Ines share?", False),
    ("Based on the images, what colour was the glaze?", False),
])
def test_visual_search_questions(question, img):
    assert asks_image(question) is img


# ---------------------------------------------------------------- answer shapes

def test_refusal_is_the_standard_phrase_alone(answerer):
    steps = _steps("user: The printer jammed again.\nassistant: Try the rear tray.")
    a = answerer.answer("Which museum did Clara recommend?", steps)
    assert a.refused and a.text == REFUSAL_TEXT == "Not mentioned."


def test_yes_no_answer_starts_with_yes_or_no(answerer):
    steps = _steps("user: I glazed the tall bowl with a celadon glaze and fired it on Sunday.\nassistant: Lovely.")
    a = answerer.answer("Did I glaze the tall bowl?", steps)
    assert not a.refused and a.text.startswith("Yes"), a.text
    neg = _steps("user: I did not glaze the tall bowl, it stays raw clay for now.\nassistant: Fine.")
    assert answerer.answer("Did I glaze the tall bowl?", neg).text.startswith("No")


def test_yes_no_about_something_absent_is_refused(answerer):
    steps = _steps("user: I glazed the tall bowl with a celadon glaze and fired it on Sunday.\nassistant: Lovely.")
    # the teapot is in no evidence unit: no ground for yes or no
    assert answerer.answer("Did I glaze the teapot?", steps).text == "Not mentioned."
    # whether a statement holds is answered even when the statement is not in the memory
    a = answerer.answer("Is there a contradiction in saying I never fired the tall bowl?", steps)
    assert a.text in ("Yes.", "No.") and a.notes, a


def test_requested_date_format(answerer):
    steps = _steps("user: Took the bike in for a tune-up this morning, new chain and brake pads.\nassistant: Ok.",
                   times=["2024-03-09T09:00:00"])
    a = answerer.answer("When did I take the bike in for a tune-up? Return in the format YYYY-MM-DD.", steps)
    assert a.text == "2024-03-09", a.text
    b = answerer.answer("When did I take the bike in for a tune-up? Answer in the format MM/DD.", steps)
    assert b.text == "03/09"


def test_before_or_after_from_the_evidence_times(answerer):
    steps = _steps("user: Finished reading the lighthouse novel with the club tonight.\nassistant: Nice.",
                   "user: Went to the poetry reading at the library.\nassistant: Fun.",
                   times=["2024-05-20T20:00:00", "2024-04-02T19:00:00"])
    a = answerer.answer("Did the club finish the lighthouse novel before or after the poetry reading? "
                        "Use 'Before' or 'After'.", steps)
    assert a.text == "After"


def test_people_names_are_not_missing_content(answerer):
    steps = _steps("user: I threw a small teapot on the wheel today.\nassistant: Well done!")
    q = "What did Ines throw on the wheel?"
    assert answerer.answer(q, steps).refused  # unknown name, absent from the evidence
    a = answerer.answer(q, steps, people=("Ines",))
    assert not a.refused and "teapot" in a.text
    # the same through a step's note (what the rule planner writes when the context has `people`)
    noted = _steps("user: I threw a small teapot on the wheel today.\nassistant: Well done!",
                   notes=(PEOPLE_NOTE + "Ines, Marco",))
    assert people_from_steps(noted) == ("Ines", "Marco")
    assert not answerer.answer(q, noted).refused
    # a name that is not one of the people still needs a mention
    s = split_unit("user: I threw a small teapot.")[0]
    assert not entity_support(frame("What did Marco throw?"), s.text, s, (), ("Ines",))[0]


def test_image_ids_best_caption_first(embedder):
    images = [RoundImage("S0:R1", "D1:IMG_001", "A bowl drying on a shelf next to a kiln."),
              RoundImage("S0:R1", "D1:IMG_002", "A cracked blue vase on a workbench."),
              RoundImage("S1:R1", "D2:IMG_001", "A teapot with a bamboo handle.")]
    ans = RuleAnswerer(embedder, round_images=lambda rounds: [i for i in images if i.round_id in rounds])
    steps = _steps("user: Two pieces out of the kiln today.\nImage: A bowl drying on a shelf next to a kiln.\n"
                   "Image: A cracked blue vase on a workbench.",
                   "user: My new teapot.\nImage: A teapot with a bamboo handle.")
    assert ans.answer("Which image shows the cracked blue vase?", steps).text == "D1:IMG_002"
    assert ans.answer("Which picture is about the teapot? Only return the image_id.", steps).text == "D2:IMG_001"
    # without a way to read the images, the answer is the best caption text, never an invented id
    plain = RuleAnswerer(embedder).answer("Which image shows the cracked blue vase?", steps)
    assert "IMG" not in plain.text


def test_shape_of_a_visual_search_question_is_not_yes_no():
    sh = shape("Which two images show the vase before and after firing?")
    assert sh.image_ids and sh.many and not sh.yesno


def test_a_request_to_judge_a_statement_is_a_yes_no_question(answerer):
    assert is_yesno("Please determine whether the following information conflicts with the dialogue: Ines sold "
                    "the celadon bowl.")
    assert is_yesno("Help me perform conflict detection: Ines glazed the teapot blue.")
    # "longing or vulnerability" inside a whether-clause are no options of the question
    sh = shape("Does the conversation contain conflicting statements about whether the glaze is glossy or matte?")
    assert sh.yesno and not sh.options
    # ... while a request that offers two options is a choice
    assert not is_yesno("Tell me whether I fired more bowls in May or June")
    assert shape("Was the kiln hotter or cooler in March?").options == ("Hotter", "Cooler")
    steps = _steps("user: I glazed the tall bowl with a celadon glaze and fired it on Sunday.\nassistant: Lovely.")
    a = answerer.answer("Please determine whether the following information conflicts with the dialogue memory: "
                        "Ines never glazed a bowl.", steps, people=("Ines",))
    assert a.text in ("Yes.", "No.") and not a.refused, a


# ---------------------------------------------------------------- end to end: a MemEye history

MEMEYE = {
    "character_profile": {"name": "Ines", "persona_summary": "Ines is a potter."},
    "multi_session_dialogues": [
        {"session_id": "D1", "date": "2024-06-03", "dialogues": [
            {"round": "D1:1", "user": "I finally fired the celadon bowl in the studio kiln today.",
             "assistant": "Congratulations on the first firing!"},
            {"round": "D1:2", "user": "Here is the shelf after unloading.",
             "assistant": "The glaze pooled nicely.", "image_id": ["D1:IMG_001"],
             "image_caption": ["A wooden shelf with a green celadon bowl and two small cups."]},
        ]},
        {"session_id": "D2", "date": "2024-07-15", "dialogues": [
            {"round": "D2:1", "user": "I joined an evening class on throwing teapots at the community studio.",
             "assistant": "Teapots are a great challenge."},
            {"round": "D2:2", "user": "My first teapot has a bamboo handle.", "assistant": "Beautiful.",
             "image_id": ["D2:IMG_001"], "image_caption": ["A speckled teapot with a bamboo handle on a table."]},
        ]},
    ],
    "human-annotated QAs": [],
}


def test_memeye_history_end_to_end(tmp_path):
    from core.planning.images import round_images

    with built_memory(tmp_path, "ines", MEMEYE) as (store, eng):
        # what the engine is to pass the answerer (issue 18): the profile's names, the images of rounds
        eng.rule_answerer.people = ("Ines",)
        eng.rule_answerer.round_images = lambda rounds: round_images(store.con, rounds)

        def ask(q):
            return eng.ask(q).answer.text

        assert ask("When did Ines fire the celadon bowl in the kiln? Return in the format YYYY-MM-DD.") == "2024-06-03"
        assert ask("Which image shows the teapot with the bamboo handle?") == "D2:IMG_001"
        assert ask("Which of the pictures is about the celadon bowl on the shelf? Only return the image_id.") \
            == "D1:IMG_001"
        assert ask("Did Ines join an evening class on throwing teapots?").startswith("Yes")
        assert ask("Did Ines sell her paintings at the harbour market?") == "Not mentioned."
        assert ask("In which month did Ines join the evening class?") == "July 2024"
        # the instructions are no part of what is searched for
        t = eng.ask("When did Ines join the evening class? Return in the format YYYY-MM-DD.")
        assert t.answer.text == "2024-07-15"
        assert all("YYYY" not in str(s.args.get("query_content", "")) for s in t.steps)
        # "did A happen before B": the plan locates each side on its own, the answer compares their times
        t = eng.ask("Did Ines fire the celadon bowl before joining the evening class on teapots?")
        located = [s.args["query_content"] for s in t.steps if s.tool == "EventLocate"]
        assert located == ["joining the evening class on teapots", "Ines fire the celadon bowl"], located
        assert t.answer.text == "Yes." and "D1:1" in t.answer.notes[0] and "D2:1" in t.answer.notes[0], t.answer
        assert ask("Did Ines join the evening class before or after she fired the celadon bowl?") == "After"
        # "first" in an order question computes nothing: no table needed, the located events answer
        t = eng.ask("Did Ines first fire the celadon bowl before joining the evening class on teapots?")
        assert t.answer.text == "Yes.", (t.answer, t.plan.notes)
        t = eng.ask("Which came first: Ines joining the evening class on teapots or Ines firing the celadon bowl?")
        assert t.answer.text == "Ines firing the celadon bowl.", t.answer
        assert [s.tool for s in t.steps].count("EventLocate") == 2


def test_yes_no_needs_the_rare_words_in_one_unit(answerer):
    steps = _steps("user: I used the oven at home for baking the rye loaf, a long process.\nassistant: Nice.",
                   "user: Bought a tub of yogurt at the market.\nassistant: Ok.",
                   "user: Baking at home again, same process as last week.\nassistant: Good.")
    assert answerer.answer("Was yogurt used in the home baking process?", steps).text == "Not mentioned."
    assert answerer.answer("Was the oven used for baking the rye loaf?", steps).text.startswith("Yes")


def test_did_a_happen_before_b_from_the_evidence_times(answerer):
    steps = _steps("user: Swapped the worn chain on the commuter bike.\nassistant: Good.",
                   "user: Rode the hill loop with the new saddle.\nassistant: Nice.",
                   times=["2024-03-01T08:00:00", "2024-04-11T08:00:00"])
    a = answerer.answer("Did I swap the worn chain before I rode the hill loop?", steps)
    # the short answer the question asks for; the order it rests on in the notes
    assert a.text == "Yes." and a.notes == ("S0:R1 (March 1, 2024) came before S1:R1 (April 11, 2024)",), a
    b = answerer.answer("Did I swap the worn chain after I rode the hill loop?", steps)
    assert b.text == "No.", b.text


def _located(query: str, text: str, rid: str, order: int, time: str, score: float = 0.7) -> StepRecord:
    unit = EvidenceUnit(f"ev:{rid}", "event", text, (rid,), score, time,
                        (("round_id", rid), ("round_order", order)))
    return StepRecord(0, f"locate when: {query}", "EventLocate", {"query_content": query}, "ok", "rules",
                      units=(unit,))


def test_two_events_located_on_their_own_are_ordered_by_time_then_round(answerer):
    """The rule plan locates each side of "did A happen before B" (words the question paraphrases
    need not be in one retrieved unit); on one day the round order decides."""
    day = "2024-06-03T00:00:00"
    steps = [_located("taking the pottery class", "user: Signed up for the Tuesday pottery class today.",
                      "D2:9", 30, day),
             _located("Ines glaze the blue vase", "user: Glazed the blue vase in cobalt this morning.",
                      "D2:4", 25, day)]
    a = answerer.answer("Did Ines glaze the blue vase before taking the pottery class?", steps, people=("Ines",))
    assert a.text == "Yes." and "D2:4" in a.notes[0] and "D2:9" in a.notes[0], a
    later = [_located("taking the pottery class", "user: Signed up for the Tuesday pottery class today.",
                      "D2:9", 30, day),
             _located("Ines glaze the blue vase", "user: Glazed the blue vase in cobalt this morning.",
                      "D3:1", 41, "2024-06-10T00:00:00")]
    assert answerer.answer("Did Ines glaze the blue vase before or after taking the pottery class? Use 'Before' "
                           "or 'After'.", later, people=("Ines",)).text == "After"
    # a side whose located event does not match it (few shared words, low score): no order is read
    unmatched = [steps[0], _located("Ines glaze the blue vase", "user: The kiln was cold all week.",
                                    "D2:4", 25, day, score=0.2)]
    assert answerer.answer("Did Ines glaze the blue vase before taking the pottery class?", unmatched,
                           people=("Ines",)).text == "Not mentioned."


def test_adverbs_are_not_things():
    from core.planning.span import typed_spans

    got = [s.text.lower() for s in typed_spans(frame("Which polish do I use for the frame?"),
                                               "I regularly use it, really, the blue tin of carnauba polish.")]
    assert got and not any(w in ("regularly", "really") for w in got), got


def test_before_question_about_something_absent_is_refused(answerer):
    steps = _steps("user: Swapped the worn chain on the commuter bike.\nassistant: Good.",
                   "user: Rode the hill loop with the new saddle.\nassistant: Nice.",
                   times=["2024-03-01T08:00:00", "2024-04-11T08:00:00"])
    # nothing says a helmet was bought: no order to read, no yes or no
    assert answerer.answer("Did I buy a helmet before I rode the hill loop?", steps).text == "Not mentioned."


def test_a_yes_no_question_about_a_speaker_reads_that_speakers_lines(answerer):
    """"Did the user mention a vacuum cleaner?": what the assistant suggested is not what the user did."""
    steps = _steps("user: The couch smells musty.\nassistant: You could use a vacuum cleaner on the couch.")
    a = answerer.answer("Did the user use a vacuum cleaner on the couch?", steps)
    assert a.refused and a.text == "Not mentioned." and any("vacuum" in n for n in a.notes), a
    said = _steps("user: I use the vacuum cleaner on the couch every week.\nassistant: Good, that lifts the dust.")
    assert answerer.answer("Did the user use a vacuum cleaner on the couch?", said).text.startswith("Yes")
    # a subject that is no speaker of the evidence reads everything, as before
    both = _steps("user: The couch smells musty.\nassistant: Marta said she would use a vacuum cleaner on her couch.")
    assert not answerer.answer("Did Marta use a vacuum cleaner on the couch?", both).refused


def test_a_word_of_precision_is_not_the_head_of_the_question():
    assert frame("What specific move in the opening does Ada like?").head == "move"
    assert frame("Which exact hall did the choir sing in?").head == "hall"
    assert frame("Which particular kind of fern did I repot?").head == "fern"


def test_a_capital_that_only_opens_a_sentence_is_no_name(answerer):
    steps = _steps("user: Wash the tiles with the cleaner I use. I wash them every week.\nassistant: Good plan.")
    a = answerer.answer("What is the name of the cleaner I use?", steps)
    assert a.text != "Wash", a
    named = _steps("user: Wash the tiles with Glimmo, the cleaner I use.\nassistant: Glimmo is gentle.")
    assert "Glimmo" in answerer.answer("What is the name of the cleaner I use?", named).text


def test_which_of_two_events_came_first_is_read_as_two_sides_and_two_options():
    from core.planning.intent import order_choice

    c = order_choice("Which came first: Ines glazing the vase or Ines joining the pottery class?")
    assert c.sides == ("Ines glazing the vase", "Ines joining the pottery class") and c.options == c.sides and c.first
    # the subject and verb of "which did X <verb> first" belong to both sides; the options are the things
    c = order_choice("Which did Ines buy first for the studio: the wheel or the kiln?")
    assert c.sides == ("Ines buy the wheel", "Ines buy the kiln") and c.options == ("the wheel", "the kiln")
    c = order_choice("Did she fire the bowl first, or did she glaze the vase first?")
    assert c.sides == ("she fire the bowl", "she glaze the vase") and c.first
    assert not order_choice("Which of these happened later, the market or the class?").first
    # a comparison that is no order, or one option only: not this question
    assert order_choice("Which is bigger: the bowl or the vase?") is None
    assert order_choice("Did Ines glaze the vase before the class?") is None


def test_the_option_that_came_first_answers_which_came_first(answerer):
    steps = [_located("Ines buy the kiln", "user: The kiln arrived today, paid in full.", "D4:2", 40,
                      "2024-07-01T00:00:00"),
             _located("Ines buy the wheel", "user: Bought a second-hand wheel for the studio.", "D2:5", 22,
                      "2024-06-03T00:00:00")]
    a = answerer.answer("Which did Ines buy first for the studio: the wheel or the kiln?", steps, people=("Ines",))
    assert a.text == "The wheel." and "D2:5" in a.notes[0], a
    assert answerer.answer("Which did Ines buy last: the wheel or the kiln?", steps, people=("Ines",)).text == \
        "The kiln."


def test_a_side_need_not_name_the_person_the_memory_is_about(answerer):
    """The user speaks as "user": "Did Ines ..." is matched on what Ines did, not on her name."""
    class_ = _located("taking the pottery class", "user: Signed up for the Tuesday pottery class today.",
                      "D2:9", 30, "2024-06-03T00:00:00")
    q = "Did Ines crack the vase before taking the pottery class?"
    # one of "Ines crack vase" is a third, too few; one of "crack vase" is half
    cracked = _located("Ines crack the vase", "user: Oh no, the vase broke in the kiln.", "D1:4", 12,
                       "2024-05-20T00:00:00", score=0.4)
    assert answerer.answer(q, [class_, cracked], people=("Ines",)).text == "Yes."
    assert answerer.answer(q, [class_, cracked]).text == "Not mentioned."
    # a side sharing only the name is no match
    named = _located("Ines crack the vase", "user: Ines called about dinner.", "D1:4", 12, "2024-05-20T00:00:00",
                     score=0.4)
    assert answerer.answer(q, [class_, named], people=("Ines",)).text == "Not mentioned."


def test_a_possessed_activity_presupposes_what_it_was_about():
    assert frame("When did Ines's winter sweater shopping session take place?").entities == (("winter", "sweater"),)
    assert frame("What did my sister's husband cook?").entities[0] == ("sister",)


def test_a_when_question_asks_a_date_whatever_words_of_change_it_holds():
    from datetime import date

    from core.planning.intent import analyze

    now = date(2025, 6, 1)
    assert analyze("When did my fall fashion shopping take place?", now).kind == "when"
    assert analyze("How did my weight fall in March?", now).kind == "trend"
