"""Planning context (paper 3.5.2, eq. 9): rank table and episode metadata for a question.

Candidates are every analytic table (metadata text μ_T: name, description,
columns with units, sampled values) and every episode (its description).
Each gets h = λ·cos(E(q), E(μ)) + (1-λ)·BM25(q, μ), BM25 min-max normalized
over all candidates for this question; the top k_tab tables and k_epi
episodes are kept. Every candidate and its three scores stay in the context
(the trace shows them). Metadata embeddings are computed once and cached
per text; the catalog is reloaded when the tables change.
"""
from __future__ import annotations

import hashlib
import re
import threading
import weakref
from dataclasses import dataclass

import duckdb
import numpy as np

from ..config import Config
from ..protocols import TextEncoder
from .metadata import TableMeta, load_catalog, signature
from .scoring import BM25Index, hybrid, stable_top, tokens
from .tools import TOOL_ARGS, TOOL_DESCRIPTIONS


# episode candidates kept in a context (and its trace): the best ones by h; only the top k_epi are
# selected, and building every one costs ~0.6 s per question at 100k episodes
MAX_EPISODE_CANDIDATES = 200
ROW_WORDS_MAX = 300  # rows of a table whose round words say what the table's rows are about


# encoder object -> sha1 of a text -> its embedding. Keyed by the object, not its name: two encoders with
# one name (a test's fakes) never share vectors, and an encoder that is dropped takes its vectors along.
_SHARED: "weakref.WeakKeyDictionary[object, dict[str, np.ndarray]]" = weakref.WeakKeyDictionary()
_SHARED_LOCK = threading.Lock()
MAX_SHARED = 200_000  # texts per encoder (~300 MB at 384 dimensions); cleared when full


def _shared_embeddings(encoder) -> dict[str, np.ndarray]:
    """The process-wide text -> embedding memo of `encoder` (a private one when it cannot be weakly referenced)."""
    with _SHARED_LOCK:
        try:
            memo = _SHARED.setdefault(encoder, {})
        except TypeError:
            return {}
        if len(memo) > MAX_SHARED:
            memo.clear()
        return memo


@dataclass(frozen=True)
class Candidate:
    kind: str  # "table" | "episode"
    name: str  # table name or episode node id
    text: str  # the metadata text μ
    cos: float
    bm25: float  # raw BM25
    bm25_norm: float
    score: float  # h
    selected: bool

    def to_dict(self) -> dict:
        return {"kind": self.kind, "name": self.name, "text": self.text, "cos": self.cos, "bm25": self.bm25,
                "bm25_norm": self.bm25_norm, "score": self.score, "selected": self.selected}

    @staticmethod
    def from_dict(d: dict) -> "Candidate":
        return Candidate(**{k: d[k] for k in ("kind", "name", "text", "cos", "bm25", "bm25_norm", "score",
                                                "selected")})


@dataclass(frozen=True)
class PlanningContext:
    question: str
    candidates: tuple[Candidate, ...]  # every candidate, best first within each kind
    ranked: bool  # False for the no-context ablation (everything kept, unranked)
    people: tuple[str, ...] = ()  # the memory's people by name, the user first (a name of them is not missing content)

    @property
    def tables(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.candidates if c.kind == "table" and c.selected)

    @property
    def episodes(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.candidates if c.kind == "episode" and c.selected)

    def table_score(self, name: str) -> float:
        for c in self.candidates:
            if c.kind == "table" and c.name == name:
                return c.score
        return 0.0

    def render(self, tools: tuple[str, ...]) -> str:
        """The context as the planner prompt shows it: selected metadata plus tool descriptions."""
        lines = ["Analytic tables:"]
        lines += [f"- {c.text}" for c in self.candidates if c.kind == "table" and c.selected] or ["- (none)"]
        lines.append("Episodes (retrieval memory):")
        lines += [f"- [{c.name}] {c.text[:300]}" for c in self.candidates if c.kind == "episode" and c.selected] \
            or ["- (none)"]
        lines.append("Tools:")
        lines += [f"- {t}({', '.join(TOOL_ARGS[t])}): {TOOL_DESCRIPTIONS[t]}" for t in tools]
        return "\n".join(lines)


class ContextBuilder:
    """Builds planning contexts; caches the catalog (by signature) and metadata embeddings (by text)."""

    def __init__(self, con: duckdb.DuckDBPyConnection, text_encoder: TextEncoder, config: Config):
        self.con = con
        self.encoder = text_encoder
        self.config = config
        self._lock = threading.Lock()
        self._sig = None
        self._catalog: dict[str, TableMeta] = {}
        self._emb = _shared_embeddings(text_encoder)
        # scoring state of the last candidate set (texts, their embeddings, the BM25 index): rebuilt only
        # when the tables or the episodes change, not for every question (at 10k rounds, re-tokenizing and
        # re-indexing ~9k episode descriptions per question cost ~1 s)
        self._corpus_key: tuple | None = None
        self._corpus: tuple | None = None
        # per kind ("words", "vectors"): (catalog signature, table -> what its rows' rounds hold)
        self._per_table_caches: dict[str, tuple] = {}

    def catalog(self) -> dict[str, TableMeta]:
        """Current analytic-table metadata (reloaded only when a table changed)."""
        with self._lock:
            cur = self.con.cursor()
            try:
                sig = signature(cur)
                if sig != self._sig:
                    self._catalog = load_catalog(cur)
                    self._sig = sig
            finally:
                cur.close()
            return self._catalog

    def attributes(self) -> list[tuple[str, tuple[str, ...], str | None, int]]:
        """Every attribute of the observations with its labels as written, most common unit and count
        (for quantities that live only in one-off rounds, outside any table); cached until the tables
        or the number of observations change."""
        cur = self.con.cursor()
        try:
            key = (self._sig, cur.execute("SELECT count(*) FROM observations").fetchone()[0])
            if getattr(self, "_attr_key", None) == key:
                return self._attrs
            rows = cur.execute(
                "SELECT attribute, list(DISTINCT label) FILTER (WHERE label IS NOT NULL), mode(unit), count(*) "
                "FROM observations WHERE number IS NOT NULL GROUP BY attribute").fetchall()
        except duckdb.Error:
            return []
        finally:
            cur.close()
        self._attrs = [(r[0], tuple(str(x) for x in (r[1] or ())[:6]), r[2], int(r[3])) for r in rows]
        self._attr_key = key
        return self._attrs

    def _per_table(self, kind: str, table: str, sql: str, make):
        """`make(rows)` of what `sql` (its {ident}: the quoted table) returns for `table`, cached per `kind` and
        table until the tables change; `make([])` when the query fails (a table without its rounds)."""
        self.catalog()  # refreshes the signature
        cache = self._per_table_caches.get(kind)
        if cache is None or cache[0] != self._sig:
            cache = self._per_table_caches[kind] = (self._sig, {})
        if table in cache[1]:
            return cache[1][table]
        ident = '"' + table.replace('"', '""') + '"'
        cur = self.con.cursor()
        try:
            rows = cur.execute(sql.format(ident=ident)).fetchall()
        except duckdb.Error:
            rows = []
        finally:
            cur.close()
        cache[1][table] = make(rows)
        return cache[1][table]

    def row_words(self, table: str) -> tuple[frozenset[str], ...]:
        """The words (tokens and verb lemmas) of the round each row of `table` comes from: what the user
        wrote and the captions of its images, without the assistant's replies; at most ROW_WORDS_MAX rows,
        cached until the tables change."""
        from .columns import text_words

        def make(rows):
            out = []
            for text, captions in rows:
                lines = [ln for ln in str(text or "").splitlines() if not ln.lower().startswith("assistant:")]
                out.append(frozenset(text_words(" ".join(lines) + " " + str(captions or ""))))
            return tuple(out)
        return self._per_table("words", table, "SELECT r.text, x.captions FROM {ident} x JOIN rounds r ON "
                               f"r.round_id = x.source ORDER BY x.round_order LIMIT {ROW_WORDS_MAX}", make)

    def row_vectors(self, table: str) -> np.ndarray:
        """The text embeddings of the events (rounds) the rows of `table` come from, unit length, one per
        row that has an event node (at most ROW_WORDS_MAX rows); a (0, dim) array when none has one (a store
        without the retrieval memory). Cached until the tables change."""
        def make(rows):
            if not rows:
                return np.zeros((0, getattr(self.encoder, "dim", 0)), np.float32)
            vecs = np.asarray([r[0] for r in rows], dtype=np.float32)
            return vecs / np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12)
        return self._per_table("vectors", table, "SELECT n.text_emb FROM {ident} x JOIN nodes n ON n.level = "
                               "'event' AND n.round_id = x.source WHERE n.text_emb IS NOT NULL ORDER BY "
                               f"x.round_order LIMIT {ROW_WORDS_MAX}", make)

    def values_between(self, table: str, column: str, start: str, end: str) -> int:
        """How many rows of `table` hold a value of `column` on the days start..end (ISO dates, inclusive);
        0 when the table or column is not an analytic table's (names are checked against the catalog,
        never taken as given)."""
        meta = self.catalog().get(table)
        if meta is None or column not in {c.name for c in meta.columns}:
            return 0
        ident = '"' + table.replace('"', '""') + '"'
        col = '"' + column.replace('"', '""') + '"'
        cur = self.con.cursor()
        try:
            return int(cur.execute(f"SELECT count({col}) FROM {ident} WHERE CAST(time AS DATE) BETWEEN ? AND ?",
                                   [start, end]).fetchone()[0])
        except duckdb.Error:
            return 0
        finally:
            cur.close()

    def mentions(self, word: str) -> bool:
        """Whether any round (what was said, its images' captions and OCR text) holds a word starting with
        `word` (a lower-case token or stem: "checker" finds "Checkers"); cached per word until the rounds
        change. True when the store cannot tell (no rounds table): no question is refused on that."""
        w = re.sub(r"[^a-z0-9]", "", word.lower())
        if not w:
            return True
        cur = self.con.cursor()
        try:
            key = cur.execute("SELECT count(*), max(round_order) FROM rounds").fetchone()
            cache = getattr(self, "_mentions", None)
            if cache is None or cache[0] != key:
                cache = self._mentions = (key, {})
            if w not in cache[1]:
                pattern = r"(^|[^a-z0-9])" + w
                hit = cur.execute(
                    "SELECT EXISTS (SELECT 1 FROM rounds WHERE regexp_matches(lower(text), ?)) OR EXISTS ("
                    "SELECT 1 FROM images WHERE regexp_matches(lower(coalesce(caption, '') || ' ' || "
                    "coalesce(ocr_text, '')), ?))", [pattern, pattern]).fetchone()[0]
                cache[1][w] = bool(hit)
            return cache[1][w]
        except duckdb.Error:
            return True
        finally:
            cur.close()

    def one_off_rounds(self, word: str, table: str, limit: int = 20) -> tuple[str, ...]:
        """Rounds that name `word` (the word itself or with -s/-es, in what was said or an image's caption
        or OCR text) and are no row of the analytic `table`, in time order, at most `limit`: where a thing
        said of once or twice ("Paid €150 for a grain mill") lives. Empty when the store cannot tell."""
        w = re.sub(r"[^a-z0-9]", "", word.lower())
        if not w:
            return ()
        pattern = r"(^|[^a-z0-9])" + w + r"(e?s)?([^a-z0-9]|$)"
        sources = " UNION ".join(f'SELECT source FROM "{t.replace(chr(34), chr(34) * 2)}"'
                                 for t in self.catalog() if t == table)
        cur = self.con.cursor()
        try:
            rows = cur.execute(
                "SELECT r.round_id FROM rounds r WHERE (regexp_matches(lower(r.text), ?) OR EXISTS ("
                "SELECT 1 FROM images i WHERE i.round_id = r.round_id AND regexp_matches(lower(coalesce(i.caption, '') "
                "|| ' ' || coalesce(i.ocr_text, '')), ?)))"
                + (f" AND r.round_id NOT IN ({sources})" if sources else "")
                + " ORDER BY r.round_order LIMIT ?", [pattern, pattern, limit]).fetchall()
            return tuple(r for (r,) in rows)
        except duckdb.Error:
            return ()
        finally:
            cur.close()

    def round_observations(self, round_ids: list[str]) -> list[tuple]:
        """(round_id, attribute, label, number, unit, time) of the numeric observations of these rounds."""
        if not round_ids:
            return []
        cur = self.con.cursor()
        try:
            return cur.execute(
                "SELECT o.round_id, o.attribute, o.label, o.number, o.unit, r.time FROM observations o "
                "JOIN rounds r ON r.round_id = o.round_id WHERE o.number IS NOT NULL "
                "AND o.round_id IN (SELECT unnest(?::VARCHAR[])) ORDER BY r.time, o.round_id, o.seq",
                [list(round_ids)]).fetchall()
        except duckdb.Error:
            return []
        finally:
            cur.close()

    def embed(self, texts: list[str]) -> np.ndarray:
        """Embeddings for metadata texts, each text encoded once per encoder object (shared by every
        builder using it: a new engine over the same memory does not embed its episodes again)."""
        keys = [hashlib.sha1(t.encode()).hexdigest() for t in texts]
        if not texts:
            return np.zeros((0, self.encoder.dim), dtype=np.float32)
        # read into a local dict first: another builder may clear the shared memo meanwhile
        have = {k: v for k in keys if (v := self._emb.get(k)) is not None}
        missing = {k: t for k, t in zip(keys, texts) if k not in have}
        if missing:
            vecs = self.encoder.encode(list(missing.values()))
            for k, v in zip(missing, vecs):
                have[k] = self._emb[k] = np.asarray(v, dtype=np.float32)
        return np.stack([have[k] for k in keys])

    def warm(self) -> int:
        """Embed and index every candidate's metadata now (tables and episodes) so the first question
        does not wait for it; returns the number of candidates. Safe to call from a background thread."""
        texts, _, _, _ = self._candidates(True, True, None)
        return len(texts)

    def episodes(self) -> list[tuple[str, str]]:
        cur = self.con.cursor()
        try:
            return [(r[0], r[1] or "") for r in cur.execute(
                "SELECT node_id, description FROM nodes WHERE level = 'episode' ORDER BY first_order, node_id"
            ).fetchall()]
        except duckdb.CatalogException:
            return []
        finally:
            cur.close()

    def _episode_signature(self) -> tuple:
        cur = self.con.cursor()
        try:
            return tuple(cur.execute(
                "SELECT count(*), sum(hash(node_id, description) >> 11) FROM nodes WHERE level = 'episode'"
            ).fetchone())
        except duckdb.CatalogException:
            return ()
        finally:
            cur.close()

    def _candidates(self, use_tables: bool, use_episodes: bool,
                    catalog: dict[str, TableMeta] | None
                    ) -> tuple[list[tuple[str, str, str]], np.ndarray, BM25Index, np.ndarray]:
        """(kind, name, text) of every candidate, their embeddings, BM25 index and which are episodes;
        cached until the tables' texts or the episodes (count and a hash of ids and descriptions) change."""
        tables = []
        if use_tables:
            tables = [("table", t.table_name, t.text()) for t in (catalog if catalog is not None
                                                                   else self.catalog()).values()]
        key = (tuple(tables), self._episode_signature() if use_episodes else None)
        with self._lock:
            if key == self._corpus_key and self._corpus is not None:
                return self._corpus
        items = list(tables)
        if use_episodes:
            items += [("episode", nid, desc) for nid, desc in self.episodes()]
        is_ep = np.fromiter((k == "episode" for k, _, _ in items), dtype=bool, count=len(items))
        corpus = (items, self.embed([i[2] for i in items]), BM25Index([tokens(i[2]) for i in items]), is_ep)
        with self._lock:
            self._corpus_key, self._corpus = key, corpus
        return corpus

    def build(self, question: str, *, use_tables: bool = True, use_episodes: bool = True,
              ranked: bool = True, catalog: dict[str, TableMeta] | None = None) -> PlanningContext:
        """Score every candidate; keep top k_tab / k_epi (all of them when ranked=False).

        `catalog`: a snapshot from catalog() to use instead of checking for changes again."""
        items, vecs, index, is_ep = self._candidates(use_tables, use_episodes, catalog)
        people = self.people()
        if not items:
            return PlanningContext(question, (), ranked, people)
        qv = self.encoder.encode([question])[0]
        s = hybrid(np.asarray(qv, dtype=np.float32), vecs, tokens(question), index, self.config.lambda_meta)
        # a stable sort by -h, as sorted(range(n), key=lambda i: -h[i]) was, without a Python call per item
        if ranked:
            # every table, but only the best MAX_EPISODE_CANDIDATES episodes: the others are neither shown
            # nor selected (k_epi is far below that), so they are neither sorted nor visited (a Python loop
            # over 100k episodes was most of an analytic question's time)
            neg = -s.h
            pool = np.sort(np.concatenate([np.flatnonzero(~is_ep),
                                           stable_top(neg, MAX_EPISODE_CANDIDATES, np.flatnonzero(is_ep))]))
            idx = pool[np.argsort(neg[pool], kind="stable")]
        else:
            idx = np.arange(len(items))
        limits = {"table": self.config.k_tab, "episode": self.config.k_epi}
        kept = {"table": 0, "episode": 0}
        cands = []
        # plain floats of the visited items only (indexing numpy arrays per item was slow at 100k episodes)
        cos, bm, bn, h = (a[idx].tolist() for a in (s.cos, s.bm25, s.bm25_norm, s.h))
        for j, i in enumerate(idx.tolist()):
            kind, name, text = items[i]
            sel = (not ranked) or kept[kind] < limits[kind]
            kept[kind] += sel
            cands.append(Candidate(kind, name, text, cos[j], bm[j], bn[j], h[j], bool(sel)))
        return PlanningContext(question, tuple(cands), ranked, people)

    def people(self) -> tuple[str, ...]:
        """The names the stored files give the memory's people, the user first (empty in an older memory)."""
        try:
            rows = self.con.execute("SELECT name FROM people ORDER BY position, source").fetchall()
        except duckdb.CatalogException:  # a memory file from before migration 5 opened read-only
            return ()
        return tuple(dict.fromkeys(r[0] for r in rows))
