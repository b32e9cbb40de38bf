"""Property tests: whatever a host (or an attacker) sends, decoding either yields an event
or a DecodeError, never anything else; valid fields always survive the trip."""

from __future__ import annotations

import json

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import examples

from hookbus.bus.errors import DecodeError
from hookbus.bus.events import Event
from hookbus.hosts import HOSTS
from hookbus.hosts.claude import driver as claude
from hookbus.runtime.peek import peek

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(), children, max_size=4)
    ),
    max_leaves=20,
)
field_names = st.sampled_from([
    "session_id", "cwd", "transcript_path", "hook_event_name", "tool_name", "tool_input",
    "tool_use_id", "tool_response", "agent_id", "agent_type", "stop_hook_active", "prompt",
    "source", "reason", "error", "last_assistant_message", "mcp_server", "duration_ms",
])  # fmt: skip
BASE = {"session_id": "s", "cwd": "/p", "tool_name": "Bash", "tool_input": {"command": "ls"}}


@pytest.mark.timeout(300)  # hundreds of examples: minutes on a loaded machine
@settings(max_examples=examples(300), deadline=None)
@given(
    event=st.sampled_from([*claude.ALL_EVENTS, "Unknown"]),
    overrides=st.dictionaries(field_names, json_values, max_size=4),
)
def test_any_field_values_decode_or_raise_decode_error(
    event: str, overrides: dict[str, object]
) -> None:
    """Wrong types anywhere give a DecodeError (fail-open upstream), never a crash."""
    payload = json.dumps({**BASE, "hook_event_name": event, **overrides}).encode()
    try:
        decoded = claude.driver.decode(payload)
    except DecodeError:
        return
    assert isinstance(decoded, Event)
    assert decoded.native == overrides.get("hook_event_name", event)


@pytest.mark.timeout(300)  # hundreds of examples: minutes on a loaded machine
@settings(max_examples=examples(300), deadline=None)
@given(st.binary(max_size=512))
def test_arbitrary_bytes_never_escape_as_other_errors(data: bytes) -> None:
    """Random bytes: the cold-path peek says ValueError, the decoder DecodeError."""
    try:
        peek(data, HOSTS["claude"], None)
    except ValueError:
        pass
    try:
        claude.driver.decode(data)
    except DecodeError:
        pass


@pytest.mark.timeout(300)  # hundreds of examples: minutes on a loaded machine
@settings(max_examples=examples(200), deadline=None)
@given(
    session=st.text(min_size=1),
    command=st.text(),
    tool=st.sampled_from(["Bash", "PowerShell", "Edit", "Read", "Agent", "mcp__srv__t", "Zed"]),
    agent=st.none() | st.text(min_size=1),
)
def test_valid_fields_survive_decoding(
    session: str, command: str, tool: str, agent: str | None
) -> None:
    """Session, tool name, shell command and subagent id come through unchanged."""
    payload: dict[str, object] = {
        "session_id": session, "cwd": "/p", "hook_event_name": "PreToolUse",
        "tool_name": tool, "tool_input": {"command": command, "file_path": "/p/f"},
    }  # fmt: skip
    if agent is not None:
        payload["agent_id"] = agent
    event = claude.driver.decode(msgspec.json.encode(payload))
    assert event.session_id == session
    assert event.tool.name == tool  # type: ignore[attr-defined]
    assert event.agent.id == agent
    is_shell = tool in ("Bash", "PowerShell")
    assert event.tool.command == (command if is_shell else None)  # type: ignore[attr-defined]
