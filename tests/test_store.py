"""The DuckDB store: migrations, idempotent ingest, change reports, read APIs (real DuckDB files)."""
from __future__ import annotations

from datetime import date, datetime

import duckdb
import pytest

from core.errors import MemoryBusyError
from core.model import QA, History, ImageRef, Round, Session, Utterance
from core.store import MIGRATIONS, Store


def _png(color=(200, 30, 30)) -> bytes:
    import io

    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (10, 10), color).save(buf, format="PNG")
    return buf.getvalue()


def _history(text: str = "I slept 7h 12m", source: str = "h.json", n: int = 3) -> History:
    rounds = tuple(
        Round(
            round_id=f"S1:R{i}", session_id="S1", time=datetime(2026, 3, 1, 8, i),
            dialogue=(Utterance("user", f"{text} ({i})"), Utterance("assistant", "Noted.")),
            images=(ImageRef(f"S1:R{i}:I1", caption="a chart", data=_png(), sha256="ab" * 32,
                             mime="image/png", width=10, height=10),) if i == 1 else (),
            index_in_session=i,
        )
        for i in range(1, n + 1)
    )
    return History(source=source, format="memeye", sessions=(Session("S1", date(2026, 3, 1), rounds),),
                   qas=(QA("q1", "How long did I sleep?", "7.2", ("S1:R1",), "latest", answer_kind="number",
                           tolerance=0.1),))


def test_migrations_create_every_table_and_record_version(tmp_path):
    with Store(tmp_path / "m.duckdb") as s:
        assert s.schema_version() == MIGRATIONS[-1][0]
        tables = {r[0] for r in s.con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    assert {"rounds", "images", "observations", "schemas", "nodes", "qas", "llm_cache"} <= tables
    # reopening applies nothing twice
    with Store(tmp_path / "m.duckdb") as s:
        assert s.con.execute("SELECT count(*) FROM schema_version").fetchone()[0] == len(MIGRATIONS)


def test_ingest_is_idempotent_and_orders_rounds(tmp_path):
    with Store(tmp_path / "m.duckdb") as s:
        first = s.ingest(_history())
        second = s.ingest(_history())
        assert (first.rounds_added, first.images_added, first.qas_added) == (3, 1, 1)
        assert (second.rounds_added, second.rounds_unchanged, second.qas_added) == (0, 3, 0)
        assert s.summary()["rounds"] == 3
        orders = [o for o, _ in s.rounds()]
        assert orders == [1, 2, 3]
        assert s.image_bytes("S1:R1:I1") == _png()
        qa = s.qas()[0]
        assert (qa.answer_kind, qa.tolerance, qa.clues) == ("number", 0.1, ("S1:R1",))


def test_changed_round_is_reported_and_stored_version_kept(tmp_path):
    with Store(tmp_path / "m.duckdb") as s:
        s.ingest(_history())
        res = s.ingest(_history(text="I slept 9h"))
        assert res.changed_rounds == ("S1:R1", "S1:R2", "S1:R3")
        assert res.rounds_added == 0
        _, r = s.get_round("S1:R1")
        assert r.dialogue[0].text.startswith("I slept 7h 12m")
        assert s.con.execute("SELECT count(*) FROM round_changes").fetchone()[0] == 3


def test_new_sessions_continue_round_order(tmp_path):
    with Store(tmp_path / "m.duckdb") as s:
        s.ingest(_history())
        h2 = History(source="b.json", format="memeye", sessions=(Session("S2", date(2026, 3, 2), (
            Round("S2:R1", "S2", datetime(2026, 3, 2, 9), (Utterance("user", "hi"),)),)),))
        s.ingest(h2)
        assert s.get_round("S2:R1")[0] == 4
        assert s.con.execute("SELECT first_order FROM sessions WHERE session_id='S2'").fetchone()[0] == 4


def test_failed_ingest_leaves_store_unchanged(tmp_path):
    with Store(tmp_path / "m.duckdb") as s:
        s.ingest(_history())
        before = s.summary()
        bad = _history(source="bad.json", n=4)
        # a round id that collides inside the batch violates the primary key: the whole file rolls back
        dup = bad.sessions[0].rounds + (bad.sessions[0].rounds[-1].__class__(
            "S9:R1", "S1", datetime(2026, 3, 1, 9), (Utterance("user", "x"),)),) * 2
        with pytest.raises(duckdb.Error):
            s.ingest(History("bad.json", "memeye", (Session("S1", None, dup),)))
        assert s.summary() == before


def test_second_writer_process_is_told_memory_is_busy(tmp_path):
    import subprocess
    import sys

    path = tmp_path / "m.duckdb"
    Store(path).close()
    holder = subprocess.Popen(
        [sys.executable, "-c", f"import duckdb,sys; c=duckdb.connect({str(path)!r}); print('ready', flush=True); sys.stdin.read()"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "ready"
        with pytest.raises(MemoryBusyError, match="busy"):
            Store(path)
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)


def test_same_round_id_from_another_file_is_refused_not_called_a_change(tmp_path):
    from core.errors import InputError

    with Store(tmp_path / "m.duckdb") as s:
        s.ingest(_history(source="a.json"))
        before = s.summary()
        with pytest.raises(InputError, match="already belongs to 'a.json'"):
            s.ingest(_history(text="other conversation", source="b.json"))
        assert s.summary() == before
