"""The build pipeline end to end with the fakes: incremental, idempotent, crash-safe (SIGKILL)."""
from __future__ import annotations

import json
import signal
import subprocess
import sys

import pytest

from build_child import deps
from history_factory import write_health_history

from core.build import build
from core.config import DEFAULT
from core.formats import read_file
from core.store import Store

CHILD = [sys.executable, str(__import__("pathlib").Path(__file__).with_name("build_child.py"))]


def snapshot(path) -> dict:
    """Everything a build produces, in a form two builds can be compared by."""
    with Store(path) as s:
        q = lambda sql: s.con.execute(sql).fetchall()  # noqa: E731
        tables = {t for (t,) in q("SELECT table_name FROM memory_tables")} if q("SELECT count(*) FROM schemas")[0][0] else set()
        out = {
            "rounds": q("SELECT round_id, round_order, processed FROM rounds ORDER BY round_order"),
            "observations": q("SELECT round_id, seq, attribute, raw_value, number FROM observations ORDER BY 1, 2"),
            "schemas": q("SELECT schema_id, attributes, table_name FROM schemas ORDER BY 1"),
            "nodes": q("SELECT node_id, level, parent_id, n_members, first_order, last_order FROM nodes ORDER BY 1"),
            "events": q("SELECT round_order, kind, pattern, schema_id FROM induction_events ORDER BY 1, 2, 3"),
        }
        for t in sorted(tables):
            out[f"table:{t}"] = q(f'SELECT * EXCLUDE (time) FROM "{t}" ORDER BY round_order')
    return json.loads(json.dumps(out, default=str))


def test_build_discovers_tables_and_second_run_adds_nothing(tmp_path):
    src = write_health_history(tmp_path)
    store_path = tmp_path / "m.duckdb"
    with Store(store_path) as s:
        r1 = build(s, read_file(src), deps(), DEFAULT)
        r2 = build(s, read_file(src), deps(), DEFAULT)
    assert r1.rounds == 24 and r1.rounds_added == 24
    assert r2.rounds_added == 0 and r2.changed_rounds == ()
    assert r1.schemas >= 1
    snap = snapshot(store_path)
    assert all(p for _, _, p in snap["rounds"])
    assert any("sleep" in name for _, _, name in snap["schemas"])


def test_building_in_two_halves_equals_building_at_once(tmp_path):
    a = write_health_history(tmp_path / "a" if (tmp_path / "a").mkdir() is None else None)
    whole = read_file(a)[0]
    half = len(whole.sessions) // 2
    first = whole.__class__(whole.source, whole.format, whole.sessions[:half], whole.qas)
    second = whole.__class__(whole.source, whole.format, whole.sessions[half:], whole.qas)
    with Store(tmp_path / "once.duckdb") as s:
        build(s, [whole], deps(), DEFAULT)
    with Store(tmp_path / "halves.duckdb") as s:
        build(s, [first], deps(), DEFAULT)
    with Store(tmp_path / "halves.duckdb") as s:  # reopened: state comes from the file
        build(s, [second], deps(), DEFAULT)
    assert snapshot(tmp_path / "halves.duckdb") == snapshot(tmp_path / "once.duckdb")


@pytest.mark.timeout(300)
@pytest.mark.parametrize("kill_after", [3, 9, 17])
def test_sigkill_mid_build_leaves_usable_store_and_rerun_completes(tmp_path, kill_after):
    src = write_health_history(tmp_path)
    clean = tmp_path / "clean.duckdb"
    subprocess.run(CHILD + [str(clean), str(src)], check=True, capture_output=True, timeout=240)

    killed = tmp_path / "killed.duckdb"
    proc = subprocess.Popen(CHILD + [str(killed), str(src)], stdout=subprocess.PIPE, text=True)
    seen = 0
    for line in proc.stdout:
        seen += 1
        if seen >= kill_after:
            proc.send_signal(signal.SIGKILL)
            break
    proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    with Store(killed) as s:  # opens, migrations intact, a consistent prefix
        processed = s.con.execute("SELECT count(*) FROM rounds WHERE processed").fetchone()[0]
        assert processed <= 24
    subprocess.run(CHILD + [str(killed), str(src)], check=True, capture_output=True, timeout=240)
    assert snapshot(killed) == snapshot(clean)
