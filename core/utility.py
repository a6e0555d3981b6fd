"""Learned utility of memory units (DG-Mem section 3.3, eq. 5), from people's ratings of answers.

A person marks an answer right or wrong. The answer's Shapley attribution
(core.attribution, agreement with the answer shown) becomes a reward per
evidence unit: Δ(u) when the answer was right, -Δ(u) when it was wrong (the
units that pushed the engine to a wrong answer lose utility; with binary
values, agreement with a wrong answer is the complement of agreement with
the right one, so the Shapley values w.r.t. the gold are exactly -Δ when
every other answer counts as right, the reading we take). Each unit keeps a
running sum and a count in the memory file (table `unit_utility`); its
utility is U(u) = sum / max(count, 1).

Unit key: the evidence unit id, which is already stable: the node id for
hierarchy units (events, episodes, topics; "round:<id>" when no hierarchy
was built) and f"{table}:{source}" for analytic rows. Computed results
("{table}:{op}(expr)") are not memory units and get no utility.

Retrieval re-ranks by s = α·ŝim + (1-α)·Û (hats: min-max over the
candidates), α = config.utility_alpha (0.8, DG-Mem Table 5). `rerank` does
it on a hit list; `UtilityRankedRetrieval` wraps a RetrievalMemory so that
SemanticMatch / EventLocate see utility-aware rankings.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

import duckdb

from .errors import InputError

DDL = ("CREATE TABLE IF NOT EXISTS unit_utility(unit_key VARCHAR PRIMARY KEY, sum DOUBLE, count INTEGER, "
       "updated TIMESTAMP)")
# the rewards of each identified rating, so rating the same answer again replaces its rewards
RATINGS_DDL = ("CREATE TABLE IF NOT EXISTS unit_ratings(rating_id VARCHAR, unit_key VARCHAR, reward DOUBLE, "
               "PRIMARY KEY (rating_id, unit_key))")
OVERFETCH = 3  # the wrapped retrieval fetches k * OVERFETCH candidates so utility can promote beyond the top k


@dataclass(frozen=True)
class Utility:
    unit_key: str
    sum: float
    count: int

    @property
    def mean(self) -> float:
        """U = sum / max(count, 1)."""
        return self.sum / max(self.count, 1)


def unit_key(unit) -> str | None:
    """The utility key of an EvidenceUnit (or a dict from Trace.to_dict()); None for computed results."""
    kind = unit.get("kind") if isinstance(unit, dict) else getattr(unit, "kind", "")
    if isinstance(unit, dict):
        uid = unit.get("unit_id") or unit.get("unit")
    else:
        uid = getattr(unit, "unit_id", None) or getattr(unit, "unit", None)
    if kind == "computed" or not uid:
        return None
    return str(uid)


def rewards_from_rating(attribution, correct: bool) -> dict[str, float]:
    """{unit_key: reward} for a rated answer: +Δ when `correct`, -Δ when wrong (computed units skipped).

    `attribution` is an AttributionResult (or its to_list() rows). Raises
    InputError when it was measured against a gold answer: such values already
    carry the verdict and must not be flipped; add them with UtilityStore.add.
    """
    rows = getattr(attribution, "values", attribution)
    if getattr(attribution, "reference", "answer") != "answer":
        raise InputError("rating", "attribution", "the attribution was measured against the gold answer; "
                         "add its values directly instead of rating it")
    sign = 1.0 if correct else -1.0
    out: dict[str, float] = {}
    for r in rows:
        key = unit_key(r)
        value = r["value"] if isinstance(r, dict) else r.value
        if key is not None:
            out[key] = out.get(key, 0.0) + sign * float(value)
    return out


class UtilityStore:
    """Per-unit utility (running sum and count) in the memory file's `unit_utility` table.

    With `create` (the default) the table is created when missing (until the
    store's migration 2 does it); with `create=False` nothing is written
    until the first `add` (what a query engine wants: asking never changes
    the file). Reads of a file without the table give utility 0. On a
    read-only connection writing raises InputError.
    """

    def __init__(self, con: duckdb.DuckDBPyConnection, *, create: bool = True):
        self.con = con
        self._lock = threading.Lock()
        self.writable = True
        if create:
            self._create()

    def _create(self) -> None:
        cur = self.con.cursor()
        try:
            cur.execute(DDL)
            cur.execute(RATINGS_DDL)
        except duckdb.Error as e:
            if "read-only" not in str(e).lower() and "read only" not in str(e).lower():
                raise
            self.writable = False
        finally:
            cur.close()

    def _read(self, sql: str, params: list) -> list[tuple]:
        cur = self.con.cursor()
        try:
            return cur.execute(sql, params).fetchall()
        except duckdb.CatalogException:  # read-only file without the table
            return []
        finally:
            cur.close()

    def add(self, rewards: Mapping[str, float], rating_id: str | None = None) -> None:
        """Add one rated answer: sum += reward and count += 1 for each unit, in one transaction.

        rating_id: identifies the rated answer; when that answer was rated
        before, its earlier rewards are taken back first (a changed or repeated
        verdict counts once). Raises InputError for a non-finite reward or a
        read-only memory.
        """
        items = [(str(k), float(r)) for k, r in rewards.items()]
        for k, r in items:
            if r != r or r in (float("inf"), float("-inf")):
                raise InputError("utility", k, f"reward {r} is not a finite number")
        if not items and rating_id is None:
            return
        self._create()
        if not self.writable:
            raise InputError("utility", "", "the memory is open read-only; utilities cannot be updated")
        with self._lock:
            cur = self.con.cursor()
            try:
                cur.execute("BEGIN TRANSACTION")
                try:
                    if rating_id is not None:
                        old = cur.execute("SELECT unit_key, reward FROM unit_ratings WHERE rating_id = ?",
                                          [rating_id]).fetchall()
                        for k, r in old:
                            cur.execute("UPDATE unit_utility SET sum = sum - ?, count = count - 1, updated = now() "
                                        "WHERE unit_key = ?", [r, k])
                        cur.execute("DELETE FROM unit_utility WHERE count <= 0 AND unit_key IN "
                                    "(SELECT unit_key FROM unit_ratings WHERE rating_id = ?)", [rating_id])
                        cur.execute("DELETE FROM unit_ratings WHERE rating_id = ?", [rating_id])
                        for k, r in items:
                            cur.execute("INSERT INTO unit_ratings VALUES (?, ?, ?)", [rating_id, k, r])
                    for k, r in items:
                        cur.execute(
                            "INSERT INTO unit_utility VALUES (?, ?, 1, now()) ON CONFLICT (unit_key) DO UPDATE "
                            "SET sum = unit_utility.sum + excluded.sum, count = unit_utility.count + 1, "
                            "updated = now()", [k, r])
                except BaseException:
                    cur.execute("ROLLBACK")
                    raise
                cur.execute("COMMIT")
            finally:
                cur.close()

    def rate(self, attribution, correct: bool, rating_id: str | None = None) -> dict[str, float]:
        """Record a person's verdict on an answer; returns the rewards added (see rewards_from_rating).

        With `rating_id` (e.g. a fingerprint of the trace) a second verdict on
        the same answer replaces the first instead of counting twice.
        """
        rewards = rewards_from_rating(attribution, correct)
        self.add(rewards, rating_id=rating_id)
        return rewards

    def get(self, key: str) -> Utility:
        """The unit's running sum and count (0, 0 when never rated)."""
        rows = self._read("SELECT sum, count FROM unit_utility WHERE unit_key = ?", [key])
        return Utility(key, float(rows[0][0]), int(rows[0][1])) if rows else Utility(key, 0.0, 0)

    def utilities(self, keys: Iterable[str]) -> dict[str, float]:
        """{key: U(key)} for the keys (0.0 for units never rated)."""
        keys = list(dict.fromkeys(str(k) for k in keys))
        out = {k: 0.0 for k in keys}
        if not keys:
            return out
        rows = self._read("SELECT unit_key, sum / greatest(count, 1) FROM unit_utility "
                          "WHERE unit_key IN (SELECT unnest(?::VARCHAR[]))", [keys])
        out.update({k: float(u) for k, u in rows})
        return out

    def all(self) -> list[Utility]:
        """Every rated unit, highest utility first."""
        rows = self._read("SELECT unit_key, sum, count FROM unit_utility "
                          "ORDER BY sum / greatest(count, 1) DESC, unit_key", [])
        return [Utility(k, float(s), int(c)) for k, s, c in rows]

    def is_empty(self) -> bool:
        return not self._read("SELECT 1 FROM unit_utility LIMIT 1", [])


def learn_from_qas(engine, qas: Sequence, store: UtilityStore, *, scorer_for=None, threshold: float = 1.0,
                   graded: bool = False, budget: int | None = None, progress=lambda *a: None) -> dict:
    """DG-Mem Stage 2 over a training set: ask each QA, attribute against its gold, add the values.

    `scorer_for(qa) -> (answer_text -> float)` scores like the benchmark does
    (default: score_answer with the QA's answer kind and tolerance) and
    `threshold` is where a score counts as right (`graded`: the score itself
    is the value, useful for token-F1 answers). Values measured against the
    gold already carry the verdict (no sign flip). Questions are asked with
    the utility already learned (like DG-Mem, which keeps the rule support
    fixed: pass an engine whose retrieval ignores utility for a frozen pass).
    Returns {"questions", "units", "calls"}.
    """
    from .attribution import attribute

    units = calls = 0
    for i, qa in enumerate(qas, start=1):
        trace = engine.ask(qa.question, options=tuple(qa.options))
        if scorer_for is not None:
            res = attribute(engine, trace, scorer=scorer_for(qa), threshold=threshold, graded=graded,
                            budget=budget, options=tuple(qa.options))
        else:
            kind = qa.answer_kind or ("refusal" if qa.refusal else None)
            res = attribute(engine, trace, gold=qa.answer, kind=kind, tolerance=qa.tolerance, threshold=threshold,
                            graded=graded, budget=budget, options=tuple(qa.options))
        rewards: dict[str, float] = {}
        for u in res.values:
            key = unit_key(u)
            if key is not None:
                rewards[key] = rewards.get(key, 0.0) + u.value
        store.add(rewards)
        units += len(rewards)
        calls += res.calls
        progress("utility", i, len(qas))
    return {"questions": len(qas), "units": units, "calls": calls}


def _minmax(xs: Sequence[float]) -> list[float]:
    lo, hi = min(xs), max(xs)
    return [0.0 if hi - lo <= 1e-12 else (x - lo) / (hi - lo) for x in xs]


def rerank(hits: Sequence[tuple[str, float]], utility_store: UtilityStore | Mapping[str, float] | None,
           alpha: float, enabled: bool = True) -> list[tuple[str, float]]:
    """Hits re-ranked by s = α·ŝim + (1-α)·Û (min-max over the hits), best first, as (key, s).

    Returns the hits unchanged (order and similarity scores) when disabled,
    when α >= 1, with fewer than two hits, or when every hit has the same
    utility (the utility term cannot tell them apart). Ties keep the
    similarity order. `utility_store` may be a plain {key: U} mapping.
    Raises ValueError for α outside [0, 1].
    """
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"rerank: alpha must be in [0, 1], got {alpha}")
    hits = [(str(k), float(s)) for k, s in hits]
    if not enabled or utility_store is None or alpha >= 1.0 or len(hits) < 2:
        return hits
    keys = [k for k, _ in hits]
    if isinstance(utility_store, Mapping):
        util = {k: float(utility_store.get(k, 0.0)) for k in keys}
    else:
        util = utility_store.utilities(keys)
    us = [util[k] for k in keys]
    if max(us) - min(us) <= 1e-12:
        return hits
    sims = _minmax([s for _, s in hits])
    uh = _minmax(us)
    scored = [(k, alpha * a + (1 - alpha) * b, i) for i, (k, a, b) in enumerate(zip(keys, sims, uh))]
    scored.sort(key=lambda x: (-x[1], x[2]))
    return [(k, s) for k, s, _ in scored]


class UtilityRankedRetrieval:
    """A RetrievalMemory whose search() ranks by similarity and learned utility (DG-Mem eq. 5).

    search(query, scope, k) asks the inner memory for k * OVERFETCH candidates,
    re-ranks them with `rerank` and returns the best k; node() and members()
    are the inner memory's. With `enabled=False` (or no rated unit) it is the
    inner memory unchanged.
    """

    def __init__(self, inner, store: UtilityStore, alpha: float, enabled: bool = True):
        if not 0.0 <= alpha <= 1.0:
            raise ValueError(f"UtilityRankedRetrieval: alpha must be in [0, 1], got {alpha}")
        self.inner = inner
        self.store = store
        self.alpha = alpha
        self.enabled = enabled

    def search(self, query: str, scope: str = "event", k: int = 10) -> list[tuple[str, float]]:
        if not self.enabled or self.alpha >= 1.0 or self.store.is_empty():
            return list(self.inner.search(query, scope, k))
        hits = self.inner.search(query, scope, max(k, k * OVERFETCH))
        return rerank(hits, self.store, self.alpha, True)[:k]

    def node(self, node_id: str) -> dict:
        return self.inner.node(node_id)

    def members(self, node_id: str) -> list[str]:
        return self.inner.members(node_id)

    def __getattr__(self, name):  # events_under and other extras of the inner memory
        if name == "inner":
            raise AttributeError(name)
        return getattr(self.inner, name)


__all__ = ["UtilityStore", "Utility", "unit_key", "rewards_from_rating", "rerank", "UtilityRankedRetrieval",
           "learn_from_qas", "DDL"]
