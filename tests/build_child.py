"""A build in a child process, with the deterministic fakes, for crash-safety tests.

usage: python tests/build_child.py STORE INPUT.json
Prints one line per progress event (flushed) so the parent can SIGKILL it at a chosen point.
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from conftest import FakeImageEncoder, FakeOCR, HashEmbedder  # noqa: E402

from core.build import BuildDeps, build  # noqa: E402
from core.config import DEFAULT  # noqa: E402
from core.extract import RuleExtractor  # noqa: E402
from core.formats import read_file  # noqa: E402
from core.store import Store  # noqa: E402


def deps() -> BuildDeps:
    return BuildDeps(text_encoder=HashEmbedder(), image_encoder=FakeImageEncoder(), ocr=FakeOCR(),
                     extractor=RuleExtractor(DEFAULT))


def main(store_path: str, input_path: str) -> None:
    histories = read_file(input_path) if input_path != "-" else []

    def progress(stage, done, total):
        print(f"{stage} {done}/{total}", flush=True)

    with Store(store_path) as store:
        build(store, histories, deps(), DEFAULT, progress=progress)
    print("done", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
