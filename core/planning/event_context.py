"""An event read in its conversation: relevance raised by the rounds around it and by its session.

A round rarely stands alone: the answer to "what did I decide about X?" sits two rounds after the
one that names X, and a session that keeps returning to a subject makes each of its rounds more
likely to be about it. Scored alone, each round competes with every other round of the history on
its own words; read in context, the event's hybrid relevance h (paper eq. 9) becomes

    h'(e) = (h(e) + β · max h(n) over the rounds n within `window` of e in its session
                  + γ · mean of the session's best `top` h) / (1 + β + γ)

so a round next to a strong match, in a session that matches, rises above an equally worded round
in an unrelated conversation. β = γ = 0 is the paper's own event scoring (each event alone).

Measured (bench/retrieval_context.py, top-10 rounds' recall of the gold rounds): on four development
files of Mem-Gallery 0.793 -> 0.855 over a plateau of window 1-3, β 0.35-0.5, γ 0.2-0.35 (LoCoMo
26 and 41: 0.680 -> 0.79 on the same plateau); the defaults (window 2, β 0.5, γ 0.35) lie on it. The
figures on the other files are in the README.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class EventContext:
    """How much an event's neighbours (`neighbour_weight` β, within `window` rounds of its session) and
    its session's best matches (`session_weight` γ, mean of the `top` best) add to its relevance."""

    window: int = 2
    neighbour_weight: float = 0.5
    session_weight: float = 0.35
    top: int = 3

    @property
    def active(self) -> bool:
        return (self.neighbour_weight > 0 and self.window > 0) or self.session_weight > 0

    def rescore(self, h: np.ndarray, session: np.ndarray, order: np.ndarray) -> np.ndarray:
        """h' of every event (arrays aligned: relevance, session number, round order); same length as `h`.

        Events are placed by round order inside their session, whatever order `h` comes in."""
        h = np.asarray(h, dtype=np.float64)
        n = h.size
        if n == 0 or not self.active:
            return h
        by_place = np.lexsort((order, session))  # session by session, in round order
        hs, ss = h[by_place], session[by_place]
        near = np.full(n, -np.inf)
        for d in range(1, self.window + 1):
            same = ss[d:] == ss[:-d]
            near[d:] = np.where(same, np.maximum(near[d:], hs[:-d]), near[d:])
            near[:-d] = np.where(same, np.maximum(near[:-d], hs[d:]), near[:-d])
        near = np.where(np.isfinite(near), near, 0.0)
        best = np.zeros(n)
        starts = np.flatnonzero(np.r_[True, ss[1:] != ss[:-1]])
        for a, b in zip(starts, np.r_[starts[1:], n]):
            best[a:b] = np.sort(hs[a:b])[::-1][: self.top].mean()
        out = np.empty(n)
        out[by_place] = (hs + self.neighbour_weight * near + self.session_weight * best) \
            / (1.0 + self.neighbour_weight + self.session_weight)
        return out
