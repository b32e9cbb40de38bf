"""A scripted fake of the Anthropic Messages API (``POST /v1/messages``, SSE or JSON).

Claude Code sends every turn as ``POST /v1/messages?beta=true`` with ``"stream": true``;
its prompt is a text block of the first user message, after a ``<system-reminder>``
block, and tool results come back as ``tool_result`` blocks of the next user message.
Any other path gets a 404 in Anthropic's error shape, which Claude Code tolerates.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

from .script import Json, ScenarioSource, Turn
from .server import FakeModelServer, JsonResponse, Request, Response, SseResponse

NOT_FOUND = JsonResponse(
    404, {"type": "error", "error": {"type": "not_found_error", "message": "fake server"}}
)


def text_of(content: Any) -> str:
    """The text of a message's content: a string, or text and tool_result blocks."""
    if isinstance(content, str):
        return content
    parts = []
    for block in content or []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text":
            parts.append(str(block.get("text", "")))
        elif block.get("type") == "tool_result":
            parts.append(text_of(block.get("content")))
    return "\n".join(parts)


def messages(body: Any) -> list[Json]:
    """The messages of a request, skipping anything that is not an object."""
    found = body.get("messages") if isinstance(body, dict) else None
    return [m for m in found if isinstance(m, dict)] if isinstance(found, list) else []


class FakeAnthropic(FakeModelServer):
    """Anthropic Messages API: Claude Code's model endpoint (``ANTHROPIC_BASE_URL``)."""

    call_id_prefix = "toolu_fake"
    model_route = "/messages"

    def __init__(
        self, scenario: ScenarioSource = None, *, log_path: str | Path | None = None
    ) -> None:
        super().__init__(scenario, log_path=log_path)
        self._message_ids = itertools.count(1)

    def first_user_text(self, body: Any) -> str:
        return next(
            (text_of(m.get("content")) for m in messages(body) if m.get("role") == "user"), ""
        )

    def model_turns(self, body: Any) -> int:
        return sum(1 for m in messages(body) if m.get("role") == "assistant")

    def answer(self, request: Request) -> Response:
        if request.method != "POST" or not isinstance(request.body, dict):
            return NOT_FOUND
        if request.route.endswith("/messages/count_tokens"):
            return JsonResponse(200, {"input_tokens": 100})
        if not request.route.endswith(self.model_route):
            return NOT_FOUND
        blocks = self.blocks(self.turn_for(request.body))
        stop = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
        message: Json = {
            "id": f"msg_fake{next(self._message_ids):04d}",
            "type": "message",
            "role": "assistant",
            "model": request.body.get("model", "fake"),
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 1},
        }
        if not request.body.get("stream"):
            return JsonResponse(200, {**message, "content": blocks, "stop_reason": stop})
        return SseResponse(stream(message, blocks, stop))

    def blocks(self, turn: Turn) -> list[Json]:
        """The content blocks of one scripted turn: its text, then its tool call."""
        out: list[Json] = []
        if turn.text:
            out.append({"type": "text", "text": turn.text})
        if turn.tool_use:
            out.append({"type": "tool_use", "id": self.next_call_id(),
                        "name": turn.tool_use.name, "input": turn.tool_use.input})  # fmt: skip
        return out

    # -- what tests read ---------------------------------------------------------------

    @staticmethod
    def tool_outputs(body: Any) -> list[str]:
        """The texts of the ``tool_result`` blocks of a request's user messages, in order."""
        return [
            text_of(block.get("content"))
            for message in messages(body)
            if message.get("role") == "user" and isinstance(message.get("content"), list)
            for block in message["content"]
            if isinstance(block, dict) and block.get("type") == "tool_result"
        ]

    def models(self, match: str) -> list[str]:
        """The ``model`` of each request of the conversation whose first user message has
        ``match``, in arrival order (what a subagent really ran on)."""
        return [str(b.get("model")) for b in self.conversation(match)]


def stream(message: Json, blocks: list[Json], stop: str) -> list[tuple[str, Json]]:
    """The SSE events of one streamed assistant message."""
    events: list[tuple[str, Json]] = [
        ("message_start", {"type": "message_start", "message": message})
    ]
    for i, block in enumerate(blocks):
        start: Json
        delta: Json
        if block["type"] == "text":
            start = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        else:
            start = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        events += [
            (
                "content_block_start",
                {"type": "content_block_start", "index": i, "content_block": start},
            ),
            ("content_block_delta", {"type": "content_block_delta", "index": i, "delta": delta}),
            ("content_block_stop", {"type": "content_block_stop", "index": i}),
        ]
    events += [
        ("message_delta", {"type": "message_delta",
                           "delta": {"stop_reason": stop, "stop_sequence": None},
                           "usage": {"output_tokens": 5}}),
        ("message_stop", {"type": "message_stop"}),
    ]  # fmt: skip
    return events
