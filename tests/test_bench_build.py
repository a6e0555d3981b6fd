"""bench/build_bench.py runs end to end on a small history and its two floors are consistent."""
from __future__ import annotations

import re
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path.insert(0, str(BENCH))

import build_bench  # noqa: E402


def _value(out: str, key: str) -> float:
    m = re.search(rf"^{re.escape(key)}=([0-9.]+)$", out, re.M)
    assert m, f"{key}= missing from:\n{out}"
    return float(m.group(1))


def test_build_bench_prints_both_floors_for_each_mode(capsys, tmp_path):
    build_bench.main(["--rounds", "80", "--runs", "1", "--encoder", "hash",
                      "--compare", "description", "centroid", "--keep", str(tmp_path)])
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith("80 text-only")]
    assert len(rows) == 2, out
    for mode in ("description", "centroid"):
        with_desc = _value(out, f"build_floor_ratio_with_descriptions[{mode}]")
        plain = _value(out, "build_floor_ratio") if mode == "description" else _value(out, f"build_floor_ratio[{mode}]")
        # the second floor adds the descriptions' own embedding time, so its ratio cannot be larger
        assert 0 < with_desc <= plain
    assert (tmp_path / "build_80.duckdb").exists()
