"""Crash safety: SIGKILL a build at many random points; the memory always opens and a rerun completes it.

A seeded RNG picks each kill point over the child's progress lines (tests/build_child.py prints one line
per ingest, embedding and round commit, and the kill lands wherever the child has got to by then, so
points fall inside transactions as well as between them). Kills are chained: a killed build is rerun and
may be killed again, then a final rerun completes it and the memory must equal a clean build
(tests/test_build.py snapshot()). Two scenarios alternate: a fresh memory, and a memory that already holds
the first half of the history (an incremental build). After every kill the memory must open read-write
(migrations intact) and be a consistent prefix: rounds ingested all-or-nothing, processed rounds a prefix
of the round order, and observations, analytic rows and event nodes only for processed rounds.

`kill_campaign` is shared with bench/reliability_report.py, which runs it with more kills.
"""
from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from build_child import deps as child_deps
from history_factory import write_health_history
from test_build import snapshot

from core.build import build
from core.config import DEFAULT
from core.formats import read_file
from core.store import MIGRATIONS, Store

# tests/build_child.py with small commit batches (core.build.ROUNDS_PER_COMMIT, when the build batches
# rounds per transaction), so a 16-round build commits several times and kills land between commits too
CHILD = [sys.executable, "-c",
         "import sys; sys.path[:0] = [sys.argv[1], sys.argv[2]]; import core.build as b; "
         "b.ROUNDS_PER_COMMIT = 3; import build_child; build_child.main(sys.argv[3], sys.argv[4])",
         str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parent.parent)]
N_KILLS = int(os.environ.get("RELIABILITY_KILLS", "20"))
KILLS_PER_CHAIN = 5
ENV = os.environ | {"OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


@dataclass
class Campaign:
    kills: int = 0
    survived: int = 0
    chains: int = 0
    chains_equal_clean: int = 0
    finished_before_kill: int = 0
    lines_at_kill: list[int] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)


def run_child(store: Path, src: Path) -> list[str]:
    """A complete build in a child process; its progress lines."""
    p = subprocess.run(CHILD + [str(store), str(src)], capture_output=True, text=True, timeout=240, env=ENV)
    assert p.returncode == 0, p.stderr[-2000:]
    return p.stdout.splitlines()


def run_and_kill(store: Path, src: Path, kill_after: int) -> tuple[bool, int]:
    """Start a build and SIGKILL it after `kill_after` progress lines; (killed, lines seen)."""
    proc = subprocess.Popen(CHILD + [str(store), str(src)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=ENV)
    seen = 0
    killed = False
    for line in proc.stdout:
        if line.strip() == "done":
            break
        seen += 1
        if seen >= kill_after:
            proc.send_signal(signal.SIGKILL)
            killed = True
            break
    proc.stdout.close()
    err = proc.stderr.read()
    proc.stderr.close()
    proc.wait(timeout=60)
    if killed and proc.returncode == 0:  # it finished between the line and the signal
        killed = False
    if killed:
        assert proc.returncode == -signal.SIGKILL, err[-2000:]
    else:
        assert proc.returncode == 0, err[-2000:]
    return killed, seen


def consistency_faults(path: Path, rounds_before: int, rounds_after: int) -> tuple[list[str], int]:
    """(what is wrong with a memory after a crash, rounds stored but not processed yet).

    No faults means the memory is a consistent committed state.
    """
    faults = []
    with Store(path) as s:  # opens read-write and (re)applies migrations like any later run
        q = lambda sql: s.con.execute(sql).fetchone()[0]  # noqa: E731
        if s.schema_version() != MIGRATIONS[-1][0]:
            faults.append(f"schema version {s.schema_version()}")
        n = q("SELECT count(*) FROM rounds")
        if n not in (rounds_before, rounds_after):
            faults.append(f"{n} rounds: a partial ingest")
        gap = q("SELECT count(*) FROM rounds WHERE processed AND round_order > "
                "(SELECT coalesce(min(round_order), 1e9) FROM rounds WHERE NOT processed)")
        if gap:
            faults.append(f"{gap} processed round(s) after an unprocessed one")
        checks = {
            "observations": "SELECT count(*) FROM observations o JOIN rounds r USING (round_id) WHERE NOT r.processed",
            "event nodes": "SELECT count(*) FROM nodes n JOIN rounds r ON r.round_id = n.round_id "
                           "WHERE n.level = 'event' AND NOT r.processed",
            "orphan observations": "SELECT count(*) FROM observations WHERE round_id NOT IN (SELECT round_id FROM rounds)",
        }
        for what, sql in checks.items():
            if q(sql):
                faults.append(f"{what} of unprocessed rounds")
        if q("SELECT count(*) FROM schemas"):
            for (t,) in s.con.execute("SELECT table_name FROM memory_tables").fetchall():
                ident = '"' + t.replace('"', '""') + '"'
                bad = q(f"SELECT count(*) FROM {ident} a JOIN rounds r ON r.round_id = a.source WHERE NOT r.processed")
                if bad:
                    faults.append(f"{bad} row(s) of {t} for unprocessed rounds")
        pending = q("SELECT count(*) FROM rounds WHERE NOT processed")
        if n == rounds_before:  # killed before the ingest committed: the rerun ingests again
            pending += rounds_after - rounds_before
    return faults, pending


def write_sources(folder: Path) -> tuple[Path, Path]:
    """(full history, its first half as another file): 16 rounds, 8 in the half."""
    folder.mkdir(parents=True, exist_ok=True)
    full = write_health_history(folder, n_sessions=4, rounds_per_session=4)
    doc = json.loads(full.read_text())
    doc["multi_session_dialogues"] = doc["multi_session_dialogues"][:2]
    half = folder / "half.json"
    half.write_text(json.dumps(doc))
    return full, half


def kill_campaign(folder: Path, n_kills: int, seed: int = 10, per_chain: int = KILLS_PER_CHAIN) -> Campaign:
    """Kill builds `n_kills` times (chains of up to `per_chain` kills, each finished by a clean rerun)."""
    rng = random.Random(seed)
    full, half = write_sources(folder / "src")
    # the clean builds run in this process with the child's fakes and the default commit batches
    clean_fresh, clean_incr = folder / "clean_fresh.duckdb", folder / "clean_incr.duckdb"
    with Store(clean_fresh) as s:
        build(s, read_file(full), child_deps(), DEFAULT)
    base = folder / "base_half.duckdb"
    with Store(base) as s:
        build(s, read_file(half), child_deps(), DEFAULT)
    rounds_half = 8
    shutil.copyfile(base, clean_incr)
    with Store(clean_incr) as s:
        build(s, read_file(full), child_deps(), DEFAULT)
    lines_fresh, lines_incr = 2 + 16, 2 + 8  # store, embed, one line per round
    expected = {"fresh": snapshot(clean_fresh), "incremental": snapshot(clean_incr)}
    c = Campaign()
    while c.kills < n_kills:
        scenario = ("fresh", "incremental")[c.chains % 2]
        store = folder / f"chain{c.chains}.duckdb"
        if scenario == "incremental":
            shutil.copyfile(base, store)
            before, lines = rounds_half, lines_incr
        else:
            before, lines = 0, lines_fresh
        c.chains += 1
        for _ in range(min(per_chain, n_kills - c.kills)):
            kill_after = rng.randint(1, max(1, lines))
            killed, seen = run_and_kill(store, full, kill_after)
            if not killed:
                c.finished_before_kill += 1
                break
            c.kills += 1
            c.lines_at_kill.append(seen)
            faults, pending = consistency_faults(store, before, 16)
            lines = 2 + pending  # the rerun prints: store, embed, one line per pending round
            if faults:
                c.failures.append(f"{scenario} chain {c.chains}, kill after {seen} line(s): {'; '.join(faults)}")
            else:
                c.survived += 1
        run_child(store, full)
        if snapshot(store) == expected[scenario]:
            c.chains_equal_clean += 1
        else:
            c.failures.append(f"{scenario} chain {c.chains}: the completed memory differs from a clean build")
    return c


@pytest.mark.timeout(600)
def test_random_sigkills_never_corrupt_and_reruns_equal_a_clean_build(tmp_path):
    c = kill_campaign(tmp_path, N_KILLS)
    assert not c.failures, "\n".join(c.failures)
    assert c.kills >= N_KILLS and c.survived == c.kills
    assert c.chains_equal_clean == c.chains
    # the points are spread over the build, not bunched at its start
    assert len(set(c.lines_at_kill)) >= min(8, N_KILLS // 2), c.lines_at_kill
