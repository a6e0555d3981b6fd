"""Attribution in words: when one evidence unit decides the answer, say so and what the answer is without it."""
from __future__ import annotations


def decisive_sentence(res, answer: str, label: str | None = None) -> str | None:
    """A sentence for an AttributionResult `res` whose value one unit holds (res.decisive), else None.

    `answer` is the answer shown; `label` names the unit (default: its id). A chart with one bar of
    +1.000 reads as "this unit is weighted 1 among others"; this says what it means."""
    if res.decisive is None:
        return None
    unit = next(u for u in res.values if u.unit == res.decisive)
    name = label or unit.unit
    share = unit.value / (res.v_full - res.v_empty)
    if len(res.values) == 1:
        head = f"{name} is the only evidence unit, so it carries the whole value ({unit.value:+.3f})."
    else:
        head = (f"{name} decides this answer: it holds {share:.0%} of the value; the other "
                f"{len(res.values) - 1} unit(s) change nothing on their own.")
    if res.answer_without is None:
        return head + " (The sampled estimate did not evaluate the answer without it.)"
    without = res.answer_without.strip() or "(no answer)"
    return head + f" With it the answer is “{answer}”; without it the answerer gives “{without}”."
