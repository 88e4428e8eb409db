"""A tiny OpenAI-compatible chat-completions server on 127.0.0.1, for tests and the benchmark.

It answers ``POST /v1/chat/completions`` from a queue of scripted responses (status, JSON body, delay) and
records every request body. When the queue is empty it asks its ``responder`` (a callable from the request body
to a ``FakeResponse``), if it has one, and otherwise repeats the last response. It runs in a daemon thread:

    with FakeOpenAIServer() as server:
        server.enqueue(200, chat_completion_body(content="안녕하세요"))
        provider = OpenAICompatibleProvider(base_url=server.base_url, model="fake")
"""

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass(frozen=True)
class FakeResponse:
    status: int
    body: dict
    delay_seconds: float = 0.0


def chat_completion_body(
    *,
    content: str | None = "",
    tool_calls: list[dict] | None = None,
    prompt_tokens: int = 11,
    completion_tokens: int = 7,
    model: str = "fake-model",
) -> dict:
    """A chat.completion body; ``tool_calls`` items are ``{"id", "name", "arguments": str}``."""
    message: dict = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = [
            {"id": call["id"], "type": "function", "function": {"name": call["name"], "arguments": call["arguments"]}}
            for call in tool_calls
        ]
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {"index": 0, "message": message, "finish_reason": "tool_calls" if tool_calls else "stop"},
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def error_body(message: str, kind: str = "server_error") -> dict:
    return {"error": {"message": message, "type": kind, "code": None}}


class FakeOpenAIServer:
    def __init__(self, responder: Callable[[dict], FakeResponse] | None = None):
        self.requests: list[dict] = []
        self._responder = responder
        self._responses: deque[FakeResponse] = deque()
        self._last = FakeResponse(200, chat_completion_body(content="ok"))
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, name="fake-openai", daemon=True
        )

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def enqueue(self, status: int, body: dict, *, delay_seconds: float = 0.0) -> None:
        with self._lock:
            self._responses.append(FakeResponse(status, body, delay_seconds))

    def __enter__(self) -> "FakeOpenAIServer":
        self._thread.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self._stopping.set()  # wakes handlers still sleeping out a delay
        self._server.shutdown()
        self._server.server_close()

    def _next_response(self, request: dict) -> FakeResponse:
        with self._lock:
            self.requests.append(request)
            if self._responses:
                self._last = self._responses.popleft()
            elif self._responder is not None:
                return self._responder(request["body"])
            return self._last

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                response = fake._next_response({"path": self.path, "body": body})
                if response.delay_seconds and fake._stopping.wait(response.delay_seconds):
                    return
                payload = json.dumps(response.body).encode()
                try:
                    self.send_response(response.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (its timeout); that is what the test wanted

            def log_message(self, format, *args):
                pass

        return Handler
