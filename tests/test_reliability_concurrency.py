"""Concurrency: two writers, readers during a build, and two app sessions on one memory.

What happens (DuckDB lets one process open a file read-write, or several read-only, never both):
- A second build of a memory that a build in another process is writing gets one clear outcome: the
  engine raises MemoryBusyError, the CLI exits 2 with one "busy" line; the first build is unaffected
  and ends equal to a clean build.
- Reading from another process during a CLI build is refused the same way (even read-only): the app
  pages show "This memory is busy ... try again when the other build has finished" instead of a
  half-built memory, and show the memory normally once the build has finished (the failed open is not
  cached). Conversely, while an app session holds the memory, a CLI build is told it is busy.
- Inside one process (the app: each browser session has its own connection; the Upload page builds on
  one of them) DuckDB's transactions isolate readers: a reader sees the rounds committed so far, never
  the writes of the round in progress, and can answer questions meanwhile.
- Two browser sessions of `streamlit run app.py` on one memory both work (real chromium).

The writer in another process is tests/build_child.py, paused with SIGSTOP right after its ingest
committed, so the lock is held for certain while the test acts (no timing guesses).
"""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from playwright.sync_api import expect
from streamlit.testing.v1 import AppTest

from build_child import deps as child_deps
from conftest import ROOT, HashEmbedder
from history_factory import write_health_history
from test_build import snapshot
from test_reliability_crash import consistency_faults
from test_reliability_input import assert_one_clear_line, fake_deps, run_cli_subprocess

from core.build import build
from core.config import DEFAULT
from core.errors import LLMError, MemoryBusyError
from core.formats import read_file
from core.planning import QueryEngine
from core.store import Store
from ui import state

CHILD = [sys.executable, str(Path(__file__).with_name("build_child.py"))]
ENV = os.environ | {"OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


class PausedBuild:
    """A build in a child process, stopped (SIGSTOP) while it holds the memory open for writing."""

    def __init__(self, folder: Path):
        folder.mkdir(parents=True, exist_ok=True)
        self.src = write_health_history(folder, n_sessions=4, rounds_per_session=4)
        self.store = folder / "memory.duckdb"
        self.proc = subprocess.Popen(CHILD + [str(self.store), str(self.src)], stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, env=ENV)
        first = self.proc.stdout.readline()
        assert first.startswith("store"), first + self.proc.stderr.read()
        os.kill(self.proc.pid, signal.SIGSTOP)
        self.finished = False

    def finish(self) -> str:
        """Let it run to the end; its remaining output."""
        os.kill(self.proc.pid, signal.SIGCONT)
        out, err = self.proc.communicate(timeout=240)
        assert self.proc.returncode == 0, err[-2000:]
        self.finished = True
        return out

    def close(self) -> None:
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGCONT)
            self.proc.kill()
            self.proc.wait(timeout=30)


@pytest.fixture
def paused_build(tmp_path):
    pb = PausedBuild(tmp_path / "writer")
    try:
        yield pb
    finally:
        pb.close()


def clean_snapshot(src: Path, folder: Path) -> dict:
    path = folder / "clean.duckdb"
    with Store(path) as s:
        build(s, read_file(src), child_deps(), DEFAULT)
    return snapshot(path)


@pytest.mark.timeout(300)
def test_a_second_writer_is_told_the_memory_is_busy_and_the_first_finishes_cleanly(paused_build, tmp_path):
    with pytest.raises(MemoryBusyError, match="busy"):
        Store(paused_build.store)
    with pytest.raises(MemoryBusyError, match="busy"):  # readers in other processes too (see module doc)
        Store(paused_build.store, read_only=True)
    res = run_cli_subprocess(["build", str(paused_build.src), "--store", str(paused_build.store), "--quiet"],
                             tmp_path)
    assert_one_clear_line(res, paused_build.store.name, ("busy",))
    res = run_cli_subprocess(["ask", "What was my average sleep score?", "--store", str(paused_build.store)],
                             tmp_path)
    assert_one_clear_line(res, paused_build.store.name, ("busy",))
    out = paused_build.finish()
    assert out.rstrip().endswith("done")
    assert snapshot(paused_build.store) == clean_snapshot(paused_build.src, tmp_path)


def _home(path: Path) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app_pages" / "home.py"), default_timeout=60)
    at.session_state[state.STORE_PATH] = str(path)
    return at


@pytest.mark.timeout(300)
def test_app_page_during_a_cli_build_says_busy_then_shows_the_finished_memory(paused_build):
    at = _home(paused_build.store)
    at.run()
    assert not at.exception
    assert any("busy" in e.value for e in at.error), [e.value for e in at.error]
    assert not at.metric  # nothing half-built is shown
    paused_build.finish()
    at = _home(paused_build.store)
    at.run()
    assert not at.exception and not at.error
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Rounds"] == "16" and metrics["Rounds processed"] == "16"
    # while this app session holds the memory, a build in another process is the one told it is busy
    res = run_cli_subprocess(["build", str(paused_build.src), "--store", str(paused_build.store), "--quiet"],
                             paused_build.store.parent)
    assert_one_clear_line(res, paused_build.store.name, ("busy",))


class BlockingLLM:
    """Blocks its first call (inside a round's transaction) until released; then fails like a dead server.

    While blocked it records what the writer's own connection sees, uncommitted writes included.
    """

    vision = False
    model = "blocking"

    def __init__(self, writer: Store):
        self.writer = writer
        self.inside, self.release = threading.Event(), threading.Event()
        self.writer_view = None

    def complete_json(self, task, messages, schema, *, prompt_version="1", images=()):
        if not self.inside.is_set():
            self.writer_view = view(self.writer.con)
            self.inside.set()
            assert self.release.wait(120), "the test never released the writer"
        raise LLMError("no language model in this test")


def view(con) -> dict:
    q = lambda sql: con.execute(sql).fetchone()[0]  # noqa: E731
    return {"processed": q("SELECT count(*) FROM rounds WHERE processed"),
            "observations": q("SELECT count(*) FROM observations"),
            "events": q("SELECT count(*) FROM induction_events"),
            "nodes": q("SELECT count(*) FROM nodes"),
            "timeline": q("SELECT count(*) FROM induction_timeline")}


@pytest.mark.timeout(300)
def test_a_reader_in_the_app_process_sees_only_committed_rounds_during_a_build(tmp_path):
    src = write_health_history(tmp_path, n_sessions=4, rounds_per_session=4)
    path = tmp_path / "memory.duckdb"
    with Store(path) as s:  # the first half is already built: the reader has something to read
        whole = read_file(src)[0]
        build(s, [whole.__class__(whole.source, whole.format, whole.sessions[:2], whole.qas)], fake_deps(), DEFAULT)
    writer = Store(path)
    llm = BlockingLLM(writer)
    deps = fake_deps()
    deps.llm = llm
    failure: list[BaseException] = []

    def run():
        try:
            build(writer, read_file(src), deps, DEFAULT)
        except BaseException as e:  # surfaced in the main thread
            failure.append(e)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    try:
        while not llm.inside.wait(0.5) and t.is_alive():  # wait for the block, or for the build to end
            pass
        assert llm.inside.is_set(), f"the build never called the model inside a transaction {failure}"
        reader = Store(path)  # what a second app session opens: its own connection, same process
        seen = view(reader.con)
        # the transaction in progress has written (the writer sees it) but none of it is visible to the reader
        assert seen != llm.writer_view and all(seen[k] <= llm.writer_view[k] for k in seen)
        assert seen["observations"] < llm.writer_view["observations"]
        # what the reader sees is a committed state: processed rounds a prefix, nothing of the others
        faults, pending = consistency_faults(path, 16, 16)
        assert not faults and pending == 16 - seen["processed"] and seen["processed"] >= 8
        trace = QueryEngine(reader.con, HashEmbedder(), DEFAULT).ask("What was my average sleep score?")
        assert trace.answer.text
        reader.close()
    finally:
        llm.release.set()
        t.join(120)
    assert not failure, failure
    writer.close()
    with Store(path) as s:
        assert view(s.con)["processed"] == 16


@pytest.mark.browser
@pytest.mark.timeout(400)
def test_two_browser_sessions_on_one_memory(tmp_path):
    from browser import chromium_page, streamlit_server

    src = write_health_history(tmp_path, n_sessions=4, rounds_per_session=4)
    path = tmp_path / "memory.duckdb"
    with Store(path) as s:
        build(s, read_file(src), fake_deps(), DEFAULT)
    with streamlit_server(str(path)) as url, chromium_page() as first:
        second = first.context.browser.new_page(viewport={"width": 1400, "height": 1000})  # own context
        second.set_default_timeout(60_000)
        for page in (first, second):
            page.goto(url)
            page.get_by_text("Browse rounds").wait_for()
            rounds = page.get_by_test_id("stMetric").filter(has_text="Rounds").first
            expect(rounds).to_have_text(re.compile(r"Rounds\s*16$"))  # polls: the page streams in
        # each session moves on its own: the second opens Tables, the first still works on Home
        second.goto(url + "/tables")
        # the table list is a canvas grid whose cells stay hidden in the DOM: wait for them to be attached
        second.locator("td", has_text="sleep_log").first.wait_for(state="attached")
        assert "busy" not in second.inner_text("body").lower()
        first.reload()
        first.get_by_text("Browse rounds").wait_for()
        assert "busy" not in first.inner_text("body").lower()
        assert "error" not in first.inner_text("body").lower()
