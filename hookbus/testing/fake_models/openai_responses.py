"""A scripted fake of the OpenAI Responses API (``POST /v1/responses``, SSE).

Codex sends every turn as ``POST /v1/responses`` with ``"stream": true``; ``input`` holds
developer messages, a user message with ``<environment_context>``, the user's prompt, and
later the ``function_call`` / ``function_call_output`` items of the turn. A scripted
``tool_use`` becomes a ``function_call`` item: its name may carry a namespace before a dot
(``multi_agent_v1.spawn_agent``), and ``$LAST_AGENT_ID`` in its input is replaced by the
``agent_id`` of the latest tool output (what spawn_agent answered). ``GET .../models``
gets an empty list; any other path a 404.
"""

from __future__ import annotations

import json
import time
from typing import Any

from .script import Json, Turn
from .server import FakeModelServer, JsonResponse, Request, Response, SseResponse

NOT_FOUND = JsonResponse(404, {"error": {"message": "fake: not found", "type": "not_found"}})
USAGE = {
    "input_tokens": 10,
    "input_tokens_details": {"cached_tokens": 0},
    "output_tokens": 5,
    "output_tokens_details": {"reasoning_tokens": 0},
    "total_tokens": 15,
}


def text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = (c.get("text", "") for c in content or [] if isinstance(c, dict))
    return "\n".join(p for p in parts if isinstance(p, str))


def items(body: Any) -> list[Json]:
    found = body.get("input") if isinstance(body, dict) else None
    if isinstance(found, str):
        return [{"type": "message", "role": "user", "content": found}]
    return [i for i in found if isinstance(i, dict)] if isinstance(found, list) else []


def user_text(body: Any) -> str:
    """The text of every user message of a request (the prompt follows the environment's)."""
    return "\n".join(
        text_of(i.get("content"))
        for i in items(body)
        if i.get("type", "message") == "message" and i.get("role") == "user"
    )


def _agent_id(output: Any) -> str:
    try:
        data = json.loads(output if isinstance(output, str) else text_of(output))
    except (TypeError, ValueError):
        return ""
    return str(data.get("agent_id") or "") if isinstance(data, dict) else ""


class FakeOpenAIResponses(FakeModelServer):
    """OpenAI Responses API: Codex's model endpoint (``model_providers.<id>.base_url``)."""

    model_route = "/responses"

    def first_user_text(self, body: Any) -> str:
        return user_text(body)

    def model_turns(self, body: Any) -> int:
        return sum(
            1
            for i in items(body)
            if str(i.get("type", "")).endswith("_call")
            or (i.get("type", "message") == "message" and i.get("role") == "assistant")
        )

    def _id(self, prefix: str) -> str:
        """A fresh item id; one count with the call ids (``resp_fake0001``,
        ``fc_fake0002``, ``call_fake0003``...)."""
        return f"{prefix}_fake{next(self._ids):04d}"

    def answer(self, request: Request) -> Response:
        if request.method == "GET" and request.route.endswith("/models"):
            return JsonResponse(200, {"object": "list", "data": [], "models": []})
        if request.method != "POST" or not request.route.endswith(self.model_route):
            return NOT_FOUND
        item = self.item(self.turn_for(request.body), request.body)
        response = {
            "id": self._id("resp"),
            "object": "response",
            "created_at": int(time.time()),
            "status": "in_progress",
            "model": request.body.get("model", "fake"),
            "output": [],
        }
        events: list[tuple[str | None, Any]] = [
            ("response.created", {"type": "response.created", "response": response}),
            (
                "response.output_item.added",
                {
                    "type": "response.output_item.added",
                    "output_index": 0,
                    "item": {**item, "status": "in_progress"},
                },
            ),
        ]
        if item["type"] == "message":
            delta = {
                "type": "response.output_text.delta",
                "item_id": item["id"],
                "output_index": 0,
                "content_index": 0,
                "delta": item["content"][0]["text"],
            }
            events.append(("response.output_text.delta", delta))
        done = {**response, "status": "completed", "output": [item], "usage": USAGE}
        events += [
            (
                "response.output_item.done",
                {"type": "response.output_item.done", "output_index": 0, "item": item},
            ),
            ("response.completed", {"type": "response.completed", "response": done}),
        ]
        return SseResponse(events)

    def item(self, turn: Turn, body: Any) -> Json:
        """The output item of one scripted turn: a function call, else a message."""
        if turn.tool_use is None:
            return {
                "type": "message",
                "id": self._id("msg"),
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": turn.text, "annotations": []}],
            }
        namespace, _, name = turn.tool_use.name.rpartition(".")
        arguments = json.dumps(turn.tool_use.input)
        if "$LAST_AGENT_ID" in arguments:
            outputs = [
                i.get("output") for i in items(body) if str(i.get("type", "")).endswith("_output")
            ]
            arguments = arguments.replace(
                "$LAST_AGENT_ID", _agent_id(outputs[-1]) if outputs else ""
            )
        item: Json = {
            "type": "function_call",
            "id": self._id("fc"),
            "call_id": self.next_call_id(),
            "name": name,
            "arguments": arguments,
            "status": "completed",
        }
        if namespace:
            item["namespace"] = namespace
        return item

    # -- what tests read ---------------------------------------------------------------

    @staticmethod
    def tool_outputs(body: Any) -> list[str]:
        """The ``function_call_output`` texts a request carries, in order."""
        return [
            text_of(i.get("output")) for i in items(body) if i.get("type") == "function_call_output"
        ]
