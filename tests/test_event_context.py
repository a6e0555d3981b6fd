"""An event read in its conversation (core/planning/event_context.py): neighbours and session raise it."""
from __future__ import annotations

import numpy as np

from core.planning.event_context import EventContext


def test_a_round_next_to_a_strong_match_beats_an_equal_round_elsewhere():
    # two sessions; rounds 1 and 5 score the same alone, but round 1 sits beside the best match (round 2)
    h = np.array([0.5, 0.5, 0.9, 0.1, 0.1, 0.5, 0.1])
    session = np.array([0, 0, 0, 0, 1, 1, 1])
    order = np.arange(7)
    out = EventContext(window=1, neighbour_weight=0.5, session_weight=0.0).rescore(h, session, order)
    assert out[1] > out[5]
    assert np.argmax(out) == 2  # the match itself stays first


def test_neighbours_do_not_cross_a_session_boundary():
    h = np.array([0.2, 0.9, 0.2])
    session = np.array([0, 1, 2])  # each round its own session: nobody has a neighbour
    out = EventContext(window=3, neighbour_weight=1.0, session_weight=0.0).rescore(h, session, np.arange(3))
    assert np.allclose(out, h / 2.0)  # (h + 1.0 * 0) / (1 + 1.0): the order is the events' own


def test_a_session_that_keeps_matching_raises_its_rounds():
    h = np.array([0.4, 0.6, 0.6, 0.6, 0.45, 0.0, 0.0, 0.0])
    session = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    out = EventContext(window=0, neighbour_weight=0.0, session_weight=1.0, top=3).rescore(h, session, np.arange(8))
    assert out[0] > out[4]  # alone, round 5 (0.45) beat round 1 (0.4); its session does not match


def test_events_given_out_of_round_order_are_placed_by_their_order():
    h = np.array([0.9, 0.1, 0.5])
    order = np.array([10, 12, 11])  # the 0.5 round sits between the two others
    ctx = EventContext(window=1, neighbour_weight=1.0, session_weight=0.0)
    out = ctx.rescore(h, np.zeros(3, dtype=int), order)
    assert np.isclose(out[1], (0.1 + 0.5) / 2)  # its only neighbour is the 0.5 round (order 11), not 0.9
    assert np.isclose(out[2], (0.5 + 0.9) / 2)


def test_zero_weights_are_the_papers_scoring():
    h = np.array([0.3, 0.8, 0.1])
    ctx = EventContext(window=2, neighbour_weight=0.0, session_weight=0.0)
    assert not ctx.active
    assert np.array_equal(ctx.rescore(h, np.zeros(3, dtype=int), np.arange(3)), h)


def test_the_engine_reads_events_in_context_and_the_papers_scoring_stays_a_setting(tmp_path):
    """Built memory, real hierarchy: the round that answers sits after the one naming the subject and
    shares no word with the question; read in context it reaches the evidence, alone it does not."""
    from datetime import datetime, timedelta

    from build_child import deps

    from core.build import build
    from core.config import DEFAULT
    from core.model import History, Round, Session, Utterance
    from core.planning import QueryEngine
    from core.hierarchy import Hierarchy
    from core.store import Store

    t0 = datetime(2026, 3, 1, 9)
    talk = [("S1", "Let us talk about the greenhouse heater settings."),
            ("S1", "Decided: nineteen overnight, twenty-two by day."),
            ("S2", "The library closes early on Sundays."), ("S2", "Chess club moved to Thursdays."),
            ("S3", "My cousin visits next week."), ("S3", "We ordered new curtains.")]
    sessions = []
    for k, sid in enumerate(dict.fromkeys(s for s, _ in talk)):
        rounds = tuple(Round(f"{sid}:{i + 1}", sid, t0 + timedelta(days=3 * k, minutes=i),
                             (Utterance("user", text),), index_in_session=i)
                       for i, text in enumerate(t for s, t in talk if s == sid))
        sessions.append(Session(sid, None, rounds))
    d = deps()
    with Store(str(tmp_path / "m.duckdb")) as store:
        build(store, [History("h.json", "memeye", tuple(sessions))], d, DEFAULT)
        ranks = {}
        for name, cfg in (("context", DEFAULT),
                          ("alone", DEFAULT.with_(event_neighbour_weight=0.0, event_session_weight=0.0))):
            engine = QueryEngine(store.con, d.text_encoder, cfg,
                                 retrieval=Hierarchy(store.con, d.text_encoder, d.image_encoder, cfg))
            got = [rid for rid, _ in [(engine.plain_retrieval.node(n)["round_id"], s)
                                      for n, s in engine.plain_retrieval.search("greenhouse heater", "event", 6)]]
            ranks[name] = got.index("S1:2")
    assert ranks["context"] == 1 and ranks["alone"] > 1, ranks
