"""A scripted fake of the OpenAI Chat Completions API (``POST .../chat/completions``).

Copilot CLI (``COPILOT_PROVIDER_BASE_URL``), Qwen Code (``OPENAI_BASE_URL``), Cline
(``openai-compatible`` provider) and the in-process hosts (OpenCode, Kilo, Pi, Hermes)
speak this API. A request is ``{"model", "messages": [{"role": "system"|"user"|
"assistant"|"tool", "content", "tool_calls"?, "tool_call_id"?}, ...], "tools", "stream"}``;
a scripted ``tool_use`` becomes one ``tool_calls`` entry of the assistant message, its
``input`` the JSON ``arguments`` string. Some hosts put an environment preamble in the
first user message and the prompt in a later one, so ``match`` is looked for in the text
of every user message. The answer streams (``chat.completion.chunk`` lines, then
``data: [DONE]``) when the request says ``"stream": true``, else it is one JSON
``chat.completion``. ``GET .../models`` lists ``fake-model``; any other path is a 404.
"""

from __future__ import annotations

import itertools
import json
import time
from pathlib import Path
from typing import Any

from .script import Json, ScenarioSource, Turn
from .server import FakeModelServer, JsonResponse, Request, Response, SseResponse

NOT_FOUND = JsonResponse(404, {"error": {"message": "fake: not found", "type": "not_found"}})
USAGE = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
MODELS = {"object": "list", "data": [{"id": "fake-model", "object": "model", "created": 0,
                                      "owned_by": "fake", "context_length": 128000}]}  # fmt: skip


def text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = (c.get("text", "") for c in content or [] if isinstance(c, dict))
    return "\n".join(p for p in parts if isinstance(p, str))


def messages(body: Any) -> list[Json]:
    found = body.get("messages") if isinstance(body, dict) else None
    return [m for m in found if isinstance(m, dict)] if isinstance(found, list) else []


def user_text(body: Any) -> str:
    """The text of every user message of a request, joined."""
    return "\n".join(text_of(m.get("content")) for m in messages(body) if m.get("role") == "user")


class FakeOpenAIChat(FakeModelServer):
    """OpenAI Chat Completions: the endpoint of Copilot, Qwen, Cline and most plugins."""

    model_route = "/chat/completions"

    def __init__(
        self, scenario: ScenarioSource = None, *, log_path: str | Path | None = None
    ) -> None:
        super().__init__(scenario, log_path=log_path)
        self._completion_ids = itertools.count(1)

    def first_user_text(self, body: Any) -> str:
        return user_text(body)

    def model_turns(self, body: Any) -> int:
        return sum(1 for m in messages(body) if m.get("role") == "assistant")

    def answer(self, request: Request) -> Response:
        if request.method == "GET" and request.route.endswith("/models"):
            return JsonResponse(200, MODELS)
        if request.method != "POST" or not request.route.endswith(self.model_route):
            return NOT_FOUND
        body = request.body if isinstance(request.body, dict) else {}
        message = self.message(self.turn_for(body))
        finish = "tool_calls" if "tool_calls" in message else "stop"
        head = {"id": f"chatcmpl-fake{next(self._completion_ids):04d}", "created": int(time.time()),
                "model": body.get("model", "fake-model")}  # fmt: skip
        if not body.get("stream"):
            choice = {"index": 0, "message": message, "finish_reason": finish}
            return JsonResponse(200, {**head, "object": "chat.completion", "usage": USAGE,
                                      "choices": [choice]})  # fmt: skip

        def chunk(delta: Json, finish_reason: str | None = None, **extra: Any) -> Json:
            choice = {"index": 0, "delta": delta, "finish_reason": finish_reason}
            return {**head, "object": "chat.completion.chunk", "choices": [choice], **extra}

        chunks = [chunk({"role": "assistant", "content": message["content"] or ""})]
        if "tool_calls" in message:
            chunks.append(chunk({"tool_calls": [{**message["tool_calls"][0], "index": 0}]}))
        chunks.append(chunk({}, finish, usage=USAGE))
        return SseResponse([(None, c) for c in chunks] + [(None, "[DONE]")])

    def message(self, turn: Turn) -> Json:
        """The assistant message of one scripted turn: its text, and its tool call if any."""
        message: Json = {"role": "assistant", "content": turn.text or None}
        if turn.tool_use is not None:
            function = {"name": turn.tool_use.name, "arguments": json.dumps(turn.tool_use.input)}
            message["tool_calls"] = [
                {"id": self.next_call_id(), "type": "function", "function": function}
            ]
        return message

    # -- what tests read ---------------------------------------------------------------

    @staticmethod
    def tool_outputs(body: Any) -> list[str]:
        """The texts of the ``tool`` messages a request carries, in order."""
        return [text_of(m.get("content")) for m in messages(body) if m.get("role") == "tool"]
