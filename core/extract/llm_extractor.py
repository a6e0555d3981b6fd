"""LLM attribute extraction with grounding checks and a rule-based fallback.

One call per round (dialogue, captions, OCR text and, for vision models, the
image bytes). The prompt and JSON schema come from `core.prompts.extraction`
(items: attribute, value, unit, source, image_id, quote); a minimal local
prompt is used when that module is absent.

Every returned item is validated before it becomes an Observation:
- the attribute must normalize to a name (normalize.normalize_attribute);
- the value must be found in the text the item cites: the quote is searched
  in that source (an utterance, the image's caption or its OCR text), then
  the value inside the quote (or, failing the quote, anywhere in the same
  source); the span of the value found is the provenance;
- numbers and units are re-parsed from the span with the rule scanner, so
  durations land in minutes exactly as with the rules.
Items that fail are dropped (counted in ExtractionResult.dropped). When the
call raises LLMError or the reply does not have the expected shape, the
round is extracted by the fallback extractor and the reason is returned in
ExtractionResult.fallback.
"""
from __future__ import annotations

import re
from typing import Any, Callable, Mapping

from core.errors import LLMError
from core.extract.normalize import canonical_text, normalize_attribute, parse_unit, split_label_unit
from core.extract.rules import scan_values
from core.model import Observation, Round

PromptFn = Callable[[Round, Mapping[str, str]], tuple[list[dict], dict]]

_LOCAL_PROMPT_VERSION = "local-1"


def _local_prompt(round_: Round, ocr: Mapping[str, str]) -> tuple[list[dict], dict]:
    """Minimal prompt + strict schema used only when core.prompts has no extraction prompt."""
    lines = ["Dialogue:"] + [f"{u.speaker}: {u.text}" for u in round_.dialogue]
    for im in round_.images:
        lines.append(f"Image {im.image_id} caption: {im.caption or '(none)'}")
        if ocr.get(im.image_id):
            lines.append(f"Image {im.image_id} OCR text:\n{ocr[im.image_id]}")
    item = {"type": "object", "additionalProperties": False,
            "required": ["attribute", "value", "unit", "source", "image_id", "quote"],
            "properties": {"attribute": {"type": "string"}, "value": {"type": "string"},
                           "unit": {"type": ["string", "null"]},
                           "source": {"type": "string", "enum": ["dialogue", "caption", "ocr"]},
                           "image_id": {"type": ["string", "null"]}, "quote": {"type": "string"}}}
    schema = {"type": "object", "additionalProperties": False, "required": ["observations"],
              "properties": {"observations": {"type": "array", "items": item}}}
    system = ("Extract every stated attribute-value pair (measured quantities, dates, record-like facts) "
              "from the round. attribute: lower_snake_case name without unit; value: as written; unit or "
              "null; source: dialogue|caption|ocr; image_id for caption/ocr else null; quote: the exact "
              "words containing the value.")
    return [{"role": "system", "content": system}, {"role": "user", "content": "\n".join(lines)}], schema


def _default_prompt() -> tuple[PromptFn, str, str]:
    """(prompt function, task name, prompt version) from core.prompts when present, else the local one."""
    try:
        from core import prompts
    except ImportError:
        return _local_prompt, "extract", _LOCAL_PROMPT_VERSION
    fn = getattr(prompts, "extraction_prompt", None) or getattr(prompts, "extraction", None)
    if fn is None:
        return _local_prompt, "extract", _LOCAL_PROMPT_VERSION
    task = getattr(prompts, "EXTRACT", "extract")
    version = getattr(prompts, "PROMPT_VERSION", {}).get(task, "1")
    return fn, task, version


def _find(hay: str, needle: str) -> int:
    """Index of `needle` in `hay`: exact, then case-insensitive; -1 when absent."""
    if not needle:
        return -1
    i = hay.find(needle)
    if i >= 0:
        return i
    return hay.lower().find(needle.lower())


def _find_value(hay: str, value: str, lo: int = 0, hi: int | None = None) -> tuple[int, int] | None:
    """Span of `value` in hay[lo:hi]; numbers also match with/without thousands separators."""
    hi = len(hay) if hi is None else hi
    part = hay[lo:hi]
    i = _find(part, value)
    if i >= 0:
        return lo + i, lo + i + len(value)
    plain = value.replace(",", "").strip()
    if re.fullmatch(r"[-+]?\d+(?:\.\d+)?", plain):
        # "10432" vs "10,432" (or the reverse): compare digit strings
        for m in re.finditer(r"(?<![\d.,])[-+]?\d{1,3}(?:,\d{3})*(?:\.\d+)?(?![\d,]*\d)|(?<![\d.,])[-+]?\d+(?:\.\d+)?", part):
            if m.group(0).replace(",", "") == plain:
                return lo + m.start(), lo + m.end()
    return None


class LLMExtractor:
    """Extractor that asks an LLM (core.protocols.LLM) and grounds every answer in the round.

    `fallback` is used when the call fails or the reply is malformed; see the module docstring.
    """

    name = "llm"

    def __init__(self, llm, fallback, prompt_fn: PromptFn | None = None, *, task: str | None = None,
                 prompt_version: str | None = None):
        self.llm = llm
        self.fallback = fallback
        if prompt_fn is None:
            prompt_fn, dtask, dversion = _default_prompt()
        else:
            dtask, dversion = "extract", _LOCAL_PROMPT_VERSION
        self.prompt_fn = prompt_fn
        self.task = task or dtask
        self.prompt_version = prompt_version or dversion
        self.fallbacks: list[tuple[str, str]] = []  # (round_id, reason), in call order

    def extract(self, round: Round, ocr: dict[str, str] | None = None,
                images: Mapping[str, bytes] | None = None) -> list[Observation]:
        """Observations of one round (fallbacks are appended to `self.fallbacks`)."""
        return list(self.run(round, ocr, images=images).observations)

    def run(self, round: Round, ocr: dict[str, str] | None = None,
            images: Mapping[str, bytes] | None = None):
        """One LLM call for `round`; never raises LLMError (falls back to the rule extractor instead)."""
        from core.extract import ExtractionResult

        ocr = dict(ocr or {})
        messages, schema = self.prompt_fn(round, ocr)
        imgs: list[bytes] = []
        if getattr(self.llm, "vision", False):
            for im in round.images:
                data = (images or {}).get(im.image_id) or im.data
                if data:
                    imgs.append(data)
        try:
            res = self.llm.complete_json(self.task, messages, schema, prompt_version=self.prompt_version,
                                         images=imgs)
        except LLMError as e:
            return self._fallback(round, ocr, f"llm error: {e}", 0)
        tokens = int(getattr(res, "prompt_tokens", 0) or 0) + int(getattr(res, "completion_tokens", 0) or 0)
        items = res.data.get("observations") if isinstance(res.data, dict) else None
        if not isinstance(items, list):
            return self._fallback(round, ocr, "invalid output: no 'observations' list", tokens)
        out: list[Observation] = []
        dropped = 0
        seen: set[tuple] = set()
        for item in items:
            obs = self._ground(round, ocr, item) if isinstance(item, dict) else None
            if obs is None:
                dropped += 1
                continue
            key = (obs.attribute, obs.source, obs.utterance_index, obs.image_id, obs.start)
            if key in seen:
                continue
            seen.add(key)
            out.append(obs)
        return ExtractionResult(tuple(out), None, tokens, dropped)

    def _fallback(self, round: Round, ocr: dict[str, str], reason: str, tokens: int):
        from core.extract import ExtractionResult

        self.fallbacks.append((round.round_id, reason))
        return ExtractionResult(tuple(self.fallback.extract(round, ocr)), reason, tokens)

    def _ground(self, round: Round, ocr: dict[str, str], item: dict[str, Any]) -> Observation | None:
        """An Observation for one LLM item, or None when it is not grounded in the round."""
        attr, value = item.get("attribute"), item.get("value")
        if not isinstance(attr, str) or not isinstance(value, (str, int, float)) or isinstance(value, bool):
            return None
        value = str(value).strip()
        if not value:
            return None
        quote = item.get("quote") if isinstance(item.get("quote"), str) else ""
        source = item.get("source")
        image_id = item.get("image_id")
        # candidate texts in the cited source (all sources when the citation is missing or wrong)
        texts: list[tuple[str, dict]] = []
        for i, u in enumerate(round.dialogue):
            texts.append((u.text, {"source": "dialogue", "speaker": u.speaker, "utterance_index": i}))
        for im in round.images:
            if im.caption:
                texts.append((im.caption, {"source": "caption", "image_id": im.image_id}))
            if ocr.get(im.image_id):
                texts.append((ocr[im.image_id], {"source": "ocr", "image_id": im.image_id}))
        cited = [t for t in texts if t[1]["source"] == source and (source == "dialogue" or t[1].get("image_id") == image_id)]
        q_text = quote.strip()
        for is_cited, group in ((True, cited), (False, [t for t in texts if t not in cited])):
            for text, prov in group:
                span = None
                q = _find(text, q_text) if q_text else -1
                if q >= 0:
                    span = _find_value(text, value, q, q + len(q_text))
                # outside the quote only in the cited source (models paraphrase quotes); a value found
                # in another part of the round that the model neither cited nor quoted is not grounded
                if span is None and is_cited:
                    span = _find_value(text, value)
                if span is not None:
                    return self._observation(round, attr, item.get("unit"), text, span, prov)
        return None

    def _observation(self, round: Round, attr: str, unit_raw: Any, text: str, span: tuple[int, int],
                     prov: dict) -> Observation | None:
        a, b = span
        raw = text[a:b]
        number = unit = None
        kind = "text"
        vals = scan_values(raw)
        label, label_unit = split_label_unit(attr.replace("_", " "))
        if vals and vals[0].kind == "number" and not vals[0].ordinal:
            v = vals[0]
            number, kind = v.number, "number"
            u = v.unit
            if u is None:
                u = parse_unit(unit_raw) if isinstance(unit_raw, str) else None
                u = u or label_unit
                if u is not None and number is not None:
                    number = number * u.factor
            unit = u
        elif vals and vals[0].kind in ("date", "time"):
            kind = vals[0].kind
        name = normalize_attribute(label, value_kind=kind, dimension=unit.dimension if unit else None)
        if name is None:
            return None
        return Observation(round_id=round.round_id, attribute=name, raw_value=raw, number=number,
                           unit=unit.unit if unit else None, value_kind=kind, start=a, end=b, label=attr,
                           extractor="llm", text_value=canonical_text(raw) if kind == "text" else None, **prov)
