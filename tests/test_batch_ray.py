"""Batch runs on a real Ray: a local 2-worker instance started and stopped by the command, and a
two-node cluster (two `ray start` processes on this machine) joined with --ray-address. The real
MiniLM and OCR in every worker; results compared with the serial run of the same files (timings
aside, which are the only fields allowed to differ)."""
from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

pytestmark = pytest.mark.slow
ray = pytest.importorskip("ray", reason="Ray is not installed (`make test` installs requirements-ray.txt)")

from core.__main__ import main  # noqa: E402
from core.errors import InputError  # noqa: E402
from core.evaluation.runner import untimed  # noqa: E402
from history_factory import write_health_history  # noqa: E402

QAS = [{"point": "FR", "question": "What was my average sleep score?", "answer": "77", "clue": ["S1:R1"]},
       {"point": "FR", "question": "How far did I run in total?", "answer": "20 km", "clue": ["S1:R2"]},
       {"point": "FR", "question": "Where did we go for dinner?", "answer": "the new Thai place",
        "clue": ["S1:R4"]},
       {"point": "AR", "question": "What is my cat's name?", "answer": "Not mentioned", "clue": []}]
# tables whose rows record when they were written, not what was built
WHEN = {"runs", "schema_version", "field_events", "meta", "llm_cache"}


def ray_processes() -> list[str]:
    """Ray's own processes still running on this machine (none once a run has cleaned up). A process
    that has exited and waits only to be reaped by its parent (`<defunct>`) is not running."""
    out = subprocess.run(["pgrep", "-fa", "raylet|gcs_server|ray::"], capture_output=True, text=True).stdout
    return [ln for ln in out.splitlines() if "pgrep" not in ln and "<defunct>" not in ln]


def ray_processes_after_exit(deadline_s: float = 20.0) -> list[str]:
    """Ray's processes still running once each had until `deadline_s` to exit (a worker ends shortly
    after the shutdown that told it to): waits on each process's exit (pidfd), not on a clock."""
    import select
    import time

    end = time.monotonic() + deadline_s
    for line in ray_processes():
        try:
            fd = os.pidfd_open(int(line.split()[0]))
        except (ProcessLookupError, ValueError):
            continue  # already gone
        try:
            select.select([fd], [], [], max(0.0, end - time.monotonic()))  # readable when it exits
        finally:
            os.close(fd)
    return ray_processes()


def results(out: Path) -> dict:
    """Every file's predictions and summary, and the pooled summary, untimed."""
    got = {"pooled": untimed(json.loads((out / "summary.json").read_text()))}
    for sub in sorted(p for p in out.iterdir() if p.is_dir()):
        got[sub.name] = {"summary": untimed(json.loads((sub / "summary.json").read_text())),
                         "predictions": [untimed(json.loads(ln)) for ln in
                                         (sub / "predictions.jsonl").read_text().splitlines()]}
    return got


def memory_rows(path: Path) -> dict:
    """Every row of every table of a memory file but the tables that record times."""
    con = duckdb.connect(str(path), read_only=True)
    try:
        tables = [t for (t,) in con.execute("SELECT table_name FROM information_schema.tables").fetchall()
                  if t not in WHEN]
        return {t: con.execute(f'SELECT * FROM "{t}" ORDER BY ALL').fetchall() for t in sorted(tables)}
    finally:
        con.close()


@pytest.fixture(scope="module")
def histories(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("histories")
    for i, name in enumerate(("a", "b", "c")):
        p = write_health_history(folder, n_sessions=5, rounds_per_session=4, seed=i + 1)
        doc = json.loads(p.read_text())
        doc["human-annotated QAs"] = QAS
        p.unlink()
        (folder / f"{name}.json").write_text(json.dumps(doc))
    return folder


@pytest.fixture(scope="module")
def serial(histories, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("serial")
    assert main(["eval", str(histories), "--out", str(out), "--quiet"]) == 0
    return out


@pytest.fixture
def no_ray_left():
    assert not ray_processes(), "a Ray instance was already running"
    yield
    if ray.is_initialized():
        ray.shutdown()
    left = ray_processes_after_exit()
    if left:
        subprocess.run([shutil.which("ray") or str(Path(sys.executable).parent / "ray"), "stop", "--force"],
                       capture_output=True)
    assert not left, f"Ray processes left behind: {left}"


def test_two_local_workers_give_the_serial_results_and_stop_their_ray(histories, serial, tmp_path, capsys,
                                                                      no_ray_left):
    out = tmp_path / "ray"
    assert main(["eval", str(histories), "--out", str(out), "--workers", "2"]) == 0
    err = capsys.readouterr().err
    assert "starting 2 worker(s) on a local Ray instance" in err and "3/3" in err
    assert not ray.is_initialized()
    got, want = results(out), results(serial)
    assert set(got) == {"pooled", "a", "b", "c"}
    assert got == want  # same predictions, evidence, plans and summaries, per file and pooled
    assert want["pooled"]["n"] == 12 and want["pooled"]["files_done"] == 3
    # a rerun reuses every file
    assert main(["eval", str(histories), "--out", str(out), "--workers", "2", "--quiet"]) == 0
    capsys.readouterr()
    assert [ln["status"] for ln in json.loads((out / "summary.json").read_text())["files"]] == ["reused"] * 3


def test_two_local_workers_build_the_memories_a_serial_build_makes(histories, tmp_path, capsys, no_ray_left):
    assert main(["build", str(histories), "--store-dir", str(tmp_path / "one"), "--quiet"]) == 0
    assert main(["build", str(histories), "--store-dir", str(tmp_path / "two"), "--workers", "2", "--quiet"]) == 0
    capsys.readouterr()
    schemas = 0
    for name in ("a", "b", "c"):
        want, got = memory_rows(tmp_path / "one" / f"{name}.duckdb"), memory_rows(tmp_path / "two" / f"{name}.duckdb")
        assert len(want["rounds"]) == 20 and want == got
        schemas += len(want["schemas"])
    assert schemas > 0  # the comparison covers analytic tables, not only rounds


def test_workers_load_their_models_once_and_a_dead_worker_fails_only_its_file(histories, tmp_path, no_ray_left):
    from core.batch import RayPool
    from core.evaluation.runner import EvalSettings, FileTask

    files = sorted(histories.glob("*.json"))
    tasks = [FileTask(k, p, tmp_path / p.stem, {}) for k, p in enumerate(files, start=1)]
    killed = []

    def on_dispatch(task, worker):
        if task.path.name == "b.json":  # as if the machine ran out of memory under this file
            ray.kill(pool.actors[worker])
            killed.append(worker)

    with RayPool(2, on_dispatch=on_dispatch) as pool:
        outcomes = {oc.task.path.name: oc for oc in pool.evaluate(EvalSettings(), tasks)}
        info = pool.worker_info()
        assert pool.replaced == 1
    assert outcomes["a.json"].status == outcomes["c.json"].status == "done"
    assert outcomes["b.json"].status == "failed" and outcomes["b.json"].error.startswith("worker died")
    assert len(killed) == 1 and len({w["pid"] for w in info}) == 2
    # the two files done went to live workers; a worker that got a file loaded its models for it
    assert sum(w["files"] for w in info) == 2 and all(w["peak_rss_mib"] > 100 for w in info if w["files"])
    assert outcomes["a.json"].summary["n"] == 4


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def cluster(no_ray_left):
    """A head and a second node, one CPU each, both on loopback; stopped after the test."""
    ray_cli = str(Path(sys.executable).parent / "ray")
    env = {**os.environ, "RAY_AUTH_MODE": "token"}
    port = _free_port()
    address = f"127.0.0.1:{port}"
    common = ["--node-ip-address", "127.0.0.1", "--num-cpus", "1", "--disable-usage-stats"]
    try:
        subprocess.run([ray_cli, "start", "--head", "--port", str(port), "--include-dashboard", "false", *common],
                       check=True, capture_output=True, env=env, timeout=120)
        subprocess.run([ray_cli, "start", "--address", address, *common],
                       check=True, capture_output=True, env=env, timeout=120)
        yield address, env
    finally:
        subprocess.run([ray_cli, "stop", "--force"], capture_output=True, env=env, timeout=120)


def test_a_two_node_cluster_runs_the_eval_on_both_nodes(histories, serial, tmp_path, cluster, monkeypatch,
                                                         capsys):
    from core.batch import RayPool

    address, env = cluster
    monkeypatch.setenv("RAY_AUTH_MODE", "token")
    with RayPool(None, address) as pool:  # one worker per CPU of the cluster
        nodes = {w["node_id"] for w in pool.worker_info()}
    assert len(nodes) == 2
    with pytest.raises(InputError, match="has 2 CPU"):  # a third worker would never start
        RayPool(3, address).__enter__()
    assert not ray.is_initialized()
    out = tmp_path / "cluster"
    assert main(["eval", str(histories), "--out", str(out), "--ray-address", address]) == 0
    assert "on the Ray cluster at " + address in capsys.readouterr().err
    assert results(out) == results(serial)
    assert len(ray_processes()) > 0  # the cluster outlives the job; the fixture stops it
