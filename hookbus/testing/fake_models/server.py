"""The part of a scripted fake model server that no wire format changes.

A :class:`FakeModelServer` listens on 127.0.0.1 (a free port) in a thread of the test's
process while its ``with`` block runs, plays its :class:`~.script.Scenario` to the host,
and records every request in :attr:`FakeModelServer.requests` (and, given a
``log_path``, appends it there as a JSON line), so a test can read back what the host
told the model.

A wire format subclasses it: where the first user message's text is, how many model
turns a request carries, how to answer, which route the model requests take and where
a request carries the tool results.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any, ClassVar, Self

from .script import OK, Json, Scenario, ScenarioSource, Turn


@dataclass(frozen=True)
class Request:
    """One request as the fake received it (``body`` is None when it had none)."""

    method: str
    path: str
    body: Any
    t: float

    @property
    def route(self) -> str:
        """The path without its query string."""
        return self.path.split("?", 1)[0]


@dataclass(frozen=True)
class JsonResponse:
    """One JSON answer."""

    status: int
    body: Any


@dataclass(frozen=True)
class SseResponse:
    """Server-sent events: ``(event name or None, data)`` pairs, then the stream closes."""

    events: Sequence[tuple[str | None, Any]]


Response = JsonResponse | SseResponse


class FakeModelServer(ABC):
    """A scripted model API on 127.0.0.1 (a free port), served from a thread.

    Use it as a context manager: the server listens on entry and is shut down on exit.
    """

    #: Prefix of generated tool call ids (``call_fake0001``...), in the API's own style.
    call_id_prefix: ClassVar[str] = "call_fake"
    #: How the path of a model request (a turn of the conversation) ends.
    model_route: ClassVar[str]

    def __init__(
        self,
        scenario: ScenarioSource = None,
        *,
        log_path: str | Path | None = None,
    ) -> None:
        self.scenario = Scenario.load(scenario)
        self.log_path = Path(log_path) if log_path else None
        self.requests: list[Request] = []
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- what a wire format supplies ---------------------------------------------------

    @abstractmethod
    def first_user_text(self, body: Any) -> str:
        """The text of the first user message of a model request (what ``match`` is
        looked for in)."""

    @abstractmethod
    def model_turns(self, body: Any) -> int:
        """How many model turns the request already carries."""

    @abstractmethod
    def answer(self, request: Request) -> Response:
        """The response to one request (use :meth:`turn_for` for model turns)."""

    @staticmethod
    @abstractmethod
    def tool_outputs(body: Any) -> list[str]:
        """The texts of the tool results a model request carries, in order."""

    # -- scripting ---------------------------------------------------------------------

    def turn_for(self, body: Any) -> Turn:
        """The scripted turn that answers the model request ``body``."""
        text = self.first_user_text(body)
        for conversation in self.scenario.conversations:
            if conversation.match in text:
                played = self.model_turns(body)
                turns = conversation.turns
                return turns[played] if played < len(turns) else OK
        return OK

    def next_call_id(self) -> str:
        """A fresh tool call id, in the API's own style."""
        with self._lock:
            return f"{self.call_id_prefix}{next(self._ids):04d}"

    # -- what tests read ---------------------------------------------------------------

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT``: the base URL the host is given (some hosts want
        ``/v1`` after it)."""
        if self._server is None:
            raise RuntimeError(
                "the fake model server is not running: read its url inside its with block"
            )
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def posts(self, route_suffix: str = "") -> list[Request]:
        """The POST requests so far whose path (query string aside) ends with the suffix."""
        with self._lock:
            return [
                r for r in self.requests if r.method == "POST" and r.route.endswith(route_suffix)
            ]

    def model_requests(self) -> list[Json]:
        """The bodies of the model requests (one per turn the host asked), in arrival
        order."""
        return [r.body for r in self.posts(self.model_route) if isinstance(r.body, dict)]

    def conversation(self, match: str = "") -> list[Json]:
        """The model requests whose first user message contains ``match``."""
        return [b for b in self.model_requests() if match in self.first_user_text(b)]

    def last_tool_outputs(self, match: str = "") -> list[str]:
        """What the host told the model its tool calls returned (a denied call: the
        reason), as of the latest request of the conversation: each request carries the
        whole history, so this is every tool result, in order."""
        requests = self.conversation(match)
        return self.tool_outputs(requests[-1]) if requests else []

    # -- serving -----------------------------------------------------------------------

    def _record(self, request: Request) -> None:
        with self._lock:
            self.requests.append(request)
            if self.log_path is not None:
                line = {"t": request.t, "method": request.method, "path": request.path,
                        "body": request.body}  # fmt: skip
                with self.log_path.open("a", encoding="utf-8") as f:
                    f.write(json.dumps(line) + "\n")

    def __enter__(self) -> Self:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_class(self))
        self._thread = threading.Thread(
            target=self._server.serve_forever, name=type(self).__name__, daemon=True
        )
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=10)
        self._server = self._thread = None


def sse_lines(events: Iterable[tuple[str | None, Any]]) -> bytes:
    """The SSE encoding of ``(event name or None, data)`` pairs: a string is sent as it is
    (OpenAI's closing ``[DONE]``), anything else as JSON."""
    out = []
    for name, data in events:
        head = f"event: {name}\n" if name else ""
        text = data if isinstance(data, str) else json.dumps(data)
        out.append(f"{head}data: {text}\n\n")
    return "".join(out).encode()


def _handler_class(fake: FakeModelServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass  # keep the test output clean; requests are recorded instead

        def _serve(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = {"_raw": raw.decode("utf-8", "replace")}
            request = Request(self.command, self.path, body, time.time())
            fake._record(request)
            self._send(fake.answer(request))

        def _send(self, response: Response) -> None:
            if isinstance(response, JsonResponse):
                data = json.dumps(response.body).encode()
                self.send_response(response.status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)
                return
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("cache-control", "no-cache")
            self.send_header("connection", "close")
            self.end_headers()
            self.wfile.write(sse_lines(response.events))
            self.wfile.flush()
            self.close_connection = True

        do_GET = do_POST = do_HEAD = _serve

    return Handler
