"""Synthetic histories of any length for the benchmarks, made by tiling the bundled demo history.

Copy c of the demo (259 rounds over three months) is shifted by c x 91 days and
gets ids prefixed "C<c>." ; the numbers in its texts are shifted by a copy-dependent
amount and number-free texts get a copy-dependent opener, so most texts differ from
copy to copy (the embedding cache cannot hide the encoder's cost). With
`images=True` screenshots keep their bytes, one pixel changed per copy, so
each copy's images are OCR'd again; with images=False rounds carry no images.

Also HashTextEncoder: a deterministic 384-d bag-of-hashed-words encoder for
building large base memories quickly (growth and page benchmarks).
"""
from __future__ import annotations

import hashlib
import io
import re
import sys
from dataclasses import replace
from datetime import timedelta
from functools import lru_cache
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from core.model import History, ImageRef, Round, Session, Utterance  # noqa: E402

DEMO = ROOT / "data" / "demo" / "demo.json"
SHIFT_DAYS = 91
_OPENERS = ["", "Quick note: ", "By the way, ", "Also, ", "Hey, ", "Update: ", "So, ", "Okay, ", "Right, ",
            "Hmm, ", "Well, ", "Anyway, ", "Oh, ", "Listen, ", "Today: ", "FYI: ", "Small thing: ", "Note: "]
_NUM = re.compile(r"\d+")


@lru_cache(maxsize=1)
def demo_history() -> History:
    from core.formats import read_file

    return read_file(DEMO)[0]


def _vary(text: str, c: int) -> str:
    if c == 0:
        return text
    if _NUM.search(text):
        # small copy-dependent shifts keep values plausible (a sleep score stays a sleep score)
        return _NUM.sub(lambda m: str(int(m.group(0)) + (c % 5)) if len(m.group(0)) <= 3 else m.group(0), text)
    return _OPENERS[c % len(_OPENERS)] + text if c % len(_OPENERS) else text + f" ({c})"


def _png_variant(data: bytes, c: int) -> bytes:
    from PIL import Image

    if c == 0:
        return data
    img = Image.open(io.BytesIO(data)).convert("RGB")
    px = img.load()
    r, g, b = px[0, 0]
    px[0, 0] = ((r + c) % 256, (g + 7 * c) % 256, (b + 13 * c) % 256)
    out = io.BytesIO()
    img.save(out, format="PNG")
    return out.getvalue()


def synthetic_history(n_rounds: int, *, images: bool = False, first_copy: int = 0, name: str = "synthetic",
                      skip: int = 0) -> History:
    """`n_rounds` rounds (after skipping the first `skip`) of tiled demo copies, in time order.

    Raises ValueError for n_rounds < 1.
    """
    if n_rounds < 1:
        raise ValueError(f"n_rounds must be >= 1, got {n_rounds}")
    demo = demo_history()
    per_copy = sum(len(s.rounds) for s in demo.sessions)
    sessions: list[Session] = []
    need = n_rounds + skip
    seen = 0
    c = first_copy
    while seen < need:
        shift = timedelta(days=SHIFT_DAYS * c)
        for s in demo.sessions:
            if seen >= need:
                break
            sid = f"C{c}.{s.session_id}"
            rounds = []
            for r in s.rounds:
                if seen >= need:
                    break
                seen += 1
                if seen <= skip:
                    continue
                imgs = ()
                if images:
                    imgs = tuple(
                        replace(i, image_id=f"C{c}.{i.image_id}", path=None,
                                data=_png_variant(i.data, c) if i.data else None,
                                sha256=hashlib.sha256(_png_variant(i.data, c)).hexdigest() if i.data else None)
                        for i in r.images)
                rounds.append(Round(
                    round_id=f"C{c}.{r.round_id}", session_id=sid, time=r.time + shift,
                    dialogue=tuple(Utterance(u.speaker, _vary(u.text, c)) for u in r.dialogue),
                    images=imgs, index_in_session=r.index_in_session,
                ))
            if rounds:
                date = s.date + shift if s.date else None
                sessions.append(Session(sid, date, tuple(rounds)))
        c += 1
        if c - first_copy > need // max(per_copy, 1) + 2:
            break
    return History(source=f"{name}.json", format="memeye", sessions=tuple(sessions), qas=(), profile="")


class HashTextEncoder:
    """Deterministic bag of hashed words, 384-d like MiniLM: no model, ~50 us per text."""

    name = "bench-hash-384"
    dim = 384

    def __init__(self) -> None:
        self._words: dict[str, np.ndarray] = {}

    def _w(self, w: str) -> np.ndarray:
        v = self._words.get(w)
        if v is None:
            seed = int.from_bytes(hashlib.sha256(w.encode()).digest()[:8], "little")
            v = self._words[w] = np.random.default_rng(seed).standard_normal(self.dim).astype(np.float32)
        return v

    def encode(self, texts) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            for w in re.findall(r"[a-z0-9]+", t.lower()):
                out[i] += self._w(w)
            n = float(np.linalg.norm(out[i]))
            out[i] = out[i] / n if n else self._w("<empty>") / float(np.linalg.norm(self._w("<empty>")))
        return out
