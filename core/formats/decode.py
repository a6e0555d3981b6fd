"""Bytes -> parsed JSON, with every failure (including content that is not text) reported as one InputError."""
from __future__ import annotations

import codecs
import json
from typing import Any

from ..errors import InputError

_UTF16_BOMS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE, codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)
# File signatures ("magic numbers") of content often given by mistake where JSON is expected.
_SIGNATURES = (
    (b"\x89PNG\r\n\x1a\n", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF87a", "a GIF image"),
    (b"GIF89a", "a GIF image"),
    (b"%PDF-", "a PDF document"),
    (b"PK\x03\x04", "a zip archive"),
    (b"PK\x05\x06", "a zip archive"),  # an empty zip
    (b"\x1f\x8b", "a gzip archive"),
)
_BINARY_SCAN = 8000  # bytes searched for NUL, as git does to tell binary from text
_ZIP_HINT = " (to upload a zip of JSON files and images, give it a name ending in .zip)"


def content_kind(data: bytes) -> str | None:
    """What non-text content the bytes are ("a PNG image", ..., "binary data"), None for text.

    Recognised by signature: PNG, JPEG, GIF, WEBP, PDF, zip, gzip; any other
    content with a NUL byte in its first 8000 bytes is binary data, unless the
    NULs are those of UTF-16/UTF-32 text (None: decode_text names that)."""
    for magic, name in _SIGNATURES:
        if data.startswith(magic):
            return name
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "a WEBP image"
    head = data[:_BINARY_SCAN]
    if b"\x00" not in head:
        return None
    sample = head[:64]
    even, odd = sample[0::2], sample[1::2]
    if (not any(odd) and any(even)) or (not any(even) and any(odd)):
        return None  # ASCII-range text in UTF-16/32: every other byte (or three in four) is NUL
    return "binary data (it has NUL bytes)"


def decode_text(data: bytes, file: str) -> str:
    """The file's text: UTF-8, or UTF-8 with a byte-order mark.

    Raises InputError(file, "", "this is a PNG image, not a JSON file") and
    the like for content that is not text (see content_kind), and one naming
    the offset of the first invalid byte (or the UTF-16/32 byte-order mark or
    NUL bytes) for any other encoding; we do not guess encodings because a
    wrong guess silently corrupts the text.
    """
    if data.startswith(_UTF16_BOMS):
        raise InputError(file, "byte 0", "the file is UTF-16/UTF-32 text; save it as UTF-8")
    what = content_kind(data)
    if what is not None:
        hint = _ZIP_HINT if what == "a zip archive" else ""
        raise InputError(file, "", f"this is {what}, not a JSON file{hint}")
    if b"\x00" in data[:_BINARY_SCAN]:
        raise InputError(file, "byte 0", "the file looks like UTF-16/UTF-32 text (NUL bytes); save it as UTF-8")
    if data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8):]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise InputError(
            file,
            f"line {line} (byte {e.start})",
            f"not UTF-8 text: invalid byte 0x{data[e.start]:02x}; save the file as UTF-8",
        ) from None


def load_json(data: bytes, file: str) -> Any:
    """Parse a JSON document; malformed JSON is reported with its line and column.

    Also turns the failures of hostile documents (nesting deep enough to
    exhaust recursion, integers with too many digits) into InputError.
    """
    text = decode_text(data, file)
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise InputError(file, f"line {e.lineno} column {e.colno}", f"malformed JSON: {e.msg}") from None
    except RecursionError:
        raise InputError(file, "", "JSON nested too deeply to read") from None
    except ValueError as e:  # e.g. an integer literal longer than Python's digit limit
        raise InputError(file, "", f"malformed JSON: {e}") from None
