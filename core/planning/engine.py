"""The query engine: question -> planning context -> plan -> steps under the budget -> answer -> Trace.

    engine = QueryEngine(con, text_encoder, config)           # rules
    engine = QueryEngine(con, text_encoder, config, llm=llm)  # LLM planner + answerer
    trace = engine.ask("How much did I water the ferns on average in March?")

With a model, `config.llm_mode` chooses how it works: "guided" (default) keeps
a rule-based plan that computes over a table without asking the model, shows
the planner any other rule-based plan as a draft (kept as is when the model keeps
its tools) and the answerer the rule-based answer as a draft, and keeps that
draft when the model's answer drops or contradicts a computed value
(core.planning.answer.check_answer); under a plan of the model's own, its
SemanticMatch steps search with the question itself (no model call). "free"
lets the model plan and answer from the planning context alone. The trace
records the mode and every fallback. A vision model also gets the evidence
rounds' images (at most EVIDENCE_IMAGES, downscaled to IMAGE_MAX_SIDE pixels).

`ask` runs everything; the app steps through a plan with
`start(question, ablation) -> PlanState`, `step(state) -> PlanState` (runs
the next step) and `finish(state) -> Trace`. Ablations (paper 4.3): full,
no-analytic, no-retrieval, no-context, no-progressive, rag, and no-utility
(DG-Mem Table 3: retrieval ranked by similarity alone). Tool errors never
escape: a failed step is recorded in the trace (and, for the LLM planner,
the rest of the plan is replaced by the rule-based plan).
"""
from __future__ import annotations

import time
from functools import partial
from dataclasses import dataclass, field, replace
from datetime import date, datetime
from typing import Any, Sequence

import duckdb

from ..config import DEFAULT, Config
from ..errors import InputError, LLMError
from ..model import ImageRef
from ..protocols import LLM, TextEncoder
from ..utility import UtilityRankedRetrieval, UtilityStore
from .answer import LLMAnswerer, RuleAnswerer
from .context import ContextBuilder, PlanningContext
from .dates import TimeRange, find_time_range
from .event_context import EventContext
from .images import images_between, round_images
from .llm_planner import LLMPlanner
from .retrieval import NodeTableRetrieval, RetrievalMemory, adapt
from .rule_planner import Instantiation, RulePlanner, compose_answer
from .tools import ANALYTIC_TOOLS, RETRIEVAL_TOOLS, TOOL_NAMES, Toolbox, ToolResult
from .trace import Answer, Plan, PlanStep, StepRecord, Trace
from .validate import ToolError

EVIDENCE_IMAGES = 3  # images a vision model gets with the answer prompt
IMAGE_MAX_SIDE = 768  # pixels: enough to read a screenshot, a fraction of the tokens of the original
ABLATIONS = ("full", "no-analytic", "no-retrieval", "no-context", "no-progressive", "rag", "no-utility")
MAX_QUESTION_CHARS = 4000


@dataclass(frozen=True)
class PlanState:
    """A question part-way through its plan (frozen: step() returns a new state)."""

    question: str
    ablation: str
    context: PlanningContext
    plan: Plan
    tools: tuple[str, ...]
    records: tuple[StepRecord, ...] = ()
    results: tuple[ToolResult | None, ...] = ()
    budget_left: int = 10
    fallbacks: tuple[str, ...] = ()
    now: datetime | None = None
    first: datetime | None = None
    rule_from: int | None = None  # index where a rule-based plan took over (None: original planner)
    # arguments fixed before the run (no-progressive; a user's pinned steps, None where not pinned)
    preset: tuple[Instantiation | None, ...] | None = field(default=None, compare=False)
    catalog: dict | None = field(default=None, compare=False, repr=False)  # table metadata snapshot
    ms: tuple[tuple[str, float], ...] = ()
    started: float = 0.0
    image: ImageRef | None = None  # the question's own image (its caption joins every search)
    period: TimeRange | None = None  # the time the question names (events in it come first in searches)

    @property
    def image_caption(self) -> str:
        return self.image.caption if self.image is not None else ""

    @property
    def done(self) -> bool:
        return len(self.records) >= len(self.plan.steps) or self.budget_left <= 0 and bool(self.records)

    @property
    def next_step(self) -> PlanStep | None:
        return None if self.done else self.plan.steps[len(self.records)]


GUIDED_TABLE_PLAN = "guided: the rule plan computes over a table and is kept; the model writes the answer"


class QueryEngine:
    """Answers questions over one memory (a DuckDB connection holding the store's tables)."""

    def __init__(self, con: duckdb.DuckDBPyConnection, text_encoder: TextEncoder, config: Config = DEFAULT,
                 retrieval: RetrievalMemory | Any | None = None, llm: LLM | None = None):
        self.con = con
        self.encoder = text_encoder
        self.config = config
        # DG-Mem eq. 5: retrieval ranked by similarity and learned utility (plain_retrieval: similarity
        # alone, for the no-utility ablation); the utility store writes nothing until an answer is rated
        context = EventContext(config.event_context_window, config.event_neighbour_weight,
                               config.event_session_weight)
        self.plain_retrieval = adapt(retrieval, context) if retrieval is not None else NodeTableRetrieval(
            con, text_encoder, config.lambda_meta)
        self.utility = UtilityStore(con, create=False)
        self.retrieval = UtilityRankedRetrieval(self.plain_retrieval, self.utility, config.utility_alpha)
        # the model plans and answers only where config.llm_steps says "plan" / "answer"
        self.llm = llm if llm is not None and config.uses_model("plan") else None
        answer_llm = llm if llm is not None and config.uses_model("answer") else None
        self.contexts = ContextBuilder(con, text_encoder, config)
        self.rules = RulePlanner(config, self.contexts.embed, self._encode_query, self.contexts.catalog,
                                 record_rounds=self._record_rounds)
        self._records: tuple[tuple, frozenset[str]] | None = None
        # image ids come from the store's images of the evidence rounds (a visual-search answer names them)
        self.rule_answerer = RuleAnswerer(text_encoder, round_images=partial(round_images, con),
                                          period_images=partial(images_between, con))
        self.mode = config.llm_mode if self.llm is not None or answer_llm is not None else "rules"
        self.llm_answerer = LLMAnswerer(answer_llm, self.rule_answerer, draft=self.mode == "guided",
                                        images=self.evidence_images, max_images=EVIDENCE_IMAGES) \
            if answer_llm is not None else None
        self.backend = f"llm:{getattr(llm, 'model', '?')}" if self.mode != "rules" else "rules"

    def evidence_images(self, rounds: Sequence[str], limit: int = EVIDENCE_IMAGES) -> list[bytes]:
        """Up to `limit` images of `rounds` (in that order, then position), downscaled to IMAGE_MAX_SIDE
        and re-encoded (JPEG, or PNG with transparency). Images without stored bytes or that cannot be
        decoded are skipped; never raises for a bad image or a memory without images."""
        if not rounds or limit <= 0:
            return []
        cur = self.con.cursor()
        try:
            rows = cur.execute(
                "SELECT i.round_id, b.data FROM images i JOIN blobs b ON b.sha256 = i.sha256 "
                "WHERE i.round_id IN (SELECT unnest(?::VARCHAR[])) ORDER BY i.position", [list(rounds)]).fetchall()
        except duckdb.Error:
            return []
        finally:
            cur.close()
        order = {r: k for k, r in enumerate(rounds)}
        out: list[bytes] = []
        for _, data in sorted(rows, key=lambda r: order.get(r[0], len(order))):
            small = downscale(bytes(data), IMAGE_MAX_SIDE)
            if small is not None:
                out.append(small)
            if len(out) >= limit:
                break
        return out

    def _record_rounds(self) -> frozenset[str]:
        """Round ids that are rows of an analytic table (cached until the tables change)."""
        from .metadata import signature, table_names
        from .validate import quote_ident

        cur = self.con.cursor()
        try:
            sig = signature(cur)
            if self._records is None or self._records[0] != sig:
                names = table_names(cur)
                rows: set[str] = set()
                for n in names:
                    rows |= {r[0] for r in cur.execute(f"SELECT DISTINCT source FROM {quote_ident(n)}").fetchall()}
                self._records = (sig, frozenset(rows))
            return self._records[1]
        except duckdb.Error:
            return frozenset()
        finally:
            cur.close()

    def _encode_query(self, text: str):
        return self.encoder.encode([text])[0]

    def toolbox(self, ablation: str = "full", catalog: dict | None = None,
                image: ImageRef | None = None, period: TimeRange | None = None) -> Toolbox:
        """The tools an ablation allows; with `catalog`, tools use that metadata snapshot; with `image`
        (the question's own), searches look for what its caption describes too; with `period`, events
        of that time come first."""
        tools = TOOL_NAMES
        if ablation == "no-analytic" or ablation == "rag":
            tools = RETRIEVAL_TOOLS
        elif ablation == "no-retrieval":
            tools = ANALYTIC_TOOLS
        source = self.contexts.catalog if catalog is None else (lambda: catalog)
        retrieval = self.plain_retrieval if ablation == "no-utility" else self.retrieval
        return Toolbox(self.con, source, retrieval, self.config, allowed_tools=tools,
                       image_caption=image.caption if image is not None else "", period=period)

    def _span(self) -> tuple[datetime | None, datetime | None]:
        cur = self.con.cursor()
        try:
            return tuple(cur.execute("SELECT min(time), max(time) FROM rounds").fetchone())
        except duckdb.CatalogException:
            return None, None
        finally:
            cur.close()

    # ------------------------------------------------------------------ stepwise API
    def start(self, question: str, ablation: str = "full", image: ImageRef | None = None) -> PlanState:
        """Build the planning context and the high-level plan. Raises InputError for a bad question/ablation.

        `image`: the question's own picture; its caption joins every search the plan makes."""
        if ablation not in ABLATIONS:
            raise InputError("question", "ablation", f"unknown ablation {ablation!r}; expected one of "
                             f"{', '.join(ABLATIONS)}")
        if not isinstance(question, str) or not question.strip():
            raise InputError("question", "", "the question is empty")
        if len(question) > MAX_QUESTION_CHARS:
            raise InputError("question", "", f"the question is too long ({len(question)} characters, "
                             f"max {MAX_QUESTION_CHARS})")
        question = question.strip()
        t0 = time.perf_counter()
        first, now = self._span()
        now = now or datetime.now()
        catalog = self.contexts.catalog()  # one snapshot of the table metadata per question
        box = self.toolbox(ablation, catalog)
        tools = box.allowed_tools
        context = self.contexts.build(question, use_tables=any(t in ANALYTIC_TOOLS for t in tools),
                                      use_episodes=any(t in RETRIEVAL_TOOLS for t in tools),
                                      ranked=ablation != "no-context", catalog=catalog)
        t1 = time.perf_counter()
        fallbacks: list[str] = []
        if ablation == "rag":
            plan = Plan((PlanStep("retrieve the top-10 memory units", "SemanticMatch"),), "rag", "rag")
        elif self.llm is not None:
            # guided: the rule-based plan is the model's draft; kept, the rules instantiate it (no more calls)
            draft = self.rules.outline(question, context, tools, now, first, catalog) \
                if self.mode == "guided" else None
            if draft is not None and any(s.tool in ANALYTIC_TOOLS for s in draft.steps):
                # guided: a rule plan that computes over a table stands (the model still writes the answer,
                # with the computed value protected): given the choice, the 1.5B model replaced "first of rise
                # in the starter table" by a lookup with an invented filter and answered "Not mentioned"
                plan = replace(draft, notes=draft.notes + (GUIDED_TABLE_PLAN,))
            else:
                try:
                    plan = LLMPlanner(self.llm, self.config, box).outline(question, context, tools, now, first,
                                                                          draft=draft)
                except (LLMError, ToolError) as e:
                    fallbacks.append(f"plan: LLM plan unusable ({str(e)[:200]}); rule-based plan used")
                    plan = draft or self.rules.outline(question, context, tools, now, first, catalog)
        else:
            plan = self.rules.outline(question, context, tools, now, first, catalog)
        state = PlanState(question=question, ablation=ablation, context=context, plan=plan, tools=tools,
                          budget_left=self.config.evidence_budget, fallbacks=tuple(fallbacks), now=now,
                          first=first, rule_from=0 if plan.planner == "rules" else None, catalog=catalog,
                          ms=(("context", (t1 - t0) * 1000),), started=t0, image=image,
                          period=find_time_range(question, now, first) if now is not None else None)
        if ablation == "no-progressive":
            pre = tuple(self._instantiate(state, i, progressive=False) for i in range(len(plan.steps)))
            state = replace(state, preset=pre)
        return replace(state, ms=state.ms + (("plan", (time.perf_counter() - t1) * 1000),))

    def _instantiate(self, state: PlanState, index: int, *, progressive: bool = True) -> Instantiation:
        if state.plan.planner == "rag":
            return Instantiation({"query_content": state.question, "retrieval_scope": "event",
                                  "result_budget": min(10, state.budget_left)}, planner="rag")
        if state.rule_from is not None and index >= state.rule_from:
            off = state.rule_from
            sub = replace(state.plan, steps=state.plan.steps[off:])
            return self.rules.instantiate(state.question, state.context, sub, index - off, state.results[off:],
                                          state.budget_left, progressive=progressive, now=state.now,
                                          first=state.first)
        if self.mode == "guided" and state.plan.steps[index].tool == "SemanticMatch":
            # guided: the model chooses the tools but does not rewrite the search; a small model's
            # paraphrase (or a topic scope) loses the event the question is about. Like the rule plan,
            # search with the question at event scope, leaving one unit for each later step.
            later = len(state.plan.steps) - index - 1
            return Instantiation({"query_content": state.question, "retrieval_scope": "event",
                                  "result_budget": max(1, state.budget_left - later)},
                                 ("guided: searched with the question itself (event scope)",))
        planner = LLMPlanner(self.llm, self.config, self.toolbox(state.ablation, state.catalog))
        return planner.instantiate(state.question, state.context, state.plan, index, state.results,
                                   state.budget_left, progressive=progressive, now=state.now, first=state.first)

    def _switch_to_rules(self, state: PlanState, reason: str) -> PlanState:
        """Replace the remaining steps by the rule-based plan (visible in fallbacks and plan notes)."""
        done = len(state.records)
        room = self.config.max_steps - done
        rule_plan = self.rules.outline(state.question, state.context, state.tools, state.now, state.first,
                                       state.catalog)
        steps = rule_plan.steps[: max(0, room)]
        plan = Plan(state.plan.steps[:done] + steps, state.plan.planner, state.plan.intent,
                    state.plan.notes + (f"steps from {done + 1} replaced by the rule-based plan ({rule_plan.intent})",),
                    state.plan.prompt_tokens, state.plan.completion_tokens, payload=rule_plan.payload)
        return replace(state, plan=plan, rule_from=done, preset=None,
                       fallbacks=state.fallbacks + (reason + "; rule-based plan used for the rest",))

    def step(self, state: PlanState) -> PlanState:
        """Instantiate and run the next step (a no-op when the plan is done)."""
        if state.done:
            return state
        i = len(state.records)
        step = state.plan.steps[i]
        t0 = time.perf_counter()
        if state.preset is not None and i < len(state.preset) and state.preset[i] is not None:
            inst = state.preset[i]  # fixed before the run: no-progressive, or pinned by the user
        else:
            inst = self._instantiate(state, i, progressive=state.ablation != "no-progressive")
        if inst.fallback and state.rule_from is None:
            # the LLM could not instantiate this step: record it, then continue with rule-based steps
            rec = StepRecord(i, step.goal, step.tool, {}, "error", inst.planner, error=inst.fallback,
                             budget_before=state.budget_left, budget_after=state.budget_left,
                             ms=(time.perf_counter() - t0) * 1000, prompt_tokens=inst.prompt_tokens,
                             completion_tokens=inst.completion_tokens, notes=inst.notes)
            st = replace(state, records=state.records + (rec,), results=state.results + (None,))
            return self._switch_to_rules(st, inst.fallback)
        base = dict(index=i, goal=step.goal, tool=step.tool, planner=inst.planner,
                    budget_before=state.budget_left, prompt_tokens=inst.prompt_tokens,
                    completion_tokens=inst.completion_tokens)
        if inst.args is None:
            rec = StepRecord(args={}, status="skipped", summary="; ".join(inst.notes) or "skipped",
                             budget_after=state.budget_left, ms=(time.perf_counter() - t0) * 1000,
                             notes=inst.notes, **base)
            return replace(state, records=state.records + (rec,), results=state.results + (None,))
        box = self.toolbox(state.ablation, state.catalog, state.image, state.period)
        try:
            res = box.call(step.tool, inst.args, state.budget_left)
        except (ToolError, duckdb.Error) as e:
            # duckdb errors should not happen (SQL is built from validated pieces); if one does,
            # it is recorded like an invalid call instead of crashing the question
            status = "refused" if isinstance(e, ToolError) and "budget" in str(e) else "error"
            rec = StepRecord(args=_plain_args(inst.args), status=status, error=str(e), budget_after=state.budget_left,
                             ms=(time.perf_counter() - t0) * 1000, notes=inst.notes, **base)
            st = replace(state, records=state.records + (rec,), results=state.results + (None,))
            if state.rule_from is None and status == "error":
                return self._switch_to_rules(st, f"step {i + 1}: {e}")
            return st
        left = state.budget_left - res.budget_used
        rec = StepRecord(args=res.args, status="ok", summary=res.summary, units=res.units, value=res.value,
                         sql=res.sql, params=res.params, budget_after=left, ms=(time.perf_counter() - t0) * 1000,
                         notes=inst.notes + res.notes, table=res.table, unit=res.unit, n_matched=res.n_matched,
                         rows=res.rows[:50], columns=res.columns, **base)
        return replace(state, records=state.records + (rec,), results=state.results + (res,), budget_left=left)

    def finish(self, state: PlanState, *, options: tuple[tuple[str, str], ...] = ()) -> Trace:
        """Run any remaining steps, answer, and return the Trace."""
        guard = 0
        while not state.done and guard < self.config.max_steps + 3:
            state = self.step(state)
            guard += 1
        t0 = time.perf_counter()
        fallbacks = list(state.fallbacks)
        if self.llm_answerer is not None:
            draft = self._guided_draft(state) if self.mode == "guided" and not options else None
            answer, fb = self.llm_answerer.answer(state.question, state.records, state.now, options=options,
                                                  draft=draft)
            if fb:
                fallbacks.append(fb)
        else:
            answer = self._rule_answer(state)
        t1 = time.perf_counter()
        steps_ms = sum(r.ms for r in state.records)
        ms = state.ms + (("steps", steps_ms), ("answer", (t1 - t0) * 1000),
                         ("total", (t1 - state.started) * 1000))
        notes_fb = [f"plan: {n}" for n in state.plan.notes if "replaced" in n or "cut" in n]
        return Trace(
            question=state.question, ablation=state.ablation, backend=self.backend,
            planner=state.plan.planner if state.rule_from in (None, 0) else f"{state.plan.planner}+rules",
            context=state.context.candidates, plan=state.plan, steps=state.records, answer=answer,
            fallbacks=tuple(dict.fromkeys(fallbacks + notes_fb)), budget_total=self.config.evidence_budget,
            budget_left=state.budget_left, ms=ms, now=state.now.isoformat() if state.now else None,
            mode=self.mode, image_caption=state.image_caption)

    def _guided_draft(self, state: PlanState) -> Answer:
        """The rule-based answer given to the model as its draft: from all steps when the rules planned
        them (composite answers included); under the model's own plan, from the steps the rules
        instantiated when there are any (the model's own analytic calls are untrusted output), else
        from all steps."""
        if state.plan.planner == "rules":
            return self._rule_answer(state)
        ruled = [r for r in state.records if r.planner == "rules"]
        return self.rule_answerer.answer(state.question, ruled or state.records, state.now,
                                         people=state.context.people,
                                         image_caption=state.image_caption)

    def _rule_answer(self, state: PlanState) -> Answer:
        # comparisons of two periods and yes/no readings of rows come from the rule planner's plan
        return (compose_answer(state.plan, state.records) if state.plan.planner == "rules" else None) \
            or self.rule_answerer.answer(state.question, state.records, state.now, people=state.context.people,
                                         image_caption=state.image_caption)

    def ask(self, question: str, *, ablation: str = "full", options: tuple[tuple[str, str], ...] = (),
            image: ImageRef | None = None) -> Trace:
        """Answer one question (with its own picture `image`, searched by caption); returns the full Trace.
        Raises InputError for an empty question/bad ablation."""
        return self.finish(self.start(question, ablation, image), options=options)


def downscale(data: bytes, max_side: int = IMAGE_MAX_SIDE) -> bytes | None:
    """`data` (any image PIL reads) with its longer side at most `max_side`, as JPEG (PNG when it has
    transparency); None when it cannot be decoded. An image already small enough keeps its bytes."""
    import io

    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(data)) as im:
            if max(im.size) <= max_side and im.format in ("JPEG", "PNG", "WEBP", "GIF"):
                return data
            im.thumbnail((max_side, max_side), Image.Resampling.LANCZOS)
            buf = io.BytesIO()
            if im.mode in ("RGBA", "LA") or (im.mode == "P" and "transparency" in im.info):
                im.convert("RGBA").save(buf, format="PNG", optimize=True)
            else:
                im.convert("RGB").save(buf, format="JPEG", quality=85)
            return buf.getvalue()
    except (UnidentifiedImageError, OSError, ValueError, Image.DecompressionBombError):
        return None


def _plain_args(args: Any) -> dict:
    from .tools import jsonable
    return jsonable(args) if isinstance(args, dict) else {"_raw": str(args)[:500]}
