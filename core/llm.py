"""The language-model layer: one JSON-schema-constrained call, retried, cached and metered.

- `OpenAICompatLLM` talks to any OpenAI-compatible endpoint (OpenAI, vLLM,
  Ollama, llama.cpp server) through the official `openai` client it is given.
  Every call asks for JSON constrained by a schema, parses it, validates it
  against that schema (`schema_errors`, a small validator for the subset of
  JSON Schema the prompts use) and retries timeouts, connection errors, 429
  (honouring Retry-After), 5xx and invalid output with exponential backoff;
  after the retries it raises `core.errors.LLMError`.
- `DuckDBLLMCache` keeps replies in the memory file's `llm_cache` table, keyed
  by a hash of everything that determines the reply (model, task, prompt
  version, messages, schema, image hashes, decoding parameters).
- `LocalLlamaServer` / `LocalLLM` run llama.cpp in-process (PyPI xllamacpp)
  over a local GGUF file and talk to it the same way.
- `TokenMeter` records every call (and every rule-based fallback) so builds
  and traces can total tokens, time and an estimated cost (`estimate_cost_usd`).

Secrets: the API key lives only in the openai client object. It is never
stored in the cache, the meter, a log line or an exception message (messages
are scrubbed of it in case a server echoes it back).
"""
from __future__ import annotations

import base64
import email.utils
import hashlib
import json
import logging
import math
import os
import re
import secrets as _secrets
import threading
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Mapping, Protocol, Sequence

from .errors import InputError, LLMError
from .protocols import LLMResult

log = logging.getLogger(__name__)

__all__ = [
    "OpenAICompatLLM", "from_env", "LLMCache", "MemoryLLMCache", "DuckDBLLMCache", "cache_key",
    "LocalLlamaServer", "LocalLLM", "TokenMeter", "CallRecord", "Usage", "PRICES_PER_1M",
    "estimate_cost_usd", "schema_errors", "parse_json_reply",
]

# --------------------------------------------------------------------------- JSON Schema subset

_TYPES: dict[str, Callable[[Any], bool]] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v),
    "integer": lambda v: (isinstance(v, int) and not isinstance(v, bool))
    or (isinstance(v, float) and v.is_integer()),
}


def schema_errors(data: Any, schema: Mapping[str, Any], path: str = "$") -> list[str]:
    """Validate `data` against a JSON Schema subset; return the faults (empty when valid).

    Supported keywords: type (a name or a list of names), properties, required,
    additionalProperties (bool or schema), items, enum, const, minimum, maximum,
    minItems, maxItems, anyOf. Other keywords (description, title, ...) are
    ignored, and so are minLength/maxLength on purpose: in our prompts they are
    a decoding guard against small models looping inside a string, not a
    reason to reject an otherwise good reply from a server that ignores them. Each fault names the JSON path, e.g. "$.observations[2].source: ...".
    """
    errs: list[str] = []
    if "anyOf" in schema:
        options = [schema_errors(data, s, path) for s in schema["anyOf"]]
        if all(options):
            errs.append(f"{path}: matches none of anyOf ({'; '.join(o[0] for o in options)})")
        return errs
    t = schema.get("type")
    if t is not None:
        names = [t] if isinstance(t, str) else list(t)
        unknown = [n for n in names if n not in _TYPES]
        if unknown:
            raise ValueError(f"schema at {path}: unsupported type {unknown}")
        if not any(_TYPES[n](data) for n in names):
            return [f"{path}: expected {'/'.join(names)}, got {type(data).__name__} {_short(data)}"]
    if "enum" in schema and data not in schema["enum"]:
        errs.append(f"{path}: {_short(data)} is not one of {schema['enum']}")
    if "const" in schema and data != schema["const"]:
        errs.append(f"{path}: {_short(data)} is not {schema['const']!r}")
    if _TYPES["number"](data):
        if "minimum" in schema and data < schema["minimum"]:
            errs.append(f"{path}: {data} is below the minimum {schema['minimum']}")
        if "maximum" in schema and data > schema["maximum"]:
            errs.append(f"{path}: {data} is above the maximum {schema['maximum']}")
    if isinstance(data, dict):
        props = schema.get("properties", {})
        for name in schema.get("required", []):
            if name not in data:
                errs.append(f"{path}: missing required property {name!r}")
        extra = schema.get("additionalProperties", True)
        for k, v in data.items():
            if k in props:
                errs.extend(schema_errors(v, props[k], f"{path}.{k}"))
            elif extra is False:
                errs.append(f"{path}: unexpected property {k!r}")
            elif isinstance(extra, Mapping):
                errs.extend(schema_errors(v, extra, f"{path}.{k}"))
    if isinstance(data, list):
        if "minItems" in schema and len(data) < schema["minItems"]:
            errs.append(f"{path}: {len(data)} items, fewer than {schema['minItems']}")
        if "maxItems" in schema and len(data) > schema["maxItems"]:
            errs.append(f"{path}: {len(data)} items, more than {schema['maxItems']}")
        if "items" in schema:
            for i, v in enumerate(data):
                errs.extend(schema_errors(v, schema["items"], f"{path}[{i}]"))
    return errs


def _short(v: Any, n: int = 40) -> str:
    s = json.dumps(v, ensure_ascii=False) if not isinstance(v, str) else repr(v)
    return s if len(s) <= n else s[: n - 3] + "..."


_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.S)


def parse_json_reply(text: str | None) -> Any:
    """Parse a model reply as JSON, tolerating a ```json fence or prose around one object.

    Raises ValueError (with the parser's message) when no JSON value can be read.
    """
    if text is None or not text.strip():
        raise ValueError("empty reply")
    try:
        return json.loads(text)
    except json.JSONDecodeError as first:
        m = _FENCE.match(text)
        if m:
            return parse_json_reply(m.group(1))
        i, j = text.find("{"), text.rfind("}")
        if 0 <= i < j:
            try:
                return json.loads(text[i : j + 1])
            except json.JSONDecodeError:
                pass
        raise ValueError(f"not JSON ({first.msg} at char {first.pos})") from None


# --------------------------------------------------------------------------- cache


@dataclass(frozen=True)
class CachedReply:
    data: Any
    prompt_tokens: int
    completion_tokens: int


class LLMCache(Protocol):
    def get(self, key: str) -> CachedReply | None:
        """The stored reply for `key`, or None."""

    def put(self, key: str, model: str, prompt_version: str, data: Any,
            prompt_tokens: int, completion_tokens: int) -> None:
        """Store a validated reply (first write wins)."""


def cache_key(model: str, task: str, prompt_version: str, messages: list[dict], schema: dict,
              image_hashes: Sequence[str] = (), params: Mapping[str, Any] | None = None) -> str:
    """sha256 over everything that determines a reply; changing the prompt version changes the key."""
    payload = {
        "model": model, "task": task, "prompt_version": str(prompt_version),
        "messages": messages, "schema": schema, "images": list(image_hashes),
        "params": dict(params or {}),
    }
    blob = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class MemoryLLMCache:
    """An in-process cache (a dict): for tests and for runs without a memory file."""

    def __init__(self) -> None:
        self._d: dict[str, CachedReply] = {}
        self._lock = threading.Lock()

    def get(self, key: str) -> CachedReply | None:
        with self._lock:
            return self._d.get(key)

    def put(self, key, model, prompt_version, data, prompt_tokens, completion_tokens) -> None:
        with self._lock:
            self._d.setdefault(key, CachedReply(json.loads(json.dumps(data)), prompt_tokens, completion_tokens))

    def __len__(self) -> int:
        return len(self._d)


class DuckDBLLMCache:
    """The persistent cache: the `llm_cache` table of a memory file (core/store.py migration 1).

    `con` is an open DuckDB connection to a migrated memory (e.g. `Store.con`).
    Calls are serialized with a lock because a DuckDB connection must not be
    used from two threads at once. A failed write (e.g. a read-only memory) is
    logged and ignored: caching is an optimization, never a reason to fail a call.
    """

    def __init__(self, con) -> None:
        self.con = con
        self._lock = threading.Lock()

    def get(self, key: str) -> CachedReply | None:
        with self._lock:
            row = self.con.execute(
                "SELECT response, prompt_tokens, completion_tokens FROM llm_cache WHERE key = ?", [key]
            ).fetchone()
        if row is None:
            return None
        return CachedReply(json.loads(row[0]), int(row[1] or 0), int(row[2] or 0))

    def put(self, key, model, prompt_version, data, prompt_tokens, completion_tokens) -> None:
        import duckdb  # local: keeps `import core.llm` light for callers without a store

        try:
            with self._lock:
                self.con.execute(
                    "INSERT INTO llm_cache VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (key) DO NOTHING",
                    [key, model, str(prompt_version), json.dumps(data, ensure_ascii=False),
                     int(prompt_tokens), int(completion_tokens), datetime.now()],
                )
        except duckdb.Error as e:
            log.warning("llm cache write skipped: %s", e)


# --------------------------------------------------------------------------- usage accounting

# USD per 1M tokens (input, output): list prices as published by the providers
# when this table was written; edit when they change. Unknown models -> None.
PRICES_PER_1M: dict[str, tuple[float, float]] = {
    "gpt-4o": (2.50, 10.00),
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4.1": (2.00, 8.00),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1-nano": (0.10, 0.40),
    "gpt-5": (1.25, 10.00),
    "gpt-5-mini": (0.25, 2.00),
    "gpt-5-nano": (0.05, 0.40),
}
LOCAL_PREFIX = "local/"  # model names of in-process llama.cpp models: free


def estimate_cost_usd(model: str, prompt_tokens: int, completion_tokens: int) -> float | None:
    """Estimated USD for the tokens: 0.0 for local models, None when the model's price is unknown.

    The name is matched exactly after dropping a provider prefix ("openai/")
    and a date suffix ("-2024-07-18"), so "gpt-4o-mini-2024-07-18" prices as
    "gpt-4o-mini" but an unknown "gpt-5.4-mini" is not silently priced as "gpt-5".
    """
    if model.startswith(LOCAL_PREFIX) or model.endswith(".gguf"):
        return 0.0
    name = model.split("/", 1)[1] if model.startswith("openai/") else model
    name = re.sub(r"-\d{4}-\d{2}-\d{2}$", "", name)
    price = PRICES_PER_1M.get(name)
    if price is None:
        return None
    return (prompt_tokens * price[0] + completion_tokens * price[1]) / 1e6


@dataclass(frozen=True)
class CallRecord:
    """One LLM call as the meter saw it. `fallback`: the caller used its rule-based component."""

    task: str
    model: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    ms: float = 0.0
    cached: bool = False
    attempts: int = 0
    ok: bool = True
    fallback: bool = False
    error: str = ""


@dataclass(frozen=True)
class Usage:
    """Totals over a set of CallRecords. Tokens of cached calls are not counted (nothing was spent)."""

    calls: int
    cached_calls: int
    failed_calls: int
    fallbacks: int
    prompt_tokens: int
    completion_tokens: int
    ms: float
    cost_usd: float | None  # None when some model's price is unknown

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class TokenMeter:
    """Thread-safe record of every call; `mark()` + `usage(since=...)` totals one question or stage."""

    def __init__(self) -> None:
        self._records: list[CallRecord] = []
        self._lock = threading.Lock()

    def record(self, rec: CallRecord) -> None:
        with self._lock:
            self._records.append(rec)

    def record_fallback(self, task: str, model: str, reason: str) -> None:
        """Note that `task` fell back to its rule-based component (after an LLMError)."""
        self.record(CallRecord(task=task, model=model, ok=False, fallback=True, error=reason))

    @property
    def records(self) -> tuple[CallRecord, ...]:
        with self._lock:
            return tuple(self._records)

    def mark(self) -> int:
        with self._lock:
            return len(self._records)

    def usage(self, since: int = 0, task: str | None = None) -> Usage:
        recs = [r for r in self.records[since:] if task is None or r.task == task]
        spent = [r for r in recs if not r.cached]
        cost: float | None = 0.0
        for r in spent:
            c = estimate_cost_usd(r.model, r.prompt_tokens, r.completion_tokens)
            cost = None if c is None or cost is None else cost + c
        return Usage(
            calls=sum(1 for r in recs if not r.fallback),
            cached_calls=sum(1 for r in recs if r.cached),
            failed_calls=sum(1 for r in recs if not r.ok and not r.fallback),
            fallbacks=sum(1 for r in recs if r.fallback),
            prompt_tokens=sum(r.prompt_tokens for r in spent),
            completion_tokens=sum(r.completion_tokens for r in spent),
            ms=sum(r.ms for r in recs),
            cost_usd=cost,
        )

    def by_task(self, since: int = 0) -> dict[str, Usage]:
        tasks = sorted({r.task for r in self.records[since:]})
        return {t: self.usage(since, t) for t in tasks}


# --------------------------------------------------------------------------- the client


class _Retryable(Exception):
    """An attempt failed in a way worth retrying; `wait` overrides the backoff (Retry-After)."""

    def __init__(self, reason: str, wait: float | None = None):
        super().__init__(reason)
        self.reason, self.wait = reason, wait


def _mime(data: bytes) -> str:
    if data.startswith(b"\x89PNG"):
        return "image/png"
    if data.startswith(b"\xff\xd8"):
        return "image/jpeg"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    return "application/octet-stream"


def _retry_after(headers) -> float | None:
    """Seconds from Retry-After-Ms / Retry-After (seconds or an HTTP date); None when absent or unreadable."""
    if headers is None:
        return None
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    ra = headers.get("retry-after")
    if not ra:
        return None
    try:
        return max(0.0, float(ra))
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(ra)
        except (TypeError, ValueError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=timezone.utc)
        return max(0.0, (when - datetime.now(timezone.utc)).total_seconds())


def _public_url(url: str) -> str:
    """The endpoint without user:password@ (never show credentials embedded in a URL)."""
    return re.sub(r"//[^/@]*@", "//", url)


class OpenAICompatLLM:
    """`LLM` over an OpenAI-compatible chat-completions endpoint.

    `client` is an `openai.OpenAI` built with `max_retries=0` (this class owns
    the retry policy). `retries` is the number of retries after the first
    attempt. Waits: `backoff * 2**k` seconds (capped at `max_backoff`), or the
    server's Retry-After (capped at `retry_after_cap`). A truncated reply
    (finish_reason "length") is retried with twice the token limit; an invalid
    one is retried with the validation fault appended as a user message.
    `response_format`: "json_schema" (constrained decoding, default),
    "json_object" or "none" (for servers without schema support; the schema
    is then given in a system message). `temperature=None` omits the
    parameter (reasoning models reject it). `drop_keywords` are removed from
    the schema sent to the server (not from validation): from_env drops
    length/size/range limits for api.openai.com, whose strict mode may reject
    them. `sleep` is injectable for tests. `parallel`: how many calls the endpoint serves at
    once, when known (a build sends at most that many concurrently; None: `llm_parallel` decides).
    Calls may be made from several threads at once.

    Token counts in results are summed over all attempts (what the call cost);
    `ms` is the wall time of the whole call including waits.
    """

    def __init__(self, client, model: str, *, cache: LLMCache | None = None, timeout: float = 60,
                 retries: int = 3, backoff: float = 0.5, vision: bool = False,
                 meter: TokenMeter | None = None, max_tokens: int = 1024,
                 temperature: float | None = 0.0, token_param: str = "max_tokens",
                 response_format: str = "json_schema", max_backoff: float = 30.0,
                 retry_after_cap: float = 30.0, drop_keywords: Sequence[str] = (),
                 sleep: Callable[[float], None] = time.sleep, parallel: int | None = None):
        if response_format not in ("json_schema", "json_object", "none"):
            raise ValueError(f"response_format must be json_schema, json_object or none, not {response_format!r}")
        if retries < 0 or timeout <= 0:
            raise ValueError("retries must be >= 0 and timeout > 0")
        self.client, self.model, self.cache, self.meter = client, model, cache, meter
        self.timeout, self.retries, self.backoff = float(timeout), int(retries), float(backoff)
        self.vision, self.max_tokens, self.temperature = vision, int(max_tokens), temperature
        self.token_param, self.response_format = token_param, response_format
        self.max_backoff, self.retry_after_cap, self._sleep = max_backoff, retry_after_cap, sleep
        self.drop_keywords = frozenset(drop_keywords)
        self.parallel = None if parallel is None else max(1, int(parallel))

    # -- helpers ---------------------------------------------------------
    def set_cache(self, cache: LLMCache | None) -> None:
        """Use `cache` from now on (e.g. the next memory file's `llm_cache`); None turns caching off."""
        self.cache = cache

    @property
    def endpoint(self) -> str:
        return _public_url(str(getattr(self.client, "base_url", "?")))

    def _redact(self, text: str) -> str:
        key = getattr(self.client, "api_key", None)
        if isinstance(key, str) and len(key) >= 8:
            text = _scrub_key(text, key)
        return _public_url(text)

    def _build_messages(self, messages: list[dict], schema: dict, images: Sequence[bytes]) -> list[dict]:
        msgs = [dict(m) for m in messages]
        if self.response_format != "json_schema":
            hint = ("Reply with one JSON value only, no prose, matching this JSON Schema:\n"
                    + json.dumps(schema, separators=(",", ":")))
            msgs.insert(0, {"role": "system", "content": hint})
        if images:
            idx = max((i for i, m in enumerate(msgs) if m.get("role") == "user"), default=None)
            if idx is None:
                msgs.append({"role": "user", "content": ""})
                idx = len(msgs) - 1
            content = msgs[idx].get("content") or ""
            parts = list(content) if isinstance(content, list) else [{"type": "text", "text": content}]
            for img in images:
                url = f"data:{_mime(img)};base64," + base64.b64encode(img).decode("ascii")
                parts.append({"type": "image_url", "image_url": {"url": url}})
            msgs[idx] = {**msgs[idx], "content": parts}
        return msgs

    def _request_kwargs(self, task: str, schema: dict, max_tokens: int) -> dict:
        kw: dict[str, Any] = {self.token_param: max_tokens}
        if self.temperature is not None:
            kw["temperature"] = self.temperature
        if self.response_format == "json_schema":
            name = re.sub(r"[^A-Za-z0-9_-]", "_", task)[:64] or "reply"
            wire = _drop_keywords(schema, self.drop_keywords) if self.drop_keywords else schema
            kw["response_format"] = {"type": "json_schema",
                                     "json_schema": {"name": name, "schema": wire, "strict": True}}
        elif self.response_format == "json_object":
            kw["response_format"] = {"type": "json_object"}
        return kw

    def _attempt(self, msgs: list[dict], kwargs: dict, schema: dict) -> tuple[Any, int, int, str | None]:
        """One HTTP call -> (data, prompt_tokens, completion_tokens, invalid_reason)."""
        import openai

        try:
            resp = self.client.chat.completions.create(
                model=self.model, messages=msgs, timeout=self.timeout, **kwargs)
        except openai.APITimeoutError:
            raise _Retryable(f"timed out after {self.timeout:g} s") from None
        except openai.APIConnectionError as e:
            cause = e.__cause__ or e.__context__
            raise _Retryable(f"cannot connect ({type(cause).__name__ if cause else 'connection error'}: "
                             f"{self._redact(str(cause or e))[:160]})") from None
        except openai.APIStatusError as e:
            status = e.status_code
            body = self._redact(str(e.message))[:200]
            if status == 429:
                wait = _retry_after(e.response.headers)
                raise _Retryable(f"HTTP 429 rate limited: {body}",
                                 None if wait is None else min(wait, self.retry_after_cap)) from None
            if status >= 500 or status in (408, 409):
                raise _Retryable(f"HTTP {status} server error: {body}") from None
            raise LLMError(f"HTTP {status}: {body}") from None  # 400/401/403/404/422: retrying won't help
        except openai.OpenAIError as e:  # e.g. a 200 whose body is not a completion
            raise _Retryable(f"bad response: {self._redact(str(e))[:200]}") from None
        usage = getattr(resp, "usage", None)
        pt = int(getattr(usage, "prompt_tokens", 0) or 0)
        ct = int(getattr(usage, "completion_tokens", 0) or 0)
        choices = getattr(resp, "choices", None) or []
        if not choices:
            return None, pt, ct, "reply has no choices"
        choice = choices[0]
        text = getattr(choice.message, "content", None)
        if getattr(choice, "finish_reason", None) == "length":
            return None, pt, ct, "length"
        try:
            data = parse_json_reply(text)
        except ValueError as e:
            return None, pt, ct, f"invalid output: {e}"
        errs = schema_errors(data, schema)
        if errs:
            more = f" (+{len(errs) - 3} more)" if len(errs) > 3 else ""
            return None, pt, ct, "output does not match the schema: " + "; ".join(errs[:3]) + more
        return data, pt, ct, None

    # -- the protocol ----------------------------------------------------
    def complete_json(self, task: str, messages: list[dict], schema: dict, *,
                      prompt_version: str = "1", images: Sequence[bytes] = ()) -> LLMResult:
        """One JSON-schema-constrained call; see the class docstring for the retry policy.

        Images are sent only when `vision` is true (otherwise dropped: callers
        pass captions and OCR text as text). A cache hit returns the stored
        token counts with cached=True and attempts=0. Raises LLMError naming the task,
        model, endpoint, attempts and last fault; never containing the API key.
        """
        t0 = time.perf_counter()
        images = list(images) if self.vision else []
        params = {"temperature": self.temperature, "max_tokens": self.max_tokens,
                  "response_format": self.response_format}
        key = cache_key(self.model, task, prompt_version, messages, schema,
                        [hashlib.sha256(b).hexdigest() for b in images], params)
        if self.cache is not None:
            hit = self.cache.get(key)
            if hit is not None:
                ms = (time.perf_counter() - t0) * 1000
                res = LLMResult(hit.data, self.model, hit.prompt_tokens, hit.completion_tokens,
                                ms=ms, cached=True, attempts=0)
                self._record(task, res)
                return res
        msgs = self._build_messages(messages, schema, images)
        max_tokens = self.max_tokens
        pt = ct = attempts = 0
        reason = ""
        for attempt in range(self.retries + 1):
            attempts = attempt + 1
            wait: float | None = None
            try:
                data, p, c, invalid = self._attempt(msgs, self._request_kwargs(task, schema, max_tokens), schema)
            except _Retryable as e:
                reason, wait = e.reason, e.wait
            except LLMError as e:
                reason = str(e)
                break
            else:
                pt, ct = pt + p, ct + c
                if invalid is None:
                    ms = (time.perf_counter() - t0) * 1000
                    if self.cache is not None:
                        self.cache.put(key, self.model, str(prompt_version), data, pt, ct)
                    res = LLMResult(data, self.model, pt, ct, ms=ms, cached=False, attempts=attempts)
                    self._record(task, res)
                    return res
                if invalid == "length":
                    reason = f"reply truncated at {max_tokens} tokens"
                    # More room once or twice; a model looping inside a string would fill any limit.
                    max_tokens = min(max_tokens * 2, self.max_tokens * 4)
                else:
                    reason = invalid
                    # Tell the model what was wrong; the original request stays the first messages.
                    msgs = self._build_messages(messages, schema, images) + [{
                        "role": "user",
                        "content": f"Your previous reply was rejected: {reason[:300]}. "
                                   "Reply again with only JSON that matches the schema.",
                    }]
            log.info("llm %s attempt %d/%d failed: %s", task, attempts, self.retries + 1, self._redact(reason))
            if attempt < self.retries:
                self._sleep(wait if wait is not None else min(self.max_backoff, self.backoff * 2 ** attempt))
        ms = (time.perf_counter() - t0) * 1000
        msg = self._redact(
            f"LLM call failed: task {task!r}, model {self.model!r}, endpoint {self.endpoint}, "
            f"{attempts} attempt(s); last error: {reason}")
        if self.meter is not None:
            self.meter.record(CallRecord(task, self.model, pt, ct, ms, False, attempts, ok=False, error=msg))
        raise LLMError(msg)

    def _record(self, task: str, res: LLMResult) -> None:
        if self.meter is not None:
            self.meter.record(CallRecord(task, res.model, res.prompt_tokens, res.completion_tokens,
                                         res.ms, res.cached, res.attempts))


def _drop_keywords(schema: Any, drop: frozenset[str]) -> Any:
    """A copy of `schema` without the keywords in `drop`, recursively (names under "properties" are kept)."""
    if isinstance(schema, list):
        return [_drop_keywords(v, drop) for v in schema]
    if not isinstance(schema, dict):
        return schema
    out = {}
    for k, v in schema.items():
        if k == "properties" and isinstance(v, dict):
            out[k] = {name: _drop_keywords(sub, drop) for name, sub in v.items()}
        elif k not in drop:
            out[k] = _drop_keywords(v, drop)
    return out


OPENAI_DROP_KEYWORDS = ("minLength", "maxLength", "minItems", "maxItems", "minimum", "maximum")


def truthy(v: str | None) -> bool:
    """A setting's yes ("1", "true", "yes", "on", any case); anything else is no."""
    return str(v or "").strip().lower() in ("1", "true", "yes", "on")


def from_env(cache: LLMCache | None = None, *, secrets: Mapping[str, Any] | None = None,
             env: Mapping[str, str] | None = None, meter: TokenMeter | None = None,
             settings: Mapping[str, Any] | None = None, **kwargs) -> OpenAICompatLLM:
    """Build an OpenAICompatLLM from OPENAI_BASE_URL, OPENAI_API_KEY, ADAMM_LLM_MODEL (and ADAMM_LLM_VISION,
    ADAMM_LLM_RESPONSE_FORMAT: json_schema (default) | json_object | none, for servers without schemas).

    Each name is read from `settings` (what a user typed: the sidebar, CLI flags), else `env`
    (default os.environ), else `secrets` (e.g. `dict(st.secrets)`; the caller passes it, core
    never imports streamlit). Any OpenAI-compatible server works by its base URL (vLLM,
    llama.cpp server, Ollama's /v1, the OpenAI API). A missing key is allowed for a custom base
    URL (local servers ignore it). Raises InputError naming the missing or invalid setting.
    Reasoning models (o1/o3/o4/gpt-5*) get no temperature and `max_completion_tokens`.
    """
    env = os.environ if env is None else env
    secrets = secrets or {}
    settings = settings or {}

    def get(name: str) -> str | None:
        for source in (settings, env, secrets):
            v = source.get(name)
            if v not in (None, ""):
                return str(v).strip() or None
        return None

    model = get("ADAMM_LLM_MODEL")
    base_url = get("OPENAI_BASE_URL")
    api_key = get("OPENAI_API_KEY")
    if not model:
        raise InputError("environment", "ADAMM_LLM_MODEL", "not set: name the model to use (e.g. gpt-4.1-nano)")
    if not api_key and not base_url:
        raise InputError("environment", "OPENAI_API_KEY", "not set (needed for the OpenAI API; "
                         "set OPENAI_BASE_URL for a local server instead)")
    import openai

    timeout = float(kwargs.get("timeout", 60))
    client = openai.OpenAI(base_url=base_url or None, api_key=api_key or "not-needed",
                           timeout=timeout, max_retries=0)
    if re.match(r"^(o\d|gpt-5)", model):
        kwargs.setdefault("temperature", None)
        kwargs.setdefault("token_param", "max_completion_tokens")
    kwargs.setdefault("vision", truthy(get("ADAMM_LLM_VISION")))
    fmt = get("ADAMM_LLM_RESPONSE_FORMAT")
    if fmt is not None:
        if fmt not in ("json_schema", "json_object", "none"):
            raise InputError("settings", "ADAMM_LLM_RESPONSE_FORMAT",
                             f"{fmt!r} is not one of json_schema, json_object, none")
        kwargs.setdefault("response_format", fmt)
    if not base_url or "api.openai.com" in base_url:
        kwargs.setdefault("drop_keywords", OPENAI_DROP_KEYWORDS)
    return OpenAICompatLLM(client, model, cache=cache, meter=meter, **kwargs)


# --------------------------------------------------------------------------- local llama.cpp


class LocalLlamaServer:
    """An in-process llama.cpp HTTP server (xllamacpp) over a GGUF file, on 127.0.0.1.

    Starting it loads the model (about a second for a 0.5B model). `port=None`
    lets the server pick a free port. The server requires a random per-process
    bearer token (`api_key`, held in memory only) so other local users cannot
    use it. Raises InputError when the file is missing or not a GGUF file, and
    LLMError when llama.cpp fails to start. `close()` (or leaving the `with`
    block) stops it. `n_parallel` slots decode that many requests at once (batched, so on
    one thread too), each with an `n_ctx`-token window.
    """

    def __init__(self, model_path: str | Path, *, n_ctx: int = 4096, n_threads: int = 1,
                 port: int | None = None, n_parallel: int = 1):
        path = Path(model_path)
        if not path.is_file():
            raise InputError(str(path), "", "GGUF model file not found")
        with open(path, "rb") as fh:
            if fh.read(4) != b"GGUF":
                raise InputError(str(path), "header", "not a GGUF file (missing the GGUF magic bytes)")
        import xllamacpp as xlc

        self.model_path = path
        self.api_key = _secrets.token_urlsafe(24)
        p = xlc.CommonParams()
        p.model.path = str(path)
        # llama.cpp divides its context among the slots: each slot gets the n_ctx asked for
        p.n_ctx = int(n_ctx) * max(1, int(n_parallel))
        p.n_parallel = max(1, int(n_parallel))
        p.cpuparams.n_threads = int(n_threads)
        p.cpuparams_batch.n_threads = int(n_threads)
        # No busy-wait polling between work items: the CPU is usually shared with the app/other work.
        p.cpuparams.poll = 0
        p.cpuparams_batch.poll = 0
        p.hostnames = ["127.0.0.1"]
        p.port = int(port or 0)
        p.api_keys = [self.api_key]
        p.verbosity = 0
        t0 = time.perf_counter()
        try:
            self._server = xlc.Server(p)
        except Exception as e:  # llama.cpp reports load failures as generic exceptions
            raise LLMError(f"llama.cpp server failed to start on {path}: {e}") from None
        self.start_seconds = time.perf_counter() - t0
        addr = str(self._server.listening_address).rstrip("/")
        self.base_url = addr + "/v1"

    def close(self) -> None:
        # xllamacpp stops the HTTP server and frees the model when the Server is deallocated.
        self._server = None

    @property
    def running(self) -> bool:
        return self._server is not None

    def __enter__(self) -> "LocalLlamaServer":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class LocalLLM:
    """`LLM` backed by a LocalLlamaServer: `OpenAICompatLLM` against the in-process server.

    The model name is "local/<file name>" (priced at 0). Defaults suit a CPU:
    a generous per-call timeout and two retries. `parallel`: the server's slots, i.e. how many
    calls it decodes at once (a build sends that many extraction calls concurrently).
    """

    def __init__(self, model_path: str | Path, *, n_ctx: int = 4096, n_threads: int = 1,
                 port: int | None = None, cache: LLMCache | None = None, meter: TokenMeter | None = None,
                 timeout: float = 300, retries: int = 2, vision: bool = False, parallel: int = 1, **kwargs):
        import openai

        self.parallel = max(1, int(parallel))
        self.server = LocalLlamaServer(model_path, n_ctx=n_ctx, n_threads=n_threads, port=port,
                                       n_parallel=self.parallel)
        client = openai.OpenAI(base_url=self.server.base_url, api_key=self.server.api_key,
                               timeout=timeout, max_retries=0)
        self.llm = OpenAICompatLLM(client, LOCAL_PREFIX + Path(model_path).name, cache=cache, meter=meter,
                                   timeout=timeout, retries=retries, vision=vision, **kwargs)
        self.model, self.vision = self.llm.model, self.llm.vision

    def complete_json(self, task: str, messages: list[dict], schema: dict, *,
                      prompt_version: str = "1", images: Sequence[bytes] = ()) -> LLMResult:
        if not self.server.running:
            raise LLMError(f"LLM call failed: task {task!r}: the local server for {self.model} is closed")
        return self.llm.complete_json(task, messages, schema, prompt_version=prompt_version, images=images)

    def set_cache(self, cache: LLMCache | None) -> None:
        """Use `cache` from now on (None turns caching off); the model stays loaded."""
        self.llm.set_cache(cache)

    @property
    def meter(self) -> TokenMeter | None:
        return self.llm.meter

    def close(self) -> None:
        self.server.close()

    def __enter__(self) -> "LocalLLM":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _scrub_key(text: str, key: str, n: int = 8) -> str:
    """Replace every run of >= n characters of `text` that occurs inside `key` by "***".

    A plain replace misses a key that a message quotes cut short (a schema fault
    truncated at 40 characters keeps a piece of an echoed key).
    """
    out, i = [], 0
    while i < len(text):
        if i + n <= len(text) and text[i : i + n] in key:
            j = i + n
            while j < len(text) and text[i : j + 1] in key:
                j += 1
            out.append("***")
            i = j
        else:
            out.append(text[i])
            i += 1
    return "".join(out)
