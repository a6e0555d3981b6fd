"""Every prompt the engine sends, each a function returning (messages, schema).

Call them like this:

    messages, schema = prompts.extraction(round_, ocr={"img1": "Soil moisture 34 %"})
    res = llm.complete_json(prompts.EXTRACT, messages, schema,
                            prompt_version=prompts.PROMPT_VERSION[prompts.EXTRACT])

Rules for editing: bump the task's PROMPT_VERSION whenever its text or schema
changes (the LLM cache key includes it, so stale replies are not reused).
Schemas follow OpenAI "strict" structured outputs (every property required,
additionalProperties false, optional values as ["...", "null"]) so the same
schema works for OpenAI and llama.cpp's constrained decoding. Where the caller
knows the legal values (table and column names, tools, option letters), the
schema enumerates them, so a constrained model cannot invent identifiers.
"""
from __future__ import annotations

import json
from typing import Any, Mapping, Sequence

from .model import Round

EXTRACT = "extract"
TABLE_METADATA = "table_metadata"
EPISODE_DESCRIPTION = "episode_description"
TOPIC_DESCRIPTION = "topic_description"
PLAN = "plan"
INSTANTIATE = "instantiate"
ANSWER = "answer"
JUDGE = "judge"

PROMPT_VERSION: dict[str, str] = {
    EXTRACT: "1",
    TABLE_METADATA: "1",
    EPISODE_DESCRIPTION: "1",
    TOPIC_DESCRIPTION: "1",
    PLAN: "4",
    INSTANTIATE: "4",
    ANSWER: "5",
    JUDGE: "1",
}

TOOLS = ("Lookup", "Filter", "Compute", "Rank", "SemanticMatch", "EventLocate")
TOOL_DESCRIPTIONS: dict[str, str] = {  # paper Table 4
    "Lookup": "analytic: rows of a table matching key column values",
    "Filter": "analytic: rows of a table satisfying column predicates",
    "Compute": "analytic: avg/sum/min/max/count/first/latest/change (last minus first)/mode of a column "
               "over (filtered) rows",
    "Rank": "analytic: top or bottom rows of a table by a column",
    "SemanticMatch": "retrieval: memory units (topic/episode/event) relevant to a query",
    "EventLocate": "retrieval: events matching a description, with surrounding context and time",
}
FILTER_OPS = ("=", "!=", "<", "<=", ">", ">=", "contains")  # a date range is two filters on `time`
COMPUTE_OPS = ("avg", "sum", "min", "max", "count", "first", "latest", "change", "mode")
COLUMN_TYPES = ("DOUBLE", "DATE", "TIMESTAMP", "VARCHAR")
SCOPES = ("topic", "episode", "event")
JUDGE_SCALE = (0, 0.25, 0.5, 0.75, 1)

_NULLABLE_STR = {"type": ["string", "null"], "maxLength": 24}


def _str(max_length: int) -> dict:
    """A string with a length cap: a decoding guard (small models can loop inside a string)."""
    return {"type": "string", "maxLength": max_length}
_SCALAR = {"type": ["string", "number", "null"], "maxLength": 100}
MAX_OBSERVATIONS = 40


def _obj(props: dict[str, Any]) -> dict:
    """A strict object schema: every property required, nothing else allowed."""
    return {"type": "object", "properties": props, "required": list(props), "additionalProperties": False}


def _msgs(system: str, user: str) -> list[dict]:
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def _enum_or_str(values: Sequence[str] | None) -> dict:
    return {"type": "string", "enum": list(values)} if values else _str(64)


# --------------------------------------------------------------------------- extraction


def extraction(round_: Round, ocr: Mapping[str, str] | None = None) -> tuple[list[dict], dict]:
    """Attribute-value observations from one round's dialogue, image captions and OCR text.

    Output: {"observations": [{attribute, value, unit, source, image_id, quote}]},
    source in dialogue|caption|ocr; image_id names the image for caption/ocr
    (null for dialogue); quote is the exact text the value was read from.
    """
    ocr = ocr or {}
    lines = [f"Round {round_.round_id} at {round_.time:%Y-%m-%d %H:%M}", "Dialogue:"]
    lines += [f"{u.speaker}: {u.text}" for u in round_.dialogue]
    image_ids = [im.image_id for im in round_.images]
    for im in round_.images:
        lines.append(f"Image {im.image_id} caption: {im.caption or '(none)'}")
        if ocr.get(im.image_id):
            lines.append(f"Image {im.image_id} OCR text:\n{ocr[im.image_id]}")
    system = (
        "You extract measurable facts for a personal memory. For each attribute-value pair stated in the "
        "dialogue, an image caption or an image's OCR text, output one observation: attribute = short "
        "lower_snake_case name of the quantity (no unit in the name), value = the value as written, unit = "
        "its unit or null, source = dialogue|caption|ocr, image_id = the image for caption/ocr else null, "
        "quote = the exact words the value comes from. Only facts that are stated; no guesses. "
        "Return {\"observations\": []} when there are none.\n"
        "Example: 'user: My weight was 71.5 kg today and I walked 8,000 steps.' -> "
        '{"observations": [{"attribute": "weight", "value": "71.5", "unit": "kg", "source": "dialogue", '
        '"image_id": null, "quote": "My weight was 71.5 kg"}, {"attribute": "steps", "value": "8,000", '
        '"unit": "steps", "source": "dialogue", "image_id": null, "quote": "I walked 8,000 steps"}]}'
    )

    def item(sources: list[str], image_id: dict) -> dict:
        return _obj({
            "attribute": _str(48),
            "value": _str(64),
            "unit": _NULLABLE_STR,
            "source": {"type": "string", "enum": sources},
            "image_id": image_id,
            "quote": _str(160),
        })

    # dialogue facts carry no image id; caption/OCR facts name one of this round's images
    dialogue_item = item(["dialogue"], {"type": "null"})
    items = {"anyOf": [dialogue_item, item(["caption", "ocr"], {"type": "string", "enum": image_ids})]} \
        if image_ids else dialogue_item
    schema = _obj({"observations": {"type": "array", "items": items, "maxItems": MAX_OBSERVATIONS}})
    return _msgs(system, "\n".join(lines)), schema


# --------------------------------------------------------------------------- table metadata


def table_metadata(attributes: Sequence[str], samples: Mapping[str, Sequence[Any]]) -> tuple[list[dict], dict]:
    """Name, description and column types for an induced schema's table.

    Output: {"name": lower_snake_case, "description": one sentence,
    "columns": [{"name": one of `attributes`, "type": DOUBLE|DATE|TIMESTAMP|VARCHAR, "unit": str|null}]}.
    """
    body = "\n".join(
        f"- {a}: " + ", ".join(json.dumps(v, ensure_ascii=False, default=str) for v in list(samples.get(a, ()))[:5])
        for a in attributes
    )
    system = (
        "You name tables of recurring records in a personal memory. Given the attributes (columns) and "
        "sample values, return a short lower_snake_case table name, a one-sentence description of what "
        "the records track and what questions they answer, and for every attribute its type (DOUBLE for "
        "numbers, DATE, TIMESTAMP or VARCHAR) and unit (null when none)."
    )
    col = _obj({
        "name": {"type": "string", "enum": list(attributes)},
        "type": {"type": "string", "enum": list(COLUMN_TYPES)},
        "unit": _NULLABLE_STR,
    })
    schema = _obj({
        "name": _str(48),
        "description": _str(300),
        "columns": {"type": "array", "items": col, "minItems": len(attributes), "maxItems": len(attributes)},
    })
    return _msgs(system, "Attributes and sample values:\n" + body), schema


# --------------------------------------------------------------------------- hierarchy descriptions

_DESC_SCHEMA = _obj({"description": _str(600)})


def episode_description(events: Sequence[str]) -> tuple[list[dict], dict]:
    """One description of an episode from its events' texts, in order. Output: {"description": str}."""
    system = (
        "Summarize this episode of a user's conversations in 1-3 sentences: who, what happened, key "
        "values, dates and objects (including what images show). Be concrete; no preamble."
    )
    user = "\n\n".join(f"Event {i + 1}:\n{e}" for i, e in enumerate(events))
    return _msgs(system, user), _DESC_SCHEMA


def topic_description(episodes: Sequence[str]) -> tuple[list[dict], dict]:
    """One description of a topic from its episodes' descriptions. Output: {"description": str}."""
    system = (
        "These episode summaries belong to one topic of a user's memory. Describe the topic in 1-2 "
        "sentences: the common theme and the kinds of facts it holds. No preamble."
    )
    user = "\n".join(f"- {e}" for e in episodes)
    return _msgs(system, user), _DESC_SCHEMA


# --------------------------------------------------------------------------- planning


def plan(question: str, context: str, *, max_steps: int = 3, tools: Sequence[str] = TOOLS,
         draft: Sequence[tuple[str, str]] | None = None) -> tuple[list[dict], dict]:
    """High-level plan (paper 3.5.2): goals and tools, no arguments.

    `context` is the planning context (relevant tables' metadata and episodes'
    descriptions, as text; the tools are listed here, not in `context`).
    Output: {"steps": [{"goal": str, "tool": one of tools}]}, 1..max_steps steps.
    `draft`: a rule-based plan [(tool, goal)] shown as a suggestion to keep or improve.
    """
    tool_lines = "\n".join(f"- {t}: {TOOL_DESCRIPTIONS.get(t, '')}" for t in tools)
    system = (
        "You plan how to answer a question from a user's memory: analytic tables of exact records (use "
        "Lookup/Filter/Compute/Rank for values, totals, averages, counts, extremes, first/latest, trends) "
        "and a retrieval memory of events (SemanticMatch/EventLocate for one-off facts, names, photos, or "
        f"to find when something happened). Give the shortest plan (most questions need one step; at most "
        f"{max_steps}): each step an information goal and one tool; no arguments.\nTools:\n{tool_lines}\n"
        "Examples: 'average soil moisture in March?' -> [Compute]. 'what was my heart rate on the day I bought "
        "the bike?' -> [EventLocate, Lookup]. 'what did I eat at Lotus Thai?' -> [SemanticMatch]. "
        "'heaviest harvest?' -> [Rank]."
    )
    step = _obj({"goal": _str(120), "tool": {"type": "string", "enum": list(tools)}})
    schema = _obj({"steps": {"type": "array", "items": step, "minItems": 1, "maxItems": int(max_steps)}})
    user = f"Memory:\n{context}\n\nQuestion: {question}"
    if draft:
        user += ("\nSuggested plan (from rules; keep it if it fits the question, else give a better one): "
                 + "; ".join(f"{i + 1}. {t}: {g[:100]}" for i, (t, g) in enumerate(draft)))
    return _msgs(system, user), schema


def _filters(columns: Sequence[str] | None) -> dict:
    f = _obj({"column": _enum_or_str(columns), "op": {"type": "string", "enum": list(FILTER_OPS)},
              "value": _SCALAR})
    return {"type": "array", "items": f}


def tool_args_schema(tool: str, *, tables: Sequence[str] | None = None, columns: Sequence[str] | None = None,
                     budget: int = 10) -> dict:
    """The argument schema of one tool (paper Table 4 keys), enumerating legal tables/columns when given.

    Key-value pairs and filters are lists of {column, ...} objects (strict
    schemas cannot have free-form keys). Raises ValueError for an unknown tool.
    """
    table = _enum_or_str(tables)
    col = _enum_or_str(columns)
    rb = {"type": "integer", "minimum": 1, "maximum": max(1, int(budget))}
    if tool == "Lookup":
        kv = _obj({"column": col, "value": _SCALAR})
        return _obj({"table": table, "key_values": {"type": "array", "items": kv}, "result_budget": rb})
    if tool == "Filter":
        return _obj({"table": table, "column_filters": _filters(columns), "result_budget": rb})
    if tool == "Compute":
        return _obj({"table": table, "target_column_expression": col,
                     "operator": {"type": "string", "enum": list(COMPUTE_OPS)},
                     "optional_column_filters": _filters(columns)})
    if tool == "Rank":
        return _obj({"table": table, "target_column_expression": col,
                     "order": {"type": "string", "enum": ["desc", "asc"]},
                     "optional_column_filters": _filters(columns), "result_budget": rb})
    if tool == "SemanticMatch":
        return _obj({"query_content": _str(200),
                     "retrieval_scope": {"type": "string", "enum": list(SCOPES)}, "result_budget": rb})
    if tool == "EventLocate":
        return _obj({"query_content": _str(200), "result_budget": rb})
    raise ValueError(f"unknown tool {tool!r}; expected one of {', '.join(TOOLS)}")


_ARG_EXAMPLES: dict[str, str] = {  # one per tool: small models copy the shape (names here are illustrative)
    "Lookup": '{"args": {"table": "harvest_log", "key_values": [{"column": "time", "value": "2026-03-05"}], '
              '"result_budget": 3}}',
    "Filter": '{"args": {"table": "harvest_log", "column_filters": [{"column": "weight", "op": ">", "value": 8}], '
              '"result_budget": 10}}',
    "Compute": '{"args": {"table": "watering_log", "target_column_expression": "soil_moisture", "operator": "avg", '
               '"optional_column_filters": [{"column": "time", "op": ">=", "value": "2026-03-01"}, '
               '{"column": "time", "op": "<=", "value": "2026-03-31"}]}}',
    "Rank": '{"args": {"table": "harvest_log", "target_column_expression": "weight", "order": "desc", '
            '"optional_column_filters": [], "result_budget": 1}}',
    "SemanticMatch": '{"args": {"query_content": "dinner at Lotus Thai", "retrieval_scope": "event", '
                     '"result_budget": 5}}',
    "EventLocate": '{"args": {"query_content": "bought the road bike", "result_budget": 3}}',
}


def instantiate(question: str, context: str, goal: str, tool: str, previous: Sequence[str], *,
                tables: Sequence[str] | None = None, columns: Sequence[str] | None = None,
                budget: int = 10) -> tuple[list[dict], dict]:
    """Arguments for one plan step given earlier results (paper eq. 10). Output: {"args": {...}}.

    `context` holds what this tool needs (tables and columns for analytic tools;
    may be empty for retrieval tools); `previous` holds the earlier steps'
    results as text; `budget` is the evidence budget still left (result_budget
    may not exceed it).
    """
    system = (
        f"Fill in the arguments of one {tool} call ({TOOL_DESCRIPTIONS.get(tool, '')}) for the step's goal. "
        "Use only table and column names from the context. Filter on time only when the question names a "
        "day or period (a range is two filters: time >= first day, time <= last day; dates YYYY-MM-DD) or an "
        "earlier result gives the date (e.g. of a located event). Use no filter the question does not ask "
        f"for. result_budget at most {budget}.\nExample: {_ARG_EXAMPLES.get(tool, '')}"
    )
    prev = "\n".join(f"Step {i + 1} result: {p}" for i, p in enumerate(previous)) or "(none)"
    user = (f"{context}\n\n" if context else "") + \
        f"Question: {question}\nEarlier results:\n{prev}\nThis step's goal: {goal}"
    schema = _obj({"args": tool_args_schema(tool, tables=tables, columns=columns, budget=budget)})
    return _msgs(system, user), schema


# --------------------------------------------------------------------------- answering and judging


MAX_EVIDENCE_LINE = 360  # characters of one evidence line shown to the answerer
MAX_EVIDENCE_CHARS = 3600  # characters of evidence in all (about 900 tokens); later (lower-ranked) lines go


def cap_evidence(evidence: str, max_line: int = MAX_EVIDENCE_LINE, max_chars: int = MAX_EVIDENCE_CHARS) -> str:
    """The evidence cut to `max_line` characters a line and `max_chars` in all, dropping whole lines
    from the end (steps list their best units first) and saying how many were left out."""
    lines = [ln if len(ln) <= max_line else ln[: max_line - 3] + "..." for ln in evidence.splitlines()]
    out, used = [], 0
    for i, ln in enumerate(lines):
        if used + len(ln) + 1 > max_chars and out:
            out.append(f"(... {len(lines) - i} more lines left out)")
            break
        out.append(ln)
        used += len(ln) + 1
    return "\n".join(out)


MAX_CITED = 5  # evidence ids an answer may name as the ones it rests on


def answer(question: str, evidence: str, *, options: Sequence[tuple[str, str]] = (),
           question_time: str | None = None, draft: str | None = None,
           hint: str | None = None, unit_ids: Sequence[str] = ()) -> tuple[list[dict], dict]:
    """The final answer from the evidence (plan + tool outputs as text; images go in `images=`).

    The evidence is cut by `cap_evidence` (a bounded prompt: the tools already ranked it).
    Multiple choice (options = ((letter, text), ...)): {"answer": one of the letters}.
    Open: {"answer": short text}; when the evidence does not contain the answer,
    the model is told to say it is not mentioned (LoCoMo category 5 expects a refusal).
    `draft`: the rule-based answer from the same evidence (unit conversions and dates done
    exactly); the model keeps it unless the evidence shows it is wrong (small models slip on
    arithmetic and units).
    `hint`: a phrase the rules picked from a round (no tool computed it): shown as a candidate
    to check, not as an answer to keep (on LoCoMo such picks were often a stray word).
    `unit_ids`: the evidence ids shown in the evidence (`[kind id]`); the reply then also has
    "used": at most MAX_CITED of them (the schema enumerates them), the ones the answer rests on.
    """
    system = (
        "Answer the user's question about their own past conversations using only the evidence. "
        "Be short and exact (a value with its unit, a name, a date). When a step computed the asked value, "
        "give that value. If the evidence does not contain the answer, answer \"Not mentioned\"."
    )
    user = f"Evidence:\n{cap_evidence(evidence)}\n\n"
    if question_time:
        user += f"Question asked at: {question_time}\n"
    user += f"Question: {question}"
    if draft:
        user += (f"\nDraft answer computed from the evidence: {draft[:300]}\n"
                 "Keep the draft's value, unit and date unless the evidence contradicts it; answer briefly.")
    elif hint:
        user += (f"\nA phrase the search picked from the best matching line (it may not answer the question): "
                 f"{hint[:200]}\nWrite the answer from the evidence: a few words.")
    if options:
        system += " For multiple choice, answer with the option letter only."
        user += "\nOptions:\n" + "\n".join(f"{k}. {v}" for k, v in options)
        props: dict[str, Any] = {"answer": {"type": "string", "enum": [k for k, _ in options]}}
    else:
        props = {"answer": _str(300)}
    ids = list(dict.fromkeys(str(i) for i in unit_ids))
    if ids:
        system += " In \"used\", list the ids of the evidence lines your answer rests on (none when not mentioned)."
        props["used"] = {"type": "array", "items": {"type": "string", "enum": ids}, "maxItems": MAX_CITED}
    return _msgs(system, user), _obj(props)


def judge(question: str, gold: str, prediction: str) -> tuple[list[dict], dict]:
    """LLM-judge score on the MemEye scale. Output: {"reason": str, "score": 0|0.25|0.5|0.75|1}."""
    system = (
        "Grade a predicted answer against the gold answer. Score 1: same meaning (all key facts right); "
        "0.75: right with a minor omission or imprecision; 0.5: partly right; 0.25: mostly wrong but "
        "one relevant correct element; 0: wrong, contradictory or no answer. A refusal is right only "
        "when the gold answer is a refusal. Give a one-sentence reason."
    )
    user = f"Question: {question}\nGold answer: {gold}\nPredicted answer: {prediction}"
    # reason first: the model commits to a judgement before the score (generation follows property order)
    schema = _obj({"reason": _str(200), "score": {"type": "number", "enum": list(JUDGE_SCALE)}})
    return _msgs(system, user), schema
