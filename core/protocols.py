"""Small Protocols for the dependencies passed into the engine.

Encoders, OCR and the LLM are constructor arguments typed by these, never
built inside an `__init__`; tests pass the deterministic fakes from
tests/conftest.py, the app and CLI pass the real ones from core.encoders /
core.llm.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, Sequence, runtime_checkable

import numpy as np


@runtime_checkable
class TextEncoder(Protocol):
    name: str
    dim: int

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Return an (n, dim) float32 array of L2-normalized embeddings, row i for texts[i]."""


@runtime_checkable
class ImageEncoder(Protocol):
    name: str
    dim: int
    supports_text: bool  # True only for open_clip: text-to-image matching

    def encode_images(self, images: Sequence[bytes]) -> np.ndarray:
        """Return an (n, dim) float32 array of L2-normalized image embeddings."""

    def encode_text(self, texts: Sequence[str]) -> np.ndarray:
        """Text branch (same space as the images); raises NotImplementedError without one."""


@dataclass(frozen=True)
class OcrLine:
    text: str
    box: tuple[float, float, float, float]  # x0, y0, x1, y1 in pixels
    score: float


@dataclass(frozen=True)
class OcrResult:
    text: str  # lines joined top-to-bottom, left-to-right, one per line
    lines: tuple[OcrLine, ...] = ()


@runtime_checkable
class OCR(Protocol):
    name: str

    def read(self, image: bytes) -> OcrResult:
        """OCR one image given as encoded bytes (PNG/JPEG/...)."""


@dataclass(frozen=True)
class LLMResult:
    data: Any  # the parsed, schema-valid JSON
    model: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    ms: float = 0.0
    cached: bool = False
    attempts: int = 1


@runtime_checkable
class LLM(Protocol):
    model: str
    vision: bool  # accepts images in messages

    def complete_json(
        self,
        task: str,
        messages: list[dict],
        schema: dict,
        *,
        prompt_version: str = "1",
        images: Sequence[bytes] = (),
    ) -> LLMResult:
        """One JSON-schema-constrained call. Raises core.errors.LLMError when the
        call fails after retries or the output never validates against `schema`."""
