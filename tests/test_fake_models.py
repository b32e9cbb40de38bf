"""The scripted fake model APIs of ``hookbus.testing.fake_models``: each plays its script
in its own wire format, over real HTTP on 127.0.0.1, and records what the host sent."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from hookbus.testing.fake_models import (
    FakeAnthropic,
    FakeGemini,
    FakeModelServer,
    FakeOpenAIChat,
    FakeOpenAIResponses,
    Scenario,
    Turn,
)

RM = Turn.call("Bash", {"command": "rm -rf build"}, text="I will clean up.")
DONE = Turn.say("Done.")


def post(model: FakeModelServer, path: str, body: dict[str, Any]) -> tuple[str, bytes]:
    """POST ``body`` as JSON; the answer's content type and bytes."""
    request = urllib.request.Request(
        model.url + path, data=json.dumps(body).encode(), method="POST",
        headers={"content-type": "application/json"},
    )  # fmt: skip
    with urllib.request.urlopen(request, timeout=30) as answer:
        return answer.headers["content-type"], answer.read()


def sse(raw: bytes) -> list[Any]:
    """The ``data:`` payloads of a server-sent event stream, JSON-decoded when they are."""
    found: list[Any] = []
    for line in raw.decode().splitlines():
        if line.startswith("data: "):
            data = line.removeprefix("data: ")
            found.append(data if data == "[DONE]" else json.loads(data))
    return found


def test_anthropic_calls_the_tool_then_says_done_and_records_the_result() -> None:
    """Claude's streamed turn 0 gets the scripted Bash call, turn 1 (after a tool_result)
    the closing text, and the tool result the host sent back is read back as text."""
    prompt = {"role": "user", "content": [{"type": "text", "text": "please clean up"}]}
    with FakeAnthropic(Scenario.of(RM, DONE)) as model:
        kind, raw = post(model, "/v1/messages?beta=true", {"stream": True, "messages": [prompt]})
        assert kind == "text/event-stream"
        events = sse(raw)
        [tool] = [e["content_block"] for e in events if e["type"] == "content_block_start"
                  and e["content_block"]["type"] == "tool_use"]  # fmt: skip
        [delta] = [e["delta"]["partial_json"] for e in events
                   if e["type"] == "content_block_delta" and e["delta"]["type"] == "input_json_delta"]  # fmt: skip
        assert (tool["name"], json.loads(delta)) == ("Bash", {"command": "rm -rf build"})
        assert events[-2]["delta"]["stop_reason"] == "tool_use"

        result = {"type": "tool_result", "tool_use_id": tool["id"], "is_error": True,
                  "content": [{"type": "text", "text": "rm is not allowed here"}]}  # fmt: skip
        second = [prompt, {"role": "assistant", "content": [tool]},
                  {"role": "user", "content": [result]}]  # fmt: skip
        _, raw = post(model, "/v1/messages", {"messages": second})
        answer = json.loads(raw)
        assert (answer["content"], answer["stop_reason"]) == (
            [{"type": "text", "text": "Done."}], "end_turn",
        )  # fmt: skip
        assert len(model.model_requests()) == 2
        assert model.last_tool_outputs() == ["rm is not allowed here"]


def test_openai_chat_streams_and_answers_a_tool_call() -> None:
    """Chat Completions: a ``tool_calls`` entry with JSON arguments, streamed or not,
    then the closing text once a ``tool`` message comes back."""
    user = {"role": "user", "content": "MARK: please clean up"}
    with FakeOpenAIChat(Scenario.of(RM, DONE, match="MARK")) as model:
        _, raw = post(model, "/v1/chat/completions", {"stream": True, "messages": [user]})
        chunks = sse(raw)
        assert chunks[-1] == "[DONE]"
        [call] = [c["choices"][0]["delta"]["tool_calls"][0] for c in chunks[:-1]
                  if "tool_calls" in c["choices"][0]["delta"]]  # fmt: skip
        assert call["function"]["name"] == "Bash"
        assert json.loads(call["function"]["arguments"]) == {"command": "rm -rf build"}

        told = {"role": "tool", "tool_call_id": call["id"], "content": "denied: rm"}
        turn = {"role": "assistant", "content": None, "tool_calls": [call]}
        _, raw = post(model, "/v1/chat/completions", {"messages": [user, turn, told]})
        assert json.loads(raw)["choices"][0]["message"]["content"] == "Done."
        assert model.last_tool_outputs("MARK") == ["denied: rm"]


def test_openai_responses_answers_a_function_call() -> None:
    """Responses (Codex): turn 0 is a ``function_call`` item, turn 1 a message."""
    user = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]}
    with FakeOpenAIResponses([RM, DONE]) as model:
        _, raw = post(model, "/v1/responses", {"stream": True, "input": [user]})
        [done] = [e for e in sse(raw) if e["type"] == "response.completed"]
        [item] = done["response"]["output"]
        assert (item["type"], item["name"]) == ("function_call", "Bash")
        assert json.loads(item["arguments"]) == {"command": "rm -rf build"}

        output = {"type": "function_call_output", "call_id": item["call_id"], "output": "no"}
        _, raw = post(model, "/v1/responses", {"stream": True, "input": [user, item, output]})
        [done] = [e for e in sse(raw) if e["type"] == "response.completed"]
        assert done["response"]["output"][0]["content"][0]["text"] == "Done."
        assert model.last_tool_outputs() == ["no"]


def test_gemini_answers_a_function_call_and_reads_the_response_back() -> None:
    """Gemini: turn 0 is a ``functionCall`` part, turn 1 the text; the host's
    ``functionResponse`` is read back as JSON text."""
    user = {"role": "user", "parts": [{"text": "clean up"}]}
    route = "//v1beta/models/gemini-fake:streamGenerateContent?alt=sse"
    with FakeGemini(Scenario.of(RM, DONE)) as model:
        [chunk] = sse(post(model, route, {"contents": [user]})[1])
        [text, call] = chunk["candidates"][0]["content"]["parts"]
        assert text == {"text": "I will clean up."}
        assert call == {"functionCall": {"name": "Bash", "args": {"command": "rm -rf build"}}}

        response = {"functionResponse": {"name": "Bash", "response": {"error": "denied"}}}
        turns = [user, {"role": "model", "parts": [call]}, {"role": "user", "parts": [response]}]
        [chunk] = sse(post(model, route, {"contents": turns})[1])
        assert chunk["candidates"][0]["content"]["parts"] == [{"text": "Done."}]
        [told] = model.last_tool_outputs()
        assert json.loads(told)["response"] == {"error": "denied"}


@pytest.mark.parametrize("form", ["scenario", "mapping", "file", "turns"])
def test_a_script_is_given_in_any_of_its_forms(form: str, tmp_path: Path) -> None:
    """A Scenario, its JSON data, a JSON file or a list of turns script the same model;
    a request no conversation matches, or past the script, gets "ok"."""
    data = {"conversations": [{"match": "MARK", "turns": [{"text": "hello"}]}]}
    (tmp_path / "script.json").write_text(json.dumps(data))
    source = {
        "scenario": Scenario.of(Turn.say("hello"), match="MARK"),
        "mapping": data,
        "file": tmp_path / "script.json",
        "turns": [Turn.say("hello")],
    }[form]

    def ask(text: str, turns: int = 0) -> str:
        messages = [{"role": "user", "content": text}] + [
            {"role": "assistant", "content": "x"}
        ] * turns
        _, raw = post(model, "/v1/chat/completions", {"messages": messages})
        return str(json.loads(raw)["choices"][0]["message"]["content"])

    with FakeOpenAIChat(source) as model:
        assert ask("MARK: hi") == "hello"
        assert ask("MARK: hi", turns=1) == "ok"
        assert ask("other") == ("hello" if form == "turns" else "ok")
        assert len(model.conversation("MARK")) == 2
