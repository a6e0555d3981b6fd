"""`python -m core ask --image/--image-caption`: the question's own picture, by caption or by its text."""
from __future__ import annotations

import io

import pytest
from PIL import Image, ImageDraw, ImageFont

from core.cli_commands import question_image
from core.errors import InputError


def test_a_given_caption_is_the_pictures_description(tmp_path):
    img = question_image(None, "  a red bicycle leaning on a wall ")
    assert img is not None and img.caption == "a red bicycle leaning on a wall"
    assert question_image(None, None) is None and question_image(None, "   ") is None


def test_without_a_caption_the_text_read_from_the_picture_is_searched(tmp_path):
    im = Image.new("RGB", (900, 160), "white")
    ImageDraw.Draw(im).text((30, 40), "INVOICE 2291 TOTAL 48.20", fill="black", font=ImageFont.load_default(size=56))
    buf = io.BytesIO()
    im.save(buf, "PNG")
    path = tmp_path / "receipt.png"
    path.write_bytes(buf.getvalue())
    img = question_image(str(path), None)  # the real OCR
    assert img is not None and "INVOICE" in img.caption.upper() and "48" in img.caption
    assert question_image(str(path), "my receipt").caption == "my receipt"  # a caption wins over OCR


def test_a_missing_or_textless_picture_is_a_clear_error(tmp_path):
    with pytest.raises(InputError, match="no such image file"):
        question_image(str(tmp_path / "none.png"), None)
    blank = tmp_path / "blank.png"
    Image.new("RGB", (64, 64), "white").save(blank)
    with pytest.raises(InputError, match="give --image-caption"):
        question_image(str(blank), None)
