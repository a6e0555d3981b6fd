"""Turn encoded image bytes into an RGB Pillow image, or fail naming the fault.

Shared by the OCR and the image encoders so that every component sees the
same pixels: EXIF orientation applied, transparency composited on white
(screenshots with a transparent background would otherwise turn black and
hide black text), palette/greyscale/CMYK converted to RGB.
"""
from __future__ import annotations

import io
import warnings

from PIL import Image, ImageOps, UnidentifiedImageError

from ..config import DEFAULT
from ..errors import InputError


def decode_rgb(data: bytes, *, source: str = "image", max_pixels: int = DEFAULT.max_image_pixels) -> Image.Image:
    """Decode `data` (PNG/JPEG/GIF/WebP/...) into a fully loaded RGB image.

    Raises InputError(source, ..., fault) when the bytes are empty, are not
    an image Pillow can decode, or the image has more than `max_pixels`
    pixels (checked from the header, before the pixels are decompressed).
    """
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise InputError(source, "", f"expected encoded image bytes, got {type(data).__name__}")
    if len(data) == 0:
        raise InputError(source, "", "the image is empty (0 bytes)")
    try:
        with warnings.catch_warnings():
            # our own pixel limit below replaces Pillow's global bomb warning
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            img = Image.open(io.BytesIO(bytes(data)))
            w, h = img.size
            if w * h > max_pixels:
                raise InputError(source, f"{w}x{h} pixels", f"image larger than the limit of {max_pixels} pixels")
            if w == 0 or h == 0:
                raise InputError(source, f"{w}x{h} pixels", "image has no pixels")
            img.load()
            img = ImageOps.exif_transpose(img) or img
    except InputError:
        raise
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError, Image.DecompressionBombError) as e:
        raise InputError(source, f"{len(data)} bytes", f"not a decodable image ({e})") from None
    return to_rgb(img)


def to_rgb(img: Image.Image) -> Image.Image:
    """RGB copy of `img`; transparent pixels become white."""
    if img.mode == "RGB":
        return img
    if img.mode == "P" and "transparency" in img.info:
        img = img.convert("RGBA")
    if img.mode in ("RGBA", "LA", "PA") or img.mode.endswith("A"):
        rgba = img.convert("RGBA")
        background = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        return Image.alpha_composite(background, rgba).convert("RGB")
    if img.mode in ("I;16", "I;16B", "I;16L", "I", "F"):
        # 16-bit / float greyscale: scale to 8 bits before converting
        import numpy as np

        a = np.asarray(img, dtype=np.float64)
        lo, hi = float(a.min()), float(a.max())
        a = (a - lo) / (hi - lo) * 255.0 if hi > lo else np.zeros_like(a)
        return Image.fromarray(a.astype(np.uint8), "L").convert("RGB")
    return img.convert("RGB")
