""""Test connection": one small call to the configured model, and what it says about the endpoint.

`check_connection(llm)` asks the model for a two-field JSON reply under a JSON schema (no cache,
no retries: the answer is about the endpoint now), and, when the model is set to take images, what
colour a small generated picture is. The report says whether the endpoint answered, the reply, the
latency, whether JSON-schema output works (and, when the server refuses schemas, whether plain JSON
mode does: the setting to use then), and whether the image was understood. It never raises for a
model fault; the error is in the report, as the client words it (the API key never appears).
"""
from __future__ import annotations

import copy
import io
import time
from dataclasses import dataclass

from .errors import LLMError

PROBE_TASK = "connection_test"
PROBE_SCHEMA = {
    "type": "object", "additionalProperties": False, "required": ["greeting", "sum"],
    "properties": {"greeting": {"type": "string", "maxLength": 80}, "sum": {"type": "integer"}},
}
PROBE_MESSAGES = [{"role": "user", "content": "This is a connection test. Reply with JSON: greeting = a short "
                                              "hello, sum = 17 + 25."}]
COLOUR_SCHEMA = {"type": "object", "additionalProperties": False, "required": ["colour"],
                 "properties": {"colour": {"type": "string", "maxLength": 40}}}
COLOUR_MESSAGES = [{"role": "user", "content": "What colour fills this image? Reply with JSON: colour = one word."}]


@dataclass(frozen=True)
class ConnectionReport:
    """What one probe of a model endpoint found. `ok`: the endpoint answered with valid JSON."""

    endpoint: str
    model: str
    ok: bool
    latency_ms: float = 0.0
    reply: str = ""  # the model's greeting and sum, as it wrote them
    arithmetic_ok: bool = False  # it said 42 (a sign the model follows the prompt, not only the schema)
    json_schema: str = ""  # "yes", or why not
    vision: str = ""  # "not enabled", "yes: ...", or what went wrong
    tokens: int = 0
    error: str = ""

    def lines(self) -> list[str]:
        """The report as short lines for the CLI and the sidebar."""
        head = (f"connected to {self.model} at {self.endpoint} in {self.latency_ms:.0f} ms" if self.ok
                else f"no usable reply from {self.model} at {self.endpoint}")
        out = [head]
        if self.reply:
            out.append(f"reply: {self.reply}" + ("" if self.arithmetic_ok else " (17 + 25 is 42)"))
        out.append(f"JSON-schema output: {self.json_schema or 'unknown'}")
        out.append(f"images: {self.vision or 'not enabled'}")
        if self.tokens:
            out.append(f"tokens: {self.tokens}")
        if self.error:
            out.append(f"error: {self.error}")
        return out


def _client(llm):
    """The OpenAI-compatible client behind `llm` (LocalLLM wraps one), or `llm` itself."""
    return getattr(llm, "llm", llm)


def _fresh(llm, **changes):
    """A shallow copy of an OpenAICompatLLM without cache, meter or retries (the probe's own calls)."""
    probe = copy.copy(_client(llm))
    for name, value in {"cache": None, "meter": None, "retries": 0, **changes}.items():
        if hasattr(probe, name):
            setattr(probe, name, value)
    return probe


def _red_png() -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (64, 64), (220, 20, 20)).save(buf, format="PNG")
    return buf.getvalue()


def check_connection(llm) -> ConnectionReport:
    """Probe `llm` (an OpenAICompatLLM or LocalLLM); never raises for a model or network fault."""
    inner = _client(llm)
    endpoint = str(getattr(inner, "endpoint", "") or "?")
    model = str(getattr(inner, "model", "") or "?")
    t0 = time.perf_counter()
    try:
        res = _fresh(llm).complete_json(PROBE_TASK, PROBE_MESSAGES, PROBE_SCHEMA)
    except LLMError as e:
        return _without_schema(llm, endpoint, model, str(e))
    ms = (time.perf_counter() - t0) * 1000
    data = res.data
    tokens = int(res.prompt_tokens) + int(res.completion_tokens)
    return ConnectionReport(
        endpoint, model, True, ms, reply=f"{data['greeting']!r}, sum {data['sum']}",
        arithmetic_ok=data["sum"] == 42,
        json_schema="yes" if getattr(inner, "response_format", "json_schema") == "json_schema"
        else f"not asked (response_format {getattr(inner, 'response_format', '?')}); replies are validated here",
        vision=_vision(llm) if getattr(inner, "vision", False) else "not enabled",
        tokens=tokens)


def _without_schema(llm, endpoint: str, model: str, error: str) -> ConnectionReport:
    """The schema call failed: does the endpoint answer at all in plain JSON mode?"""
    inner = _client(llm)
    if getattr(inner, "response_format", None) != "json_schema":
        return ConnectionReport(endpoint, model, False, json_schema="unknown", error=error)
    t0 = time.perf_counter()
    try:
        res = _fresh(llm, response_format="json_object").complete_json(PROBE_TASK, PROBE_MESSAGES, PROBE_SCHEMA)
    except LLMError:
        return ConnectionReport(endpoint, model, False, json_schema="unknown (no reply in either mode)", error=error)
    ms = (time.perf_counter() - t0) * 1000
    return ConnectionReport(
        endpoint, model, True, ms, reply=f"{res.data['greeting']!r}, sum {res.data['sum']}",
        arithmetic_ok=res.data["sum"] == 42,
        json_schema="no: the schema call failed, plain JSON mode works (set ADAMM_LLM_RESPONSE_FORMAT=json_object)",
        vision="not tested", tokens=int(res.prompt_tokens) + int(res.completion_tokens), error=error)


def _vision(llm) -> str:
    try:
        res = _fresh(llm).complete_json(PROBE_TASK + "_image", COLOUR_MESSAGES, COLOUR_SCHEMA, images=[_red_png()])
    except LLMError as e:
        return f"no: the image call failed ({e})"
    said = str(res.data.get("colour", "")).strip()
    if "red" in said.lower():
        return f"yes: it saw a red square (said {said!r})"
    return f"unclear: a red square was sent, it said {said!r} (the model may not read images)"
