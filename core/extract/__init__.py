"""Attribute extraction (paper 3.3.1): one round in, provenance-linked observations out.

Two extractors share the `Extractor` protocol:

- `RuleExtractor(config)`: offline rules over dialogue, captions and OCR text
  (core/extract/rules.py), the default;
- `LLMExtractor(llm, fallback)`: one JSON-schema-constrained call per round;
  every item is checked against the round's text and dropped when its value
  is not there; on an LLM failure or malformed output it falls back to the
  rule extractor and says so in the result.

Both offer `run(round, ocr, images=None) -> ExtractionResult` (observations +
fallback reason + tokens) beside the protocol's `extract`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Protocol, runtime_checkable

from core.model import Observation, Round


@runtime_checkable
class Extractor(Protocol):
    name: str

    def extract(self, round: Round, ocr: dict[str, str]) -> list[Observation]:
        """Observations of one round; `ocr` maps image_id -> OCR text of that round's images."""


@dataclass(frozen=True)
class ExtractionResult:
    """What one extraction call produced.

    fallback: None when the configured extractor answered; else why the rule
    extractor was used instead (e.g. "llm error: timed out").
    tokens: prompt + completion tokens spent (0 for rules).
    dropped: items the LLM returned that were not grounded in the round.
    """

    observations: tuple[Observation, ...]
    fallback: str | None = None
    tokens: int = 0
    dropped: int = 0


from core.extract.llm_extractor import LLMExtractor  # noqa: E402
from core.extract.normalize import normalize_attribute, parse_unit  # noqa: E402
from core.extract.rules import RuleExtractor  # noqa: E402


def run_extractor(extractor: Extractor, round: Round, ocr: Mapping[str, str] | None = None,
                  images: Mapping[str, bytes] | None = None) -> ExtractionResult:
    """`extractor.run(...)` when it has one, else wrap its `extract` (no fallback, no tokens)."""
    run = getattr(extractor, "run", None)
    if run is not None:
        return run(round, dict(ocr or {}), images=images)
    return ExtractionResult(tuple(extractor.extract(round, dict(ocr or {}))))


__all__ = ["Extractor", "ExtractionResult", "RuleExtractor", "LLMExtractor", "normalize_attribute",
           "parse_unit", "run_extractor"]
