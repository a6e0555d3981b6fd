"""The Query planner says in words when one evidence unit decides an answer (a lone +1.000 bar misread)."""
from __future__ import annotations

from test_app_pages import _ask, fake_models, memory_path, page  # noqa: F401  (fixtures)


def test_why_this_answer_names_the_deciding_round_and_the_answer_without_it(memory_path):
    at = page("ask", memory_path)
    _ask(at, "Who did I play cards with?")
    at.button(key="ask_why").click().run()
    assert not at.exception
    info = " ".join(i.value for i in at.info)
    assert "S3:R1" in info and "decides this answer" in info
    assert "“Anna and Tom" in info or "Anna" in info.split("without it")[0]
    assert "without it the answerer gives" in info and "Anna" not in info.split("without it the answerer gives")[1]
