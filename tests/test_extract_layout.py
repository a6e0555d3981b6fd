"""OCR layouts the rule extractor pairs by position: grids of text and number cards, which reading of
alternating label/value rows is right, labels with digits, and OCR's confusions of the litre sign."""
from __future__ import annotations

from datetime import datetime

from core.extract import RuleExtractor
from core.model import ImageRef, Observation, Round, Utterance


def _ocr(text: str) -> dict[str, Observation]:
    r = Round("S1:R1", "S1", datetime(2025, 3, 4, 9, 0), (Utterance("user", "screenshot"),), (ImageRef("I1"),))
    obs = RuleExtractor().extract(r, {"I1": text})
    out: dict[str, Observation] = {}
    for o in obs:
        assert o.source == "ocr" and text[o.start:o.end] == o.raw_value, o
        assert o.attribute not in out, f"duplicate {o.attribute}: {obs}"
        out[o.attribute] = o
    return out


def test_grid_of_cards_with_a_text_value_reads_value_above_label():
    # a weather station app: big values over small captions, two cards per row, one value is a word
    d = _ocr("Station Pro\nnorth | 12.4 mm\nWind dir | Rainfall\n14 °C | 62%\nAir temp | Humidity\n09:12")
    assert d["wind_dir"].raw_value == "north" and d["wind_dir"].value_kind == "text"
    assert d["rainfall"].number == 12.4 and d["rainfall"].unit == "mm"
    assert d["air_temp"].number == 14 and d["humidity"].number == 62
    assert "north" not in d  # the text value is not a label of the number beside it


def test_tiles_of_a_name_and_a_number_over_their_captions_beside_a_value_over_its_caption():
    # an app's tiles: "London System" and "22" big over "Variation" and "Lines reviewed", then "30min" over
    # "Time", a date as the footer: each value is its caption's, not "London System: 22"
    d = _ocr("Repertoire Lab\nLondon System | 22\nVariation | Lines reviewed\n30min\nTime\n2025-02-19")
    assert d["variation"].raw_value == "London System" and d["variation"].value_kind == "text"
    assert d["lines_reviewed"].number == 22 and "london_system" not in d
    assert d["duration"].number == 30 and d["duration"].label == "Time"
    # a row of names alone over captions, before such a row of values: "Tomasz" is the opponent, not a label
    d = _ocr("LiChessly\nTomasz | loss\nVs | res.\n59 | 1555\nlength | rating")
    assert d["vs"].raw_value == "Tomasz" and d["res"].raw_value == "loss"
    assert d["length"].number == 59 and d["rating"].number == 1555
    # without a row of values alone over captions it is a key/value table, read as one
    d = _ocr("Library\nLoan time | 14 days\nBranch | North")
    assert d["loan_time"].number == 14 and d["branch"].raw_value == "North"


def test_grid_with_caption_labels_and_a_missing_card():
    d = _ocr("Loans Desk\nmystery | 3\nGENRE: | BOOKS:\n2.40 EUR\nFINES:\nToday")
    assert d["genre"].raw_value == "mystery" and d["books"].number == 3
    assert d["fines"].number == 2.4


def test_label_above_value_column_with_a_footer_word():
    # one card per row, label over value; the footer "Today" names nothing
    d = _ocr("LibraryApp\nLOANS.\n3\nFINES.\n€ 2.40\nRENEWED.\n1\nToday")
    assert (d["loans"].number, d["fines"].number, d["renewed"].number) == (3, 2.4, 1)
    d = _ocr("ChessHub\nrating\n1542\ngames played\n19\nToday")
    assert d["rating"].number == 1542 and d["games_played"].number == 19


def test_value_above_label_cards_still_read_below():
    d = _ocr("Sleep Tracker\n7h 12m\nSleep\n62 bpm\nResting HR")
    assert d["sleep_duration"].number == 432 and d["resting_hr"].number == 62


def test_key_value_table_with_a_text_row_is_not_a_grid():
    d = _ocr("Shelf app\nPages (n) | 320\nWeight (kg) | 0.4\nAuthor | Ann Lee\nLatest")
    assert d["pages"].number == 320 and d["weight"].number == 0.4
    assert d["author"].raw_value == "Ann Lee"


def test_label_words_with_digits():
    d = _ocr("Greenhouse\nh2o %\n61%\nTemp\n21.5 °C")
    assert d["h2o"].number == 61 and d["temp"].number == 21.5
    # a letter and digits ("H2O" read "H20") is a caption too: the row of three captions heads the values
    d = _ocr("Extractor Log\nNet: | Frames: | H20 %:\n21.59 KG | 11 | 17.1%\nToday")
    assert d["net"].number == 21.59 and d["frames"].number == 11 and d["h20"].number == 17.1


def test_ocr_litre_sign_read_as_capital_i_or_one():
    d = _ocr("Rain barrel\nVolume:\n12.5I\nToday")
    assert d["volume"].number == 12.5 and d["volume"].unit == "L" and d["volume"].raw_value == "12.5I"
    # a tile's "232 l" read "232 1" (measured): a whole number's litres, the caption under it
    d = _ocr("AquaMeter\n232 1 | 353.98 m3\nCONSUMPTION | READING\nDetails")
    assert d["consumption"].number == 232 and d["consumption"].unit == "L" and d["reading"].number == 353.98
    d = _ocr("Tank log\n13.3 1 | 21.5 C\nFILL: | WATER TEMP:")
    assert d["fill"].number == 13.3 and d["fill"].unit == "L" and d["water_temp"].number == 21.5
    d = _ocr("GreenThumb\nWatered (I) | 0.73\nPot | Peace lily")  # the unit of a label, "(l)" read as "(I)"
    assert d["watered"].number == 0.73 and d["watered"].unit == "L"
    d = _ocr("FeedTrack\nnutrient dose | dil. | n value\n20 mL | 3.9 I | 8 percent")  # "I" alone after the number
    assert d["dil"].number == 3.9 and d["dil"].unit == "L"
    d = _ocr("Notes\nMood | 3.9 I think")  # a capital I before words is the pronoun
    assert all(o.unit != "L" for o in d.values())
    d = _ocr("Scores\nRound 1 | 16 11")  # whole numbers after a space stay numbers
    assert all(o.unit != "L" for o in d.values())


def test_label_box_merged_by_ocr_is_split_at_its_units():
    d = _ocr("Pool Monitor\nChlorine (ppm) Acid (pH) | ) Water (°C)\n1.5 | 7.2 | 27.5\nToday")
    assert d["chlorine"].number == 1.5 and d["chlorine"].unit == "ppm"
    assert d["acid"].number == 7.2 and d["water"].number == 27.5 and d["water"].unit == "°C"
    d = _ocr("Station Two\nWind Gust\n14 | 22")  # a title-like label row is not cut into words
    assert "wind" not in d and "gust" not in d


def test_value_box_merged_by_ocr_with_a_trailing_word():
    d = _ocr("Loans Desk\npages | fine | genre\n320 12.5 EUR mystery\nLatest")
    assert d["pages"].number == 320 and d["fine"].number == 12.5 and d["genre"].raw_value == "mystery"


def test_value_first_row_over_two_labels_holds_a_text_value():
    d = _ocr("Ledger\n1418.45 USD | Ann Lee\nInvoice total | Bill to\n12.9 hrs\nHours")
    assert d["invoice_total"].number == 1418.45 and d["bill"].raw_value == "Ann Lee"


def test_a_text_and_a_number_merged_into_one_box_under_a_label_row():
    # OCR read "Tank B" and "12" as one box: the row of labels says there are two cells
    d = _ocr("Cellar App\nTank | Depth | Weight (KG) | Score\nTank B 12 | 40.5 | 3\nRef 26631168")
    assert d["tank"].raw_value == "Tank B" and d["depth"].number == 12
    assert d["weight"].number == 40.5 and d["score"].number == 3
    # the number keeps the letter of a unit the lexicon lacks ("5 d"): still a box of its own
    d = _ocr("FeedTrack\nfill. | seed type. | days since last.\n669 grams | fat balls 5 d\nInvoice No. 2025-5479")
    assert d["fill"].number == 669 and d["seed_type"].raw_value == "fat balls" and d["days_since"].number == 5


def test_two_values_merged_under_labels_merged_the_same_way():
    d = _ocr("Quiz Board\nQs Pts\n23 6\nLatest")
    assert d["qs"].number == 23 and d["pts"].number == 6
    d = _ocr("Press Log\nNet (KG) Qt. | Moisture (pct)\n21.36 | 14 16.7\n2025-05-26")
    assert d["net"].number == 21.36 and d["net"].unit == "kg"
    assert d["qt"].number == 14 and d["moisture"].number == 16.7


def test_values_over_labels_are_not_read_down_into_a_text_and_number_line():
    # "Batch 7" / "Order #…" under the label row is no row of values: the values are the row above
    for tail in ("Batch 7", "Order #31067346"):
        d = _ocr(f"Cellar Desk\n4 kg | 3.2 L\nYEAST | WATER\n{tail}\n2025-06-21")
        assert d["yeast"].number == 4 and d["yeast"].unit == "kg"
        assert d["water"].number == 3.2 and d["water"].unit == "L"


def test_labels_merged_in_one_box_split_after_units_and_abbreviations():
    d = _ocr("Extractor Log\nNet (KG) Fr. Moisture (pct)\n18.14 | 8 | 18.5")
    assert d["net"].number == 18.14 and d["net"].unit == "kg"
    assert d["fr"].number == 8 and d["moisture"].number == 18.5 and d["moisture"].unit == "%"
    # as many words as values but no unit or period to cut at: the labels are not guessed
    assert "net" not in _ocr("Extractor Log\nNet weight frames moisture\n18.14 | 8 | 18.5")


def test_a_row_of_values_ocr_merged_is_not_read_side_by_side_under_its_labels():
    # four labels over three boxes (the last holds two values): the text value is the recipe, not a label
    d = _ocr("BakeBook\nRecipe | Flour weight | Temp | Time\nsourdough | 399 g | 219 degC 60 mins\nDetails")
    assert d["recipe"].raw_value == "sourdough" and d["flour_weight"].number == 399
    assert d["temp"].number == 219 and d["duration"].number == 60 and "sourdough" not in d


def test_one_box_of_values_and_a_name_under_as_many_labels_is_cut_at_the_values():
    d = _ocr("QuickBill\nAMOUNT: | BILL TO: | HRS:\n1313.93 USD Pine & Co 39.7 hrs\nOrder #27657630")
    assert d["amount"].number == 1313.93 and d["bill"].raw_value == "Pine & Co"
    assert d["hrs_duration"].number == 39.7 * 60 and "pine" not in d
    # more pieces than labels: nothing is guessed
    d = _ocr("QuickBill\nAMOUNT: | HRS:\n1313.93 USD Pine & Co 39.7 hrs")
    assert "bill" not in d and all(o.raw_value != "Pine & Co" for o in d.values())


def test_labels_merged_in_fewer_boxes_than_the_values_below_are_split_not_paired_side_by_side():
    d = _ocr("FeedTrack\nSeed (g) Seed type: | Days since last (days)\n1434 | peanuts | 5\nLatest")
    assert d["seed"].number == 1434 and d["seed"].unit == "g"
    assert d["seed_type"].raw_value == "peanuts" and d["days_since"].number == 5
    assert "peanuts" not in d and all(o.raw_value != "Days since last (days)" for o in d.values())
    d = _ocr("Feeder Cam\nSPP. | IND. COUNT TIME (min)\n15 | 79 | 39")
    assert d["spp"].number == 15 and d["ind"].number == 79 and d["count_duration"].number == 39


def test_a_name_over_its_caption_in_an_image_of_value_over_caption_cards():
    d = _ocr("iTalki-ish\n32 mins | $ 37.20\nduration | paid\nHaruka\nteacher")
    assert d["duration"].number == 32 and d["paid"].number == 37.2
    assert d["teacher"].raw_value == "Haruka" and d["teacher"].value_kind == "text"


def test_a_caption_ocr_merged_over_a_row_of_values_is_no_key_and_value():
    # "FOOD | KIND | COUNT" read as two boxes over three values: "COUNT" is a caption, not the food kind
    d = _ocr("FishFeeder\nFOOD KIND | COUNT\n9.0g | bloodworms | 20")
    assert all(o.raw_value != "COUNT" for o in d.values())
    assert any(o.number == 9.0 and o.unit == "g" for o in d.values())
    # a key/value row over a row that starts with a label is still read as one
    d = _ocr("Shop receipt\nCustomer | Quill Books\nTotal | 12.50 EUR")
    assert d["customer"].raw_value == "Quill Books" and d["total"].number == 12.5


def test_printed_captions_over_values_are_never_a_key_and_its_text():
    # three captions OCR read as two boxes, one cut that no rule can place: no value is made up from them
    d = _ocr("Feeder Cam\nSPECIES SEEN | BIRDS COUNT TIME (mins)\n16 | 49 | 51\n19:27")
    assert all("COUNT" not in (o.raw_value or "") for o in d.values())
    # read as three boxes, the same captions name their values
    d = _ocr("Feeder Cam\nSPECIES SEEN | BIRDS | COUNT TIME (mins)\n16 | 49 | 51")
    assert d["species_seen"].number == 16 and d["birds"].number == 49 and d["count_duration"].number == 51


def test_a_number_and_the_noun_it_counts_is_one_value_box_of_a_grid():
    # "18 days" under "Streak": the box is a value, so the row of values reads under its labels
    d = _ocr("Lingo app\nPoints | Units | Streak\n86 | 3 | 18 days\nRef 25052997\n6 Feb 2026")
    assert d["points"].number == 86 and d["units"].number == 3 and d["streak"].number == 18
    assert "days" not in d


def test_a_row_of_values_with_a_rate_per_a_hundred_units_reads_under_its_labels():
    d = _ocr("Trip computer\nDistance: | Avg cons. | Avg speed: | Duration:\n9.8 KM | 7.9l/100 km | 39kph | 46 mins\nSummary")
    assert d["avg_cons"].number == 7.9 and d["avg_cons"].unit == "L/100km"
    assert d["distance"].number == 9.8 and d["avg_speed"].number == 39 and d["duration"].number == 46


def test_a_currency_sign_in_a_box_of_its_own_before_the_number_is_the_numbers_unit():
    d = _ocr("0ffice Depot\nRef 48397024\nTOTAL: | $ | 319.04\nVAT: | 15.58USD\nPieces: | 6\nTHANK YOU")
    assert d["total"].number == 319.04 and d["total"].unit == "$"
    assert d["vat"].number == 15.58 and d["pieces"].number == 6
    assert [o for o in d.values() if o.number == 319.04] == [d["total"]]  # the number is read once


def test_a_text_value_under_its_label_in_a_column_of_labels_over_values():
    d = _ocr("FishFeeder\nFlakes\n11.1 gr\nKind\nbrine shrimp\nSeen\n10\nToday")
    assert d["flakes"].number == 11.1 and d["seen"].number == 10
    assert d["kind"].raw_value == "brine shrimp" and d["kind"].value_kind == "text"


def test_a_name_card_under_value_cards_reads_value_over_caption_whatever_the_case():
    # the caption ends with an abbreviation's period, or is capitalised like its value: the image's
    # number cards are read value over caption, so its name card is too (not "Teacher." over "Summary")
    d = _ocr("Tutor Calendar\n75 | $ 17.54\nDuration (mins) | Fee.\nBeatriz\nTeacher.\nSummary\nOrder #24153406")
    assert d["teacher"].raw_value == "Beatriz" and d["duration"].number == 75
    d = _ocr("BoxCam\n3 | 5\nClutch | Chicks\noak box\nNest box\nDetails\nInvoice No. 2025-9122")
    assert d["nest_box"].raw_value == "oak box"
    assert "details" not in d  # a caption already read is no value of the line under it


def test_two_text_values_ocr_merged_into_one_box_under_their_labels():
    d = _ocr("LiChessly\nopp. | outcome: | length: | rating:\nKeiko win | 56 | 1564\nToday")
    assert d["opp"].raw_value == "Keiko" and d["outcome"].raw_value == "win"
    assert d["length"].number == 56 and d["rating"].number == 1564
    assert "keiko_win" not in d


def test_a_capital_letter_is_a_label_only_in_a_table_of_label_value_rows():
    d = _ocr("BlitzBoard\nGAMES PLAYED | 5\nW | 3\nB-RATING | 1500")
    assert d["w"].number == 3 and d["games_played"].number == 5
    assert "x" not in _ocr("Receipt\nTotal | 12.50\nX | 2")  # one row of a table says too little


def test_a_capital_letter_beside_other_captions_is_a_caption():
    d = _ocr("BlitzBoard\n8 | 10\nGames | W\n1261\nBlitz rating")
    assert d["games"].number == 8 and d["w"].number == 10 and d["blitz_rating"].number == 1261
    assert _ocr("Score\n3 | 2\nA | B") == {}  # letters alone are no captions


def test_captions_of_letters_with_periods_are_captions():
    # "O.G." has no two letters in a row: still a caption, so the row under the captions is their values
    d = _ocr("Mash Log\nSTYLE | O.G. | VOL. | STRIKE\npale ale | 1.062 | 13.9| 67.9C\n11:02")
    assert d["style"].raw_value == "pale ale" and d["og"].number == 1.062 and d["strike"].number == 67.9
    assert "pale_ale" not in d
    # OCR merged such a caption into the one before it: it is cut off before its letters
    d = _ocr("Mash Log\nSTYLE O.G. | VOL.\nIPA | 1.054 | 22.6\nLatest")
    assert d["style"].raw_value == "IPA" and d["og"].number == 1.054 and d["vol"].number == 22.6


def test_a_count_of_days_ocr_merged_with_the_next_value_is_split_under_its_caption():
    d = _ocr("VarroaCheck\nmite count. | period. | daily drop.\n1 | 6 days 5.6\nSummary")
    assert d["mite_count"].number == 1 and d["period"].number == 6 and d["daily_drop"].number == 5.6
    assert "days" not in d


def test_names_over_captions_in_an_image_of_values_over_captions():
    # a score sheet prints its names, then their captions, then numbers over theirs: one reading, values over captions
    d = _ocr("Club scoresheet\nDev | draw\nOpp. | Res.\n57 | 1431\nMoves | Rtg")
    assert d["opp"].raw_value == "Dev" and d["res"].raw_value == "draw"
    assert d["moves"].number == 57 and d["rtg"].number == 1431
    # without numbers read the same way, a row of names over captions is no pair
    assert "temp" not in _ocr("Garden Log\nNorth | South\nTemp. | Zone.")


def test_a_capital_letter_alone_on_its_line_captions_the_value_under_it():
    d = _ocr("LiChessly\ngames.\n15\nW.\n2\nblitz rating.\n1419")
    assert d["w"].number == 2 and d["games"].number == 15 and d["blitz_rating"].number == 1419


def test_a_box_of_punctuation_alone_is_no_cell_of_a_grid():
    # OCR read the period of "puzzles." as a box of its own: four boxes over three values
    d = _ocr("PuzzleRush\npuzzles. | . | pr. | time (mins)\n21 | 1823 | 40\nLatest\n17 Feb 2025")
    assert (d["puzzles"].number, d["pr"].number) == (21, 1823)
    assert d["duration"].number == 40 and d["duration"].unit == "min"


def test_two_captions_read_as_one_box_closed_by_a_colon_are_two_labels():
    # "recipe:" and "o.g." in one box over "lager 1.056", also one box: the recipe and the gravity
    d = _ocr("Mash Log\nrecipe: o.g. | volume (mL) | mash (deg C)\nlager 1.056 | 21300 | 67.5\nRef 45916049")
    assert d["recipe"].raw_value == "lager" and d["og"].number == 1.056
    assert d["volume"].number == 21300 and d["mash"].number == 67.5
    d = _ocr("Mash Log\nrecipe: o.g. | volume (mL)\nIPA | 1.041 19200\n2026-03-30")
    assert d["recipe"].raw_value == "IPA" and d["og"].number == 1.041 and d["volume"].number == 19200


def test_a_unit_read_into_the_next_box_goes_back_to_its_number_and_a_grammar_caption_names_no_field():
    # "22.37 | USD Joao" under "Price: | With:": the currency is the price's, the name is the lesson's unlabelled
    # text (a log line says "with Joao"); "With" is no name of a field
    d = _ocr("iTalki-ish\nDuration: | Price: | With:\n80 mins | 22.37 | USD Joao\nToday")
    assert d["price"].number == 22.37 and d["price"].unit == "$"
    assert d["item"].raw_value == "Joao" and d["item"].label == ""
    assert d["duration"].number == 80
    # a box that is only a unit stays the number's unit box; a name after a number with its unit stays a name
    d = _ocr("Shop\nWeight: | Buyer:\n410 | g\nLena Park")
    assert d["weight"].number == 410
    d = _ocr("iTalki-ish\nduration. | price. | teacher.\n33 min | 34.64 USD | Beatriz")
    assert d["teacher"].raw_value == "Beatriz" and d["price"].unit == "$"


def test_m_in_a_label_that_says_minutes_is_minutes_and_beside_a_length_metres():
    d = _ocr("Podcatch\nMinutes (m) | Tracks\n42 | 3")
    assert d["duration"].unit == "min" and d["duration"].number == 42
    d = _ocr("Track\nLength (m) | Laps\n400 | 3")
    assert d["length"].unit == "m" and d["length"].number == 400


def test_a_row_of_values_shorter_than_its_captions_reads_from_the_left():
    # an app that leaves the last box empty when the field was not logged: OCR reads two boxes under three
    d = _ocr("FeedTrack\nSeed (kg) | Mix type | Interval (d)\n0.99 | peanuts\n22 Dec 2025")
    assert d["seed"].number == 0.99 and d["seed"].unit == "kg"
    assert d["mix_type"].raw_value == "peanuts" and "interval" not in d


def test_a_name_of_two_words_is_not_split_to_fill_a_caption_with_a_unit():
    d = _ocr("FeedTrack\nSeed (kg) | Mix type | Interval (d)\n0.99 | sunflower hearts\n22 Dec 2025")
    assert d["mix_type"].raw_value == "sunflower hearts" and "interval" not in d
    # a row of as many boxes as captions is read as before
    d = _ocr("FeedTrack\nSeed (kg) | Mix type | Interval (d)\n1.34 | fat balls | 2\n20 Dec 2025")
    assert d["mix_type"].raw_value == "fat balls" and d["interval"].number == 2
