"""What a fake model says: a scenario of conversations, each a list of scripted turns.

A :class:`Scenario` holds conversations; a request belongs to the first conversation
whose ``match`` occurs in the text of its first user message (of any user message, for
the OpenAI formats, where some hosts put an environment preamble first; an empty
``match``, the default, takes every request), so a subagent's fresh conversation, which
starts with the subagent's prompt, can have its own script. The turn played is the
number of model turns the request already carries: turn 0 answers the prompt, turn 1
the first tool result. Past the last turn, and for requests no conversation matches,
the model says "ok".

Written in Python::

    Scenario.of(Turn.call("Bash", {"command": "rm -rf build"}), Turn.say("Done."))

or as JSON data (a file's path, or the parsed mapping)::

    {"conversations": [{"match": "MARKER", "turns": [
        {"text": "I will run it.", "tool_use": {"name": "Bash", "input": {"command": "ls"}}},
        {"text": "Done."}]}]}

A turn has some text, a tool call, or both (the text comes first).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeAlias

#: A JSON object as the standard library parses it.
Json = dict[str, Any]


@dataclass(frozen=True)
class ToolUse:
    """A tool call the model makes: the host's own tool name and its input."""

    name: str
    input: Json = field(default_factory=dict)


@dataclass(frozen=True)
class Turn:
    """One scripted model turn: some text, a tool call, or both."""

    text: str = ""
    tool_use: ToolUse | None = None

    @classmethod
    def call(cls, name: str, input: Mapping[str, Any] | None = None, *, text: str = "") -> Turn:
        """The model calls tool ``name`` (the host's name: ``Bash``, ``run_shell_command``,
        ``shell``...) with ``input``, after saying ``text``."""
        return cls(text=text, tool_use=ToolUse(name, dict(input or {})))

    @classmethod
    def say(cls, text: str) -> Turn:
        """The model answers ``text`` and calls nothing (which ends the host's turn)."""
        return cls(text=text)

    @classmethod
    def parse(cls, data: Mapping[str, Any]) -> Turn:
        tool = data.get("tool_use")
        return cls(
            text=str(data.get("text", "")),
            tool_use=ToolUse(tool["name"], dict(tool.get("input", {}))) if tool else None,
        )


#: What the model says past its script.
OK = Turn(text="ok")


@dataclass(frozen=True)
class Conversation:
    """The turns played to requests whose first user message contains ``match``."""

    match: str
    turns: tuple[Turn, ...]


@dataclass(frozen=True)
class Scenario:
    """Every conversation the fake model knows, tried in order."""

    conversations: tuple[Conversation, ...] = ()

    @classmethod
    def of(cls, *turns: Turn, match: str = "") -> Scenario:
        """One conversation: ``turns``, played to requests whose first user message
        contains ``match`` (every request, by default)."""
        return cls((Conversation(match, turns),))

    @classmethod
    def parse(cls, data: Mapping[str, Any]) -> Scenario:
        """A scenario from its JSON data (the module's docstring shows the shape)."""
        return cls(
            tuple(
                Conversation(c["match"], tuple(Turn.parse(t) for t in c["turns"]))
                for c in data.get("conversations", [])
            )
        )

    @classmethod
    def load(cls, source: ScenarioSource) -> Scenario:
        """A scenario from itself, its JSON data, a JSON file's path, or the turns of a
        conversation that takes every request (none: the model only says "ok")."""
        if source is None:
            return cls()
        if isinstance(source, Scenario):
            return source
        if isinstance(source, str | Path):
            return cls.parse(json.loads(Path(source).read_text(encoding="utf-8")))
        if isinstance(source, Mapping):
            return cls.parse(source)
        return cls.of(*source)


#: What a fake server accepts as its script: a scenario, its JSON data or file's path, or
#: the turns of one conversation that takes every request.
ScenarioSource: TypeAlias = Scenario | Mapping[str, Any] | Sequence[Turn] | str | Path | None
