"""LLM-judge metric (MemEye scale): a model grades a prediction against the gold answer.

The score is one of 0, 0.25, 0.5, 0.75, 1 (prompts.JUDGE_SCALE): the prompt
(core.prompts.judge) defines each level and the JSON schema enumerates them,
so a constrained model cannot answer anything else. A judge never fails an
eval: when the call fails (LLMError after the layer's retries) or the reply
carries no usable score, the Judgement has score None and the reason in
`error`, and the summary counts it as unjudged instead of guessing a score.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from .. import prompts
from ..errors import LLMError
from ..protocols import LLM


@dataclass(frozen=True)
class Judgement:
    """One grade. `score` None means the judge could not grade (see `error`)."""

    score: float | None
    reason: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    error: str | None = None

    def to_dict(self) -> dict:
        return {"score": self.score, "reason": self.reason, "tokens": self.prompt_tokens + self.completion_tokens,
                "error": self.error}


def snap(value) -> float | None:
    """A reply's score as one of JUDGE_SCALE: exact members only (None for anything else, booleans too)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    for s in prompts.JUDGE_SCALE:
        if abs(float(value) - s) < 1e-9:
            return float(s)
    return None


class LLMJudge:
    """Grades predictions with `llm` (any core.protocols.LLM: OpenAI-compatible or local)."""

    def __init__(self, llm: LLM):
        self.llm = llm
        self.model = getattr(llm, "model", "?")

    def judge(self, question: str, gold: str, prediction: str) -> Judgement:
        """The grade of `prediction`; never raises for a model fault (score None, `error` says why).

        An empty prediction scores 0 without a call (there is nothing to grade).
        """
        if not str(prediction or "").strip():
            return Judgement(0.0, "empty prediction")
        msgs, schema = prompts.judge(question, str(gold), str(prediction))
        try:
            res = self.llm.complete_json(prompts.JUDGE, msgs, schema, prompt_version=prompts.PROMPT_VERSION[prompts.JUDGE])
        except LLMError as e:
            return Judgement(None, error=f"judge call failed: {str(e)[:200]}")
        data = res.data if isinstance(res.data, dict) else {}
        score = snap(data.get("score"))
        tok = dict(prompt_tokens=res.prompt_tokens, completion_tokens=res.completion_tokens)
        if score is None:
            return Judgement(None, error=f"judge reply has no score on the scale: {str(data)[:120]}", **tok)
        return Judgement(score, str(data.get("reason") or "")[:300], **tok)


def judge_summary(judgements: Iterable[Judgement | None], model: str) -> dict:
    """summary.json's `llm_judge`: mean over graded predictions, with counts (mean None when none graded)."""
    js = [j for j in judgements if j is not None]
    graded = [j.score for j in js if j.score is not None]
    return {
        "model": model,
        "mean": round(sum(graded) / len(graded), 4) if graded else None,
        "n": len(graded),
        "failed": len(js) - len(graded),
        "tokens": sum(j.prompt_tokens + j.completion_tokens for j in js),
    }


__all__ = ["Judgement", "LLMJudge", "judge_summary", "snap"]
