"""The eval runner over whole benchmarks (core/evaluation/runner.py): several files in one command,
per-file and pooled summaries with the benchmarks' own metrics, refusals and the flat top-10
baseline, missing images counted, a failing file reported, a rerun reusing the files done.
Fakes for the encoders (conftest); the real engine on small generated histories."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.__main__ import main
from core.build import BuildDeps
from core.config import DEFAULT
from core.errors import InputError
from core.evaluation.baseline import FlatIndex, flat_top_k, question_query, round_text
from core.evaluation.runner import expand_inputs, refusal_figures, run_eval
from core.extract import RuleExtractor
from core.model import QA, ImageRef, Round, Utterance
from core.planning import QueryEngine
from history_factory import write_health_history

QAS = [
    {"point": "FR", "question": "Where did we go for dinner?", "answer": "the new Thai place", "clue": ["S1:R4"]},
    {"point": "AR", "question": "What is my cat's name?", "answer": "Not mentioned", "clue": []},
    {"point": "TTL", "question": "What is shown in the picture?", "answer": "a sleep report", "clue": ["S1:R1"],
     "question_image": "../image/QA_IMG_001.jpg", "image_caption": "A phone screen with a sleep report"},
]


def _file(folder: Path, name: str, qas=QAS, missing_image: bool = False) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = write_health_history(folder, n_sessions=2, rounds_per_session=4)
    doc = json.loads(path.read_text())
    doc["human-annotated QAs"] = qas
    if missing_image:
        turn = doc["multi_session_dialogues"][0]["dialogues"][0]
        turn.update({"image_id": ["S1:R1:I1"], "input_image": ["../image/none.jpg"],
                     "image_caption": ["a phone screen"]})
    target = folder / name
    path.rename(target)
    target.write_text(json.dumps(doc))
    return target


def _kw(embedder, image_encoder, fake_ocr):
    deps = BuildDeps(text_encoder=embedder, image_encoder=image_encoder, ocr=fake_ocr,
                     extractor=RuleExtractor(DEFAULT), llm=None)
    return {"deps": deps, "engine_factory": lambda store, config, llm: QueryEngine(store.con, embedder, config)}


def test_a_single_file_keeps_the_flat_layout_with_benchmark_figures(tmp_path, embedder, image_encoder, fake_ocr):
    f = _file(tmp_path / "in", "one.json")
    s = run_eval(str(f), str(tmp_path / "out"), **_kw(embedder, image_encoder, fake_ocr))
    assert (tmp_path / "out" / "predictions.jsonl").exists() and (tmp_path / "out" / "summary.json").exists()
    assert not (tmp_path / "out" / "one").exists()
    # the type is Mem-Gallery's `point`, read from the file until the reader carries it
    assert set(s["by_type"]) == {"FR", "AR", "TTL"}
    mg = s["benchmark"]["mem-gallery"]
    assert mg["n"] == 3 and set(mg["by_type"]) == {"FR", "AR", "TTL"}
    assert {"f1", "em", "bleu1", "recall_at_10", "hitrate_at_10"} <= set(mg)
    assert s["flat_top10_recall"] is not None and s["by_type"]["FR"]["flat_top10_recall"] is not None
    assert s["right_refusals"]["n"] == 1 and s["false_refusals"]["of"] == 2
    recs = [json.loads(ln) for ln in (tmp_path / "out" / "predictions.jsonl").read_text().splitlines()]
    ttl = next(r for r in recs if r["type"] == "TTL")
    assert ttl["question_image_caption"] == "A phone screen with a sleep report"
    assert len(ttl["flat_top10"]) == 8  # all 8 rounds of the history fit in the top 10
    assert ttl["flat_top10_recall"] == 1.0
    assert s["input"]["ablation"] == "full" and s["input"]["size"] == f.stat().st_size


def test_an_engine_fault_on_one_question_is_reported_and_the_others_answered(tmp_path, embedder, image_encoder,
                                                                             fake_ocr, capsys, monkeypatch):
    class Faulty(QueryEngine):
        def ask(self, question, *a, **k):
            if "cat" in question:
                raise KeyError("LH")
            return super().ask(question, *a, **k)

    f = _file(tmp_path / "in", "one.json")
    kw = _kw(embedder, image_encoder, fake_ocr)
    kw["engine_factory"] = lambda store, config, llm: Faulty(store.con, embedder, config)
    s = run_eval(str(f), str(tmp_path / "out"), **kw)
    assert s["n"] == 3 and s["errors"] == 1
    assert s["error_questions"] == [{"qa_id": s["error_questions"][0]["qa_id"], "question": "What is my cat's name?",
                                     "error": "KeyError: 'LH'"}]
    recs = [json.loads(ln) for ln in (tmp_path / "out" / "predictions.jsonl").read_text().splitlines()]
    failed = [r for r in recs if r.get("error")]
    assert len(failed) == 1 and failed[0]["prediction"] == "" and not failed[0]["correct"]
    assert sum(1 for r in recs if r["prediction"]) == 2  # the other two were answered
    # the CLI says so on stderr, with the question and the fault
    from core.evaluation import runner
    real = runner.run_eval
    monkeypatch.setattr(runner, "run_eval", lambda *a, **k: real(*a, **{**k, **kw}))
    assert main(["eval", str(f), "--out", str(tmp_path / "cli"), "--quiet"]) == 0
    err = capsys.readouterr().err
    assert "failed on 1 question(s)" in err and "What is my cat's name? -> KeyError: 'LH'" in err


def test_a_missing_image_fails_unless_allowed_and_is_counted(tmp_path, embedder, image_encoder, fake_ocr):
    f = _file(tmp_path / "in", "img.json", missing_image=True)
    with pytest.raises(InputError, match="not found"):
        run_eval(str(f), str(tmp_path / "out"), **_kw(embedder, image_encoder, fake_ocr))
    s = run_eval(str(f), str(tmp_path / "out"), allow_missing_images=True, **_kw(embedder, image_encoder, fake_ocr))
    assert s["images"] == 1 and s["images_missing"] == 1


def test_a_folder_runs_per_file_pools_reports_a_failure_and_reuses_on_rerun(
        tmp_path, embedder, image_encoder, fake_ocr):
    folder = tmp_path / "in"
    _file(folder, "a.json")
    _file(folder, "b.json", qas=QAS[:1])
    (folder / "broken.json").write_text("{not json")
    seen = []
    out = tmp_path / "out"
    s = run_eval(str(folder), str(out), limit=None, on_file=lambda k, n, name: seen.append((k, n, name)),
                 **_kw(embedder, image_encoder, fake_ocr))
    assert seen == [(1, 3, "a.json"), (2, 3, "b.json"), (3, 3, "broken.json")]
    status = {ln["name"]: ln["status"] for ln in s["files"]}
    assert status == {"a": "done", "b": "done", "broken": "failed"}
    broken = next(ln for ln in s["files"] if ln["name"] == "broken")
    assert "InputError" in broken["error"]
    assert s["n"] == 4 and s["files_done"] == 2 and s["files_failed"] == 1
    assert s["benchmark"]["mem-gallery"]["n"] == 4
    for stem, n in (("a", 3), ("b", 1)):
        per = json.loads((out / stem / "summary.json").read_text())
        assert per["n"] == n and len((out / stem / "predictions.jsonl").read_text().splitlines()) == n
    assert json.loads((out / "summary.json").read_text())["n"] == 4
    # a rerun reuses a and b (same size+mtime, ablation, limit) and tries broken again
    s2 = run_eval(str(folder), str(out), **_kw(embedder, image_encoder, fake_ocr))
    assert {ln["name"]: ln["status"] for ln in s2["files"]} == {"a": "reused", "b": "reused", "broken": "failed"}
    assert s2["n"] == 4 and s2["accuracy"] == s["accuracy"]
    # another limit is another run: nothing is reused
    s3 = run_eval(str(folder), str(out), limit=1, **_kw(embedder, image_encoder, fake_ocr))
    assert [ln["status"] for ln in s3["files"]] == ["done", "done", "failed"] and s3["n"] == 2


def test_expand_inputs_folders_globs_and_files(tmp_path):
    for n in ("x.json", "y.json", "LICENSE"):
        (tmp_path / n).write_text("{}")
    assert expand_inputs([str(tmp_path / "x.json")]) == ([tmp_path / "x.json"], False)
    assert expand_inputs([str(tmp_path)]) == ([tmp_path / "x.json", tmp_path / "y.json"], True)
    assert expand_inputs([str(tmp_path / "y*.json")]) == ([tmp_path / "y.json"], True)
    assert expand_inputs([str(tmp_path / "x.json"), str(tmp_path / "x.json")]) == ([tmp_path / "x.json"], True)
    with pytest.raises(InputError, match="no such"):
        expand_inputs([str(tmp_path / "nope.json")])


def test_cli_eval_of_a_folder_writes_per_file_and_pooled_summaries(tmp_path, capsys, monkeypatch,
                                                                  embedder, image_encoder, fake_ocr):
    import core.evaluation.runner as runner

    folder = tmp_path / "in"
    _file(folder, "a.json", missing_image=True)
    real = runner.run_eval
    monkeypatch.setattr(runner, "run_eval", lambda *a, **k: real(*a, **{**k, **_kw(embedder, image_encoder,
                                                                                    fake_ocr)}))
    rc = main(["eval", str(folder), "--out", str(tmp_path / "out"), "--allow-missing-images"])
    assert rc == 0
    cap = capsys.readouterr()
    assert "file 1/1 a.json" in cap.err
    pooled = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert pooled["images_missing"] == 1 and pooled["files"][0]["status"] == "done"
    assert (tmp_path / "out" / "a" / "summary.json").exists()
    # without the flag the file fails, and the pooled summary says why
    rc = main(["eval", str(folder), "--out", str(tmp_path / "out2"), "--quiet"])
    assert rc == 0
    line = json.loads((tmp_path / "out2" / "summary.json").read_text())["files"][0]
    assert line["status"] == "failed" and "not found" in line["error"]


# ---------------------------------------------------------------- refusals and the flat baseline

def test_refusal_figures_count_false_and_right_refusals():
    recs = [{"type": "FR", "refusal_question": False, "refused": True},
            {"type": "FR", "refusal_question": False, "refused": False},
            {"type": "VS", "refusal_question": False, "refused": False},
            {"type": "AR", "refusal_question": True, "refused": True},
            {"type": "AR", "refusal_question": True, "refused": False}]
    f = refusal_figures(recs)
    assert f["false_refusals"]["n"] == 1 and f["false_refusals"]["of"] == 3
    assert f["false_refusals"]["share"] == pytest.approx(1 / 3, abs=1e-4)
    assert f["false_refusals"]["by_type"]["FR"] == {"n": 1, "of": 2, "share": 0.5}
    assert f["false_refusals"]["by_type"]["AR"]["share"] is None  # no answerable AR question
    assert f["right_refusals"] == {"n": 2, "refused": 1, "share": 0.5}


def _round(rid: str, text: str, caption: str = "") -> Round:
    from datetime import datetime

    imgs = (ImageRef(image_id=f"{rid}:I1", caption=caption),) if caption else ()
    return Round(round_id=rid, session_id="S1", time=datetime(2026, 1, 1), dialogue=(Utterance("user", text),),
                 images=imgs)


def test_flat_baseline_ranks_by_text_and_captions(embedder):
    rounds = [_round("S1:R1", "we baked bread today"), _round("S1:R2", "the weather was cold"),
              _round("S1:R3", "look at this", caption="a violin on a wooden table")]
    assert round_text(rounds[2]) == "user: look at this\na violin on a wooden table"
    assert question_query("What is it?", "a violin") == "What is it?\na violin"
    top = FlatIndex(rounds, embedder).top_many(["violin wooden table", "bread baked"], k=2)
    assert top[0][0] == "S1:R3" and top[1][0] == "S1:R1" and all(len(t) == 2 for t in top)
    qas = [QA(qa_id="q1", question="What did I show you?", answer="x")]
    # the question's image caption joins the query: it finds the violin round
    assert flat_top_k(rounds, qas, embedder, {"q1": "violin wooden table"}, k=1) == {"q1": ["S1:R3"]}
    assert flat_top_k([], qas, embedder) == {"q1": []}
