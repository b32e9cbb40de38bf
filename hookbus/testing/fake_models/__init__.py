"""Scripted fake model APIs, to drive a real host offline in a test (standard library only).

    from hookbus.testing.fake_models import FakeAnthropic, Scenario, Turn

    script = Scenario.of(Turn.call("Bash", {"command": "rm -rf build"}), Turn.say("Done."))
    with FakeAnthropic(script) as model:
        env = {**os.environ, "ANTHROPIC_BASE_URL": model.url, "ANTHROPIC_API_KEY": "sk-fake"}
        subprocess.run(["claude", "-p", "clean up", "--allowedTools", "Bash"], env=env)
    assert "not allowed" in model.last_tool_outputs()[0]

One module per wire format: :class:`FakeAnthropic` (Anthropic Messages: Claude Code),
:class:`FakeOpenAIResponses` (OpenAI Responses: Codex), :class:`FakeOpenAIChat` (OpenAI
Chat Completions: Copilot, Qwen, Cline, OpenCode, Kilo, Pi, Hermes) and
:class:`FakeGemini` (the Gemini API: Gemini CLI). docs/testing.md shows how each host is
pointed at its fake and which flags let it run a tool headless.

Nothing here is imported by a hook: the fakes run in the test's process only.
"""

from __future__ import annotations

from .anthropic import FakeAnthropic
from .gemini import FakeGemini
from .openai_chat import FakeOpenAIChat
from .openai_responses import FakeOpenAIResponses
from .script import Conversation, Scenario, ScenarioSource, ToolUse, Turn
from .server import FakeModelServer, Request

__all__ = [
    "Conversation",
    "FakeAnthropic",
    "FakeGemini",
    "FakeModelServer",
    "FakeOpenAIChat",
    "FakeOpenAIResponses",
    "Request",
    "Scenario",
    "ScenarioSource",
    "ToolUse",
    "Turn",
]
