"""Bytes -> parsed JSON, with every failure reported as one InputError."""
from __future__ import annotations

import codecs
import json
from typing import Any

from ..errors import InputError

_UTF16_BOMS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE, codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)


def decode_text(data: bytes, file: str) -> str:
    """The file's text: UTF-8, or UTF-8 with a byte-order mark.

    Raises InputError naming the offset of the first invalid byte (or the
    UTF-16/32 byte-order mark) for any other encoding; we do not guess
    encodings because a wrong guess silently corrupts the text.
    """
    if data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8):]
    elif data.startswith(_UTF16_BOMS):
        raise InputError(file, "byte 0", "the file is UTF-16/UTF-32 text; save it as UTF-8")
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
