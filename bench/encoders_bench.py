"""Encoder throughput on this machine (prints figures; asserts nothing).

    cd /work/main && OMP_NUM_THREADS=1 .venv/bin/python bench/encoders_bench.py [--quick]

Measures, each after one warm-up call, on ONE thread (torch and onnxruntime):
- MiniLM (all-MiniLM-L6-v2) texts/s at batch size 64, on dialogue-length texts;
- rapidocr seconds per screenshot (a 1280x800 dashboard and a 720x1280 phone screen);
- descriptor-v1 images/s on 640x480 PNGs.
"""
from __future__ import annotations

import argparse
import io
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402
from PIL import Image, ImageDraw, ImageFont  # noqa: E402

from core.encoders import DescriptorImageEncoder, MiniLMEncoder, RapidOcr, load_minilm  # noqa: E402


def _font(size: int):
    try:
        return ImageFont.truetype("DejaVuSans.ttf", size)
    except OSError:
        return ImageFont.load_default(size=size)


def _png(img: Image.Image) -> bytes:
    buf = io.BytesIO()
    img.save(buf, "PNG")
    return buf.getvalue()


def _texts(n: int) -> list[str]:
    rng = np.random.default_rng(0)
    words = ("today I went running with my sister and we talked about the new job the weather was "
             "great my blood pressure was 128 over 84 after lunch we visited the museum downtown").split()
    return [" ".join(rng.choice(words, size=int(rng.integers(12, 40)))) for _ in range(n)]


def _dashboard(w: int, h: int, seed: int) -> bytes:
    rng = np.random.default_rng(seed)
    img = Image.new("RGB", (w, h), (245, 247, 250))
    d = ImageDraw.Draw(img)
    y = 20
    while y < h - 60:
        x = 20
        while x < w - 200:
            d.rectangle([x, y, x + 180, y + 90], fill="white", outline=(210, 210, 210))
            d.text((x + 10, y + 10), f"Metric {int(rng.integers(1, 99))}", fill=(90, 90, 90), font=_font(16))
            d.text((x + 10, y + 40), f"{rng.integers(10, 9999):,} {rng.choice(['kg', 'bpm', 'km', 'h'])}",
                   fill="black", font=_font(26))
            x += 200
        y += 110
    return _png(img)


def _photo(seed: int) -> bytes:
    rng = np.random.default_rng(seed)
    img = Image.new("RGB", (640, 480), tuple(int(v) for v in rng.integers(0, 256, 3)))
    d = ImageDraw.Draw(img)
    for _ in range(20):
        x0, y0 = int(rng.integers(0, 640)), int(rng.integers(0, 480))
        d.ellipse([x0, y0, x0 + int(rng.integers(20, 200)), y0 + int(rng.integers(20, 200))],
                  fill=tuple(int(v) for v in rng.integers(0, 256, 3)))
    return _png(img)


def bench_minilm(n: int) -> None:
    import torch

    torch.set_num_threads(1)
    t = time.perf_counter()
    enc = MiniLMEncoder(load_minilm())
    load_s = time.perf_counter() - t
    texts = _texts(n)
    enc.encode(texts[:64])  # warm-up
    t = time.perf_counter()
    enc.encode(texts)
    s = time.perf_counter() - t
    print(f"MiniLM all-MiniLM-L6-v2: load {load_s:.1f} s; {n} texts (12-40 words) in {s:.2f} s "
          f"= {n / s:.0f} texts/s (batch 64, 1 thread)")


def bench_ocr(reps: int) -> None:
    ocr = RapidOcr()
    shots = {"dashboard 1280x800": _dashboard(1280, 800, 1), "phone 720x1280": _dashboard(720, 1280, 2)}
    t = time.perf_counter()
    ocr.read(shots["dashboard 1280x800"])  # warm-up, includes model loading
    print(f"rapidocr: first call (loads models) {time.perf_counter() - t:.2f} s")
    for label, data in shots.items():
        times, n_lines = [], 0
        for _ in range(reps):
            t = time.perf_counter()
            n_lines = len(ocr.read(data).lines)
            times.append(time.perf_counter() - t)
        print(f"rapidocr {label}: {np.median(times):.2f} s per screenshot (median of {reps}, {n_lines} boxes, 1 thread)")


def bench_descriptor(n: int) -> None:
    enc = DescriptorImageEncoder()
    images = [_photo(i) for i in range(n)]
    enc.encode_images(images[:2])
    t = time.perf_counter()
    enc.encode_images(images)
    s = time.perf_counter() - t
    print(f"descriptor-v1: {n} PNGs 640x480 in {s:.2f} s = {n / s:.0f} images/s (decode included)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="fewer repetitions (a shared machine)")
    args = ap.parse_args()
    bench_minilm(128 if args.quick else 512)
    bench_ocr(1 if args.quick else 3)
    bench_descriptor(20 if args.quick else 100)


if __name__ == "__main__":
    main()
