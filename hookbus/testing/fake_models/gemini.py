"""A scripted fake of the Gemini API (``generativelanguage`` v1beta), for Gemini CLI.

Gemini CLI 0.61.0 (``GOOGLE_GEMINI_BASE_URL``) sends each main turn as ``POST
/v1beta/models/<model>:streamGenerateContent?alt=sse`` (the path may start with ``//``):
``{"contents": [{"role": "user", "parts": [{"text": "<session_context>..."}, {"text":
PROMPT}]}, {"role": "model", ...}, ...], "systemInstruction", "tools", ...}``. A turn's
tool call is a ``functionCall`` part, its result a ``functionResponse`` part of the next
user content. The answer is SSE, one ``data:`` line per chunk (no ``event:`` line).

Side calls are ``:generateContent`` (non-streaming): the model router's classifier, whose
``responseJsonSchema`` wants ``{"complexity_reasoning", "complexity_score"}``, gets a JSON
text that satisfies it; ``:countTokens`` gets a count; anything else a 404 in Google's
error shape.
"""

from __future__ import annotations

import json
from typing import Any

from .script import Json, Turn
from .server import FakeModelServer, JsonResponse, Request, Response, SseResponse

NOT_FOUND = JsonResponse(404, {"error": {"code": 404, "message": "fake", "status": "NOT_FOUND"}})
ROUTER = json.dumps({"complexity_reasoning": "simple", "complexity_score": 10})
USAGE = {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}


def contents(body: Any) -> list[Json]:
    found = body.get("contents") if isinstance(body, dict) else None
    return [c for c in found if isinstance(c, dict)] if isinstance(found, list) else []


def text_of(content: Json) -> str:
    """The text parts of one content, joined; a function response's JSON too."""
    parts = []
    for part in content.get("parts") or []:
        if not isinstance(part, dict):
            continue
        if isinstance(part.get("text"), str):
            parts.append(part["text"])
        elif "functionResponse" in part:
            parts.append(json.dumps(part["functionResponse"]))
    return "\n".join(parts)


def candidate(parts: list[Json]) -> Json:
    return {"candidates": [{"content": {"role": "model", "parts": parts},
                            "finishReason": "STOP", "index": 0}],
            "usageMetadata": USAGE, "modelVersion": "fake"}  # fmt: skip


class FakeGemini(FakeModelServer):
    """The Gemini API: Gemini CLI's model endpoint (``GOOGLE_GEMINI_BASE_URL``)."""

    model_route = ":streamGenerateContent"

    def first_user_text(self, body: Any) -> str:
        return next((text_of(c) for c in contents(body) if c.get("role") == "user"), "")

    def model_turns(self, body: Any) -> int:
        return sum(1 for c in contents(body) if c.get("role") == "model")

    def answer(self, request: Request) -> Response:
        if request.method != "POST" or not isinstance(request.body, dict):
            return NOT_FOUND
        if request.route.endswith(":countTokens"):
            return JsonResponse(200, {"totalTokens": 10})
        if request.route.endswith(":generateContent"):
            return JsonResponse(200, candidate([{"text": ROUTER}]))
        if not request.route.endswith(self.model_route):
            return NOT_FOUND
        return SseResponse([(None, candidate(self.parts(self.turn_for(request.body))))])

    def parts(self, turn: Turn) -> list[Json]:
        out: list[Json] = []
        if turn.text:
            out.append({"text": turn.text})
        if turn.tool_use:
            out.append({"functionCall": {"name": turn.tool_use.name, "args": turn.tool_use.input}})
        return out

    # -- what tests read ---------------------------------------------------------------

    @staticmethod
    def tool_outputs(body: Any) -> list[str]:
        """The ``functionResponse`` parts of a request's user contents, as JSON, in order."""
        return [
            json.dumps(part["functionResponse"])
            for content in contents(body)
            if content.get("role") == "user"
            for part in content.get("parts") or []
            if isinstance(part, dict) and "functionResponse" in part
        ]
