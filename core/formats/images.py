"""Image files: checking that bytes are the image they claim to be.

`inspect_image` opens the bytes with Pillow, reads the size from the header
and refuses too many pixels BEFORE anything is decoded, then verifies the
file and decodes it fully (which is what catches truncated files).
"""
from __future__ import annotations

import hashlib
import io
import posixpath
import warnings
from dataclasses import dataclass

from PIL import Image, UnidentifiedImageError

# Extension -> the Pillow format a file with that name must have.
EXTENSION_FORMATS = {
    ".png": "PNG", ".jpg": "JPEG", ".jpeg": "JPEG", ".jpe": "JPEG", ".jfif": "JPEG",
    ".gif": "GIF", ".webp": "WEBP", ".bmp": "BMP", ".tif": "TIFF", ".tiff": "TIFF",
}
# Formats we accept; MPO is how Pillow names multi-picture JPEGs from phone cameras.
ACCEPTED = {"PNG", "JPEG", "MPO", "GIF", "WEBP", "BMP", "TIFF"}
_SAME = {"MPO": "JPEG"}


class ImageFault(ValueError):
    """The bytes are not an acceptable image; the message says why."""


@dataclass(frozen=True)
class ImageInfo:
    sha256: str
    mime: str
    width: int
    height: int
    format: str


def is_image_name(name: str) -> bool:
    return posixpath.splitext(name.lower())[1] in EXTENSION_FORMATS


def inspect_image(data: bytes, name: str, max_pixels: int) -> ImageInfo:
    """Validate image bytes whose file is called `name`.

    Raises ImageFault when Pillow cannot identify or decode the bytes, when the
    real format disagrees with the name's extension, when the format is not
    one we accept, when width x height exceeds `max_pixels` (checked from the
    header, before decoding), or when the file is truncated or corrupt.
    """
    with warnings.catch_warnings():
        # Our own limit applies below; Pillow's global warning would only be noise.
        warnings.simplefilter("ignore", Image.DecompressionBombWarning)
        try:
            im = Image.open(io.BytesIO(data))
        except Image.DecompressionBombError as e:
            # Pillow's own guard fires before our check can: still name the limit a person can change
            raise ImageFault(f"too many pixels, more than max_image_pixels ({max_pixels}) ({e})") from None
        except UnidentifiedImageError:
            raise ImageFault("not an image (Pillow cannot identify it)") from None
        except Exception as e:  # Pillow plugins raise many types on hostile headers
            raise ImageFault(f"not a readable image ({type(e).__name__}: {e})") from None
        with im:
            fmt = im.format or "?"
            width, height = im.size
            if width <= 0 or height <= 0:
                raise ImageFault(f"invalid size {width}x{height}")
            if width * height > max_pixels:
                raise ImageFault(
                    f"{width}x{height} = {width * height} pixels, more than max_image_pixels ({max_pixels})"
                )
            ext = posixpath.splitext(name.lower())[1]
            claimed = EXTENSION_FORMATS.get(ext)
            if claimed is not None and _SAME.get(fmt, fmt) != claimed:
                raise ImageFault(f"the file is a {fmt} image but its extension {ext!r} says {claimed}")
            if fmt not in ACCEPTED:
                raise ImageFault(f"unsupported image format {fmt} (accepted: {', '.join(sorted(ACCEPTED - {'MPO'}))})")
            mime = Image.MIME.get(_SAME.get(fmt, fmt), "application/octet-stream")
            try:
                im.verify()
            except Exception as e:
                raise ImageFault(f"corrupt image ({type(e).__name__}: {e})") from None
        try:
            with Image.open(io.BytesIO(data)) as full:
                full.load()
        except Image.DecompressionBombError as e:
            raise ImageFault(f"too many pixels, more than max_image_pixels ({max_pixels}) ({e})") from None
        except Exception as e:
            raise ImageFault(f"truncated or corrupt image ({type(e).__name__}: {e})") from None
    return ImageInfo(sha256=hashlib.sha256(data).hexdigest(), mime=mime, width=width, height=height, format=fmt)
