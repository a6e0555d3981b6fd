"""open_clip image encoder (with a text branch) and the image-encoder choice from config.

Without a configured checkpoint the engine uses the model-free
descriptor-v1 (visual near-duplicates only); with one, open_clip, whose text
branch enables text-to-image search.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ..config import DEFAULT
from ..protocols import ImageEncoder
from .decoding import decode_rgb
from .descriptor import DescriptorImageEncoder

DEFAULT_CLIP_MODEL = "ViT-B-32"
BATCH_SIZE = 32


class OpenClipImageEncoder:
    """ImageEncoder over an open_clip model: images and texts in one space.

    `model` is an open_clip CLIP model in eval mode, `preprocess` its
    validation transform (PIL image -> tensor), `tokenizer` the open_clip
    tokenizer (list[str] -> LongTensor), `label` the one-line description
    for the build report. Build one with `load_open_clip`.
    Both branches return (n, dim) float32 rows of unit L2 norm, computed
    without gradients in batches of 32. `encode_images` raises
    core.errors.InputError naming the index of an undecodable image.
    """

    supports_text = True

    def __init__(self, model: Any, preprocess: Any, tokenizer: Any, name: str, *,
                 label: str | None = None, max_pixels: int = DEFAULT.max_image_pixels):
        self.model = model
        self.preprocess = preprocess
        self.tokenizer = tokenizer
        self.name = name
        self.label = label or name
        self.max_pixels = max_pixels
        dim = getattr(getattr(model, "visual", None), "output_dim", None)
        if dim is None:
            raise ValueError(f"{name}: cannot tell the embedding size (model.visual.output_dim is missing)")
        self.dim = int(dim)

    def _device(self):
        return next(self.model.parameters()).device

    def encode_images(self, images: Sequence[bytes]) -> np.ndarray:
        import torch

        out = np.zeros((len(images), self.dim), dtype=np.float32)
        for s in range(0, len(images), BATCH_SIZE):
            batch = [
                self.preprocess(decode_rgb(data, source=f"images[{s + j}]", max_pixels=self.max_pixels))
                for j, data in enumerate(images[s : s + BATCH_SIZE])
            ]
            with torch.inference_mode():
                feats = self.model.encode_image(torch.stack(batch).to(self._device()), normalize=True)
            out[s : s + len(batch)] = feats.float().cpu().numpy()
        return out

    def encode_text(self, texts: Sequence[str]) -> np.ndarray:
        import torch

        if isinstance(texts, str):
            raise TypeError("encode_text() takes a sequence of strings, not a single string")
        items = list(texts)
        out = np.zeros((len(items), self.dim), dtype=np.float32)
        for s in range(0, len(items), BATCH_SIZE):
            tokens = self.tokenizer(items[s : s + BATCH_SIZE]).to(self._device())
            with torch.inference_mode():
                feats = self.model.encode_text(tokens, normalize=True)
            out[s : s + len(tokens)] = feats.float().cpu().numpy()
        return out


def load_open_clip(model_name: str, checkpoint_path: str, *, device: str = "cpu",
                   allow_download: bool = False) -> OpenClipImageEncoder:
    """Build an OpenClipImageEncoder for architecture `model_name` with weights from `checkpoint_path`.

    `checkpoint_path` is a local file (a state dict saved with torch.save, or
    an open_clip/OpenAI checkpoint). With `allow_download=True` it may also
    be an open_clip pretrained tag such as "laion2b_s34b_b79k" (fetched from
    a hub). Raises FileNotFoundError when the file is missing (and downloads
    are not allowed), ValueError for an unknown architecture or a hub model
    name, RuntimeError (from open_clip) when the weights do not fit the
    architecture.
    """
    import open_clip

    if model_name.startswith(("hf-hub:", "local-dir:")):
        raise ValueError(f"open_clip model name {model_name!r}: give an architecture name (e.g. {DEFAULT_CLIP_MODEL}) and a checkpoint file")
    if model_name not in open_clip.list_models():
        raise ValueError(f"unknown open_clip architecture {model_name!r} (known: {', '.join(open_clip.list_models()[:8])}, ...)")
    is_file = os.path.isfile(checkpoint_path)
    if not is_file and not allow_download:
        raise FileNotFoundError(
            f"{checkpoint_path}: open_clip checkpoint file not found (downloads are off, so pretrained tags are not fetched)"
        )
    model, _, preprocess = open_clip.create_model_and_transforms(model_name, pretrained=checkpoint_path, device=device)
    model.eval()
    tokenizer = open_clip.get_tokenizer(model_name)
    source = str(Path(checkpoint_path).resolve()) if is_file else checkpoint_path
    return OpenClipImageEncoder(
        model, preprocess, tokenizer,
        name=f"open_clip:{model_name}:{Path(checkpoint_path).name if is_file else checkpoint_path}",
        label=f"open_clip {model_name} from {source}",
    )


def image_encoder_from_config(checkpoint: str | None, model_name: str | None = None, *,
                              allow_download: bool = False) -> ImageEncoder:
    """The image encoder the configuration asks for.

    No checkpoint -> DescriptorImageEncoder (visual near-duplicates only, no
    text-to-image search). A checkpoint -> open_clip `model_name` (default
    ViT-B-32) loaded by `load_open_clip`, which raises on a bad checkpoint:
    a configured encoder that fails is an error, never a silent fallback.
    """
    if not checkpoint:
        return DescriptorImageEncoder()
    return load_open_clip(model_name or DEFAULT_CLIP_MODEL, checkpoint, allow_download=allow_download)


def describe_image_encoder(encoder: Any) -> str:
    """One line for the build report and the app, e.g.
    "descriptor-v1 (visual near-duplicates only)" or "open_clip ViT-B-32 from /path/to/ckpt.pt"."""
    return str(getattr(encoder, "label", None) or getattr(encoder, "name", type(encoder).__name__))
