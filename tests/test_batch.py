"""Batch runs without Ray: the file tasks and their executors (core/evaluation/runner.py), one memory
per file (core/build_many.py), sweeps (core/evaluation/sweep.py) and their command line. Fakes for
the encoders (conftest); the real engine on small generated histories. The same runs on a real
local Ray instance and a two-node cluster: tests/test_batch_ray.py."""
from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

import pytest

from core.__main__ import main
from core.batch_work import FileWorker
from core.build_many import BuildSettings, run_builds
from core.config import DEFAULT
from core.errors import InputError
from core.evaluation.runner import FileOutcome, run_eval
from core.evaluation.sweep import POOLED, grid
from core.store import Store
from history_factory import write_health_history
from test_eval_benchmark_runs import QAS, _file, _kw


# ---------------------------------------------------------------- the grid of a sweep

def test_grid_crosses_ablations_with_each_swept_value_and_keeps_single_values_fixed():
    vs = grid(["full", "rag"], ["theta_s=3,5", "theta_a=0.5", "field_alignment=true,false"])
    assert len(vs) == 2 * 2 * 2
    names = [v.name for v in vs]
    assert len(set(names)) == 8 and "rag__theta_s-5__field_alignment-False" in names
    for v in vs:
        assert v.config.theta_a == 0.5  # the fixed value, in every variant
        assert dict(v.params) == {"theta_s": v.config.theta_s, "field_alignment": v.config.field_alignment}
    assert {(v.ablation, v.config.theta_s, v.config.field_alignment) for v in vs} == {
        (a, t, f) for a in ("full", "rag") for t in (3, 5) for f in (True, False)}


def test_grid_names_every_bad_item_at_once():
    with pytest.raises(InputError) as e:
        grid(["full", "full"], ["nope=1,2", "theta_s=3,x", "theta_a=0.5,9", "k_tab=2,2", "max_steps"])
    msg = str(e.value)
    for fault in ("unknown parameter 'nope'", "theta_s takes a int: 'x'", "theta_a=9.0", "k_tab=2,2",
                  "a value is given twice", "max_steps: expected NAME=VALUE", "an ablation is given twice"):
        assert fault in msg, fault


# ---------------------------------------------------------------- the tasks of a multi-file eval

def test_config_changes_are_part_of_a_files_fingerprint(tmp_path, embedder, image_encoder, fake_ocr):
    folder = tmp_path / "in"
    _file(folder, "a.json")
    out = tmp_path / "out"
    kw = _kw(embedder, image_encoder, fake_ocr)
    s1 = run_eval(str(folder), str(out), **kw)
    assert [ln["status"] for ln in s1["files"]] == ["done"]
    assert json.loads((out / "a" / "summary.json").read_text())["input"]["config"] == {}
    again = run_eval(str(folder), str(out), **kw)
    assert [ln["status"] for ln in again["files"]] == ["reused"]
    changed = run_eval(str(folder), str(out), config=DEFAULT.with_(theta_s=2), **kw)
    assert [ln["status"] for ln in changed["files"]] == ["done"]  # other settings: evaluated anew
    assert json.loads((out / "a" / "summary.json").read_text())["input"]["config"] == {"theta_s": 2}


class _Reversed:
    """A pool that finishes files in reverse order and fails one without running it (a worker died)."""

    def __init__(self, inner_kw, fail_name: str):
        self.kw, self.fail, self.seen = inner_kw, fail_name, []

    def evaluate(self, settings, tasks):
        from core.evaluation.runner import evaluate_task, new_run

        run = new_run(settings, tmp=str(Path(tasks[0].out).parent), deps=self.kw["deps"],
                      engine_factory=self.kw["engine_factory"])
        for t in reversed(list(tasks)):
            self.seen.append(t.path.name)
            yield (FileOutcome(t, "failed", error="worker died: gone") if t.path.name == self.fail
                   else evaluate_task(run, t))


def test_outcomes_arriving_in_any_order_are_written_as_they_come_and_pooled_in_file_order(
        tmp_path, embedder, image_encoder, fake_ocr):
    folder = tmp_path / "in"
    for name in ("a.json", "b.json", "c.json"):
        _file(folder, name, qas=QAS[:2])
    out = tmp_path / "out"
    kw = _kw(embedder, image_encoder, fake_ocr)
    pool = _Reversed(kw, "b.json")
    arrived = []

    def on_outcome(oc, k, n):
        # each file's results are on disk when its outcome is reported
        arrived.append((oc.task.path.name, oc.status, k, n, (oc.task.out / "summary.json").exists()))

    s = run_eval(str(folder), str(out), pool=pool, on_outcome=on_outcome, **kw)
    assert pool.seen == ["c.json", "b.json", "a.json"]
    assert arrived == [("c.json", "done", 1, 3, True), ("b.json", "failed", 2, 3, False),
                       ("a.json", "done", 3, 3, True)]
    assert [ln["name"] for ln in s["files"]] == ["a", "b", "c"]
    assert [ln["status"] for ln in s["files"]] == ["done", "failed", "done"]
    assert s["files"][1]["error"] == "worker died: gone" and s["n"] == 4
    # the rerun gives the pool only the file that failed
    pool2 = _Reversed(kw, "none")
    s2 = run_eval(str(folder), str(out), pool=pool2, **kw)
    assert pool2.seen == ["b.json"]
    assert [ln["status"] for ln in s2["files"]] == ["reused", "done", "reused"] and s2["n"] == 6


def test_a_pool_gives_a_single_file_the_multi_file_layout(tmp_path, embedder, image_encoder, fake_ocr):
    f = _file(tmp_path / "in", "one.json", qas=QAS[:1])
    kw = _kw(embedder, image_encoder, fake_ocr)
    s = run_eval(str(f), str(tmp_path / "out"), pool=_Reversed(kw, "none"), **kw)
    assert s["files_done"] == 1 and (tmp_path / "out" / "one" / "predictions.jsonl").exists()


# ---------------------------------------------------------------- one memory per file

def _models(embedder, image_encoder, fake_ocr) -> dict:
    return {"text_encoder": embedder, "image_encoder": image_encoder, "ocr": fake_ocr}


class _FakeWorker(FileWorker):
    """A FileWorker whose models are the conftest fakes (loaded once, as a real worker's are)."""

    def __init__(self, models):
        super().__init__()
        self._models = models


def _histories(folder: Path, names=("a", "b", "c")) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i, name in enumerate(names):
        p = write_health_history(folder, n_sessions=3, rounds_per_session=4, seed=i + 1)
        paths.append(p.rename(folder / f"{name}.json"))
    return paths


def test_build_many_makes_one_memory_per_file_skips_on_rerun_and_reports_a_bad_file(
        tmp_path, embedder, image_encoder, fake_ocr):
    files = _histories(tmp_path / "in")
    (tmp_path / "in" / "broken.json").write_text('{"multi_session_dialogues": 3}')
    files.append(tmp_path / "in" / "broken.json")
    worker = _FakeWorker(_models(embedder, image_encoder, fake_ocr))
    settings = BuildSettings()
    out = tmp_path / "mem"
    execute = lambda ts: (worker.build(settings, t) for t in ts)  # noqa: E731
    outcomes = run_builds(settings, files, out, execute=execute)
    assert [o.status for o in outcomes] == ["built", "built", "built", "failed"]
    assert "broken.json" in outcomes[3].error
    assert sorted(p.name for p in out.iterdir()) == [
        "a.build.json", "a.duckdb", "b.build.json", "b.duckdb", "c.build.json", "c.duckdb"]  # no part file
    for name in ("a", "b", "c"):
        with Store(str(out / f"{name}.duckdb")) as store:
            assert store.con.execute("SELECT count(*) FROM rounds").fetchone()[0] == 12
        side = json.loads((out / f"{name}.build.json").read_text())
        assert side["report"]["rounds"] == 12 and side["input"]["path"].endswith(f"{name}.json")
    # a rerun builds nothing that is done; a changed file and other settings are built again
    assert [o.status for o in run_builds(settings, files, out, execute=execute)] == [
        "skipped", "skipped", "skipped", "failed"]
    doc = json.loads(files[1].read_text())
    doc["multi_session_dialogues"] = doc["multi_session_dialogues"][:2]
    files[1].write_text(json.dumps(doc))
    assert [o.status for o in run_builds(settings, files[:3], out, execute=execute)] == [
        "skipped", "built", "skipped"]
    with Store(str(out / "b.duckdb")) as store:
        assert store.con.execute("SELECT count(*) FROM rounds").fetchone()[0] == 8
    other = BuildSettings(config=DEFAULT.with_(theta_s=2))
    assert [o.status for o in run_builds(other, files[:1], out, execute=execute)] == ["built"]
    assert worker.info()["files"] == 4 + 1 + 1 + 1 and worker.info()["node_id"] is None


def test_cli_build_store_dir_serial(tmp_path, monkeypatch, capsys, embedder, image_encoder, fake_ocr):
    import core.batch_work as batch_work

    _histories(tmp_path / "in", names=("x", "y"))
    models = _models(embedder, image_encoder, fake_ocr)
    monkeypatch.setattr(batch_work.FileWorker, "models", lambda self: models)
    rc = main(["build", str(tmp_path / "in"), "--store-dir", str(tmp_path / "mem"), "--quiet"])
    out = capsys.readouterr().out
    assert rc == 0 and "2 file(s): built 2, skipped 0, failed 0" in out
    assert (tmp_path / "mem" / "x.duckdb").is_file() and (tmp_path / "mem" / "y.duckdb").is_file()
    (tmp_path / "in" / "z.json").write_text("[1, 2")
    rc = main(["build", str(tmp_path / "in" / "*.json"), "--store-dir", str(tmp_path / "mem"), "--quiet"])
    cap = capsys.readouterr()
    assert rc == 1 and "built 0, skipped 2, failed 1" in cap.out and "z.json" in cap.err


@pytest.mark.parametrize("argv, fault", [
    (["build", "x.json", "--store", "m.duckdb", "--store-dir", "out"], "not both"),
    (["build", "x.json", "--store", "m.duckdb", "--workers", "2"], "give --store-dir"),
    (["build", "x.json"], "give the memory file"),
    (["eval", "x.json", "--out", "o", "--workers", "2", "--store", "m.duckdb"], "drop --store"),
    (["eval", "x.json", "--out", "o", "--set", "theta_s=3,zz"], "theta_s takes a int"),
    (["eval", "x.json", "--out", "o", "--backend", "local", "--workers", "2"], "no GGUF file"),
    (["eval", "x.json", "--out", "o", "--ray-address", "localhost"], "expected HOST:PORT"),
    (["build", "x.json", "--store-dir", "o", "--ray-address", "127.0.0.1:1"], "no Ray head answers there"),
    (["eval", "x.json", "--out", "o", "--workers", "0"], "at least 1 worker"),
])
def test_cli_batch_arguments_are_checked_before_anything_starts(tmp_path, monkeypatch, capsys, argv, fault):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "x.json").write_text("{}")
    assert main(argv) == 2
    assert fault in capsys.readouterr().err


def test_workers_without_ray_installed_say_how_to_install_it(tmp_path, monkeypatch):
    from core.batch import RayPool

    monkeypatch.setitem(sys.modules, "ray", None)  # import ray now raises ImportError
    with pytest.raises(InputError, match="make ray"):
        with RayPool(2):
            pass
    with pytest.raises(InputError, match="at least 1"):
        RayPool(0)


# ---------------------------------------------------------------- a sweep

def test_a_sweep_writes_one_folder_per_variant_and_one_long_table(tmp_path, monkeypatch, capsys,
                                                                  embedder, image_encoder, fake_ocr):
    import core.evaluation.runner as runner

    folder = tmp_path / "in"
    _file(folder, "a.json")
    _file(folder, "b.json", qas=QAS[:1])
    real = runner.run_eval
    seen = []

    def spy(*a, **k):
        seen.append((k["ablation"], k["config"].theta_s, k["config"].k_tab))
        return real(*a, **{**k, **_kw(embedder, image_encoder, fake_ocr)})

    monkeypatch.setattr(runner, "run_eval", spy)
    out = tmp_path / "out"
    argv = ["eval", str(folder), "--out", str(out), "--quiet", "--ablation", "full", "rag",
            "--set", "theta_s=3,6", "--set", "k_tab=2"]
    assert main(argv) == 0
    assert sorted(seen) == sorted((a, t, 2) for a in ("full", "rag") for t in (3, 6))
    printed = json.loads(capsys.readouterr().out)
    assert set(printed["variants"]) == {"full__theta_s-3", "full__theta_s-6", "rag__theta_s-3", "rag__theta_s-6"}
    for v in printed["variants"]:
        assert json.loads((out / v / "summary.json").read_text())["files_done"] == 2
        assert (out / v / "a" / "predictions.jsonl").exists()
    rows = list(csv.DictReader(open(out / "sweep.csv")))
    assert set(rows[0]) == {"file", "variant", "ablation", "theta_s", "metric", "value"}
    acc = {(r["file"], r["variant"]): float(r["value"]) for r in rows if r["metric"] == "accuracy"}
    assert set(acc) == {(f, v) for f in ("a", "b", POOLED) for v in printed["variants"]}
    n = {(r["file"], r["variant"]): float(r["value"]) for r in rows if r["metric"] == "n"}
    assert n[("a", "rag__theta_s-3")] == 3 and n[(POOLED, "rag__theta_s-3")] == 4
    pooled = json.loads((out / "rag__theta_s-6" / "summary.json").read_text())
    assert acc[(POOLED, "rag__theta_s-6")] == pytest.approx(pooled["accuracy"])
    assert {r["metric"] for r in rows} >= {"mem-gallery.f1", "evidence_recall", "right_refusal_share"}
    meta = json.loads((out / "sweep.json").read_text())
    assert [v["config"] for v in meta["variants"]][0] == {"theta_s": 3, "k_tab": 2}
    # a rerun of the sweep reuses every variant's files
    assert main(argv) == 0
    capsys.readouterr()
    assert all(ln["status"] == "reused" for v in printed["variants"]
               for ln in json.loads((out / v / "summary.json").read_text())["files"])


# ---------------------------------------------------------------- reading a sweep table back

def test_a_sweep_table_is_read_back_checked_and_pivoted(tmp_path):
    from core.evaluation.sweep import Variant, metrics, pivot, read_table, write_table

    variants = [Variant("full", "full", (), DEFAULT), Variant("rag", "rag", (), DEFAULT)]
    summaries = [
        {"files": [{"name": "a", "status": "done", "n": 3, "accuracy": 0.5},
                   {"name": "b", "status": "failed", "error": "InputError: x"}], "n": 3, "accuracy": 0.5},
        {"files": [{"name": "a", "status": "done", "n": 3, "accuracy": 0.25},
                   {"name": "b", "status": "done", "n": 2, "accuracy": 1.0}], "n": 5, "accuracy": 0.55}]
    rows = read_table(write_table(tmp_path, variants, summaries).read_text())
    assert metrics(rows) == ["accuracy", "n"]
    files, vs, values = pivot(rows, "accuracy")
    assert files == [POOLED, "a", "b"] and vs == ["full", "rag"]
    assert values == [[0.5, 0.55], [0.5, 0.25], [None, 1.0]]  # b failed under "full": no figure
    bad = "file,variant,ablation,metric,value\na,full,full,accuracy,0.5\na,full,full,n,x\nb,full,full,n,\n"
    with pytest.raises(InputError) as e:
        read_table(bad, "mine.csv")
    assert "mine.csv" in str(e.value) and "line 3" in str(e.value) and "line 4" in str(e.value)
    with pytest.raises(InputError, match="no column variant, ablation"):
        read_table("file,metric,value\n", "other.csv")
