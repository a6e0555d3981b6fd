"""Local LLM figures: server start, seconds per call and tokens/s on the test GGUF.

    OMP_NUM_THREADS=1 .venv/bin/python bench/llm_local.py [--threads 1]

Needs requirements-test-llm.txt. Prints figures; asserts nothing.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from core import prompts  # noqa: E402
from core.llm import LocalLLM, TokenMeter  # noqa: E402
from core.model import ImageRef, Round, Utterance  # noqa: E402
from fetch_test_model import ensure_model  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    path = ensure_model()
    meter = TokenMeter()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cpus, n_threads={args.threads}")
    with LocalLLM(path, n_ctx=4096, n_threads=args.threads, meter=meter) as llm:
        print(f"server start {llm.server.start_seconds:.2f} s")
        r = Round("S1:R1", "S1", datetime(2024, 3, 5, 8, 30),
                  (Utterance("user", "My sleep score was 82 and I slept 7h 12m."),
                   Utterance("assistant", "Nice, that's a solid night.")),
                  (ImageRef("img1", caption="a sleep tracker screen"),))
        calls = [
            (prompts.EXTRACT, prompts.extraction(r, ocr={"img1": "Sleep score 82\nHRV 54 ms\nResting HR 58 bpm"})),
            (prompts.TABLE_METADATA, prompts.table_metadata(
                ["sleep_score", "sleep_duration"], {"sleep_score": [82, 75, 90], "sleep_duration": ["7h 12m"]})),
            (prompts.PLAN, prompts.plan("What was my average sleep score in March?",
                                        "table sleep_log(time, sleep_score DOUBLE): nightly sleep records")),
            (prompts.ANSWER, prompts.answer("What was my sleep score on March 5?",
                                            "[S1:R1 2024-03-05] user: My sleep score was 82")),
            (prompts.JUDGE, prompts.judge("What was my sleep score?", "82", "It was 82.")),
        ]
        for task, (msgs, schema) in calls:
            t = time.perf_counter()
            res = llm.complete_json(task, msgs, schema, prompt_version=prompts.PROMPT_VERSION[task])
            dt = time.perf_counter() - t
            print(f"{task:15s} {dt:6.2f} s  prompt {res.prompt_tokens:4d}  completion {res.completion_tokens:4d}"
                  f"  {res.completion_tokens / dt:5.1f} completion tok/s  attempts {res.attempts}")
            print("   ", json.dumps(res.data)[:300])
    u = meter.usage()
    print(f"total {u.calls} calls, {u.tokens} tokens, {u.ms / 1000:.1f} s, {u.ms / 1000 / max(u.calls, 1):.1f} s/call")


if __name__ == "__main__":
    main()
