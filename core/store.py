"""The DuckDB store: one file per memory, numbered migrations, ingest and read APIs.

`Store(path_or_connection)` opens (and migrates) a memory. Ingest is
idempotent: a round is identified by its round id and content hash, so
re-ingesting a file adds nothing, and a round whose content changed under the
same id is reported (and logged in `round_changes`), never duplicated or
overwritten. Every write happens in a transaction, so a process killed at any
point leaves the last committed state.
"""
from __future__ import annotations

import hashlib
import json
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Iterator

import duckdb

from .errors import InputError, MemoryBusyError
from .model import QA, History, ImageRef, Round, Utterance

# Numbered migrations. Never edit a released one: append a new number.
MIGRATIONS: list[tuple[int, str]] = [
    (
        1,
        """
        CREATE TABLE meta(key VARCHAR PRIMARY KEY, value VARCHAR);
        CREATE TABLE sessions(
            session_id VARCHAR PRIMARY KEY, date DATE, source VARCHAR, first_order INTEGER);
        CREATE TABLE rounds(
            round_id VARCHAR PRIMARY KEY, session_id VARCHAR NOT NULL,
            round_order INTEGER NOT NULL UNIQUE, index_in_session INTEGER,
            time TIMESTAMP NOT NULL, dialogue JSON NOT NULL, text VARCHAR NOT NULL,
            content_hash VARCHAR NOT NULL, source VARCHAR,
            processed BOOLEAN NOT NULL DEFAULT false);
        CREATE TABLE round_changes(
            round_id VARCHAR, stored_hash VARCHAR, new_hash VARCHAR, source VARCHAR,
            seen_at TIMESTAMP);
        CREATE TABLE images(
            image_id VARCHAR PRIMARY KEY, round_id VARCHAR NOT NULL, position INTEGER,
            caption VARCHAR, sha256 VARCHAR, mime VARCHAR, width INTEGER, height INTEGER,
            ocr_text VARCHAR, ocr_lines JSON, ocr_engine VARCHAR);
        CREATE TABLE blobs(sha256 VARCHAR PRIMARY KEY, data BLOB NOT NULL);
        CREATE TABLE qas(
            qa_id VARCHAR PRIMARY KEY, source VARCHAR, question VARCHAR, answer VARCHAR,
            clues JSON, qtype VARCHAR, category INTEGER, options JSON, refusal BOOLEAN,
            answer_kind VARCHAR, tolerance DOUBLE);
        CREATE TABLE observations(
            round_id VARCHAR NOT NULL, seq INTEGER NOT NULL, attribute VARCHAR NOT NULL,
            raw_value VARCHAR, number DOUBLE, unit VARCHAR, value_kind VARCHAR,
            source VARCHAR, speaker VARCHAR, utterance_index INTEGER,
            span_start INTEGER, span_end INTEGER, image_id VARCHAR, label VARCHAR,
            extractor VARCHAR, text_value VARCHAR, PRIMARY KEY(round_id, seq));
        CREATE TABLE embed_cache(key VARCHAR PRIMARY KEY, model VARCHAR, vector FLOAT[]);
        CREATE TABLE llm_cache(
            key VARCHAR PRIMARY KEY, model VARCHAR, prompt_version VARCHAR, response JSON,
            prompt_tokens INTEGER, completion_tokens INTEGER, created TIMESTAMP);
        CREATE TABLE runs(
            run_id INTEGER PRIMARY KEY, kind VARCHAR, started TIMESTAMP, finished TIMESTAMP,
            report JSON);
        -- schema induction (core/induction.py)
        CREATE TABLE induction_support(pattern VARCHAR PRIMARY KEY, size INTEGER, support INTEGER);
        CREATE TABLE induction_timeline(
            round_order INTEGER, pattern VARCHAR, support INTEGER, all_conf DOUBLE,
            ext_conf DOUBLE, schema_id INTEGER, status VARCHAR);
        CREATE TABLE induction_events(
            round_order INTEGER, kind VARCHAR, pattern VARCHAR, schema_id INTEGER,
            previous VARCHAR, numbers JSON);
        CREATE TABLE schemas(
            schema_id INTEGER PRIMARY KEY, attributes JSON, table_name VARCHAR UNIQUE,
            description VARCHAR, columns JSON, discovered_order INTEGER, updated_order INTEGER);
        -- retrieval memory (core/hierarchy.py)
        CREATE TABLE nodes(
            node_id VARCHAR PRIMARY KEY, level VARCHAR NOT NULL, parent_id VARCHAR,
            description VARCHAR, text_emb FLOAT[], vis_emb FLOAT[],
            t_start TIMESTAMP, t_end TIMESTAMP, first_order INTEGER, last_order INTEGER,
            n_members INTEGER, closed BOOLEAN, round_id VARCHAR, image_ids JSON);
        """,
    ),
    (
        2,
        # learned utility of memory units (DG-Mem 3.3); IF NOT EXISTS: UtilityStore may have made it already
        "CREATE TABLE IF NOT EXISTS unit_utility(unit_key VARCHAR PRIMARY KEY, sum DOUBLE, count INTEGER, "
        "updated TIMESTAMP);",
    ),
    (
        3,
        # running sums of each topic's member embeddings (core/hierarchy/topics.py); IF NOT EXISTS as above
        "CREATE TABLE IF NOT EXISTS topic_sums(topic_id VARCHAR PRIMARY KEY, n_members INTEGER, t_start TIMESTAMP, "
        "t_end TIMESTAMP, first_order INTEGER, last_order INTEGER, text_sum DOUBLE[], vis_sum DOUBLE[], "
        "first_text FLOAT[]);",
    ),
    (
        4,
        # field alignment (core/align.py): the extractor's own name of each observation, the fields of
        # the memory with their statistics, every raw-attribute -> field decision with its evidence, and
        # the log of decisions (automatic and the user's)
        """
        ALTER TABLE observations ADD COLUMN raw_attribute VARCHAR;
        CREATE TABLE fields(field VARCHAR PRIMARY KEY, stats JSON);
        CREATE TABLE field_aliases(
            raw_attribute VARCHAR PRIMARY KEY, field VARCHAR NOT NULL, round_order INTEGER, score DOUBLE,
            evidence JSON, decided_by VARCHAR);
        CREATE TABLE field_events(
            round_order INTEGER, kind VARCHAR, raw_attribute VARCHAR, field VARCHAR, previous VARCHAR,
            score DOUBLE, evidence JSON, logged_at TIMESTAMP);
        """,
    ),
    (
        5,
        # who the memory's people are (a profile's name, a conversation's speakers: the user first),
        # and a question's own image (its caption is part of the query)
        """
        CREATE TABLE people(source VARCHAR NOT NULL, name VARCHAR NOT NULL, position INTEGER,
            PRIMARY KEY(source, name));
        ALTER TABLE qas ADD COLUMN image_caption VARCHAR;
        ALTER TABLE qas ADD COLUMN image_path VARCHAR;
        """,
    ),
    (
        6,
        # debugging cases (core/cases.py): a question with the plan a person edited and the answer expected
        """
        CREATE TABLE plan_cases(
            case_id INTEGER PRIMARY KEY, question VARCHAR NOT NULL, plan JSON NOT NULL, expected VARCHAR NOT NULL,
            answer_kind VARCHAR, tolerance DOUBLE, saved_answer VARCHAR, note VARCHAR, created TIMESTAMP);
        """,
    ),
]

CHUNK_SIZE = 500  # rows per executemany batch


@dataclass(frozen=True)
class IngestResult:
    source: str
    sessions_added: int
    rounds_added: int
    rounds_unchanged: int
    changed_rounds: tuple[str, ...]
    images_added: int
    qas_added: int


def round_hash(r: Round) -> str:
    """Content hash of a round: dialogue, time, captions and image bytes' hashes."""
    h = hashlib.sha256()
    payload = {
        "time": r.time.isoformat(),
        "dialogue": [[u.speaker, u.text] for u in r.dialogue],
        "images": [[i.image_id, i.caption, i.sha256] for i in r.images],
    }
    h.update(json.dumps(payload, sort_keys=True).encode())
    return h.hexdigest()


def _connect(path: str | Path, read_only: bool) -> duckdb.DuckDBPyConnection:
    try:
        return duckdb.connect(str(path), read_only=read_only)
    except duckdb.IOException as e:
        if "lock" in str(e).lower():
            raise MemoryBusyError(
                f"{path}: the memory is busy: another process is writing to it ({e})"
            ) from None
        raise


class Store:
    """A memory file. Pass a path (opened and migrated) or an open DuckDB connection."""

    def __init__(self, path_or_con: str | Path | duckdb.DuckDBPyConnection, *, read_only: bool = False):
        if isinstance(path_or_con, duckdb.DuckDBPyConnection):
            self.con = path_or_con
            self.path = None
        else:
            self.path = str(path_or_con)
            self.con = _connect(self.path, read_only)
        self.read_only = read_only
        self._tx_depth = 0
        if not read_only:
            self.migrate()

    # ------------------------------------------------------------------ basics
    def close(self) -> None:
        self.con.close()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @contextmanager
    def transaction(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """Run a block atomically: commit on success, roll back on any exception.

        Reentrant: a block inside an open transaction joins it (DuckDB has no
        nested transactions), so the outermost block decides commit or rollback.
        """
        if self._tx_depth:
            self._tx_depth += 1
            try:
                yield self.con
            finally:
                self._tx_depth -= 1
            return
        self.con.execute("BEGIN TRANSACTION")
        self._tx_depth = 1
        try:
            yield self.con
        except BaseException:
            self._tx_depth = 0
            self.con.execute("ROLLBACK")
            raise
        self._tx_depth = 0
        self.con.execute("COMMIT")

    def schema_version(self) -> int:
        try:
            row = self.con.execute("SELECT max(version) FROM schema_version").fetchone()
        except duckdb.CatalogException:
            return 0
        return int(row[0] or 0)

    def migrate(self) -> None:
        """Apply every migration newer than the file's version, each in its own transaction."""
        self.con.execute(
            "CREATE TABLE IF NOT EXISTS schema_version(version INTEGER PRIMARY KEY, applied TIMESTAMP)"
        )
        current = self.schema_version()
        for number, sql in MIGRATIONS:
            if number <= current:
                continue
            with self.transaction() as con:
                for stmt in [s for s in sql.split(";") if s.strip()]:
                    con.execute(stmt)
                con.execute("INSERT INTO schema_version VALUES (?, now())", [number])

    def get_meta(self, key: str, default: str | None = None) -> str | None:
        row = self.con.execute("SELECT value FROM meta WHERE key = ?", [key]).fetchone()
        return row[0] if row else default

    def set_meta(self, key: str, value: str) -> None:
        self.con.execute(
            "INSERT INTO meta VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            [key, value],
        )

    # ------------------------------------------------------------------ ingest
    def ingest(self, history: History) -> IngestResult:
        """Store a parsed history's sessions, rounds, images and QAs in one transaction.

        New rounds get round orders after every stored round, in the file's
        chronological order. Rounds already stored with the same content are
        skipped; a round whose content differs under a stored id is reported in
        `changed_rounds` and logged, and the stored version is kept.
        """
        new_rounds: list[tuple[Round, str]] = []
        unchanged = 0
        changed: list[str] = []
        session_pos = {s.session_id: i for i, s in enumerate(history.sessions)}
        rounds = sorted(history.rounds, key=lambda r: (r.time, session_pos[r.session_id], r.index_in_session))
        stored_rows = self._hashes([r.round_id for r in rounds])
        stored = {rid: h for rid, (h, _) in stored_rows.items()}
        for r in rounds:
            h = round_hash(r)
            old = stored.get(r.round_id)
            if old is None:
                new_rounds.append((r, h))
            elif old == h:
                unchanged += 1
            elif stored_rows[r.round_id][1] != history.source:
                # another file owns this id (LoCoMo and MemEye ids repeat across conversations):
                # calling it a "change" would silently drop the new round
                raise InputError(
                    history.source, f"round {r.round_id}",
                    f"round id already belongs to {stored_rows[r.round_id][1]!r} with different content; "
                    "build each conversation into its own memory",
                )
            else:
                changed.append(r.round_id)
        # images.image_id is the primary key: an id already owned by another round would be
        # dropped by ON CONFLICT DO NOTHING, silently leaving the new round without its image.
        new_images = {i.image_id: r.round_id for r, _ in new_rounds for i in r.images}
        if new_images:
            clash = self.con.execute(
                "SELECT image_id, round_id FROM images WHERE image_id IN (SELECT unnest(?))", [list(new_images)]
            ).fetchone()
            if clash is not None:
                raise InputError(
                    history.source, f"round {new_images[clash[0]]}",
                    f"image id {clash[0]!r} already belongs to stored round {clash[1]!r}",
                )
        with self.transaction() as con:
            start = con.execute("SELECT coalesce(max(round_order), 0) FROM rounds").fetchone()[0]
            known_sessions = {
                row[0]
                for row in con.execute(
                    "SELECT session_id FROM sessions WHERE session_id IN (SELECT unnest(?))",
                    [[s.session_id for s in history.sessions]],
                ).fetchall()
            }
            first_order: dict[str, int] = {}
            round_rows, image_rows, blob_rows = [], [], {}
            for i, (r, h) in enumerate(new_rounds, start=1):
                order = start + i
                first_order.setdefault(r.session_id, order)
                round_rows.append(
                    (
                        r.round_id, r.session_id, order, r.index_in_session, r.time,
                        json.dumps([[u.speaker, u.text] for u in r.dialogue]), r.text, h, history.source,
                    )
                )
                for pos, img in enumerate(r.images):
                    image_rows.append(
                        (img.image_id, r.round_id, pos, img.caption, img.sha256, img.mime, img.width, img.height)
                    )
                    if img.data is not None and img.sha256:
                        blob_rows[img.sha256] = img.data
            session_rows = [
                (s.session_id, s.date, history.source, first_order.get(s.session_id))
                for s in history.sessions
                if s.session_id not in known_sessions and s.session_id in first_order
            ]
            for rows, sql in (
                (session_rows, "INSERT INTO sessions VALUES (?, ?, ?, ?)"),
                (round_rows, "INSERT INTO rounds (round_id, session_id, round_order, index_in_session, time, "
                 "dialogue, text, content_hash, source) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"),
                (image_rows, "INSERT INTO images (image_id, round_id, position, caption, sha256, mime, width, height) "
                 "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING"),
            ):
                for k in range(0, len(rows), CHUNK_SIZE):
                    con.executemany(sql, rows[k : k + CHUNK_SIZE])
            for sha, data in blob_rows.items():
                con.execute("INSERT INTO blobs VALUES (?, ?) ON CONFLICT DO NOTHING", [sha, data])
            for rid in changed:
                con.execute(
                    "INSERT INTO round_changes VALUES (?, ?, ?, ?, now())",
                    [rid, stored[rid], round_hash(next(r for r in rounds if r.round_id == rid)), history.source],
                )
            qas_added = self._ingest_qas(con, history)
        return IngestResult(
            source=history.source,
            sessions_added=len(session_rows),
            rounds_added=len(new_rounds),
            rounds_unchanged=unchanged,
            changed_rounds=tuple(changed),
            images_added=len(image_rows),
            qas_added=qas_added,
        )

    def _hashes(self, round_ids: list[str]) -> dict[str, tuple[str, str]]:
        if not round_ids:
            return {}
        rows = self.con.execute(
            "SELECT round_id, content_hash, source FROM rounds WHERE round_id IN (SELECT unnest(?))", [round_ids]
        ).fetchall()
        return {rid: (h, src) for rid, h, src in rows}

    @staticmethod
    def _ingest_qas(con, history: History) -> int:
        before = con.execute("SELECT count(*) FROM qas").fetchone()[0]
        rows = [
            (
                q.qa_id, history.source, q.question, q.answer, json.dumps(list(q.clues)), q.qtype,
                q.category, json.dumps([list(o) for o in q.options]), q.refusal, q.answer_kind, q.tolerance,
                q.image.caption if q.image else None, q.image.path if q.image else None,
            )
            for q in history.qas
        ]
        for k in range(0, len(rows), CHUNK_SIZE):
            con.executemany(
                "INSERT INTO qas VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                rows[k : k + CHUNK_SIZE],
            )
        if history.people:
            con.executemany("INSERT INTO people VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
                            [(history.source, n, i) for i, n in enumerate(history.people)])
        return con.execute("SELECT count(*) FROM qas").fetchone()[0] - before

    # ------------------------------------------------------------------ reads
    def _round_from_row(self, row, images: list[ImageRef]) -> Round:
        round_id, session_id, index_in_session, time, dialogue = row
        return Round(
            round_id=round_id,
            session_id=session_id,
            time=time,
            dialogue=tuple(Utterance(s, t) for s, t in json.loads(dialogue)),
            images=tuple(images),
            index_in_session=index_in_session or 0,
        )

    def _images_for(self, round_ids: list[str]) -> dict[str, list[ImageRef]]:
        out: dict[str, list[ImageRef]] = {}
        if not round_ids:
            return out
        rows = self.con.execute(
            "SELECT round_id, image_id, caption, sha256, mime, width, height FROM images "
            "WHERE round_id IN (SELECT unnest(?)) ORDER BY round_id, position",
            [round_ids],
        ).fetchall()
        for rid, iid, cap, sha, mime, w, h in rows:
            out.setdefault(rid, []).append(
                ImageRef(image_id=iid, caption=cap or "", sha256=sha, mime=mime, width=w, height=h)
            )
        return out

    def rounds(self, *, pending_only: bool = False, start_order: int | None = None,
               limit: int | None = None) -> list[tuple[int, Round]]:
        """Rounds as (round_order, Round) in round order; images without bytes (see image_bytes)."""
        sql = "SELECT round_order, round_id, session_id, index_in_session, time, dialogue FROM rounds WHERE 1=1"
        params: list = []
        if pending_only:
            sql += " AND NOT processed"
        if start_order is not None:
            sql += " AND round_order >= ?"
            params.append(start_order)
        sql += " ORDER BY round_order"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(int(limit))
        rows = self.con.execute(sql, params).fetchall()
        imgs = self._images_for([r[1] for r in rows])
        return [(r[0], self._round_from_row(r[1:], imgs.get(r[1], []))) for r in rows]

    def get_round(self, round_id: str) -> tuple[int, Round] | None:
        row = self.con.execute(
            "SELECT round_order, round_id, session_id, index_in_session, time, dialogue FROM rounds WHERE round_id = ?",
            [round_id],
        ).fetchone()
        if row is None:
            return None
        return row[0], self._round_from_row(row[1:], self._images_for([round_id]).get(round_id, []))

    def image_bytes(self, image_id: str) -> bytes | None:
        row = self.con.execute(
            "SELECT b.data FROM images i JOIN blobs b ON b.sha256 = i.sha256 WHERE i.image_id = ?", [image_id]
        ).fetchone()
        return bytes(row[0]) if row else None

    def image_info(self, image_id: str) -> dict | None:
        row = self.con.execute(
            "SELECT image_id, round_id, caption, sha256, mime, width, height, ocr_text FROM images WHERE image_id = ?",
            [image_id],
        ).fetchone()
        if row is None:
            return None
        keys = ("image_id", "round_id", "caption", "sha256", "mime", "width", "height", "ocr_text")
        return dict(zip(keys, row))

    def ocr_text(self, round_id: str) -> dict[str, str]:
        """image_id -> OCR text for a round's images that have been OCR'd."""
        rows = self.con.execute(
            "SELECT image_id, ocr_text FROM images WHERE round_id = ? AND ocr_text IS NOT NULL ORDER BY position",
            [round_id],
        ).fetchall()
        return dict(rows)

    def set_ocr(self, image_id: str, text: str, lines: list, engine: str) -> None:
        self.con.execute(
            "UPDATE images SET ocr_text = ?, ocr_lines = ?, ocr_engine = ? WHERE image_id = ?",
            [text, json.dumps(lines), engine, image_id],
        )

    def ocr_by_sha(self, sha256: str) -> tuple[str, str] | None:
        """A stored OCR result for identical image bytes, so an image is OCR'd once."""
        row = self.con.execute(
            "SELECT ocr_text, ocr_lines FROM images WHERE sha256 = ? AND ocr_text IS NOT NULL LIMIT 1", [sha256]
        ).fetchone()
        return (row[0], row[1]) if row else None

    def qas(self, source: str | None = None) -> list[QA]:
        sql = ("SELECT qa_id, question, answer, clues, qtype, category, options, refusal, answer_kind, tolerance, "
               "image_caption, image_path FROM qas")
        params: list = []
        if source is not None:
            sql += " WHERE source = ?"
            params.append(source)
        rows = self.con.execute(sql + " ORDER BY qa_id", params).fetchall()
        return [
            QA(
                qa_id=r[0], question=r[1], answer=r[2], clues=tuple(json.loads(r[3] or "[]")), qtype=r[4] or "",
                category=r[5], options=tuple(tuple(o) for o in json.loads(r[6] or "[]")), refusal=bool(r[7]),
                answer_kind=r[8] or "", tolerance=r[9],
                image=ImageRef(image_id=f"{r[0]}:image", caption=r[10] or "", path=r[11])
                if r[10] is not None or r[11] is not None else None,
            )
            for r in rows
        ]

    def people(self) -> list[str]:
        """The names the stored files give their people, the user of each file first, each name once."""
        rows = self.con.execute("SELECT name FROM people ORDER BY position, source").fetchall()
        return list(dict.fromkeys(r[0] for r in rows))

    def summary(self) -> dict:
        """Counts a person wants to see first: sessions, rounds, images, OCR, observations, schemas, nodes."""
        q = lambda sql: self.con.execute(sql).fetchone()[0]  # noqa: E731
        span = self.con.execute("SELECT min(time), max(time) FROM rounds").fetchone()
        return {
            "sessions": q("SELECT count(*) FROM sessions"),
            "rounds": q("SELECT count(*) FROM rounds"),
            "rounds_processed": q("SELECT count(*) FROM rounds WHERE processed"),
            "rounds_with_images": q("SELECT count(DISTINCT round_id) FROM images"),
            "images": q("SELECT count(*) FROM images"),
            "images_with_bytes": q("SELECT count(*) FROM images WHERE sha256 IS NOT NULL"),
            "images_ocr": q("SELECT count(*) FROM images WHERE ocr_text IS NOT NULL"),
            "qas": q("SELECT count(*) FROM qas"),
            "observations": q("SELECT count(*) FROM observations"),
            "schemas": q("SELECT count(*) FROM schemas"),
            "episodes": q("SELECT count(*) FROM nodes WHERE level = 'episode'"),
            "topics": q("SELECT count(*) FROM nodes WHERE level = 'topic'"),
            "first_time": span[0],
            "last_time": span[1],
        }

    def time_span(self) -> tuple[datetime | None, datetime | None]:
        row = self.con.execute("SELECT min(time), max(time) FROM rounds").fetchone()
        return row[0], row[1]

