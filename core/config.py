"""All engine parameters in one place (paper Table 5 defaults)."""
from __future__ import annotations

import re
from dataclasses import dataclass, fields, replace


@dataclass(frozen=True)
class Config:
    # schema induction (paper 3.3.2)
    theta_s: int = 4
    theta_a: float = 0.60
    theta_e: float = 0.80
    max_pattern_attrs: int = 12  # subsets of larger attribute sets are bounded (see induction.py)
    min_schema_attrs: int = 2  # a 1-attribute schema would absorb every pattern containing it
    block_fragments: bool = True  # a schema's usual companions are not a new schema (induction.py)
    delta_all_conf: bool = True  # attributes added by evolution must pass all-conf too
    optional_fields: bool = True  # a field that travels with a schema joins it though often absent
    block_overlaps: bool = True  # a candidate sharing most of its attributes with a schema is not new
    # field alignment (core/align.py): a raw label joins an existing field when its evidence score
    # reaches align_threshold; field_alignment=False keeps every normalized label its own field (the paper)
    align_threshold: float = 0.60
    field_alignment: bool = True
    # after a build, the history's own labels are looked for again in list items the extractor could
    # not split ("seed type sunflower hearts" where other rounds print "Seed type: nyjer"; core/reread.py)
    reread_labels: bool = True
    # the general vocabulary (grammar words, units) the rule extractor reads: "" = the built-in
    # core/lexicon.py; else a JSON file whose lists extend or replace it (see core/lexicon.py)
    lexicon: str = ""
    # retrieval memory (appendix A)
    theta_epi: float = 0.60
    theta_topic: float = 0.65
    w_text: float = 0.60
    w_visual: float = 0.40
    episode_max_gap_hours: float = 24.0
    # what a new event is compared with (core/hierarchy/memory.py): "description" = the open episode's
    # description embedding, regenerated after each insertion (paper eq. 11-13); "centroid" = the
    # normalized mean of its members' embeddings (faster: descriptions are embedded once per batch)
    hierarchy_compare: str = "description"
    # planning (3.5)
    lambda_meta: float = 0.70
    k_tab: int = 5
    k_epi: int = 5
    max_steps: int = 3
    evidence_budget: int = 10
    event_window: int = 1
    # an event read in its conversation (core/planning/event_context.py): the best relevance within
    # `event_context_window` rounds of its session and its session's best matches raise its own;
    # both weights 0 = the paper's event scoring (each event alone)
    event_context_window: int = 2
    event_neighbour_weight: float = 0.5
    event_session_weight: float = 0.35
    # with an LLM: "guided" gives the model the rule-based plan and answer as drafts to keep or
    # correct; "free" lets it plan and answer from the planning context alone
    llm_mode: str = "guided"
    # with an LLM: the steps that call it, LLM_STEPS joined by "+" (a comma works too, but on the command
    # line `eval --set NAME=A,B` sweeps A and B); the others run the rules:
    # extract (attribute extraction per round), metadata (table names and descriptions), describe
    # (episode and topic descriptions), plan (query plans and step arguments), answer. Extraction and
    # table metadata are the rules' by default: with the local 1.5B model, model extraction brought 0.09
    # of the record values of two generated histories into tables against the rules' 0.91, at about 8x
    # the build time, and its table descriptions invented what the tables hold ("daily water intake" for
    # proofing records); its episode descriptions left the answers unchanged and read as summaries
    # (bench/generalization.py --build-args; README "Language-model backends")
    llm_steps: str = "describe+plan+answer"
    # model calls of a build's extraction in flight at once (1 = one after another); an in-process
    # llama.cpp model is started with this many slots
    llm_parallel: int = 4
    # images a build's OCR reads at once, each on its own rapidocr engine (one thread each; 2 on
    # this 2-core machine read 1.85x as fast as 1, with the same text)
    ocr_parallel: int = 2
    # DG-Mem utility
    utility_alpha: float = 0.80
    # input limits a person can see and change
    max_upload_bytes: int = 200 * 1024 * 1024
    max_image_pixels: int = 40_000_000
    max_rounds_per_upload: int = 200_000
    max_zip_entries: int = 10_000

    def __post_init__(self) -> None:
        for name, (lo, hi) in _RANGES.items():
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or v != v or not lo <= v <= hi:
                raise ValueError(f"config {name}={v!r}: expected a number in [{lo}, {hi}]")
        for name, allowed in _CHOICES.items():
            if getattr(self, name) not in allowed:
                raise ValueError(f"config {name}={getattr(self, name)!r}: expected one of {', '.join(allowed)}")
        for name in ("block_fragments", "delta_all_conf", "optional_fields", "block_overlaps",
                     "field_alignment", "reread_labels"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"config {name}={getattr(self, name)!r}: expected true or false")
        steps = _step_names(self.llm_steps) if isinstance(self.llm_steps, str) else None
        if steps is None or any(x not in LLM_STEPS for x in steps):
            raise ValueError(f"config llm_steps={self.llm_steps!r}: expected some of {', '.join(LLM_STEPS)} "
                             "joined by +")
        if not isinstance(self.lexicon, str):
            raise ValueError(f"config lexicon={self.lexicon!r}: expected a file path or empty")
        if self.w_text + self.w_visual <= 0:
            raise ValueError("config w_text + w_visual must be > 0")

    def uses_model(self, step: str) -> bool:
        """Whether step `step` (one of LLM_STEPS) calls a configured model; with no model every step
        runs the rules whatever this says. Raises ValueError for an unknown step name."""
        if step not in LLM_STEPS:
            raise ValueError(f"unknown LLM step {step!r}: expected one of {', '.join(LLM_STEPS)}")
        return step in _step_names(self.llm_steps)

    def with_(self, **changes) -> "Config":
        """A copy with some parameters changed; unknown names raise TypeError, bad values ValueError."""
        known = {f.name for f in fields(self)}
        bad = set(changes) - known
        if bad:
            raise TypeError(f"unknown config parameter(s): {', '.join(sorted(bad))}")
        return replace(self, **changes)

    def changes(self) -> dict:
        """The parameters that differ from the defaults, by name (what a run's fingerprint records)."""
        base = Config()
        return {f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) != getattr(base, f.name)}


def parse_value(name: str, text: str):
    """`text` as the type of parameter `name`'s default (true/false/1/0/yes/no/on/off for a flag).
    Raises KeyError for an unknown name, ValueError for a value of the wrong type (ranges are
    checked when a Config is made)."""
    names = {f.name for f in fields(Config)}
    if name not in names:
        raise KeyError(name)
    current = getattr(DEFAULT, name)
    if isinstance(current, bool):
        low = text.strip().lower()
        if low in ("true", "1", "yes", "on"):
            return True
        if low in ("false", "0", "no", "off"):
            return False
        raise ValueError(text)
    return type(current)(text)


# the steps a model can take over from the rules (Config.llm_steps)
LLM_STEPS = ("extract", "metadata", "describe", "plan", "answer")


def _step_names(text: str) -> list[str]:
    """The step names of an llm_steps value ("describe+plan", "describe,plan"; "" is none)."""
    return [x.strip() for x in re.split(r"[+,]", text) if x.strip()]

_INF = float("inf")
# valid ranges (inclusive); NaN is refused everywhere
_RANGES = {
    "theta_s": (1, _INF), "theta_a": (0.0, 1.0), "theta_e": (0.0, 1.0), "max_pattern_attrs": (1, 64),
    "min_schema_attrs": (1, 64), "align_threshold": (0.0, 1.0), "theta_epi": (-1.0, 1.0), "theta_topic": (-1.0, 1.0), "w_text": (0.0, 1.0),
    "w_visual": (0.0, 1.0), "episode_max_gap_hours": (0.0, _INF), "lambda_meta": (0.0, 1.0),
    "k_tab": (1, 1000), "k_epi": (1, 1000), "max_steps": (1, 10), "evidence_budget": (1, 1000),
    "event_window": (0, 100), "event_context_window": (0, 100), "event_neighbour_weight": (0.0, 10.0),
    "event_session_weight": (0.0, 10.0), "utility_alpha": (0.0, 1.0), "llm_parallel": (1, 64), "ocr_parallel": (1, 64), "max_upload_bytes": (1, _INF),
    "max_image_pixels": (1, _INF), "max_rounds_per_upload": (1, _INF), "max_zip_entries": (1, _INF),
}
_CHOICES = {"hierarchy_compare": ("description", "centroid"), "llm_mode": ("guided", "free")}

DEFAULT = Config()
