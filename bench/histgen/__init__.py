"""histgen: randomized MemEye-format histories with rendered images and a ground truth.

Bench code, kept apart from the engine: it never imports `core` and its words are its own
(bank.py). One random.Random(seed) drives everything, so a seed gives identical JSON and
identical PNG bytes.

    from bench.histgen import generate
    truth = generate("/tmp/h1", seed=3, domain="aquarium", rounds=80, images=10)
    # /tmp/h1/history.json, /tmp/h1/images/*.png, /tmp/h1/truth.json
"""
from __future__ import annotations

from pathlib import Path

from .bank import BY_NAME, DOMAINS
from .history import Generator, write

DOMAIN_NAMES = tuple(d.name for d in DOMAINS)


def make(seed: int, domain: str | None = None, rounds: int | None = None, images: int | None = None,
         sessions: int | None = None, questions: bool = True) -> tuple[dict, dict, dict[str, bytes]]:
    """(MemEye document, truth, {relative path: PNG bytes}) without touching the disk."""
    if domain is not None and domain not in BY_NAME:
        raise ValueError(f"unknown domain {domain!r}; known: {', '.join(DOMAIN_NAMES)}")
    gen = Generator(seed, domain=domain, rounds=rounds, images=images, sessions=sessions)
    doc, truth, images_ = gen.build()
    if questions:
        from .questions import make_questions

        doc["human-annotated QAs"] = make_questions(gen.rng, doc, truth)
    return doc, truth, images_


def generate(out: str | Path, seed: int, domain: str | None = None, rounds: int | None = None,
             images: int | None = None, sessions: int | None = None, questions: bool = True,
             name: str = "history.json") -> dict:
    """Write history.json, images/ and truth.json into `out`; returns the truth (with "path")."""
    doc, truth, imgs = make(seed, domain, rounds, images, sessions, questions)
    path = write(Path(out), doc, truth, imgs, name=name)
    return {**truth, "path": str(path)}
