"""core/lexicon.py: the extractor's general vocabulary (grammar words, units), loading and extending it
from a JSON file, and the errors a bad file gives."""
from __future__ import annotations

import json

import pytest

from core.errors import InputError
from core.lexicon import BUILTIN, Lexicon, agent_noun, lemma, load


def test_builtin_lexicon_is_the_default_and_frozen():
    lex = load("")
    assert lex is BUILTIN and isinstance(lex, Lexicon)
    assert "i" in lex.pronouns and "the" in lex.determiners and "tomorrow" in lex.irrealis_words
    assert lex.units["km"][1] == "distance" and lex.units["kwh"][0] == "kWh"
    with pytest.raises(Exception):
        lex.pronouns = frozenset()  # type: ignore[misc]


@pytest.mark.parametrize("word, lem", [
    ("ran", "run"), ("slept", "sleep"), ("rode", "ride"), ("won", "win"), ("bought", "buy"),
    ("played", "play"), ("watered", "water"), ("stopped", "stop"), ("tried", "try"), ("hiked", "hike"),
    ("practised", "practise"), ("fertilized", "fertilize"), ("running", "run"), ("moved", "move"),
    ("changed", "change"), ("arranged", "arrange"), ("challenged", "challenge"), ("plunged", "plunge"),
    ("hanged", "hang"), ("belonged", "belong"), ("feed", "feed"), ("need", "need"), ("speed", "speed"),
])
def test_lemma_by_irregular_table_and_morphology(word, lem):
    assert lemma(word) == lem


@pytest.mark.parametrize("verb, agent", [("win", "winner"), ("play", "player"), ("score", "scorer"),
                                         ("buy", "buyer"), ("carry", "carrier"), ("water", "waterer")])
def test_agent_noun(verb, agent):
    assert agent_noun(verb) == agent


def test_past_tense_detection():
    assert all(BUILTIN.is_past(w) for w in ("slept", "played", "put", "won", "answered"))
    assert not any(BUILTIN.is_past(w) for w in ("sleep", "plays", "need", "feed", "been"))


def test_units_cover_si_prefixes_imperial_currencies_and_percent():
    from core.extract.normalize import parse_unit

    for spelling, unit, dim in [("ml", "mL", "volume"), ("mL", "mL", "volume"), ("L", "L", "volume"),
                                ("litres", "L", "volume"), ("g", "g", "mass"), ("kg", "kg", "mass"),
                                ("oz", "oz", "mass"), ("lb", "lb", "mass"), ("°C", "°C", "temperature"),
                                ("°F", "°F", "temperature"), ("kWh", "kWh", "energy"), ("ppm", "ppm", "concentration"),
                                ("%", "%", "percent"), ("$", "$", "currency"), ("EUR", "€", "currency"),
                                ("mg/dL", "mg/dL", "concentration"), ("mmol/L", "mmol/L", "concentration"),
                                ("mmHg", "mmHg", "pressure"), ("rpm", "rpm", "rate"), ("km/h", "km/h", "speed"),
                                ("mS/cm", "mS/cm", "conductance_per_distance"), ("kPa", "kPa", "pressure"),
                                ("gal", "gal", "volume"), ("mpg", "mpg", "efficiency"), ("lux", "lx", "illuminance")]:
        info = parse_unit(spelling)
        assert info is not None and (info.unit, info.dimension) == (unit, dim), spelling
    assert parse_unit("MW").unit == "MW" and parse_unit("mW").unit == "mW"  # case decides the prefix
    assert parse_unit("hrs").factor == 60 and parse_unit("furlongs") is None
    # fuel per distance and distance per fuel are two quantities, not one in two units: no conversion between
    from core.units import convert
    assert parse_unit("L/100km").dimension == "consumption" and convert(30, "mpg", "L/100km") is None


def test_json_file_extends_and_replaces_lists(tmp_path):
    p = tmp_path / "lexicon.json"
    p.write_text(json.dumps({
        "extend": {"irrealis_words": ["someday"], "units": {"furlong": ["furlong", "distance", 1]},
                   "irregular_verbs": {"smote": "smite"}},
        "replace": {"record_words": ["journal"]},
    }))
    lex = load(str(p))
    assert "someday" in lex.irrealis_words and "tomorrow" in lex.irrealis_words  # extended
    assert lex.record_words == frozenset({"journal"})  # replaced
    assert lex.units["furlong"] == ("furlong", "distance", 1.0) and lex.units["km"][0] == "km"
    assert lex.lemma("smote") == "smite" and lex.source == str(p)
    assert "someday" not in BUILTIN.irrealis_words  # the built-in one is untouched


def test_top_level_keys_extend(tmp_path):
    p = tmp_path / "lexicon.json"
    p.write_text(json.dumps({"time_words": ["fortnight"]}))
    assert "fortnight" in load(str(p)).time_words and "today" in load(str(p)).time_words


@pytest.mark.parametrize("content, place, fault", [
    ("{not json", "", "not valid JSON"),
    ("[1, 2]", "$", "must be a JSON object"),
    ('{"extend": {"pronuns": ["thou"]}}', "extend.pronuns", "unknown lexicon key"),
    ('{"extend": {"pronouns": "thou"}}', "extend.pronouns", "expected a list of non-empty strings"),
    ('{"extend": {"pronouns": ["thou", 3]}}', "extend.pronouns", "expected a list of non-empty strings"),
    ('{"extend": {"units": {"furlong": ["furlong", "distance"]}}}', "extend.units.furlong",
     "expected [unit, dimension, factor > 0]"),
    ('{"extend": {"units": {"furlong": ["furlong", "distance", 0]}}}', "extend.units.furlong",
     "expected [unit, dimension, factor > 0]"),
    ('{"replace": ["x"]}', "replace", "expected an object"),
    ('{"extend": {"irregular_verbs": {"smote": 5}}}', "extend.irregular_verbs.smote", "expected a lemma"),
])
def test_bad_lexicon_file_names_file_key_and_fault(tmp_path, content, place, fault):
    p = tmp_path / "bad-lexicon.json"
    p.write_text(content)
    with pytest.raises(InputError) as ei:
        load(str(p))
    e = ei.value
    assert e.file == str(p) and e.place == place and fault in e.fault, str(e)
    assert "bad-lexicon.json" in str(e)


def test_missing_lexicon_file_is_reported(tmp_path):
    with pytest.raises(InputError) as ei:
        load(str(tmp_path / "nope.json"))
    assert "nope.json" in str(ei.value) and "cannot read" in str(ei.value)


def test_rule_extractor_with_a_bad_lexicon_fails_at_construction(tmp_path):
    from core.config import Config
    from core.extract import RuleExtractor

    p = tmp_path / "bad.json"
    p.write_text('{"extend": {"units": 5}}')
    with pytest.raises(InputError) as ei:
        RuleExtractor(Config(lexicon=str(p)))
    assert "bad.json" in str(ei.value) and "extend.units" in str(ei.value)


def test_singular_undoes_regular_english_plurals():
    from core.lexicon import singular

    pairs = {"boxes": "box", "batches": "batch", "dishes": "dish", "taxes": "tax", "glasses": "glass",
             "entries": "entry", "plants": "plant", "days": "day", "headaches": "headache", "notes": "note",
             "status": "status", "analysis": "analysis", "species": "species", "series": "series", "gas": "gas"}
    assert {w: singular(w) for w in pairs} == pairs


def test_a_plural_in_es_and_its_singular_are_one_word_everywhere():
    """'nest boxes' in the rounds and 'nest box' in a question; 'batches' and 'batch'."""
    from core.materialize import round_words
    from core.planning.scoring import tokens

    assert "box" in round_words("Checked the nest boxes this morning") and "boxe" not in round_words("nest boxes")
    assert tokens("three batches of boxes") == tokens("three batch of box")
