"""Prose record items the rule extractor reads without a domain word list: text fields after a heading,
names ending in a capital letter, labels written after their value at the end of a list, number words
and unlabelled items of a log line."""
from __future__ import annotations

from datetime import datetime

import pytest

from core.extract import RuleExtractor
from core.model import Observation, Round, Utterance


def _ex(text: str) -> dict[str, Observation]:
    r = Round("S1:R1", "S1", datetime(2025, 3, 4, 9, 0), (Utterance("user", text),), ())
    out: dict[str, Observation] = {}
    for o in RuleExtractor().extract(r, {}):
        assert text[o.start:o.end] == o.raw_value, o
        assert o.attribute not in out, f"duplicate {o.attribute}"
        out[o.attribute] = o
    return out


def test_text_field_after_a_heading_colon():
    d = _ex("Returned today: Genre: mystery, pages came in at 320 and fine at 2.40 EUR.")
    assert d["genre"].raw_value == "mystery" and d["genre"].value_kind == "text"
    assert d["pages"].number == 320


def test_copula_value_that_ends_with_a_capital_letter():
    d = _ex("Chess club night: the board was Table A, my rating came in at 1542.")
    assert d["board"].raw_value == "Table A"
    assert _ex("Rough week. The party was a blast!") == {}


def test_label_after_the_last_value_of_a_list():
    d = _ex("Weather station: wind came in at 14 kph, 3.2 mm rain and 61 pct hum. rel.")
    assert d["rain"].number == 3.2 and d["rain"].unit == "mm"
    assert d["hum_rel"].number == 61  # an abbreviation period inside a label after its value
    d = _ex("Chess night: 1542 rating and 38 moves")
    assert d["rating"].number == 1542  # a heading colon, then "value label"


def test_number_words_with_a_label_in_a_list_of_measurements():
    d = _ex("Library visit: seven loans, fines came in at 2.40 EUR and three renewals/week.")
    assert d["loans"].number == 7 and d["loans"].raw_value == "seven"
    assert d["renewals_week"].number == 3
    d = _ex("Club night: logged five of wins, rating at 1542.")
    assert d["wins"].number == 5


def test_number_words_in_chat_stay_words():
    assert _ex("I have two kids and a dog.") == {}
    assert _ex("Met two friends for lunch, it was great.") == {}


def test_text_items_of_a_record_list_by_case():
    # a capitalised label before its value, lower-case label words before a name, a label word before a name
    d = _ex("Club night: BOARD Table A, 38 moves and rating came in at 1542.")
    assert d["board"].raw_value == "Table A" and d["moves"].number == 38
    d = _ex("Weather station: rain at 3.2 mm, wind at 14 kph and sensor Mast B.")
    assert d["sensor"].raw_value == "Mast B"
    d = _ex("Returned books. Branch North Hill Road, 3 loans and fines at 2.40 EUR.")
    assert d["branch"].raw_value == "North Hill Road"


def test_unlabelled_item_opening_a_log_line():
    d = _ex("Week 4 — queen's gambit, 38 moves, 1542 rating")
    assert d["item"].raw_value == "queen's gambit" and d["item"].value_kind == "text"
    assert d["moves"].number == 38 and d["rating"].number == 1542


@pytest.mark.parametrize("text", [
    "Great game with Sam, 38 moves in 25 minutes, lovely evening.",  # a remark in a list is no item
    "Going to the library tomorrow: 3 loans, fines 2.40 EUR, mystery shelf.",  # a plan
    "Chess tonight, nice.",  # no measured values
])
def test_no_text_items_outside_record_lists(text):
    assert "item" not in _ex(text)


def test_text_item_in_a_message_of_lines():
    d = _ex("Played a match: sicilian defence\nMoves: 38\nrating 1542")
    assert d["item"].raw_value == "sicilian defence" and d["moves"].number == 38


def test_names_ending_in_a_capital_letter_in_lists_and_copulas_in_line_records():
    d = _ex("Weather station: rain at 3.2 mm, wind at 14 kph and sensor Mast A.")
    assert d["sensor"].raw_value == "Mast A"
    d = _ex("Club night! the opening was sicilian\nmoves 38\nRating: 1542")
    assert d["opening"].raw_value == "sicilian" and d["moves"].number == 38
    assert _ex("Lovely day! the weather was great\nsee you soon") == {}


def test_a_calendar_noun_after_the_value_does_not_replace_its_label():
    d = _ex("Returned a book! Fine: 2.40 EUR; Overdue by: 4 days")
    assert d["overdue"].number == 4 and "days" not in d


def test_a_name_with_an_ampersand_closes_a_list():
    d = _ex("Sent an invoice. Total came in at 1296.96 USD, time at 12 h and client Pine & Sons.")
    assert d["client"].raw_value == "Pine & Sons"


def test_a_name_closing_a_list_of_readings_is_what_the_entry_is_about():
    from core.extract.rules import extract_text

    got = {f.attribute: f.raw for f in extract_text("Day 4 — 54.7 centimetres height, 37 new leaves, Fiddle leaf fig",
                                                    structured=False)}
    assert got == {"height": "54.7 centimetres", "new_leaves": "37", "item": "Fiddle leaf fig"}
    # the one text among items of values, wherever it stands, lower case too
    got = {f.attribute: f.raw for f in extract_text("Day 3 — 1358 gr fill, peanuts, 5 d gap", structured=False)}
    assert got == {"fill": "1358 gr", "item": "peanuts", "d_gap": "5"}
    # two texts inside the list and none at its edge: neither is taken for what the entry is about
    assert "item" not in {f.attribute for f in extract_text("Day 4 — 54.7 cm height, nice, 37 leaves, great",
                                                            structured=False)}


def test_items_set_apart_by_a_slash_or_a_semicolon():
    d = _ex("Refilled the feeder. seeds 1.28 KG / Seed type: nyjer / interval 5 days")
    assert d["seed_type"].raw_value == "nyjer" and d["interval"].number == 5
    d = _ex("Watered today: Irrigation: 735 millilitres / pot Monstera")
    assert d["pot"].raw_value == "Monstera" and d["irrigation"].number == 735
    d = _ex("Just finished watering. irrigation 720 millilitres; pot Peace lily")
    assert d["pot"].raw_value == "Peace lily"  # a name in sentence case after a lower-case label
    # a unit with a slash is one word, not two items
    d = _ex("Ride: 12 km/h avg / 40 km / Route: Coast road")
    assert d["route"].raw_value == "Coast road" and d["distance"].number == 40


def test_a_calendar_noun_after_a_labelled_value_counts_it():
    assert _ex("Feeder: seeds 1.10 KG, interval 3 days")["interval"].number == 3
    assert _ex("We stayed 3 days, spent 40 dollars") == {}  # a verb, not a label


def test_a_copula_label_does_not_reach_back_over_a_sentence_end():
    d = _ex("Worked on my repertoire. The opening was Caro-Kann, reps came in at 13 and study time at 1.30 h.")
    assert d["opening"].raw_value == "Caro-Kann" and d["reps"].number == 13
    assert _ex("Club night: the opp. rating was high, my rating came in at 1540")["opp_rating"].raw_value == "high"


def test_a_short_word_with_a_period_opening_a_list_item_abbreviates_its_label():
    d = _ex("Bottling: btl. 38; Priming: 99 g; Bottled: 8.6 l")
    assert d["btl"].number == 38 and d["priming"].number == 99 and "bottling" not in d
    assert _ex("Waterbirds on the lake. Ducks: 12; gs. 18; temp 7.1 C")["gs"].number == 18
    # a unit before a period ends its sentence: the number after it is no value of a label "km"
    assert "km" not in _ex("Walked 5 km. 3 days later I rested.")


def test_an_abbreviated_label_takes_a_number_word_that_ends_its_item():
    d = _ex("Listening practice: minutes 102 min, eps. two")
    assert d["eps"].number == 2 and d["duration"].number == 102
    d = _ex("Listening: eps. three, minutes 40 min")
    assert d["eps"].number == 3
    # a number word opening the next sentence after a unit stays no value
    assert "km" not in _ex("Walked 5 km. Two days later I rested.")


def test_a_verb_form_before_a_linking_verb_is_the_label():
    d = _ex("Some blitz. My GP was nine, won came in at 0 and B-rating: 1294.")
    assert d["won"].number == 0 and d["gp"].number == 9
    assert _ex("Won came in at 3.")["won"].number == 3
    # a verb inside a clause, or with a weak link, is still no label
    assert "walked" not in _ex("Walked at 6 km/h for 40 minutes")
    assert "burned" not in _ex("I burned 450 kcal today.")


def test_further_unlabelled_texts_of_a_log_line_are_further_fields():
    d = _ex("Day 7 — Aurelie, draw, 27 length, 1487 my rating")
    assert d["item"].raw_value == "Aurelie" and d["item_2"].raw_value == "draw"
    assert d["length"].number == 27
    # one text among values stays the one item
    d = _ex("Day 4 — 8 clutch, 0 young, oak box")
    assert d["item"].raw_value == "oak box" and "item_2" not in d


def test_a_log_line_with_one_labelled_value_keeps_its_texts():
    d = _ex("Day 7 — Keiko, draw, 47 length")
    assert d["item"].raw_value == "Keiko" and d["item_2"].raw_value == "draw" and d["length"].number == 47
    # a sentence with one value is still no list of items
    assert set(_ex("Went to the park, had fun, saw 3 ducks")) <= {"ducks"}


def test_a_log_line_of_one_value_and_one_text_keeps_both():
    d = _ex("Day 4 — 11.9 grams flakes, brine shrimp")
    assert d["item"].raw_value == "brine shrimp" and d["flakes"].number == 11.9
    # a value named only by its unit is an item of the entry in a log line, not a passing mention
    d = _ex("Day 6 — Keiko, win, 55 mv")
    assert d["item"].raw_value == "Keiko" and d["item_2"].raw_value == "win"
    assert [o.number for o in d.values() if o.value_kind == "number"] == [55]
    # without the heading and its dash it is a sentence, not an entry
    assert "item" not in _ex("Fed 11.9 grams today, brine shrimp")


def test_a_short_word_with_a_period_inside_a_log_line_item_abbreviates_its_label():
    d = _ex("Day 3 — 46 percent rel. humidity, 20.9 °C room temperature, 66 mins mist time")
    assert d["rel_humidity"].number == 46 and d["rel_humidity"].label == "rel. humidity"
    assert "item" not in d and d["room_temperature"].number == 20.9


def test_no_with_its_period_abbreviates_number_in_a_label():
    d = _ex("Bought supplies. My amount paid was $235.24, VAT came in at 11.60 USD and no. of items at 6.")
    assert d["no_items"].number == 6 and d["vat"].number == 11.60
    assert _ex("Logged $326.19 of amount paid and measured the no. of items at 5.")["no_items"].number == 5
    # "no" without its period stays a word of grammar; a verb before "to" is no label
    assert "went_bed_time" not in _ex("I woke up at 6:45 am and went to bed at 11pm.")


def test_an_acronym_after_a_name_is_part_of_the_name():
    d = _ex("Day 5 — 3091.51 dollars amt, Nordlys AS, 12 hours")
    assert d["item"].raw_value == "Nordlys AS"
    # a name joined by "&" is one name, no label and its value
    d = _ex("Day 5 — 3061.59 dollars amt, Pine & Co, 22.2 hrs")
    assert d["item"].raw_value == "Pine & Co" and "pine" not in d
