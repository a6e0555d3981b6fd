"""The words under the attribution chart when one unit decides."""
from __future__ import annotations

from core.attribution import AttributionResult, UnitValue
from ui.attribution_text import decisive_sentence


def _res(values, decisive, without):
    vals = tuple(UnitValue(u, v, (f"S1:R{i}",), "row", 0, "") for i, (u, v) in enumerate(values))
    return AttributionResult(values=vals, v_full=1.0, v_empty=0.0, calls=3, exact=True,
                             decisive=decisive, answer_without=without)


def test_a_single_unit_says_it_carries_the_whole_value_and_the_answer_without_it():
    text = decisive_sentence(_res([("u1", 1.0)], "u1", "Not mentioned."), "7.4 hours", "value · u1")
    assert "value · u1 is the only evidence unit" in text and "+1.000" in text
    assert "“7.4 hours”" in text and "“Not mentioned.”" in text


def test_one_of_several_decides_and_shared_credit_says_nothing():
    text = decisive_sentence(_res([("a", 0.95), ("b", 0.05), ("c", 0.0)], "a", ""), "Miso")
    assert text.startswith("a decides this answer: it holds 95% of the value; the other 2 unit(s)")
    assert "“(no answer)”" in text
    assert decisive_sentence(_res([("a", 0.5), ("b", 0.5)], None, None), "x") is None
    sampled = decisive_sentence(_res([("a", 1.0), ("b", 0.0)], "a", None), "x")
    assert "did not evaluate the answer without it" in sampled
