"""Evaluation: answer scoring (scoring.py), and the benchmark runner, ablations and baselines.

Only the pure scoring functions are re-exported here; importing this package
loads no model and touches no store.
"""
from core.evaluation.scoring import (
    ANSWER_KINDS,
    bleu1,
    evidence_recall,
    infer_kind,
    is_refusal,
    locomo_f1,
    score_answer,
    token_f1,
)

__all__ = [
    "ANSWER_KINDS",
    "bleu1",
    "evidence_recall",
    "infer_kind",
    "is_refusal",
    "locomo_f1",
    "score_answer",
    "token_f1",
]
