"""A deterministic image descriptor for visual near-duplicates (Pillow + numpy only).

Used when no open_clip checkpoint is configured. It finds the same picture
again after resizing, JPEG re-encoding or a small brightness change; it knows
nothing about what the picture shows, and it has no text branch.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
from PIL import Image

from ..config import DEFAULT
from .decoding import decode_rgb

DESCRIPTOR_NAME = "descriptor-v1"
DESCRIPTOR_DESCRIPTION = "descriptor-v1 (visual near-duplicates only)"

_GRID = 8  # colour layout: 8x8 cells of mean Lab colour -> 192 values
_PHASH_SIZE = 32  # pHash: DCT of a 32x32 grey image, 8x8 lowest frequencies -> 64 bits
_HIST_BINS = 4  # colour histogram: 4x4x4 RGB bins -> 64 values
# Block weights (each block has unit norm before weighting). The layout says
# where the colours are, the hash the structure, the histogram the palette;
# the hash is weighted most because it ignores brightness and JPEG noise.
_W_LAYOUT, _W_PHASH, _W_HIST = 1.0, 1.2, 0.6


def _dct_matrix(n: int) -> np.ndarray:
    """Orthonormal DCT-II matrix (rows = frequencies)."""
    k = np.arange(n)[:, None]
    i = np.arange(n)[None, :]
    m = np.cos(np.pi * (2 * i + 1) * k / (2 * n)) * np.sqrt(2.0 / n)
    m[0] /= np.sqrt(2.0)
    return m


_DCT = _dct_matrix(_PHASH_SIZE)


def _srgb_to_lab(rgb: np.ndarray) -> np.ndarray:
    """(..., 3) sRGB in [0, 1] -> CIE Lab (D65); L in [0, 100], a/b roughly [-110, 110]."""
    lin = np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    m = np.array([[0.4124564, 0.3575761, 0.1804375], [0.2126729, 0.7151522, 0.0721750], [0.0193339, 0.1191920, 0.9503041]])
    xyz = lin @ m.T / np.array([0.95047, 1.0, 1.08883])
    f = np.where(xyz > (6 / 29) ** 3, np.cbrt(xyz), xyz / (3 * (6 / 29) ** 2) + 4 / 29)
    L = 116 * f[..., 1] - 16
    a = 500 * (f[..., 0] - f[..., 1])
    b = 200 * (f[..., 1] - f[..., 2])
    return np.stack([L, a, b], axis=-1)


def _unit(v: np.ndarray) -> np.ndarray:
    n = float(np.linalg.norm(v))
    return v / n if n > 1e-12 else v


def describe(img: Image.Image) -> np.ndarray:
    """The descriptor-v1 vector of an RGB image: (320,) float32, unit L2 norm.

    Blocks, each centred on a fixed image-independent point (so unrelated
    images do not all look alike just because colours are positive) and
    scaled to unit norm before weighting:
    colour layout (8x8 mean Lab, centred on mid grey L=50,a=b=0),
    pHash (64 DCT low-frequency signs as +-1, DC excluded),
    colour histogram (sqrt of the 4x4x4 RGB histogram minus the uniform one).
    """
    rgb = img.convert("RGB")
    # colour layout: BOX resampling = the mean colour of each cell
    small = np.asarray(rgb.resize((_GRID, _GRID), Image.Resampling.BOX), dtype=np.float64) / 255.0
    lab = _srgb_to_lab(small)
    layout = ((lab - np.array([50.0, 0.0, 0.0])) / np.array([50.0, 60.0, 60.0])).ravel()

    grey = np.asarray(rgb.convert("L").resize((_PHASH_SIZE, _PHASH_SIZE), Image.Resampling.BOX), dtype=np.float64)
    coeffs = (_DCT @ grey @ _DCT.T)[:8, :8].ravel()[1:]  # drop DC: brightness only
    med = np.median(coeffs)
    bits = np.where(coeffs > med, 1.0, -1.0)
    phash = np.concatenate([[0.0], bits])  # keep 64 slots; slot 0 (DC) is always 0

    # histogram on a downsized copy: enough pixels for the palette, cheap on big screenshots
    thumb = rgb.copy()
    thumb.thumbnail((128, 128), Image.Resampling.BOX)
    px = np.asarray(thumb, dtype=np.uint16).reshape(-1, 3) * _HIST_BINS // 256
    idx = (px[:, 0] * _HIST_BINS + px[:, 1]) * _HIST_BINS + px[:, 2]
    hist = np.bincount(idx, minlength=_HIST_BINS**3).astype(np.float64)
    hist = np.sqrt(hist / hist.sum()) - np.sqrt(1.0 / _HIST_BINS**3)

    v = np.concatenate([_W_LAYOUT * _unit(layout), _W_PHASH * _unit(phash), _W_HIST * _unit(hist)])
    return _unit(v).astype(np.float32)


class DescriptorImageEncoder:
    """ImageEncoder: the descriptor-v1 vector (see `describe`), 320-d, no text branch.

    Cosine between the vectors of near-duplicates (resized, re-encoded JPEG,
    slightly brighter) is high; between unrelated images it is near zero.
    Deterministic and model-free. `encode_images` raises
    core.errors.InputError naming the index of an undecodable image.
    """

    name = DESCRIPTOR_NAME
    label = DESCRIPTOR_DESCRIPTION  # the one-line description for the build report
    dim = _GRID * _GRID * 3 + 64 + _HIST_BINS**3
    supports_text = False

    def __init__(self, *, max_pixels: int = DEFAULT.max_image_pixels):
        self.max_pixels = max_pixels

    def encode_images(self, images: Sequence[bytes]) -> np.ndarray:
        out = np.zeros((len(images), self.dim), dtype=np.float32)
        for i, data in enumerate(images):
            out[i] = describe(decode_rgb(data, source=f"images[{i}]", max_pixels=self.max_pixels))
        return out

    def encode_text(self, texts: Sequence[str]) -> np.ndarray:
        raise NotImplementedError(
            "descriptor-v1 has no text branch: text-to-image search needs an open_clip checkpoint "
            "(configure one for the image encoder)"
        )
