"""Frozen dataclasses shared by every stage of the engine.

Everything that crosses a module boundary is one of these; they hold plain
values only (no connections, no models) so they pickle, compare and print.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime


@dataclass(frozen=True)
class Utterance:
    """One speaker's text inside a round (MemEye: user / assistant; LoCoMo: the turn's speaker)."""

    speaker: str
    text: str


@dataclass(frozen=True)
class ImageRef:
    """An image attached to a round.

    `path` is where the reader found it (absolute path, or "zip:<archive>!<member>");
    `data` holds the validated bytes once resolved (None when the image is only
    described, as in LoCoMo where the pictures are not available).
    """

    image_id: str
    caption: str = ""
    path: str | None = None
    data: bytes | None = field(default=None, repr=False, compare=False)
    sha256: str | None = None
    mime: str | None = None
    width: int | None = None
    height: int | None = None


@dataclass(frozen=True)
class Round:
    """One interaction round: the unit of ingestion, extraction and events."""

    round_id: str
    session_id: str
    time: datetime
    dialogue: tuple[Utterance, ...]
    images: tuple[ImageRef, ...] = ()
    index_in_session: int = 0

    @property
    def text(self) -> str:
        """The dialogue as 'speaker: text' lines (what text encoders and BM25 see)."""
        return "\n".join(f"{u.speaker}: {u.text}" for u in self.dialogue)


@dataclass(frozen=True)
class Session:
    session_id: str
    date: date | None
    rounds: tuple[Round, ...]


@dataclass(frozen=True)
class QA:
    """A question with its gold answer and clue rounds."""

    qa_id: str
    question: str
    answer: str
    clues: tuple[str, ...] = ()
    qtype: str = ""
    category: int | None = None
    options: tuple[tuple[str, str], ...] = ()
    refusal: bool = False
    answer_kind: str = ""  # number | date | updown | yesno | text | refusal ("" = infer)
    tolerance: float | None = None  # for numeric answers
    image: ImageRef | None = None  # the question's own image (Mem-Gallery `question_image` + `image_caption`)


@dataclass(frozen=True)
class History:
    """A parsed input file."""

    source: str
    format: str
    sessions: tuple[Session, ...]
    qas: tuple[QA, ...] = ()
    profile: str = ""
    people: tuple[str, ...] = ()  # names the file gives its people, the user first (profile name, speakers)

    @property
    def rounds(self) -> list[Round]:
        return [r for s in self.sessions for r in s.rounds]


@dataclass(frozen=True)
class Observation:
    """One attribute-value observation with provenance (paper eq. 1).

    source: "dialogue" (speaker + [start, end) character span in that
    utterance's text, utterance_index its position in Round.dialogue),
    "caption" or "ocr" (image_id names the image; start/end index the caption
    or OCR text).
    value_kind: "number", "date", "time", "text".
    """

    round_id: str
    attribute: str
    raw_value: str
    number: float | None = None
    unit: str | None = None
    value_kind: str = "text"
    source: str = "dialogue"
    speaker: str | None = None
    utterance_index: int | None = None
    start: int | None = None
    end: int | None = None
    image_id: str | None = None
    label: str = ""
    extractor: str = "rules"
    text_value: str | None = None  # normalized text value ("Watered" -> "water", "I" -> the speaker)
    raw_attribute: str | None = None  # the extractor's name when field alignment renamed it (core/align.py)


@dataclass(frozen=True)
class Column:
    name: str
    dtype: str  # DOUBLE, DATE, TIMESTAMP, VARCHAR
    unit: str | None = None
    description: str = ""


@dataclass(frozen=True)
class Schema:
    """An induced schema and its materialized table."""

    schema_id: int
    attributes: tuple[str, ...]
    table_name: str
    description: str
    columns: tuple[Column, ...]
    discovered_order: int
    updated_order: int


@dataclass(frozen=True)
class InductionEvent:
    """Something that happened in schema induction at one round.

    kind: "candidate" (a pattern reached θ_s), "discovered", "evolved".
    numbers: the statistics that triggered it (supp, all_conf, ext_conf, ...).
    """

    round_order: int
    kind: str
    pattern: tuple[str, ...]
    schema_id: int | None = None
    previous: tuple[str, ...] = ()
    numbers: tuple[tuple[str, float], ...] = ()


@dataclass(frozen=True)
class EvidenceUnit:
    """One unit of evidence under the shared budget: a row, a memory unit or a computed result."""

    unit_id: str
    kind: str  # "row", "event", "episode", "topic", "computed"
    text: str
    rounds: tuple[str, ...] = ()
    score: float | None = None
    time: str | None = None
    data: tuple[tuple[str, object], ...] = ()


@dataclass(frozen=True)
class ToolCall:
    tool: str
    args: tuple[tuple[str, object], ...]


@dataclass(frozen=True)
class BuildReport:
    sessions: int
    rounds: int
    rounds_added: int
    images: int
    images_ocr: int
    observations: int
    schemas: int
    episodes: int
    topics: int
    image_encoder: str
    text_encoder: str
    seconds: float
    changed_rounds: tuple[str, ...] = ()
    fallbacks: tuple[str, ...] = ()
    stage_seconds: tuple[tuple[str, float], ...] = ()
    llm_tokens: int = 0  # prompt + completion tokens the build's LLM calls spent (cached calls count 0)
    llm_calls: int = 0  # LLM calls made by the build, cached ones included (fallbacks are not calls)
