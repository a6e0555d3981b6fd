"""Shapley attribution of evidence units (DG-Mem section 3.3, "Context Attribution").

For an answered question the evidence units of its Trace are the players.
The value of a subset S is whether the answer produced from S alone agrees
with a reference: the answer from all the evidence (default) or the gold
answer when one is known (scored with core.evaluation.scoring.score_answer).
`graded=True` uses the scorer's float instead of the 0/1 verdict.

Two estimators, both pure functions of a value function `v(frozenset) -> float`:

- `shapley_exact(players, v)`: the Shapley formula over all 2^n subsets
  (each subset evaluated once, memoized by frozenset).
- `shapley_sampled(players, v, budget, rng)`: DG-Mem's batch: the empty and
  the full set plus `budget - 2` subsets drawn uniformly without replacement
  from the strict middle layers (1 <= |S| <= n-1), in antithetic pairs
  (S, N \\ S) to cut the variance. Values come from the
  constrained weighted least-squares fit of KernelSHAP (Lundberg & Lee 2017):
  minimise sum_S k(|S|) (v(S) - v(∅) - sum_{i in S} phi_i)^2 with the Shapley
  kernel k(s) = (n-1) / (C(n,s) s (n-s)), subject to sum_i phi_i = v(N) - v(∅).
  Over the whole powerset that fit IS the Shapley value, so when the batch
  reaches 2^n subsets the estimate is exact (tests check both this and that
  the error shrinks as the budget grows). With too few subsets to identify
  every value, the minimum-norm solution is taken, which splits what the
  batch cannot tell apart equally (symmetric in the players).

`attribute(engine, trace)` answers from subsets by re-running the engine's
answerer on the trace's steps with the withheld units removed (no tool is
re-run and the plan is not redone: the attribution is of the answering
stage, like DG-Mem's rule subsets injected into one fixed problem). With the
rule answerer (deterministic) and at most `max_exact` units it is exact; with
an LLM answerer it samples a batch and reports the number of answerer calls.
"""
from __future__ import annotations

import itertools
import math
import random
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Callable, Hashable, Iterable, Mapping, Sequence

import numpy as np

from .errors import InputError
from .model import EvidenceUnit

MAX_EXACT = 10  # deterministic answerer: exact Shapley up to this many units (2^10 = 1024 answers)
MAX_EXACT_HARD = 16  # shapley_exact refuses more players (65 536 subsets)
DEFAULT_LLM_BUDGET = 16  # answerer calls per question with an LLM answerer (B in DG-Mem)
DEFAULT_RULE_BUDGET = 1024  # subsets for a deterministic answerer beyond MAX_EXACT units

Value = Callable[[frozenset], float]


# ---------------------------------------------------------------- pure estimators

class _Memo:
    """v memoized by frozenset; `calls` counts distinct evaluations (= answerer calls)."""

    def __init__(self, v: Value, seed: Mapping[frozenset, float] | None = None):
        self.v = v
        self.cache: dict[frozenset, float] = dict(seed or {})
        self.calls = 0

    def __call__(self, s: frozenset) -> float:
        if s not in self.cache:
            self.cache[s] = float(self.v(s))
            self.calls += 1
        return self.cache[s]


def _check_players(players: Sequence[Hashable]) -> list:
    players = list(players)
    if len(set(players)) != len(players):
        dup = sorted({str(p) for p in players if players.count(p) > 1})
        raise ValueError(f"shapley: players must be distinct; repeated: {', '.join(dup)}")
    return players


def shapley_exact(players: Sequence[Hashable], v: Value) -> dict:
    """Exact Shapley values {player: value} over all 2^n subsets; v is called once per subset.

    phi_i = sum_{S not containing i} |S|! (n-|S|-1)! / n! * (v(S ∪ {i}) - v(S)).
    Raises ValueError for repeated players or more than MAX_EXACT_HARD players.
    """
    players = _check_players(players)
    n = len(players)
    if n > MAX_EXACT_HARD:
        raise ValueError(f"shapley_exact: {n} players is too many for the exact formula (max {MAX_EXACT_HARD}); "
                         f"use shapley_sampled")
    memo = v if isinstance(v, _Memo) else _Memo(v)
    weight = [math.factorial(k) * math.factorial(n - k - 1) / math.factorial(n) for k in range(n)]
    phi = {p: 0.0 for p in players}
    for i, p in enumerate(players):
        others = players[:i] + players[i + 1:]
        for k in range(n):
            for rest in itertools.combinations(others, k):
                s = frozenset(rest)
                phi[p] += weight[k] * (memo(s | {p}) - memo(s))
    return phi


def _kernel(n: int, s: int) -> float:
    return (n - 1) / (math.comb(n, s) * s * (n - s))


def _sample_middle(n: int, m: int, rng: random.Random) -> list[int]:
    """m distinct bitmasks from the subsets with 1..n-1 members, drawn uniformly in antithetic pairs.

    Each draw S is followed by its complement N \\ S (also a uniform middle
    subset), which cancels much of the estimator's variance (Covert & Lee 2021,
    paired sampling); the batch stays without replacement.
    """
    total = 2 ** n - 2
    full = 2 ** n - 1
    if m >= total:
        return list(range(1, full))
    order = (x + 1 for x in rng.sample(range(total), total)) if total <= 1 << 16 else \
        iter(lambda: rng.randrange(1, full), None)  # huge powerset: draws with rejection of repeats
    out: list[int] = []
    seen: set[int] = set()
    for x in order:
        if len(out) >= m:
            break
        if x in seen:
            continue
        out.append(x)
        seen.add(x)
        if len(out) < m and full ^ x not in seen:
            out.append(full ^ x)
            seen.add(full ^ x)
    return out


def kernel_shap(players: Sequence[Hashable], values: Mapping[frozenset, float]) -> dict:
    """Constrained KernelSHAP fit from evaluated subsets (must include the empty and the full set).

    Exact Shapley values when `values` holds all 2^n subsets. Raises ValueError
    when the empty or the full set is missing.
    """
    players = _check_players(players)
    n = len(players)
    full, empty = frozenset(players), frozenset()
    if empty not in values or full not in values:
        raise ValueError("kernel_shap: the evaluated subsets must include the empty and the full set")
    v0, vn = values[empty], values[full]
    if n == 0:
        return {}
    if n == 1:
        return {players[0]: vn - v0}
    index = {p: i for i, p in enumerate(players)}
    rows, ys, ws = [], [], []
    for s, val in values.items():
        if 0 < len(s) < n:
            z = np.zeros(n)
            z[[index[p] for p in s]] = 1.0
            rows.append(z)
            ys.append(val - v0)
            ws.append(_kernel(n, len(s)))
    # KKT system of: min (y - Z phi)' W (y - Z phi)  s.t.  1' phi = vn - v0
    a = np.zeros((n + 1, n + 1))
    b = np.zeros(n + 1)
    if rows:
        z = np.asarray(rows)
        w = np.asarray(ws)
        y = np.asarray(ys)
        a[:n, :n] = 2 * (z.T * w) @ z
        b[:n] = 2 * (z.T * w) @ y
    a[:n, n] = 1.0
    a[n, :n] = 1.0
    b[n] = vn - v0
    sol = np.linalg.lstsq(a, b, rcond=None)[0]  # minimum-norm when the batch leaves values unidentified
    return {p: float(sol[index[p]]) for p in players}


def shapley_sampled(players: Sequence[Hashable], v: Value, budget: int,
                    rng: random.Random | None = None) -> tuple[dict, int]:
    """Shapley estimate from a DG-Mem batch of at most `budget` subsets; returns (values, calls).

    The batch always holds the empty and the full set; the other `budget - 2`
    subsets are sampled uniformly without replacement from the strict middle
    layers. `budget >= 2^n` evaluates the whole powerset (exact). `calls` is
    the number of distinct subsets v was evaluated on (<= budget, fewer when v
    is a memo that already knew some). Raises ValueError for budget < 2.
    """
    players = _check_players(players)
    if not isinstance(budget, int) or budget < 2:
        raise ValueError(f"shapley_sampled: budget must be an integer >= 2 (the empty and the full set), "
                         f"got {budget!r}")
    rng = rng or random.Random(0)
    memo = v if isinstance(v, _Memo) else _Memo(v)
    before = memo.calls
    n = len(players)
    values = {frozenset(): memo(frozenset()), frozenset(players): memo(frozenset(players))}
    if n >= 2:
        for mask in _sample_middle(n, min(budget, 2 ** n) - 2, rng):
            s = frozenset(p for i, p in enumerate(players) if mask >> i & 1)
            values[s] = memo(s)
    return kernel_shap(players, values), memo.calls - before


# ---------------------------------------------------------------- results

@dataclass(frozen=True)
class UnitValue:
    """One evidence unit's Shapley value, with the rounds it links to."""

    unit: str
    value: float
    rounds: tuple[str, ...] = ()
    kind: str = ""
    step: int | None = None  # index of the first step that returned it
    text: str = ""

    @property
    def round(self) -> str | None:
        return self.rounds[0] if self.rounds else None


@dataclass(frozen=True)
class AttributionResult:
    """Shapley values of a trace's evidence units.

    values: in evidence order; v_full / v_empty: the value of all / no evidence
    (values sum to v_full - v_empty); calls: answerer calls made (the full set
    reuses the trace's answer and costs none); exact: every subset evaluated;
    reference: what agreement was measured against ("answer" or "gold");
    answers: the distinct answers seen, with how many subsets gave each;
    decisive: the unit holding at least 90 % of the value (v_full - v_empty), when one does, and
    answer_without: the answer the answerer gives from every unit but that one (None when a sampled
    estimate did not evaluate that subset: the budget is not exceeded for it).
    """

    values: tuple[UnitValue, ...]
    v_full: float
    v_empty: float
    calls: int
    exact: bool
    reference: str = "answer"
    reference_text: str = ""
    graded: bool = False
    budget: int | None = None
    answerer: str = "rules"
    fallbacks: int = 0
    answers: tuple[tuple[str, int], ...] = ()
    decisive: str | None = None
    answer_without: str | None = None

    def value_of(self, unit: str) -> float:
        """The unit's value; KeyError for a unit that is not in the evidence."""
        for u in self.values:
            if u.unit == unit:
                return u.value
        raise KeyError(unit)

    def to_list(self) -> list[dict]:
        """[{unit, round, value, rounds, kind, step}] in evidence order (what the CLI prints)."""
        return [{"unit": u.unit, "round": u.round, "value": u.value, "rounds": list(u.rounds), "kind": u.kind,
                 "step": u.step} for u in self.values]

    def to_dict(self) -> dict:
        return {"values": self.to_list(), "v_full": self.v_full, "v_empty": self.v_empty, "calls": self.calls,
                "exact": self.exact, "reference": self.reference, "reference_text": self.reference_text,
                "graded": self.graded, "budget": self.budget, "answerer": self.answerer,
                "fallbacks": self.fallbacks, "answers": [list(a) for a in self.answers],
                "decisive": self.decisive, "answer_without": self.answer_without}


# ---------------------------------------------------------------- answering from a subset

def restrict_steps(steps: Sequence[Any], keep: Iterable[str]) -> tuple:
    """The trace's step records as if only the units in `keep` had been returned.

    A step whose units are all withheld disappears (the answerer does not see
    that it was run, so a Compute value cannot leak through its record); a step
    that keeps some units keeps them in order, with Rank values, matched
    counts and the summary adjusted; steps without units (errors, skips,
    empty results) stay as they are. Keeping every unit returns the steps unchanged.
    """
    keep = set(keep)
    out = []
    for s in steps:
        if not s.units:
            out.append(s)
            continue
        mask = [u.unit_id in keep for u in s.units]
        if all(mask):
            out.append(s)
            continue
        if not any(mask):
            continue
        kept = tuple(u for u, m in zip(s.units, mask) if m)
        removed = len(s.units) - len(kept)
        value = s.value
        if isinstance(value, dict) and isinstance(value.get("values"), list) and \
                len(value["values"]) == len(s.units):
            value = dict(value, values=[x for x, m in zip(value["values"], mask) if m])
        summary = f"{len(kept)} of the {len(s.units)} unit(s) this step returned"
        out.append(replace(s, units=kept, value=value, n_matched=max(len(kept), s.n_matched - removed),
                           summary=summary, rows=(), sql="", params=()))
    return tuple(out)


class _MemoEncoder:
    """The engine's text encoder with an in-process memo: 2^n answers re-embed the same sentences."""

    def __init__(self, inner):
        self.inner = inner
        self.name = getattr(inner, "name", "encoder")
        self.dim = getattr(inner, "dim", None)
        self.memo: dict[str, np.ndarray] = {}

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        missing = list(dict.fromkeys(t for t in texts if t not in self.memo))
        if missing:
            for t, vec in zip(missing, np.asarray(self.inner.encode(missing))):
                self.memo[t] = vec
        if not texts:
            return np.zeros((0, self.dim or 0), dtype=np.float32)
        return np.stack([self.memo[t] for t in texts])


def _parse_now(now: str | None) -> datetime | None:
    if not now:
        return None
    try:
        return datetime.fromisoformat(now)
    except ValueError:
        return None


def _players(trace) -> list[tuple[str, EvidenceUnit, int]]:
    seen: dict[str, tuple[str, EvidenceUnit, int]] = {}
    for s in trace.steps:
        for u in s.units:
            seen.setdefault(u.unit_id, (u.unit_id, u, s.index))
    return list(seen.values())


def attribute(engine, trace, *, gold: str | None = None, kind: str | None = None, tolerance: float | None = None,
              graded: bool = False, budget: int | None = None, max_exact: int = MAX_EXACT,
              options: Sequence[tuple[str, str]] = (), seed: int = 0,
              scorer: Callable[[str], float] | None = None, threshold: float = 1.0) -> AttributionResult:
    """Shapley values of `trace`'s evidence units for the answer `engine` gives from subsets of them.

    Reference: `gold` when given (scored with score_answer(answer, gold, kind,
    tolerance)), else the trace's own answer (agreement); `scorer(answer_text)
    -> float` replaces either (e.g. the benchmark's own scoring of a QA; the
    reference is then "gold"). v is 1 when the score reaches `threshold`
    (default 1.0: full agreement), else 0; with `graded`, the score itself.
    The rule answerer is deterministic: exact Shapley when there are at most
    `max_exact` units, else a sampled
    batch of `budget` (default DEFAULT_RULE_BUDGET) subsets. An LLM answerer
    always samples, with at most `budget` (default DEFAULT_LLM_BUDGET) subsets;
    `calls` reports the answerer calls made. Pass the question's multiple-choice
    `options` if it had any. Raises InputError for a gold answer that does not
    fit `kind`, or a budget below 2.
    """
    from .evaluation.scoring import score_answer
    from .planning.answer import LLMAnswerer, RuleAnswerer

    if budget is not None and (not isinstance(budget, int) or budget < 2):
        raise InputError("attribution", "budget", f"the budget must be an integer >= 2, got {budget!r}")
    players = _players(trace)
    ids = [p[0] for p in players]
    question, steps, now = trace.question, tuple(trace.steps), _parse_now(trace.now)
    rules = RuleAnswerer(_MemoEncoder(engine.encoder))
    llm = getattr(engine, "llm", None)
    answerer = LLMAnswerer(llm, rules) if llm is not None else None
    fallbacks = 0
    answers: dict[str, int] = {}

    def answer_text(keep: frozenset) -> str:
        nonlocal fallbacks
        sub = restrict_steps(steps, keep)
        if answerer is not None:
            ans, fb = answerer.answer(question, sub, now, options=options)
            fallbacks += fb is not None
        else:
            ans = rules.answer(question, sub, now)
        return ans.text

    reference = "gold" if gold is not None or scorer is not None else "answer"
    ref_text = str(gold) if gold is not None else "" if scorer is not None else trace.answer.text
    ref_kind = kind if gold is not None else None

    def score(text: str) -> float:
        try:
            x = scorer(text) if scorer is not None else \
                score_answer(text, ref_text, ref_kind, tolerance if gold is not None else None)
        except ValueError as e:
            raise InputError("attribution", "gold", str(e)) from None
        return float(x) if graded else float(x >= threshold - 1e-9)

    texts: dict[frozenset, str] = {}

    def v(keep: frozenset) -> float:
        text = trace.answer.text if keep == frozenset(ids) else answer_text(keep)
        texts[keep] = text
        answers[text] = answers.get(text, 0) + 1
        return score(text)

    # the full set is the trace's own answer: no call (and, for an LLM, the very answer the person saw)
    memo = _Memo(v)
    memo(frozenset(ids))
    memo.calls = 0
    deterministic = answerer is None
    if deterministic and len(ids) <= max_exact:
        phi = shapley_exact(ids, memo)
        calls, exact, used_budget = memo.calls, True, None
    else:
        used_budget = budget or (DEFAULT_LLM_BUDGET if answerer is not None else DEFAULT_RULE_BUDGET)
        phi, _ = shapley_sampled(ids, memo, used_budget, random.Random(seed))
        calls = memo.calls
        exact = len(memo.cache) >= 2 ** len(ids)
    values = tuple(UnitValue(uid, phi.get(uid, 0.0), tuple(u.rounds), u.kind, step, u.text[:200])
                   for uid, u, step in players)
    decisive = _decisive(values, memo(frozenset(ids)) - memo(frozenset()))
    without = None
    if decisive is not None:
        rest = frozenset(ids) - {decisive}
        without = texts.get(rest)  # None when sampling did not visit it: no call beyond the budget
    return AttributionResult(
        values=values, v_full=memo(frozenset(ids)), v_empty=memo(frozenset()), calls=calls, exact=exact,
        reference=reference, reference_text=ref_text, graded=graded, budget=used_budget,
        answerer=answerer.name if answerer is not None else rules.name, fallbacks=fallbacks,
        answers=tuple(sorted(answers.items(), key=lambda kv: -kv[1])), decisive=decisive, answer_without=without)


DECISIVE_SHARE = 0.9


def _decisive(values: Sequence[UnitValue], total: float) -> str | None:
    """The unit whose value is at least DECISIVE_SHARE of `total` (v_full - v_empty), or None."""
    if not values or abs(total) < 1e-9:
        return None
    top = max(values, key=lambda u: abs(u.value))
    return top.unit if top.value / total >= DECISIVE_SHARE else None


def attribute_trace(engine, trace, **kw) -> list[dict]:
    """[{unit, round, value, rounds, kind, step}] for the CLI (`python -m core ask --attribute`).

    Agreement with the trace's own answer; keyword arguments go to `attribute`.
    """
    return attribute(engine, trace, **kw).to_list()


__all__ = ["shapley_exact", "shapley_sampled", "kernel_shap", "AttributionResult", "UnitValue", "attribute",
           "attribute_trace", "restrict_steps", "MAX_EXACT", "DEFAULT_LLM_BUDGET"]
