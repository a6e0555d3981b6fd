"""Answer spans by question type, and refusal when the evidence does not support the question.

Sentences are hand-written (varied subjects, not the demo's); the answerer is exercised with the
HashEmbedder fake and, once, with the real MiniLM encoder.
"""
from __future__ import annotations

from datetime import date

import pytest

from core.model import EvidenceUnit
from core.planning.answer import REFUSAL, RuleAnswerer
from core.planning.span import (capitalized_phrases, clause, entity_support, extract, frame, split_unit, toks,
                                typed_spans)
from core.planning.trace import StepRecord


def span(question: str, sentence: str, ref: date | None = None, embed=None) -> str | None:
    e = extract(frame(question), sentence, ref, embed)
    return e.text if e else None


# ---------------------------------------------------------------- question frames

@pytest.mark.parametrize("question,atype", [
    ("How much did the concert tickets cost?", "money"),
    ("What was the price of the ferry ticket?", "money"),
    ("What colour is Maya's new scarf?", "colour"),
    ("Who fixed the boiler?", "person"),
    ("What's the name of my landlord?", "name"),
    ("What is the puppy called?", "name"),
    ("Where did Jonah move to?", "place"),
    ("Which town did the Garcias visit?", "place"),
    ("When is the piano recital?", "date"),
    ("How many cousins came to the reunion?", "number"),
    ("Which cake did we order for the party?", "thing"),
    ("What kind of tea does Ruth drink?", "thing"),
    ("What did the vet advise about the puppy's diet?", "clause"),
    ("Why did Omar quit the choir?", "reason"),
    ("Did Ines enjoy the opera?", "yesno"),
])
def test_frame_reads_the_answer_type(question, atype):
    assert frame(question).atype == atype


def test_frame_heads_and_entities():
    f = frame("What kind of tea does Ruth drink?")
    assert f.head == "tea" and f.names == ("Ruth",)
    f = frame("What is my brother's wife's name?")
    assert f.entities == (tuple(toks("brother")), tuple(toks("wife")))
    f = frame("What did my dermatologist prescribe?")
    assert f.entities == (tuple(toks("dermatologist")),)  # the verb is not part of the entity
    assert f.verb == toks("prescribe")[0]
    f = frame("What did I see on my walk?")
    assert f.entities == () and f.circumstances == (tuple(toks("walk")),)  # after a preposition: circumstantial
    f = frame("Which town did the Garcias visit?")
    assert toks("town")[0] not in f.support_tokens and toks("Garcias")[0] in f.support_tokens


# ---------------------------------------------------------------- spans per type

def test_money_span():
    assert span("How much did the concert tickets cost?",
                "We got the concert tickets for $85 each at the box office.") == "$85"
    assert span("How much did Lea spend on the sofa?", "Lea found a sofa she loved and paid 640 euros for it.") \
        == "640 euros"
    assert span("How much did the concert tickets cost?", "The concert was loud and great fun.") is None


def test_colour_span_prefers_the_colour_next_to_the_asked_thing():
    assert span("What colour is Maya's new scarf?", "Maya knitted a new scarf, dark green with a red fringe.") \
        == "green"
    assert span("What colour were the tiles in the bathroom?",
                "The walls were white but we picked yellow tiles for the bathroom.") == "yellow"
    assert span("What colour is the van?", "The van broke down again on the motorway.") is None


def test_name_and_person_spans():
    assert span("What's the name of my landlord?", "Finally met my landlord, Mrs. Petrakis, to sign the lease.") \
        == "Mrs. Petrakis"
    assert span("What did Tom call his tortoise?", "Tom adopted a tortoise and called it Speedy.") == "Speedy"
    assert span("Who fixed the boiler?", "In the end Gareth Lowe fixed the boiler for free.") == "Gareth Lowe"
    # a sentence-initial ordinary word is not a name
    assert "Visited" not in [s.text for s in capitalized_phrases("Visited the Prado with Elena.")]


def test_place_span_uses_the_preposition_and_the_question_verb():
    assert span("Where did Jonah move to?", "Jonah had lunch at Cafe Rouge and said he moved to Lisbon in May.") \
        == "Lisbon"
    assert span("Which town did the Garcias visit?", "The Garcias spent a week visiting Ronda in the hills.") == "Ronda"
    assert span("What was the name of the bridge we crossed?",
                "Photo of Tower Bridge from the north bank at dusk.") == "Tower Bridge"


def test_date_span_resolves_mentions_against_the_round_date():
    ref = date(2025, 9, 10)
    assert span("When is the piano recital?", "The piano recital is on October 3.", ref) == "October 3, 2025"
    assert span("When did Ana start the pottery class?", "I started a pottery class yesterday!", ref) \
        == "September 9, 2025"
    # a date mentioned early in the year about December is the previous December
    assert span("When was the office party?", "The office party on 18 December was fun.", date(2025, 1, 6)) \
        == "December 18, 2024"
    # no date in the sentence: the round's own date
    assert span("When did I repaint the fence?", "Repainted the fence this weekend.", ref) is not None


def test_number_span():
    got = span("How many cousins came to the reunion?", "Twelve cousins came to the reunion in the end.")
    assert got is not None and got.lower().startswith("twelve")
    assert span("How many cousins came to the reunion?", "The reunion was in a big barn.") is None


def test_thing_span_is_the_object_not_the_place():
    got = span("Which cake did we order for the party?",
               "For the party we ordered a carrot cake from the bakery on Elm Street.")
    assert got == "carrot cake"
    assert span("What kind of tea does Ruth drink?", "Ruth only drinks smoky lapsang tea in the morning.") \
        == "smoky lapsang tea"


def test_clause_keeps_the_conjunct_about_the_question():
    f = frame("What did the vet advise about the puppy's diet?")
    got = clause(f, "The vet told us to switch the puppy to wet food and to skip treats for a week.")
    assert "wet food" in got and "treats" not in got


def test_split_unit_keeps_speakers_captions_and_abbreviations():
    sents = split_unit("user: Saw Dr. Imani today. She was kind.\nassistant: Good.\n"
                       "Image: A red kite over the dunes.\nText in image: SALE 20%")
    assert [(s.speaker, s.text) for s in sents] == [
        ("user", "Saw Dr. Imani today."), ("user", "She was kind."), ("assistant", "Good."),
        ("image", "A red kite over the dunes."), ("ocr", "SALE 20%")]
    ctx = split_unit("[before] Nadia: Hi there. Omar: Hello!\n[event] Nadia: I got the job.")
    assert [(s.speaker, s.context) for s in ctx] == [("Nadia", True), ("Omar", True), ("Nadia", False)]


def test_entity_support_speaker_rule():
    f = frame("What did Omar adopt?")
    s_nadia = split_unit("Nadia: I adopted a kitten last week.")[0]
    ok, why = entity_support(f, "Nadia: I adopted a kitten last week.", s_nadia, ["Nadia", "Omar"])
    assert not ok and "Omar" in why
    ok, _ = entity_support(f, "Nadia: Omar adopted a kitten last week.", s_nadia, ["Nadia", "Omar"])
    assert not ok  # split_unit sentence text does not name Omar
    s_about = split_unit("Nadia: Omar adopted a kitten last week.")[0]
    assert entity_support(f, "Nadia: Omar adopted a kitten last week.", s_about, ["Nadia", "Omar"])[0]


# ---------------------------------------------------------------- the answerer

def _steps(*texts: str, times=None) -> list[StepRecord]:
    units = tuple(EvidenceUnit(f"ev:{i}", "event", t, (f"S{i}:R1",), 0.9 - 0.05 * i,
                               (times[i] if times else "2025-05-02T10:00:00")) for i, t in enumerate(texts))
    return [StepRecord(0, "retrieve", "SemanticMatch", {}, "ok", "rules", units=units)]


@pytest.fixture
def answerer(embedder):
    return RuleAnswerer(embedder)


def test_refuses_an_unmentioned_person(answerer):
    steps = _steps("user: Saw my dentist today. She prescribed a fluoride mouthwash.\nassistant: Noted.")
    a = answerer.answer("What did my dermatologist prescribe?", steps)
    assert a.refused and a.text.startswith(REFUSAL)
    b = answerer.answer("What did my dentist prescribe?", steps)
    assert not b.refused and "mouthwash" in b.text


def test_refuses_a_relation_the_evidence_lacks(answerer):
    steps = _steps("user: Dinner with my brother Tomas in Porto tonight.\nassistant: Enjoy!")
    assert answerer.answer("What is my brother's wife's name?", steps).refused
    b = answerer.answer("What is my brother's name?", steps)
    assert not b.refused and b.text == "Tomas"


def test_refuses_when_the_asked_type_is_absent(answerer):
    steps = _steps("user: Bought a new tent for the camping trip, a two-person one.\nassistant: Nice.")
    assert answerer.answer("How much did the new tent cost?", steps).refused
    steps2 = _steps("user: Bought a new tent for the camping trip. It cost 129 dollars.\nassistant: Nice.")
    b = answerer.answer("How much did the new tent cost?", steps2)
    assert not b.refused and b.text == "129 dollars"


def test_words_that_only_say_money_is_asked_need_not_be_in_the_evidence(answerer):
    # "fee" and "come to" say the answer is a sum of money; the round calls it a call-out
    steps = _steps("user: The plumber's call-out was €130.\nassistant: Noted.")
    a = answerer.answer("What did the plumber fee come to?", steps)
    assert not a.refused and a.text == "€130"
    # the thing the money was for must still be there
    assert answerer.answer("What did the electrician fee come to?", steps).refused


def test_answer_can_come_from_a_neighbouring_sentence_of_the_unit(answerer):
    steps = _steps("user: Signed up for the harbour swim! It is on June 14.\nassistant: Exciting.",
                   "user: Swam 2 km at the pool.\nassistant: Logged.")
    a = answerer.answer("When is the harbour swim?", steps)
    assert a.text == "June 14, 2025" and a.rounds == ("S0:R1",)


def test_speaker_mismatch_is_refused_but_the_right_speaker_answers(answerer):
    steps = _steps("Nadia: I adopted a kitten named Pixel last week.", "Omar: My exam went fine.")
    assert answerer.answer("What did Omar name his kitten?", steps).refused
    b = answerer.answer("What did Nadia name her kitten?", steps)
    assert not b.refused and b.text == "Pixel"


def test_unrelated_evidence_is_refused(answerer):
    steps = _steps("user: The printer jammed again.\nassistant: Try the rear tray.")
    assert answerer.answer("Which museum did Clara recommend?", steps).refused


@pytest.mark.slow
def test_real_minilm_answers_spans_and_refuses():
    import torch

    torch.set_num_threads(1)
    from core.encoders.text import MiniLMEncoder, load_minilm

    ans = RuleAnswerer(MiniLMEncoder(load_minilm()))
    steps = _steps("user: Lunch at the harbour.\nassistant: Lovely.\n"
                   "Image: A plate of grilled sardines with lemon and bread at Casa Azul.",
                   "user: Booked the train to Seville for Friday.\nassistant: Done.")
    a = ans.answer("Which fish did I eat at Casa Azul?", steps)
    assert not a.refused and "sardines" in a.text and len(a.text.split()) <= 4
    assert ans.answer("What did my nutritionist recommend?", steps).refused
    f = frame("Which fish did I eat at Casa Azul?")
    spans = typed_spans(f, "A plate of grilled sardines with lemon and bread at Casa Azul.", None,
                        ans.encoder.encode)
    assert spans and "sardines" in spans[0].text
