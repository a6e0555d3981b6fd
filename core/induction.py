"""Incremental schema induction (paper 3.3.2) and its per-round statistics timeline.

Definitions (exactly the paper's, with the open edge cases decided below)
-------------------------------------------------------------------------
A_t is the set of attributes observed in round t.

* supp_t(C) = #{s <= t : C ⊆ A_s}; C is a *candidate* when supp_t(C) >= θ_s.
* all-conf_t(C) = supp_t(C) / max_{a∈C} supp_t({a}).
* ext-conf_t(C | A) = supp_t(C) / supp_t(A) for a schema A and C ⊋ A.

Decisions the paper leaves open (documented, tested, deterministic):

1. Minimum schema size (`min_schema_attrs`, default 2). A lone attribute is a
   valid pattern by the definition, but a one-attribute schema is harmful:
   every later candidate containing that attribute would be its *superset*,
   i.e. an evolution candidate, never a schema of its own, so a frequent lone
   attribute (a date, a heart rate) would swallow unrelated tables. Lone
   attributes therefore stay plain observations (retrieval memory still finds
   them). Candidate events are emitted for patterns of at least that size too.
2. Novelty. Call C a *fragment* of schema B when B's other attributes
   usually accompany C: frag(C, B) = mean_{b ∈ B \ C} supp(C ∪ {b}) / supp(C)
   >= θ_a (a mean over single attributes, not supp(B ∪ C) / supp(C), which
   decays as 0.9^|B \ C| when every attribute is missed 10% of the time and
   would let fragments of large schemas through). A candidate
   C is *novel* (evaluated for discovery) when, for every schema B, C ⊄ B
   (subsumed), C ⊉ B (a superset is an evolution candidate of B, never a new
   schema) and C is not a fragment of B (`block_fragments`, default True);
   with optional fields also not an overlap, "held" or "shared" (3d).
   Why the fragment rule: when a new attribute c starts to accompany a schema
   {a, b}, the pairs {a, c} and {b, c} reach all-conf 0.6 long before
   {a, b, c} reaches ext-conf 0.8 against {a, b}; the paper's literal rule
   admits those pairs (and a disjoint {x, y} that only ever appears with the
   schema) as new schemas, which then block the evolution. A pattern that
   recurs on its own (a fertilizing record sharing `volume` with a watering schema) is
   not a fragment and may become a table. False gives the paper's literal
   rule (only subsets and supersets are excluded; partial overlaps allowed).
3. Evolution. C is an extension of schema A when C ⊋ A, supp(C) >= θ_s,
   ext-conf(C|A) >= θ_e and, for every *other* schema B, C ⊉ B, C ⊄ B and
   (with block_fragments) C is not a fragment of B: a schema does not swallow
   another one, wholly or partly, so two schemas that always co-occur stay
   two tables instead of both growing into the same attribute set. Among the
   qualifying extensions of A the largest is taken, ties by higher ext-conf,
   then the lexicographically smallest sorted attribute tuple.
   3b. Specific additions (`delta_all_conf`, default True): the new attributes
   Δ = C \ A must also pass all-confidence against C:
   supp(C) / max_{a∈Δ} supp({a}) >= θ_a. Without it ext-conf alone would let
   a ubiquitous attribute (a date or a mood reported in every round, so
   ext-conf = 1 for every schema) join every schema right after discovery,
   which is exactly what all-conf is there to prevent; an attribute that
   really belongs to A (seen mostly with A) passes. False gives the paper's
   literal rule.
   3c. Optional fields (`optional_fields`, default True; beyond the paper). Records of one stream
   often carry a field only sometimes (a note, a second reading): its ext-conf stays below θ_e
   forever, so by 3 alone its values never reach the table. An attribute x not in schema A also
   extends A (C = A ∪ {x}) when it travels with A: for at least half of A's own attributes b (3d; at
   exactly half of more than two, x came with the whole of A at least once),
   supp({b, x}) / supp({x}) >= θ_a (when x is recorded, those fields are usually there: θ_a, not
   θ_e, because the schema's own fields may be optional too), with at least
   θ_s rounds of x beside one of them, and C passes rule 3's blocking. A ubiquitous attribute (a
   date in every round of every stream) does not travel with any one schema, and a field shared by
   two streams travels with neither, so neither joins — until one stream's schema holds it (rule 3):
   then x's rounds that schema explains are set aside, and in the rest x may travel with another
   schema (a "Peak" the solar reports print, and some electricity readings too). The rounds that
   report x alone are set aside too when x is in θ_e of A's rounds: a feeding told as "3.7 grams
   flakes" beside ones told "flakes 4.2 g, bloodworms, 23 seen" (without this, only the optional
   fields became the schema and the amount reached no table). Tried only when A has no rule-3
   extension.
   Incrementality: owned(x, A) changes only in a round containing x (or when schemas change, which
   re-examines every candidate).
   3d. Fields several streams print (with `optional_fields`). Real logs share generic fields: an oven
   log, a starter log and a dough log all print "Temp", two of them "Duration". Read literally, the
   shared attribute is in every log's rounds, so the later logs' all-confidence stays below θ_a and
   their records land in the first table or nowhere. So (a) discovery reads all-confidence with the
   rounds of x that schemas holding x explain set aside (`claimed`: per schema, x's rounds beside its
   most frequent *own* attribute, one no other schema holds; `discovery_conf`); (b) an attribute two
   schemas hold is no evidence: it does not count in an overlap (rule 2) nor in owned (3c, which needs
   more than half of A's own attributes); (c) a pattern with fewer than min_schema_attrs attributes
   outside the shared ones is no stream ("shared": a date beside a shared "Temp"), and a pattern that
   shares an attribute with schema A while one of A's other attributes is in θ_a of its rounds is A's
   records with something beside ("held"). Overlap (`block_overlaps`, more than half of C) also needs
   more than half of A, or C seen with one of A's other attributes: {duration, temp, water} beside
   {item, flour, duration, temp} (never with an item or a flour) is another log, {hours, project, date}
   beside {hours, project, breaks} the same one printed with other optional fields.
   Incrementality: in a round with x, supp(x) grows by one and claimed(x) by at most one per schema
   holding x; only when it grows by two or more (x beside two schemas' own attributes) can an untouched
   candidate with x rise in discovery all-confidence, so such a round also examines the candidates
   containing x. And when a round grows a schema A, alone(x, A) of 3c may stop counting for an x not in
   the round (supp(A ∪ {x}) just fell below θ_e · supp(A)); such an x is examined too.
4. Order inside a round: after the supports are updated, the engine repeats
   until nothing qualifies: (a) for the schemas in ascending id, the first one
   with a qualifying extension evolves (then restart); (b) otherwise the first
   qualifying novel candidate in the order (size desc, all-conf desc, supp
   desc, sorted tuple asc) is admitted (then restart). Taking the largest
   first is what "only inclusion-maximal novel candidates are admitted" means:
   once C is a schema its subsets are subsumed. Existing schemas evolve before
   new ones are discovered, so an extension grows its table rather than
   starting an overlapping one. Evolution may chain in one round (A -> C ->
   C'), because ext-conf is measured against the schema as it is now.
5. Large rounds. Counting every subset of A_t costs 2^|A_t|. Single
   attributes are always counted; when |A_t| > max_pattern_attrs (k), only the
   subsets of the k attributes of A_t with the highest single support (after
   counting this round; ties by name) are counted. So supp(C) counts the
   rounds in which C was inside that round's tracked set. At most 2^k - 1
   patterns are touched per round.

Incrementality (why the per-round cost does not grow with the history)
----------------------------------------------------------------------
Invariant: after every round nothing qualifies (no schema has a qualifying
extension, no novel candidate qualifies). At round t only the supports of the
patterns C ⊆ T_t (the tracked set) grow, by one.

* For C ⊄ T_t, supp(C) is unchanged while max_{a∈C} supp({a}) can only grow:
  all-conf(C) cannot rise. For C ⊄ T_t and a schema A, supp(C) is unchanged
  and supp(A) can only grow: ext-conf(C|A) cannot rise; nor can the
  Δ-specificity of rule 3b (its denominator is a single-attribute support).
  The fragment test of rule 2 cannot change for an untouched C either: if
  C ∪ {b} were touched, C would be too. (For C ⊆ T_t and A ⊆ C both grow
  by one, (x+1)/(y+1) >= x/y, so those are the ones to check.)
  Hence statistics alone can only make touched patterns qualify.
* Structure changes inside the round can also unblock untouched patterns.
  Discovering B only adds constraints (subset, superset, fragment of B), so
  it unblocks nothing except B's own extensions, the candidates ⊇ B. Evolving
  A -> A' changes the attributes frag(C, A') averages over and can
  therefore unblock any candidate (as a new schema, or as an extension of
  another schema); so a round with an evolution re-examines every candidate
  (kept in an attribute -> candidate index; with block_fragments off only
  the candidates ⊇ A). Evolutions are
  rare (each one grows a schema), so an ordinary round only looks at its own
  <= 2^k - 1 patterns plus the schemas, with O(1) dictionary operations,
  whatever the length of the history.

Memory grows with the number of distinct patterns ever seen (each round adds at
most 2^k - 1); nothing is ever recounted. The brute-force reference in
tests/test_induction.py recounts everything from scratch after each round and
must agree with this module on random streams.

Persistence
-----------
`InductionStore(con)` keeps the state in the tables of core/store.py migration
1 (induction_support, schemas, induction_timeline, induction_events) and in
`meta` (key induction.state: last round, round count, parameters).
`save(update)` writes only what the round changed, as upserts and appends,
inside the caller's transaction: it never BEGINs or COMMITs, so a build that
fails later in the same round rolls the induction back with everything else.

Patterns are stored as their sorted attributes joined by "|" (normalized
attribute names are lower snake_case, so "|" never occurs in one; `update`
rejects an attribute containing it).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from itertools import combinations
from typing import Iterable, Sequence

from .config import DEFAULT, Config
from .model import InductionEvent

SEP = "|"
STATUSES = ("below_support", "below_all_conf", "admitted", "subsumed", "extension_pending", "evolved")
TIMELINE_NOVEL_CAP = 8  # at most this many novel candidates get a timeline row per round
TIMELINE_NEAR = 0.5  # ... and only those with all-conf >= TIMELINE_NEAR * θ_a (near misses)
MAX_TRACKED_CAP = 20  # 2^20 subsets per round is the most we ever allow, whatever the config


def encode_pattern(pattern: Iterable[str]) -> str:
    """The storage key of a pattern: sorted attributes joined by '|'."""
    return SEP.join(sorted(pattern))


def decode_pattern(key: str) -> tuple[str, ...]:
    return tuple(key.split(SEP)) if key else ()


@dataclass(frozen=True)
class TimelineRow:
    """The statistics of one pattern after one round (what the app replays).

    status is one of STATUSES: below_support (supp < θ_s), below_all_conf (novel
    candidate whose all-conf < θ_a), admitted (the pattern is a schema),
    evolved (a schema that grew into this pattern this round), subsumed (inside
    a schema, or a fragment of its evolution, see rule 2), extension_pending (a
    superset of a schema whose ext-conf, or containment of another schema,
    keeps it from evolving it). schema_id names the schema the status refers
    to; ext_conf is measured against that schema when the pattern is a proper
    superset of it.
    """

    round_order: int
    pattern: tuple[str, ...]
    support: int
    all_conf: float
    ext_conf: float | None
    schema_id: int | None
    status: str


@dataclass(frozen=True)
class InducedSchema:
    schema_id: int
    attributes: tuple[str, ...]
    discovered_order: int
    updated_order: int


@dataclass(frozen=True)
class RoundUpdate:
    """What one round changed.

    events: candidate events (sorted by pattern) then discovered/evolved events
    in the order they happened. schemas: every schema after the round.
    supports: the patterns whose support changed, with their new support.
    changed_schemas: ids discovered or evolved this round.
    """

    round_order: int
    events: tuple[InductionEvent, ...]
    timeline: tuple[TimelineRow, ...]
    schemas: tuple[InducedSchema, ...]
    supports: tuple[tuple[tuple[str, ...], int], ...] = ()
    changed_schemas: tuple[int, ...] = ()
    rounds: int = 0  # rounds processed so far, this one included
    alone: tuple[tuple[str, int], ...] = ()  # InductionState.alone after the round

    def schema_map(self) -> dict[int, tuple[str, ...]]:
        return {s.schema_id: s.attributes for s in self.schemas}


@dataclass(frozen=True)
class InductionResult:
    """The outcome of a whole stream (reinduce)."""

    schemas: tuple[InducedSchema, ...]
    events: tuple[InductionEvent, ...]
    timeline: tuple[TimelineRow, ...]
    rounds: int

    def schema_map(self) -> dict[int, tuple[str, ...]]:
        return {s.schema_id: s.attributes for s in self.schemas}


@dataclass(frozen=True)
class InductionParams:
    """The parameters induction reads from Config, validated."""

    theta_s: int
    theta_a: float
    theta_e: float
    max_pattern_attrs: int
    min_schema_attrs: int
    block_fragments: bool
    delta_all_conf: bool
    optional_fields: bool = True
    block_overlaps: bool = True

    @classmethod
    def from_config(cls, config: Config) -> "InductionParams":
        """Raises ValueError naming the parameter when one is out of range."""
        p = cls(
            theta_s=int(config.theta_s),
            theta_a=float(config.theta_a),
            theta_e=float(config.theta_e),
            max_pattern_attrs=int(config.max_pattern_attrs),
            # Not in Config yet (requested patch); defaults documented above.
            min_schema_attrs=int(getattr(config, "min_schema_attrs", 2)),
            block_fragments=bool(getattr(config, "block_fragments", True)),
            delta_all_conf=bool(getattr(config, "delta_all_conf", True)),
            optional_fields=bool(getattr(config, "optional_fields", True)),
            block_overlaps=bool(getattr(config, "block_overlaps", True)),
        )
        if p.theta_s < 1:
            raise ValueError(f"config theta_s: must be >= 1 round, got {p.theta_s}")
        for name in ("theta_a", "theta_e"):
            v = getattr(p, name)
            if not 0.0 < v <= 1.0:
                raise ValueError(f"config {name}: must be in (0, 1], got {v}")
        if not 1 <= p.max_pattern_attrs <= MAX_TRACKED_CAP:
            raise ValueError(f"config max_pattern_attrs: must be in 1..{MAX_TRACKED_CAP}, got {p.max_pattern_attrs}")
        if p.min_schema_attrs < 1:
            raise ValueError(f"config min_schema_attrs: must be >= 1, got {p.min_schema_attrs}")
        return p

    def as_json(self) -> str:
        return json.dumps(self.__dict__, sort_keys=True)


@dataclass
class _Schema:
    attrs: frozenset[str]
    discovered: int
    updated: int


@dataclass
class InductionState:
    """Mutable state of an Inducer (supports, schemas, position in the stream).

    supports maps every pattern ever tracked (frozenset of attributes) to its
    support. full_check asks the next update to examine every candidate, not
    only the round's own patterns (used after the thresholds changed between
    two sessions, when the invariant of the module docstring may not hold).
    """

    supports: dict[frozenset[str], int]
    schemas: dict[int, _Schema]
    last_round: int | None = None
    rounds: int = 0
    full_check: bool = False
    # rounds whose only attribute was x, by x (rule 3c: a record told with one field only)
    alone: dict[str, int] = field(default_factory=dict)

    @classmethod
    def empty(cls) -> "InductionState":
        return cls(supports={}, schemas={})


def _key(c: frozenset[str]) -> tuple[str, ...]:
    return tuple(sorted(c))


class Inducer:
    """Pure in-memory incremental schema induction; see the module docstring."""

    def __init__(self, config: Config = DEFAULT, state: InductionState | None = None):
        self.params = InductionParams.from_config(config)
        self.state = state if state is not None else InductionState.empty()
        # attribute -> candidate patterns (supp >= θ_s) containing it; rebuilt from supports.
        self._index: dict[str, set[frozenset[str]]] = {}
        # supp({a}) by attribute name: the all-conf denominators, without building frozensets
        self._single: dict[str, int] = {}
        self._sorted_cache: list[tuple[int, _Schema]] | None = None
        # attribute -> ids of the schemas holding it, and schema attributes -> id (reset with _sorted_cache)
        self._holders_cache: tuple[dict[str, frozenset[int]], dict[frozenset[str], int]] | None = None
        # claimed(x) after this round's supports were counted, until a schema changes
        self._claimed_now: dict[str, int] = {}
        ts = self.params.theta_s
        for c, n in self.state.supports.items():
            if n >= ts:
                self._index_add(c)
            if len(c) == 1:
                (a,) = c
                self._single[a] = n

    # ------------------------------------------------------------------ views
    @property
    def schemas(self) -> dict[int, tuple[str, ...]]:
        """schema_id -> sorted attributes, for every schema so far."""
        return {sid: _key(s.attrs) for sid, s in sorted(self.state.schemas.items())}

    def induced(self) -> tuple[InducedSchema, ...]:
        return tuple(
            InducedSchema(sid, _key(s.attrs), s.discovered, s.updated) for sid, s in sorted(self.state.schemas.items())
        )

    def support(self, pattern: Iterable[str]) -> int:
        return self.state.supports.get(frozenset(pattern), 0)

    def tracked(self, attributes: frozenset[str]) -> frozenset[str]:
        """The attributes of a round whose subsets are counted (rule 5), given current supports."""
        k = self.params.max_pattern_attrs
        if len(attributes) <= k:
            return attributes
        sup = self.state.supports
        single = self._single
        return frozenset(sorted(attributes, key=lambda a: (-single.get(a, 0), a))[:k])

    # ------------------------------------------------------------------ update
    def update(self, round_order: int, attributes: Iterable[str]) -> RoundUpdate:
        """Process one round; returns its events, timeline rows and the schemas after it.

        Rounds must come in strictly increasing round_order. Raises ValueError
        for a round order that does not increase or an attribute that is not a
        non-empty string without '|'; the state is unchanged then.
        """
        st, p = self.state, self.params
        if not isinstance(round_order, int) or isinstance(round_order, bool):
            raise ValueError(f"round_order must be an int, got {round_order!r}")
        if st.last_round is not None and round_order <= st.last_round:
            raise ValueError(
                f"round {round_order}: rounds must come in increasing order (last processed: {st.last_round})"
            )
        attrs = frozenset(attributes)
        for a in attrs:
            if not isinstance(a, str) or not a or SEP in a:
                raise ValueError(f"round {round_order}: attribute {a!r} must be a non-empty string without '{SEP}'")
        st.last_round = round_order
        st.rounds += 1
        sup = st.supports
        ts = p.theta_s

        touched: list[frozenset[str]] = []
        single = self._single
        # rule 3d: claimed(x) of the schemas' attributes in this round, before its supports are counted
        held = frozenset(self._holders()[0]).intersection(attrs) if p.optional_fields else frozenset()
        claimed_before = {x: self.claimed(x, frozenset()) for x in held}
        self._claimed_now.clear()
        if len(attrs) == 1:
            (lone,) = attrs
            st.alone[lone] = st.alone.get(lone, 0) + 1
        for a in attrs:
            c = frozenset((a,))
            sup[c] = single[a] = sup.get(c, 0) + 1
            touched.append(c)
        tracked = self.tracked(attrs)
        names = sorted(tracked)
        for r in range(2, len(names) + 1):
            for combo in combinations(names, r):
                c = frozenset(combo)
                sup[c] = sup.get(c, 0) + 1
                touched.append(c)
        for c in touched:
            if sup[c] == ts:
                self._index_add(c)

        events: list[InductionEvent] = self._candidate_events(round_order, touched)

        if st.full_check:
            pool = self._all_candidates()
            st.full_check = False
        else:
            pool = {c for c in touched if sup[c] >= ts}
            for x in held:
                # supp(x) grew by one; where claimed(x) grew by more (x beside two schemas' own fields),
                # x's share left to other patterns shrank and an untouched candidate's all-conf may rise
                if self.claimed(x, frozenset()) - claimed_before[x] >= 2:
                    pool |= self._index.get(x, set())
            if p.optional_fields and st.schemas:
                grown = [s.attrs for s in st.schemas.values() if s.attrs <= tracked]
                if st.alone and grown:
                    # a schema A's support grew: alone(x, A) of rule 3c stops counting for an x not in the
                    # round when supp(A ∪ {x}) fell below θ_e · supp(A) just now
                    te = p.theta_e
                    pool |= {frozenset((x,)) for x in st.alone if x not in attrs and single.get(x, 0) >= ts
                             and any(te * (sup[a] - 1) <= sup.get(a | {x}, 0) < te * sup[a] for a in grown)}
        union = frozenset().union(*pool) if pool else frozenset()
        changed: list[int] = []
        evolved_ext: dict[int, float] = {}
        while True:
            step = self._evolve_step(round_order, pool, union)
            if step is not None:
                sid, old, ev = step
                events.append(ev)
                evolved_ext[sid] = dict(ev.numbers)["ext_conf"]
                changed.append(sid)
                if p.block_fragments or p.optional_fields:
                    pool = self._all_candidates()
                else:
                    pool |= self._candidates_containing(old)
                union = frozenset().union(*pool) if pool else frozenset()
                continue
            step = self._discover_step(round_order, pool)
            if step is not None:
                sid, new, ev = step
                events.append(ev)
                changed.append(sid)
                pool |= self._candidates_containing(new)
                if p.optional_fields:  # any frequent attribute may travel with the new schema (rule 3c)
                    pool |= {c for c in self._all_candidates() if len(c) == 1}
                union = frozenset().union(*pool) if pool else frozenset()
                continue
            break

        changed_ids = tuple(dict.fromkeys(changed))
        timeline = self._timeline(round_order, tracked, touched, set(changed_ids), evolved_ext)
        return RoundUpdate(
            round_order=round_order,
            events=tuple(events),
            timeline=timeline,
            schemas=self.induced(),
            supports=tuple((_key(c), sup[c]) for c in touched),
            changed_schemas=changed_ids,
            rounds=st.rounds,
            alone=tuple(sorted(st.alone.items())),
        )

    # ------------------------------------------------------------------ rules
    def all_conf(self, c: frozenset[str]) -> float:
        sup = self.state.supports
        m = max(self._single.get(a, 0) for a in c)
        return sup.get(c, 0) / m if m else 0.0

    def discovery_conf(self, c: frozenset[str]) -> tuple[float, int]:
        """(all-confidence, its denominator) as discovery reads it: an attribute's rounds that the schemas
        holding it explain (claimed) are theirs, not evidence against c — a "Temp" the oven log, the starter
        log and the proofing log all print is in every stream's rounds. Equals all_conf without
        optional_fields or when no schema holds an attribute of c. (0.0, 0) for an unseen c."""
        n = self.state.supports.get(c, 0)
        if not n:
            return 0.0, 0
        m = max(max(n, self._single.get(x, 0) - self._claimed_in_round(x, c)) for x in c)
        return n / m, m

    def _claimed_in_round(self, x: str, c: frozenset[str]) -> int:
        if c in self._holders()[1]:
            return self.claimed(x, c)  # a schema's own pattern leaves itself out
        if x not in self._claimed_now:
            self._claimed_now[x] = self.claimed(x, frozenset())
        return self._claimed_now[x]

    def fragment(self, c: frozenset[str], b: frozenset[str]) -> bool:
        """Schema b's other attributes usually accompany c (rule 2):
        mean_{x ∈ b \ c} supp(c ∪ {x}) / supp(c) >= θ_a. True when c ⊇ b."""
        sup = self.state.supports
        n = sup.get(c, 0)
        if not n:
            return False
        rest = b - c
        if not rest:
            return True
        return sum(sup.get(c | {x}, 0) for x in rest) / (len(rest) * n) >= self.params.theta_a

    def blocking(self, c: frozenset[str]) -> tuple[int, str] | None:
        """(schema_id, reason) of a schema that makes c not novel, reason in {"schema", "superset",
        "subset", "overlap", "fragment", "held", "shared"}; None when c is novel (rules 2 and 3d).
        Containment is checked first (cheap), then overlaps, fragments, held and shared patterns; within
        each, the lowest schema id wins."""
        schemas = self._sorted_schemas()
        for sid, s in schemas:
            a = s.attrs
            if c <= a:
                return sid, ("schema" if c == a else "subset")
            if c > a:
                return sid, "superset"
        if self.params.block_overlaps:
            for sid, s in schemas:
                if self.overlaps(c, s.attrs, sid):
                    return sid, "overlap"
        if self.params.block_fragments:
            for sid, s in schemas:
                if self.fragment(c, s.attrs):
                    return sid, "fragment"
        if self.params.optional_fields:
            for sid, s in schemas:
                if self.held(c, s.attrs):
                    return sid, "held"
        shared = self.shared() & c
        if shared and len(c - shared) < self.params.min_schema_attrs:
            # fields several streams print do not make a stream: a date beside a shared "Temp"
            return min(sid for sid, s in schemas if s.attrs & shared), "shared"
        return None

    def held(self, c: frozenset[str], a: frozenset[str]) -> bool:
        """c shares an attribute with schema a and one of a's other attributes is in θ_a of c's rounds:
        c's rounds are a's records with something beside (a date printed on most oven records is no
        stream of its own)."""
        if not (c & a) or c <= a:
            return False
        sup = self.state.supports
        n = sup.get(c, 0)
        return bool(n) and max((sup.get(c | {x}, 0) for x in a - c), default=0) >= self.params.theta_a * n

    def overlaps(self, c: frozenset[str], a: frozenset[str], sid: int) -> bool:
        """c shares more than half of itself with schema sid (attributes a), counting only a's own
        attributes: a stream's records printed with other optional fields ({hours, project, date} beside
        {hours, project, breaks}). Unless that is at most half of a and c never came with a's other
        attributes: a log that shares two generic fields with a four-field one ({duration, temp, water}
        beside {item, flour, duration, temp}, never with an item or a flour) is another log."""
        m = len(self.own(c & a, sid))
        if 2 * m <= len(c):
            return False
        if 2 * m > len(a):
            return True
        sup = self.state.supports
        return any(sup.get(c | {x}, 0) for x in a - c)

    def shared(self) -> frozenset[str]:
        """The attributes two schemas or more hold (none without optional_fields: the paper's rules)."""
        if not self.params.optional_fields:
            return frozenset()
        seen: set[str] = set()
        twice: set[str] = set()
        for s in self.state.schemas.values():
            twice |= seen & s.attrs
            seen |= s.attrs
        return frozenset(twice)

    def own(self, attrs: frozenset[str], sid: int) -> frozenset[str]:
        """The attributes of `attrs` that no schema other than `sid` holds. An attribute two schemas hold
        (a "Temp" the oven log and the starter log both print) says nothing about which stream a round
        belongs to, so it neither makes a pattern overlap a schema nor ties a field to one. Without
        optional_fields (the paper's rules) every attribute of `attrs`."""
        if not self.params.optional_fields:
            return attrs
        holders = self._holders()[0]
        return frozenset(x for x in attrs if not holders.get(x, frozenset()) - {sid})

    def _holders(self) -> tuple[dict[str, frozenset[int]], dict[frozenset[str], int]]:
        # own() and owned() run for many patterns per round; schemas change a few times per history
        if self._holders_cache is None:
            by_attr: dict[str, set[int]] = {}
            for sid, s in self.state.schemas.items():
                for x in s.attrs:
                    by_attr.setdefault(x, set()).add(sid)
            self._holders_cache = ({x: frozenset(v) for x, v in by_attr.items()},
                                   {s.attrs: sid for sid, s in sorted(self.state.schemas.items(), reverse=True)})
        return self._holders_cache

    def claimed(self, x: str, c: frozenset[str]) -> int:
        """The rounds of x that the schemas holding x (other than c itself) explain: for each, x's rounds
        beside its most frequent own companion (an attribute no other schema holds), summed over the
        schemas (streams do not share rounds); 0 when no schema holds x, and without optional_fields."""
        if not self.params.optional_fields:
            return 0
        holders = self._holders()[0]
        sup, schemas = self.state.supports, self.state.schemas
        total = 0
        for sid in holders.get(x, ()):
            a = schemas[sid].attrs
            if a == c:
                continue
            # a's own attributes: held by no other schema
            total += max((sup.get(frozenset((b, x)), 0) for b in a
                          if b != x and not holders.get(b, frozenset()) - {sid}), default=0)
        return total

    def _sorted_schemas(self) -> list[tuple[int, _Schema]]:
        # schemas change a few times per history; blocking() runs for many patterns per round.
        # _evolve_step and _discover_step reset the cache when they change a schema.
        if self._sorted_cache is None:
            self._sorted_cache = sorted(self.state.schemas.items())
        return self._sorted_cache

    def _blocked_extension(self, c: frozenset[str], sid: int) -> bool:
        """Rule 3: extension c of schema sid would swallow (part of) another schema."""
        others = [s.attrs for o, s in self.state.schemas.items() if o != sid]
        if any(c >= b or c <= b for b in others):
            return True
        if self.params.block_overlaps and any(self.overlaps(c, s.attrs, o)
                                              for o, s in self.state.schemas.items() if o != sid):
            return True  # it would grow into a copy of another schema
        return self.params.block_fragments and any(self.fragment(c, b) for b in others)

    def owned(self, x: str, a: frozenset[str]) -> float:
        """Rule 3c: the share of schema a's own attributes (3d; all of them when none is its own) that
        accompany x in at least θ_a of x's rounds (supp({b, x}) / supp({x}) >= θ_a). x's rounds that
        another schema holding x already explains (those with its most frequent companion there) are not
        counted: a field two streams share ("Peak" on the solar report and on the electricity meter) is
        the first stream's field, and in the rest of its rounds it may travel with the second. Rounds
        reporting x alone are not counted either when x is in θ_e of a's rounds. 0 when x has no support
        left."""
        sx = self._single.get(x, 0)
        if not sx or not a:
            return 0.0
        sup = self.state.supports
        rest = sx - self.explained(x, a) - self.alone(x, a)
        if rest <= 0:
            return 0.0
        sid = self._holders()[1].get(a)
        mine = (self.own(a, sid) if sid is not None else a) or a
        return sum(sup.get(frozenset((b, x)), 0) / rest >= self.params.theta_a for b in mine) / len(mine)

    def alone(self, x: str, a: frozenset[str]) -> int:
        """The rounds that report x alone, when x is in θ_e of schema a's rounds (else 0): a's records told
        with one field ("3.7 grams flakes" beside "flakes 4.2 g, bloodworms, 23 seen"), no evidence that x
        belongs elsewhere."""
        lone = self.state.alone.get(x, 0)
        sup = self.state.supports
        if lone and sup.get(a, 0) and sup.get(a | {x}, 0) >= self.params.theta_e * sup[a]:
            return lone
        return 0

    def explained(self, x: str, a: frozenset[str]) -> int:
        """The rounds of x that another schema holding x explains: those with its most frequent companion
        there (the largest such count over the other schemas); 0 when no other schema holds x."""
        sup = self.state.supports
        return max((max((sup.get(frozenset((b, x)), 0) for b in s.attrs - {x}), default=0)
                    for s in self.state.schemas.values() if x in s.attrs and s.attrs != a), default=0)

    def _optional_extension(self, sid: int, s: _Schema, singles: Iterable[str]):
        """Rule 3c (optional fields): the best attribute x of the round, not in schema s, that
        travels with s (owned(x, s) >= 1/2 — at exactly 1/2 of more than two own attributes, once with all
        of s —, at least θ_s rounds with one of s's attributes);
        (key, C, ext, n, owned) or None."""
        p, sup = self.params, self.state.supports
        a = s.attrs
        best = None
        for x in singles:
            if x in a or self._single.get(x, 0) < p.theta_s:
                continue
            own = self.owned(x, a)
            if own < 0.5 or (own == 0.5 and len(self.own(a, sid) or a) > 2 and not sup.get(a | {x}, 0)):
                # at half of more than two fields, x must have come with the whole record once: "water"
                # beside an oven log's "duration" and "temp" but never its "item" or "flour" is another log's
                continue
            n = max(sup.get(frozenset((b, x)), 0) for b in a)
            if n < p.theta_s:
                continue
            c = a | {x}
            key = (-own, -self._single[x], x)
            if best is not None and key >= best[0]:
                continue
            if self._blocked_extension(c, sid):
                continue
            best = (key, c, sup.get(c, 0) / max(1, sup.get(a, 0)), n, own)
        return best

    def _evolve_step(self, round_order: int, pool: set[frozenset[str]], union: frozenset[str]):
        st, p = self.state, self.params
        sup = st.supports
        singles = sorted(x for c in pool if len(c) == 1 for x in c) if p.optional_fields else ()
        for sid, s in self._sorted_schemas():
            a = s.attrs
            sa = sup.get(a, 0)
            best = None
            if a < union and sa:
                for c in pool:
                    if len(c) <= len(a) or not a < c:
                        continue
                    n = sup[c]
                    if n < p.theta_s:
                        continue
                    ext = n / sa
                    if ext < p.theta_e:
                        continue
                    key = (-len(c), -ext, _key(c))
                    if best is not None and key >= best[0]:
                        continue
                    dconf = n / max(self._single[x] for x in c - a)
                    if p.delta_all_conf and dconf < p.theta_a:
                        continue
                    if self._blocked_extension(c, sid):
                        continue
                    best = (key, c, ext, n, dconf)
            numbers = None
            if best is not None:
                _, c, ext, n, dconf = best
                numbers = (("supp", float(n)), ("schema_supp", float(sa)), ("ext_conf", ext), ("delta_conf", dconf))
            elif singles:
                opt = self._optional_extension(sid, s, singles)
                if opt is not None:
                    _, c, ext, n, own = opt
                    (x,) = tuple(c - a)
                    numbers = (("supp", float(n)), ("schema_supp", float(sa)), ("ext_conf", ext), ("owned", own),
                               ("x_supp", float(self._single.get(x, 0))), ("explained", float(self.explained(x, a))),
                               ("alone", float(self.alone(x, a))))
            if numbers is not None:
                old = a
                st.schemas[sid] = _Schema(c, s.discovered, round_order)
                self._sorted_cache = self._holders_cache = None
                self._claimed_now.clear()
                ev = InductionEvent(round_order=round_order, kind="evolved", pattern=_key(c), schema_id=sid,
                                    previous=_key(old), numbers=numbers)
                return sid, old, ev
        return None

    def _discover_step(self, round_order: int, pool: set[frozenset[str]]):
        st, p = self.state, self.params
        sup = st.supports
        best = None
        for c in pool:
            if len(c) < p.min_schema_attrs:
                continue
            n = sup[c]
            if n < p.theta_s:
                continue
            ac, m = self.discovery_conf(c)
            if ac < p.theta_a:
                continue
            key = (-len(c), -ac, -n)
            if best is not None and (key > best[0] or (key == best[0] and _key(c) >= _key(best[1]))):
                continue
            if self.blocking(c) is not None:
                continue
            best = (key, c, ac, n, m)
        if best is None:
            return None
        _, c, ac, n, m = best
        sid = max(st.schemas, default=0) + 1
        st.schemas[sid] = _Schema(c, round_order, round_order)
        self._sorted_cache = self._holders_cache = None
        self._claimed_now.clear()
        ev = InductionEvent(
            round_order=round_order, kind="discovered", pattern=_key(c), schema_id=sid,
            numbers=(("supp", float(n)), ("max_attr_supp", float(m)), ("all_conf", ac)),
        )
        return sid, c, ev

    def _candidate_events(self, round_order: int, touched: list[frozenset[str]]) -> list[InductionEvent]:
        """Patterns that reached θ_s this round (supp == θ_s after it), of at least the
        minimum schema size, inclusion-maximal among those; sorted by pattern."""
        p, sup = self.params, self.state.supports
        reached = [c for c in touched if sup[c] == p.theta_s and len(c) >= p.min_schema_attrs]
        reached.sort(key=lambda c: (-len(c), _key(c)))
        maximal: list[frozenset[str]] = []
        for c in reached:
            if not any(c < m for m in maximal):
                maximal.append(c)
        return [
            InductionEvent(
                round_order=round_order, kind="candidate", pattern=_key(c),
                numbers=(("supp", float(sup[c])), ("all_conf", self.all_conf(c))),
            )
            for c in sorted(maximal, key=_key)
        ]

    # ------------------------------------------------------------------ index
    def _index_add(self, c: frozenset[str]) -> None:
        for a in c:
            self._index.setdefault(a, set()).add(c)

    def _all_candidates(self) -> set[frozenset[str]]:
        return {c for cs in self._index.values() for c in cs}

    def _candidates_containing(self, x: frozenset[str]) -> set[frozenset[str]]:
        if not x:
            return set()
        smallest = min((self._index.get(a, set()) for a in x), key=len)
        return {c for c in smallest if x <= c}

    # ------------------------------------------------------------------ timeline
    def _timeline(self, round_order, tracked, touched, changed_ids, evolved_ext) -> tuple[TimelineRow, ...]:
        """Bounded rows for the round: the round's tracked pattern, the schemas it touches
        or that changed, each touched schema's closest extension candidate, and up to
        TIMELINE_NOVEL_CAP novel candidates of the round with all-conf >= TIMELINE_NEAR·θ_a
        (largest first, none inside another kept one)."""
        st, p = self.state, self.params
        sup = st.supports
        chosen: dict[frozenset[str], None] = {}
        if len(tracked) >= p.min_schema_attrs:
            chosen[tracked] = None
        schemas = sorted(st.schemas.items())
        for sid, s in schemas:
            if s.attrs <= tracked or sid in changed_ids:
                chosen[s.attrs] = None
        cands = [c for c in touched if sup[c] >= p.theta_s and len(c) >= p.min_schema_attrs]
        for sid, s in schemas:
            if not s.attrs < tracked:
                continue
            sa = sup[s.attrs]
            best = None
            for c in cands:
                if s.attrs < c and not self._blocked_extension(c, sid):
                    key = (-(sup[c] / sa), -len(c), _key(c))
                    if best is None or key < best[0]:
                        best = (key, c)
            if best is not None:
                chosen[best[1]] = None
        # near misses only: all-conf (cheap) first, the blocking test (fragments) on the few left
        floor = p.theta_a * TIMELINE_NEAR
        near = [(c, ac) for c in cands if c not in chosen and (ac := self.discovery_conf(c)[0]) >= floor]
        near.sort(key=lambda t: (-len(t[0]), -t[1], _key(t[0])))
        kept: list[frozenset[str]] = []
        for c, _ in near:
            if len(kept) >= TIMELINE_NOVEL_CAP:
                break
            if not any(c < k for k in kept) and self.blocking(c) is None:
                kept.append(c)
        for c in kept:
            chosen[c] = None
        rows = [self._row(round_order, c, changed_ids, evolved_ext) for c in chosen]
        return tuple(sorted(rows, key=lambda r: (-len(r.pattern), r.pattern)))

    def _row(self, round_order, c, changed_ids, evolved_ext) -> TimelineRow:
        st, p = self.state, self.params
        sup = st.supports
        n = sup.get(c, 0)
        ac = self.discovery_conf(c)[0]
        for sid, s in sorted(st.schemas.items()):
            if s.attrs == c:
                if sid in changed_ids and sid in evolved_ext:
                    return TimelineRow(round_order, _key(c), n, ac, evolved_ext[sid], sid, "evolved")
                return TimelineRow(round_order, _key(c), n, ac, None, sid, "admitted")
        block = self.blocking(c)
        ext, sid = None, None
        if block is not None:
            sid, reason = block
            if reason == "superset":
                sa = sup.get(st.schemas[sid].attrs, 0)
                ext = n / sa if sa else None
        if n < p.theta_s:
            status = "below_support"
        elif block is not None:
            status = "extension_pending" if block[1] == "superset" else "subsumed"
        elif ac < p.theta_a or len(c) < p.min_schema_attrs:
            status = "below_all_conf"
        else:
            raise RuntimeError(f"induction invariant broken: {_key(c)} qualifies at round {round_order} but was not admitted")
        return TimelineRow(round_order, _key(c), n, ac, ext, sid, status)


# ---------------------------------------------------------------------- functions
def reinduce(stream: Iterable[tuple[int, Iterable[str]]], config: Config = DEFAULT) -> InductionResult:
    """Run induction over a whole stream in memory (for threshold sliders and tests).

    Pure: reads nothing, writes nothing. Raises ValueError like Inducer.update.
    """
    ind = Inducer(config)
    events: list[InductionEvent] = []
    timeline: list[TimelineRow] = []
    for order, attrs in stream:
        u = ind.update(order, attrs)
        events.extend(u.events)
        timeline.extend(u.timeline)
    return InductionResult(schemas=ind.induced(), events=tuple(events), timeline=tuple(timeline),
                           rounds=ind.state.rounds)


def attribute_stream(con) -> list[tuple[int, frozenset[str]]]:
    """(round_order, distinct attributes) for every round with observations, plus every
    processed round without any (empty set), in round order. `con` is a DuckDB
    connection or a core.store.Store."""
    con = getattr(con, "con", con)
    rows = con.execute(
        "SELECT r.round_order, list(DISTINCT o.attribute) FILTER (WHERE o.attribute IS NOT NULL) "
        "FROM rounds r LEFT JOIN observations o ON o.round_id = r.round_id "
        "GROUP BY r.round_order, r.processed "
        "HAVING r.processed OR count(o.attribute) > 0 ORDER BY r.round_order"
    ).fetchall()
    return [(int(o), frozenset(a or ())) for o, a in rows]


# ---------------------------------------------------------------------- persistence
_META_STATE = "induction.state"  # JSON {"last_round", "rounds", "params", "alone"}


class InductionStore:
    """Loads and saves induction state in a memory file (tables of store migration 1).

    Two ways to use it: `update(round_order, attributes)` (load once, then
    update the in-memory Inducer and save the round), or `load()` + `save()`
    around an Inducer you drive yourself. Writes happen inside the caller's
    transaction (no BEGIN/COMMIT here). If that transaction rolls back after
    `update`, call `reload()` (the in-memory state is ahead of the file).

    A round costs at most four statements (supports, timeline, events when
    there are any, stream position) plus one per changed schema. A builder
    processing many rounds per transaction calls `update(..., save=False)` per
    round and `flush()` once per transaction: the same rows, written with those
    four statements for the whole batch (per-statement overhead dominated the
    per-round cost).
    """

    def __init__(self, con, config: Config = DEFAULT):
        self.con = getattr(con, "con", con)
        self.config = config
        self._inducer: Inducer | None = None
        self._last_saved: int | None = None
        self._last_known = False
        self._pending: list[RoundUpdate] = []  # updated with save=False, not written yet

    @property
    def inducer(self) -> Inducer:
        """The Inducer continuing from the file, loaded on first use."""
        if self._inducer is None:
            self._inducer = self.load(self.config)
        return self._inducer

    def reload(self) -> Inducer:
        """Forget the in-memory state (and unsaved updates) and continue from the file."""
        self._inducer = None
        self._last_known = False
        self._pending = []
        return self.inducer

    def update(self, round_order: int, attributes: Iterable[str], *, save: bool = True) -> RoundUpdate:
        """Process one round and save what it changed (in the caller's transaction).

        save=False keeps the update in memory until `flush()` (call it before the
        transaction commits, and before anything reads the induction tables or
        `schemas` of this round, such as Materializer.apply). A round order at or
        below the last saved one raises ValueError (from the Inducer, or at save)."""
        u = self.inducer.update(round_order, attributes)
        if save:
            self.save_many([*self._pending, u], self.config)
            self._pending = []
        else:
            self._pending.append(u)
        return u

    @property
    def pending(self) -> int:
        """Updates made with save=False and not flushed yet."""
        return len(self._pending)

    def flush(self) -> None:
        """Write the updates made with save=False (one batch; nothing when there are none)."""
        if self._pending:
            pending, self._pending = self._pending, []
            self.save_many(pending, self.config)

    def _state(self) -> dict:
        row = self.con.execute("SELECT value FROM meta WHERE key = ?", [_META_STATE]).fetchone()
        return json.loads(row[0]) if row else {}

    def load(self, config: Config | None = None) -> Inducer:
        """An Inducer continuing from the stored state. When the stored thresholds differ
        from `config`, the next update re-examines every candidate (full check), so the
        schemas catch up with the new thresholds (existing schemas are never retracted)."""
        config = config or self.config
        params = InductionParams.from_config(config)
        supports = {
            frozenset(decode_pattern(pat)): int(n)
            for pat, n in self.con.execute("SELECT pattern, support FROM induction_support").fetchall()
        }
        schemas = {}
        for sid, attrs, disc, upd in self.con.execute(
            "SELECT schema_id, attributes, discovered_order, updated_order FROM schemas ORDER BY schema_id"
        ).fetchall():
            if attrs is None:
                continue
            schemas[int(sid)] = _Schema(frozenset(json.loads(attrs)), int(disc or 0), int(upd or disc or 0))
        meta = self._state()
        state = InductionState(
            supports=supports, schemas=schemas,
            last_round=meta.get("last_round"),
            rounds=int(meta.get("rounds", 0)),
            full_check="params" in meta and meta["params"] != json.loads(params.as_json()),
            alone={str(k): int(v) for k, v in (meta.get("alone") or {}).items()},
        )
        self._last_saved, self._last_known = meta.get("last_round"), True
        return Inducer(config, state)

    def save(self, update: RoundUpdate, config: Config | None = None) -> None:
        """Write what `update` changed: supports (upsert), changed schemas (upsert of
        attributes and orders only; table metadata belongs to the materializer), the
        round's timeline rows and events, and the stream position. Raises ValueError for
        a round at or below the last saved one (each round is saved once)."""
        self.save_many([update], config)

    def save_many(self, updates: Sequence[RoundUpdate], config: Config | None = None) -> None:
        """`save` for several consecutive updates at once, leaving the same rows as
        saving them one by one: the last support of each pattern, the last state of
        each changed schema, every timeline row and event in order, the last stream
        position. Raises ValueError (nothing written) when the round orders do not
        increase or the first is at or below the last saved round."""
        updates = list(updates)
        if not updates:
            return
        con = self.con
        if not self._last_known:
            self._last_saved, self._last_known = self._state().get("last_round"), True
        previous = self._last_saved
        for u in updates:
            if previous is not None and u.round_order <= previous:
                raise ValueError(f"induction round {u.round_order} is already saved "
                                 f"(last saved round: {previous})")
            previous = u.round_order
        supports: dict[tuple[str, ...], int] = {}
        for u in updates:
            supports.update(u.supports)  # later rounds' supports replace earlier ones
        if supports:
            con.execute(
                "INSERT INTO induction_support SELECT unnest(?::VARCHAR[]), unnest(?::INTEGER[]), "
                "unnest(?::INTEGER[]) ON CONFLICT (pattern) DO UPDATE SET support = excluded.support",
                [[encode_pattern(p) for p in supports], [len(p) for p in supports], list(supports.values())],
            )
        changed: dict[int, InducedSchema] = {}
        for u in updates:
            by_id = {s.schema_id: s for s in u.schemas}
            for sid in u.changed_schemas:
                changed[sid] = by_id[sid]
        for sid, s in changed.items():
            con.execute(
                "INSERT INTO schemas (schema_id, attributes, discovered_order, updated_order) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (schema_id) DO UPDATE SET attributes = excluded.attributes, "
                "updated_order = excluded.updated_order",
                [sid, json.dumps(list(s.attributes)), s.discovered_order, s.updated_order],
            )
        timeline = [r for u in updates for r in u.timeline]
        if timeline:
            cols = list(zip(*[
                (r.round_order, encode_pattern(r.pattern), r.support, r.all_conf, r.ext_conf, r.schema_id, r.status)
                for r in timeline]))
            con.execute(
                "INSERT INTO induction_timeline SELECT unnest(?::INTEGER[]), unnest(?::VARCHAR[]), "
                "unnest(?::INTEGER[]), unnest(?::DOUBLE[]), unnest(?::DOUBLE[]), unnest(?::INTEGER[]), "
                "unnest(?::VARCHAR[])", [list(c) for c in cols])
        events = [e for u in updates for e in u.events]
        if events:
            cols = list(zip(*[
                (e.round_order, e.kind, encode_pattern(e.pattern), e.schema_id,
                 encode_pattern(e.previous) if e.previous else None, json.dumps(dict(e.numbers)))
                for e in events]))
            con.execute(
                "INSERT INTO induction_events SELECT unnest(?::INTEGER[]), unnest(?::VARCHAR[]), "
                "unnest(?::VARCHAR[]), unnest(?::INTEGER[]), unnest(?::VARCHAR[]), unnest(?::JSON[])",
                [list(c) for c in cols])
        last = updates[-1]
        params = json.loads(InductionParams.from_config(config or self.config).as_json())
        state = json.dumps({"last_round": last.round_order, "rounds": last.rounds, "params": params,
                            "alone": dict(last.alone)})
        if self._last_saved is None:
            con.execute("INSERT INTO meta VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                        [_META_STATE, state])
        else:  # the key exists: a plain UPDATE is several times cheaper than an upsert in DuckDB
            con.execute("UPDATE meta SET value = ? WHERE key = ?", [state, _META_STATE])
        self._last_saved = last.round_order

    # ------------------------------------------------------------------ reads
    def events(self, since: int | None = None) -> list[InductionEvent]:
        sql = "SELECT round_order, kind, pattern, schema_id, previous, numbers FROM induction_events"
        params: list = []
        if since is not None:
            sql += " WHERE round_order >= ?"
            params.append(since)
        rows = self.con.execute(sql + " ORDER BY round_order, rowid", params).fetchall()
        return [
            InductionEvent(
                round_order=o, kind=k, pattern=decode_pattern(p), schema_id=s,
                previous=decode_pattern(pr) if pr else (), numbers=tuple(json.loads(n or "{}").items()),
            )
            for o, k, p, s, pr, n in rows
        ]

    def timeline(self, pattern: Iterable[str] | None = None) -> list[TimelineRow]:
        sql = "SELECT round_order, pattern, support, all_conf, ext_conf, schema_id, status FROM induction_timeline"
        params: list = []
        if pattern is not None:
            sql += " WHERE pattern = ?"
            params.append(encode_pattern(pattern))
        rows = self.con.execute(sql + " ORDER BY round_order, rowid", params).fetchall()
        return [TimelineRow(o, decode_pattern(p), n, ac, ec, s, st) for o, p, n, ac, ec, s, st in rows]

    def schemas(self) -> list[InducedSchema]:
        rows = self.con.execute(
            "SELECT schema_id, attributes, discovered_order, updated_order FROM schemas "
            "WHERE attributes IS NOT NULL ORDER BY schema_id"
        ).fetchall()
        return [InducedSchema(int(s), tuple(json.loads(a)), int(d or 0), int(u or 0)) for s, a, d, u in rows]
