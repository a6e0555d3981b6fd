"""Assemble the real dependencies (models, OCR, LLM) for the CLI; the app caches its own.

Nothing here runs at import time: each factory loads what it names when called.
"""
from __future__ import annotations

from .config import Config
from .errors import InputError
from .protocols import LLM


def make_llm(backend: str, model_path: str | None = None, cache_con=None, *, meter=None,
             n_threads: int = 1, n_ctx: int = 8192, parallel: int = 1,
             settings: dict | None = None) -> LLM | None:
    """None for "rules"; an OpenAI-compatible client for "openai"; an in-process llama.cpp for "local".

    `cache_con`: a migrated memory's DuckDB connection whose `llm_cache` table keeps replies
    (None: no cache; `set_cache` can add one later). `meter`: a core.llm.TokenMeter that records
    every call. The local model runs on `n_threads` threads (1: on a small shared CPU more
    threads were much slower) with an `n_ctx`-token window.
    Raises InputError for a missing model file or missing settings (exit 2 in the CLI), LLMError
    when llama.cpp cannot load the file.
    """
    if backend == "rules":
        return None
    from . import llm as llm_mod

    cache = llm_mod.DuckDBLLMCache(cache_con) if cache_con is not None else None
    if backend == "openai":
        return llm_mod.from_env(cache=cache, meter=meter, settings=settings)
    if backend == "local":
        from pathlib import Path

        if not model_path or not Path(model_path).is_file():
            raise InputError("--model-path", "", f"no GGUF file at {model_path!r} (needed for --backend local)")
        return llm_mod.LocalLLM(model_path, cache=cache, meter=meter, n_threads=n_threads, n_ctx=n_ctx,
                                  parallel=parallel)
    raise InputError("--backend", "", f"unknown backend {backend!r}")


def make_build_deps(config: Config, *, cache_con, llm: LLM | None = None, clip_checkpoint: str | None = None,
                    clip_model: str | None = None, text_encoder=None, ocr=None, image_encoder=None):
    """BuildDeps with the real encoders (MiniLM cached in the memory file, rapidocr, image encoder)."""
    from .build import BuildDeps
    from .encoders import CachedTextEncoder, MiniLMEncoder, RapidOcr, image_encoder_from_config, load_minilm
    from .extract import RuleExtractor

    text = text_encoder or MiniLMEncoder(load_minilm())
    image = image_encoder or image_encoder_from_config(clip_checkpoint, clip_model)
    extractor = RuleExtractor(config)
    if llm is not None and config.uses_model("extract"):
        from .extract.llm_extractor import LLMExtractor

        extractor = LLMExtractor(llm, fallback=extractor)
    return BuildDeps(
        text_encoder=CachedTextEncoder(text, cache_con),
        image_encoder=image,
        ocr=ocr or RapidOcr(parallel=config.ocr_parallel),
        extractor=extractor,
        llm=llm,
        image_encoder_label=getattr(image, "label", "") or image.name,
    )


def load_models(clip_checkpoint: str | None = None, clip_model: str | None = None, *,
                ocr_parallel: int = 1) -> dict:
    """The models a build needs, loaded once to be reused across many memories: make_build_deps's
    `text_encoder`, `ocr` and `image_encoder` keyword arguments (MiniLM, rapidocr reading
    `ocr_parallel` images at once, the image encoder). Raises what the loaders raise (a missing
    checkpoint: InputError)."""
    from .encoders import MiniLMEncoder, RapidOcr, image_encoder_from_config, load_minilm

    return {"text_encoder": MiniLMEncoder(load_minilm()), "ocr": RapidOcr(parallel=ocr_parallel),
            "image_encoder": image_encoder_from_config(clip_checkpoint, clip_model)}
