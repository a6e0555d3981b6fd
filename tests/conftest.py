"""Deterministic fakes shared by the unit tests.

Fakes are for unit tests only; every integration point also has a test
against the real thing (MiniLM, rapidocr, a local llama.cpp server, ...).
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import zlib
from pathlib import Path
from typing import Sequence

import numpy as np
import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

from core.errors import LLMError  # noqa: E402
from core.protocols import LLMResult, OcrLine, OcrResult  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
LOCOMO = SHARED / "data" / "locomo"


@contextlib.contextmanager
def built_memory(tmp_path: Path, name: str, doc: dict):
    """A history document (MemEye / Mem-Gallery JSON) built with the rule extractor and the fakes into
    tmp_path/<name>.duckdb: yields (store, engine), the engine on the HashEmbedder."""
    from core.build import BuildDeps, build
    from core.config import DEFAULT
    from core.extract import RuleExtractor
    from core.formats import read_file
    from core.query import make_engine
    from core.store import Store

    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(doc))
    histories = read_file(path, config=DEFAULT, allow_missing_images=True)
    with Store(tmp_path / f"{name}.duckdb") as store:
        build(store, histories, BuildDeps(HashEmbedder(), FakeImageEncoder(), FakeOCR(), RuleExtractor(DEFAULT)),
              DEFAULT)
        yield store, make_engine(store, DEFAULT, text_encoder=HashEmbedder(), image_encoder=FakeImageEncoder())


def _word_vec(word: str, dim: int) -> np.ndarray:
    seed = int.from_bytes(hashlib.sha256(word.encode()).digest()[:8], "little")
    return np.random.default_rng(seed).standard_normal(dim).astype(np.float32)


class HashEmbedder:
    """Bag of hashed words: texts sharing words get a high cosine. Deterministic."""

    name = "fake-hash"

    def __init__(self, dim: int = 64):
        self.dim = dim
        self.calls: list[list[str]] = []

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(list(texts))
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            for w in re.findall(r"[a-z0-9]+", t.lower()):
                out[i] += _word_vec(w, self.dim)
            n = np.linalg.norm(out[i])
            out[i] = out[i] / n if n else _word_vec("<empty>", self.dim) / np.linalg.norm(_word_vec("<empty>", self.dim))
        return out


class UnlikeEncoder(HashEmbedder):
    """Finds every two different texts unlike (a vector per whole text, 256 dimensions: cosines near 0): words
    alone, never meaning, can tie a question to a column."""

    def __init__(self, dim: int = 256):
        super().__init__(dim)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        return super().encode([re.sub(r"[^a-z0-9]", "", t.lower()) or "<empty>" for t in texts])


class AlikeEncoder(HashEmbedder):
    """Finds every two texts alike (cosine 1): structure alone must keep fields apart."""

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        return super().encode(["same"] * len(texts))


class UnlikeEncoder(HashEmbedder):
    """Finds no two different texts alike (independent random unit vectors, seeded by the text)."""

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        out = [np.random.default_rng(zlib.crc32(t.encode())).standard_normal(self.dim) for t in texts]
        return np.array([v / np.linalg.norm(v) for v in out], dtype=np.float32)


class FakeImageEncoder:
    """Embeds image bytes by hash; no text branch (like the default descriptor)."""

    name = "fake-image"
    supports_text = False

    def __init__(self, dim: int = 16):
        self.dim = dim

    def encode_images(self, images: Sequence[bytes]) -> np.ndarray:
        out = np.stack([_word_vec(hashlib.sha256(b).hexdigest(), self.dim) for b in images]) if images else np.zeros((0, self.dim), np.float32)
        return (out / np.linalg.norm(out, axis=1, keepdims=True)).astype(np.float32) if len(out) else out

    def encode_text(self, texts: Sequence[str]) -> np.ndarray:
        raise NotImplementedError("fake image encoder has no text branch")


class FakeOCR:
    """Returns text registered per image bytes (sha256), else empty."""

    name = "fake-ocr"

    def __init__(self, texts: dict[bytes, str] | None = None):
        self.texts = dict(texts or {})
        self.calls = 0

    def read(self, image: bytes) -> OcrResult:
        self.calls += 1
        text = self.texts.get(image, "")
        lines = tuple(OcrLine(t, (0.0, float(i * 20), 100.0, float(i * 20 + 16)), 0.99) for i, t in enumerate(text.splitlines()))
        return OcrResult(text=text, lines=lines)


class QueuedLLM:
    """Returns queued replies in order and records every call.

    A queued Exception is raised instead of returned (to simulate failures).
    """

    def __init__(self, replies: list | None = None, model: str = "fake-llm", vision: bool = False):
        self.replies = list(replies or [])
        self.calls: list[dict] = []
        self.model = model
        self.vision = vision

    def complete_json(self, task, messages, schema, *, prompt_version="1", images=()):
        self.calls.append({"task": task, "messages": messages, "schema": schema, "images": list(images)})
        if not self.replies:
            raise LLMError(f"QueuedLLM: no reply queued for task {task!r}")
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        return LLMResult(data=reply, model=self.model, prompt_tokens=10, completion_tokens=5)


@pytest.fixture
def embedder() -> HashEmbedder:
    return HashEmbedder()


@pytest.fixture
def image_encoder() -> FakeImageEncoder:
    return FakeImageEncoder()


@pytest.fixture
def fake_ocr() -> FakeOCR:
    return FakeOCR()


@pytest.fixture
def queued_llm() -> QueuedLLM:
    return QueuedLLM()


@pytest.fixture
def locomo_dir() -> Path:
    if not LOCOMO.is_dir():
        pytest.skip(f"LoCoMo data not found at {LOCOMO} (third-party data, kept outside the repo)")
    return LOCOMO
