"""Rendering of record images (screens, receipts, displays) and no-record photos, deterministic.

Every text drawn is at least 16 px high (the engine OCRs with rapidocr), in a fixed
DejaVu font (Pillow's bundled default when DejaVu is absent). PNGs carry no timestamp.
"""
from __future__ import annotations

import io
import random
from functools import lru_cache
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

DEJAVU = Path("/usr/share/fonts/truetype/dejavu")

THEMES = {
    "light": {"bg": (247, 247, 244), "card": (255, 255, 255), "fg": (22, 24, 30), "muted": (78, 84, 98),
              "line": (205, 210, 218), "accent": (36, 110, 90)},
    "dark": {"bg": (18, 20, 28), "card": (36, 40, 54), "fg": (244, 245, 248), "muted": (190, 196, 208),
             "line": (70, 76, 94), "accent": (120, 200, 170)},
}
LAYOUTS = ("left", "above", "cards", "table")  # screens and displays; receipts are "receipt"


@lru_cache(maxsize=None)
def font(size: int, mono: bool = False, bold: bool = False) -> ImageFont.ImageFont:
    size = max(16, int(size))
    name = ("DejaVuSansMono" if mono else "DejaVuSans") + ("-Bold" if bold else "") + ".ttf"
    path = DEJAVU / name
    if path.exists():
        return ImageFont.truetype(str(path), size)
    return ImageFont.load_default(size=size)


def png_bytes(img: Image.Image) -> bytes:
    buf = io.BytesIO()
    img.save(buf, format="PNG", compress_level=6)  # Pillow writes no tIME chunk unless asked
    return buf.getvalue()


def _w(draw: ImageDraw.ImageDraw, text: str, f) -> int:
    return int(draw.textlength(text, font=f))


def render_record(rng: random.Random, title: str, rows: list[tuple[str, str]], extras: list[str],
                  layout: str, theme: str, width: int) -> tuple[bytes, list[str]]:
    """A record image: `rows` of (label as printed, value as printed); `extras` are lines such as
    an identifier or a date. Returns the PNG and the text lines drawn (for the truth)."""
    t = THEMES[theme]
    drawn: list[str] = [title]
    probe = ImageDraw.Draw(Image.new("RGB", (10, 10)))
    ft, fl, fv, fs = font(24, bold=True), font(19), font(30, bold=True), font(17)
    pad = 22
    if layout == "receipt":
        return _receipt(title, rows, extras, width)
    # size needed
    if layout == "left":
        need = max(_w(probe, lab, fl) + _w(probe, val, fv) for lab, val in rows) + 3 * pad
        height = 90 + 56 * len(rows)
    elif layout == "above":
        need = max(max(_w(probe, lab, fl), _w(probe, val, fv)) for lab, val in rows) + 2 * pad
        height = 90 + 82 * len(rows)
    elif layout == "cards":
        colw = max(max(_w(probe, lab, fl), _w(probe, val, font(34, bold=True))) for lab, val in rows) + 2 * pad
        need = 2 * colw + 3 * pad // 2
        height = 90 + 100 * ((len(rows) + 1) // 2)
    else:  # table: a header row of labels, one row of values
        colws = [max(_w(probe, lab, fl), _w(probe, val, font(22, bold=True))) + 26 for lab, val in rows]
        need = sum(colws) + 2 * pad
        height = 90 + 110
    width = max(width, need + 10)
    height += 34 * len(extras) + 20
    img = Image.new("RGB", (width, height), t["bg"])
    d = ImageDraw.Draw(img)
    d.text((pad, 18), title, fill=t["accent"], font=ft)
    y = 68
    if layout == "left":
        for lab, val in rows:
            d.rounded_rectangle((pad - 8, y - 6, width - pad + 8, y + 46), radius=8, fill=t["card"])
            d.text((pad, y + 8), lab, fill=t["muted"], font=fl)
            d.text((width - pad - _w(d, val, fv), y + 2), val, fill=t["fg"], font=fv)
            y += 56
    elif layout == "above":
        for lab, val in rows:
            d.text((pad, y), lab, fill=t["muted"], font=fl)
            d.text((pad, y + 28), val, fill=t["fg"], font=fv)
            d.line((pad, y + 74, width - pad, y + 74), fill=t["line"], width=1)
            y += 82
    elif layout == "cards":
        fb = font(34, bold=True)
        colw = (width - 3 * pad // 2) // 2
        for i, (lab, val) in enumerate(rows):
            x = pad // 2 + (i % 2) * (colw + pad // 2)
            yy = y + (i // 2) * 100
            d.rounded_rectangle((x, yy, x + colw - 4, yy + 90), radius=10, fill=t["card"])
            d.text((x + 14, yy + 8), val, fill=t["fg"], font=fb)
            d.text((x + 14, yy + 56), lab, fill=t["muted"], font=fl)
        y += 100 * ((len(rows) + 1) // 2)
    else:
        fb = font(22, bold=True)
        x = pad
        d.rectangle((pad - 6, y - 4, width - pad + 6, y + 100), fill=t["card"])
        for (lab, val), cw in zip(rows, colws):
            d.text((x, y + 6), lab, fill=t["muted"], font=fl)
            d.text((x, y + 56), val, fill=t["fg"], font=fb)
            x += cw
        d.line((pad - 6, y + 44, width - pad + 6, y + 44), fill=t["line"], width=1)
        y += 110
    for lab, val in rows:
        drawn += [lab, val]
    y += 6
    for e in extras:
        d.text((pad, y), e, fill=t["muted"], font=fs)
        drawn.append(e)
        y += 34
    return png_bytes(img), drawn


def _receipt(title: str, rows: list[tuple[str, str]], extras: list[str], width: int) -> tuple[bytes, list[str]]:
    fm, fb = font(18, mono=True), font(22, mono=True, bold=True)
    probe = ImageDraw.Draw(Image.new("RGB", (10, 10)))
    cw = probe.textlength("M", font=fm)
    pad = 20
    cols = max(24, int((width - 2 * pad) // cw))
    lines: list[str] = []
    for lab, val in rows:
        n = max(3, cols - len(lab) - len(val) - 2)
        lines.append(f"{lab} {'.' * n} {val}")
    cols = max(cols, max(len(s) for s in lines + extras + [title]))
    width = max(width, int(cols * cw) + 2 * pad)
    height = 70 + 34 * (len(lines) + len(extras)) + 60
    img = Image.new("RGB", (width, height), (252, 251, 246))
    d = ImageDraw.Draw(img)
    d.text((pad, 18), title, fill=(20, 20, 20), font=fb)
    y = 62
    for e in extras:
        d.text((pad, y), e, fill=(60, 60, 60), font=fm)
        y += 34
    d.line((pad, y + 2, width - pad, y + 2), fill=(150, 150, 150), width=1)
    y += 12
    for s in lines:
        d.text((pad, y), s, fill=(20, 20, 20), font=fm)
        y += 34
    d.text((pad, y + 10), "THANK YOU", fill=(60, 60, 60), font=fm)
    return png_bytes(img), [title, *extras, *lines, "THANK YOU"]


def render_photo(rng: random.Random, width: int) -> bytes:
    """A wordless 'photo': soft background and a few shapes."""
    h = int(width * rng.uniform(0.6, 0.8))
    base = tuple(rng.randint(60, 200) for _ in range(3))
    img = Image.new("RGB", (width, h), base)
    d = ImageDraw.Draw(img)
    for _ in range(rng.randint(4, 9)):
        c = tuple(min(255, max(0, v + rng.randint(-70, 70))) for v in base)
        x0, y0 = rng.randint(0, width - 40), rng.randint(0, h - 40)
        x1, y1 = x0 + rng.randint(30, width // 2), y0 + rng.randint(30, h // 2)
        (d.ellipse if rng.random() < 0.5 else d.rectangle)((x0, y0, x1, y1), fill=c)
    return png_bytes(img)
