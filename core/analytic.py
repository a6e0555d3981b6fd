"""The analytic memory of processed rounds: induction then materialization, in round order.

`AnalyticBuilder` is what a build does with each round's (aligned) observations:
induction updates the statistics (paper 3.3.2); a discovery or an evolution
first writes everything before it, then creates or evolves its table (3.3.3);
the round's row is written with the others of its batch. `rebuild` replays it
over every processed round from the stored observations: after a person undoes
or makes a field alignment (core/align.py) the analytic memory is what a build
would have made had the alignment been so from the start. Everything runs in the
caller's transaction.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable, Sequence

from .config import Config
from .induction import InductionStore
from .materialize import Materializer, quote
from .model import Observation
from .protocols import LLM


class AnalyticBuilder:
    """Induction + materialization for rounds given in increasing round order.

    `add(order, round_id, observations)` per round, `flush()` before the
    transaction commits. `seconds` holds the time spent in each of the two stages.
    """

    def __init__(self, con, config: Config, llm: LLM | None = None):
        self.con = getattr(con, "con", con)
        self.induction = InductionStore(self.con, config)
        # table names and descriptions by the model only where config.llm_steps says "metadata"
        self.materializer = Materializer(self.con, llm=llm if config.uses_model("metadata") else None)
        self.seconds = {"induce": 0.0, "materialize": 0.0}
        self._to_add: list[tuple[int, str]] = []
        self._obs: dict[str, Sequence[Observation]] = {}

    def add(self, order: int, round_id: str, observations: Sequence[Observation]) -> None:
        """One round: `observations` must be exactly what is stored for it (attribute = field)."""
        t0 = time.perf_counter()
        update = self.induction.update(order, frozenset(o.attribute for o in observations), save=False)
        t1 = time.perf_counter()
        self.seconds["induce"] += t1 - t0
        if any(ev.kind in ("discovered", "evolved") for ev in update.events):
            # the materializer must see the same tables and `schemas` rows as in a round-by-round build
            self.induction.flush()
            t2 = time.perf_counter()
            self.seconds["induce"] += t2 - t1
            self._write_pending()
            for ev in update.events:
                if ev.kind in ("discovered", "evolved"):
                    self.materializer.apply(ev.schema_id, ev.pattern, order)
            t1 = time.perf_counter()
            self.seconds["materialize"] += t1 - t2
        self._to_add.append((order, round_id))
        self._obs[round_id] = observations

    def flush(self) -> None:
        """Write the batch's induction updates and table rows."""
        t0 = time.perf_counter()
        self.induction.flush()
        t1 = time.perf_counter()
        self._write_pending()
        self.seconds["induce"] += t1 - t0
        self.seconds["materialize"] += time.perf_counter() - t1

    def settle(self, round_order: int, names_since: int | None = None) -> tuple[str, ...]:
        """After the last round: every column typed from all its values (see
        `Materializer.settle_types`) and, with `names_since`, every table discovered at or after that
        round named from all its rounds (`Materializer.settle_names`); returns the columns whose type
        changed."""
        self.flush()
        t0 = time.perf_counter()
        changed = self.materializer.settle_types(round_order)
        self.materializer.settle_strays()
        if names_since is not None:
            self.materializer.settle_names(names_since)
        self.seconds["materialize"] += time.perf_counter() - t0
        return changed

    @property
    def fallbacks(self) -> list[str]:
        return self.materializer.fallbacks

    def _write_pending(self) -> None:
        if self._to_add:
            self.materializer.add_rounds(self._to_add, observations=self._obs)
        self._to_add, self._obs = [], {}


@dataclass(frozen=True)
class RebuildReport:
    rounds: int
    tables: tuple[str, ...]
    seconds: float


def clear(con) -> None:
    """Drop every analytic table and forget the induction state (rounds and observations stay)."""
    con = getattr(con, "con", con)
    names = [r[0] for r in con.execute("SELECT table_name FROM schemas WHERE table_name IS NOT NULL").fetchall()]
    con.execute("DROP VIEW IF EXISTS memory_tables")
    for n in names:
        con.execute(f"DROP TABLE IF EXISTS {quote(n)}")
    for t in ("schemas", "induction_support", "induction_timeline", "induction_events"):
        con.execute(f"DELETE FROM {t}")
    con.execute("DELETE FROM meta WHERE key = 'induction.state'")


def stored_rounds(con) -> list[tuple[int, str, list[Observation]]]:
    """(round_order, round_id, observations in seq order) of every processed round, in order."""
    con = getattr(con, "con", con)
    rows = con.execute(
        "SELECT r.round_order, r.round_id, o.attribute, o.raw_value, o.number, o.unit, o.value_kind, o.source, "
        "o.text_value FROM rounds r LEFT JOIN observations o ON o.round_id = r.round_id "
        "WHERE r.processed ORDER BY r.round_order, o.seq").fetchall()
    out: list[tuple[int, str, list[Observation]]] = []
    for order, rid, attr, raw, num, unit, kind, source, tv in rows:
        if not out or out[-1][1] != rid:
            out.append((int(order), rid, []))
        if attr is not None:
            out[-1][2].append(Observation(rid, attr, raw, num, unit, kind or "text", source or "dialogue",
                                          text_value=tv))
    return out


def rebuild(store, config: Config, llm: LLM | None = None,
            progress: Callable[[int, int], None] | None = None) -> RebuildReport:
    """Replay induction and materialization over every processed round from the stored
    observations (in the caller's transaction, or its own). Table names are chosen anew."""
    t0 = time.perf_counter()
    with store.transaction() as con:
        clear(con)
        rounds = stored_rounds(con)
        builder = AnalyticBuilder(con, config, llm=llm)
        for i, (order, rid, obs) in enumerate(rounds, start=1):
            builder.add(order, rid, obs)
            if progress is not None and (i % 64 == 0 or i == len(rounds)):
                progress(i, len(rounds))
        builder.settle(rounds[-1][0] if rounds else 0, names_since=0)
        tables = tuple(t.table_name for t in builder.materializer.tables())
    return RebuildReport(len(rounds), tables, round(time.perf_counter() - t0, 3))
