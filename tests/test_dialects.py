"""Which host's payload reaches a Claude command: one naming a Claude event in
``hook_event_name`` is Claude's whatever else it carries (keys Claude does not send
today, ``sessionId``, ``hookEventName``, ``conversation_id``, may come one day), so its
deny is Claude's; another host's is told only by marks Claude could not plausibly send
(Cursor's ``cursor_version``), or by Copilot's ``timestamp``, where hookbus is unsure:
it decodes the payload as Copilot's, the host that sends such payloads today, and
answers in a form both hosts act on. The cold path and the warm server's client agree."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import GOLDEN, compile_now, examples, guarded_project, hookbus_cli, pre_tool, wait_for

import hookbus
from hookbus.hosts import HOSTS
from hookbus.hosts.shared.manifest import CLIENT_LAUNCHER, client_folder
from hookbus.hosts.shared.names import CLAUDE_EVENTS
from hookbus.runtime.compile import client_facts
from hookbus.runtime.peek import dialect
from hookbus.runtime.warm import client
from hookbus.testing import run_cli

#: Keys other hosts send that a future Claude might send as well.
ADDED = {"sessionId": "s", "hookEventName": "PreToolUse", "conversation_id": "c"}
CLIENT = [sys.executable, "-I", "-S", "-c", CLIENT_LAUNCHER, client_folder(str(Path(hookbus.__file__).parent)),
          "--host", "claude", "--project", "CLAUDE_PROJECT_DIR:", "--event", "PreToolUse",
          "--timeout", "10"]  # fmt: skip


def with_added(payload: bytes) -> bytes:
    return json.dumps({**json.loads(payload), **ADDED}).encode()


def claude_deny(stdout: bytes) -> dict[str, object]:
    decision: dict[str, object] = json.loads(stdout)["hookSpecificOutput"]
    assert decision["permissionDecision"] == "deny", stdout
    return decision


@pytest.mark.parametrize(
    ("payload", "host"),
    [
        ({"hook_event_name": "PreToolUse", **ADDED}, "claude"),
        ({"hook_event_name": "Stop", "hookName": "agentStop", "toolName": "bash"}, "claude"),
        ({"hook_event_name": "PreToolUse", "timestamp": "2026-12-07T19:00:00Z"}, "copilot"),
        # An event Copilot never sends: a timestamp cannot make it Copilot's.
        (
            {"hook_event_name": "PreSkillShellCommand", "timestamp": "2026-12-07T19:00:00Z"},
            "claude",
        ),
        ({"hook_event_name": "TaskCreated", "timestamp": "2026-12-07T19:00:00Z"}, "claude"),
        ({"hookEventName": "pre_tool_use", "sessionId": "s", "timestamp": 1}, "grok"),
        ({"hookEventName": "PreToolUse", "sessionId": "s", "timestamp": 1}, "vscode"),
        ({"hook_event_name": "PreToolUse", "cursor_version": "2.0"}, "cursor"),
        ({"hook_event_name": "preToolUse", "cursor_version": "2.0"}, "cursor"),
        ({"sessionId": "s", "timestamp": 1, "toolName": "bash"}, "copilot"),
        ({"hookName": "permissionRequest", "sessionId": "s"}, "copilot"),
        ({"hookEventName": "pre_tool_use", "sessionId": "s"}, "grok"),
        ({"hookEventName": "PreToolUse", "sessionId": "s"}, "vscode"),
    ],
)
def test_a_claude_event_name_decides_unless_a_mark_claude_cannot_send(
    payload: dict[str, object], host: str
) -> None:
    """Claude's own event name wins over any other host's key but Cursor's
    ``cursor_version`` and Copilot's ``timestamp`` (its PascalCase dialect copies
    Claude's; the reply is then one both read); a payload naming no Claude event goes
    by the other hosts' marks."""
    assert dialect(HOSTS["claude"], payload).name == host


def test_a_claude_payload_with_added_keys_is_denied_in_claudes_form(tmp_path: Path) -> None:
    """Through ``hookbus run``: the guard's deny is Claude's ``permissionDecision``."""
    project = guarded_project(tmp_path / "project")
    result = run_cli("claude", with_added(pre_tool("rm -rf /x", project)), cwd=project,
                     args=["--event", "PreToolUse", "--timeout", "10"])  # fmt: skip
    assert result.exit_code == 0, result.stderr
    assert claude_deny(result.stdout)["permissionDecisionReason"] == "no rm -rf"


def test_the_client_reads_a_claude_payload_with_added_keys_as_claudes(
    tmp_path: Path, isolated_environment: Path
) -> None:
    """The client answers an event nobody wants by itself (no server asked, none
    started), and a wanted one, asked of the server it then started, gets Claude's deny."""
    project = guarded_project(tmp_path / "project")
    compile_now(project)
    read = json.loads((GOLDEN / "PreToolUse.Read.json").read_text())
    read["cwd"] = str(project)
    alone = subprocess.run(CLIENT, input=with_added(json.dumps(read).encode()),
                           capture_output=True, cwd=project, timeout=60, check=False)  # fmt: skip
    assert (alone.returncode, alone.stdout, alone.stderr) == (0, b"", b"")
    assert not (isolated_environment / "run").exists()  # no server asked, none started

    def status() -> bool:
        done = hookbus_cli(project, "serve", "--status", "--json")
        return done.returncode == 0 and bool(done.stdout.strip())

    payload = with_added(pre_tool("rm -rf /x", project))
    for warm in (False, True):
        if warm:
            wait_for(status, "the server the first call started")
        done = subprocess.run(CLIENT, input=payload, capture_output=True, cwd=project,
                              timeout=60, check=False)  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert claude_deny(done.stdout)["permissionDecisionReason"] == "no rm -rf"


#: Copilot's mark on its PascalCase payloads, which a future Claude might send too.
STAMPED = {**ADDED, "timestamp": "2026-12-07T19:00:00.000Z"}


def denied_in_both_forms(stdout: bytes) -> str:
    """The reason of a deny both Claude (nested) and Copilot (flat) act on."""
    sent = json.loads(stdout)
    nested = claude_deny(stdout)
    assert (sent["permissionDecision"], sent["permissionDecisionReason"]) == (
        "deny", nested["permissionDecisionReason"])  # fmt: skip
    return str(nested["permissionDecisionReason"])


def test_a_claude_payload_with_a_timestamp_is_denied_in_a_form_both_hosts_read(
    tmp_path: Path, isolated_environment: Path
) -> None:
    """Claude's payload plus Copilot's ``timestamp`` (Claude's own, or Copilot's running
    a Claude install: nothing tells them apart) gets a deny Claude and Copilot both act
    on, from ``hookbus run``, and from the client, cold and warm."""
    project = guarded_project(tmp_path / "project")
    compile_now(project)
    payload = json.dumps({**json.loads(pre_tool("rm -rf /x", project)), **STAMPED}).encode()
    result = run_cli("claude", payload, cwd=project,
                     args=["--event", "PreToolUse", "--timeout", "10"])  # fmt: skip
    assert result.exit_code == 0, result.stderr
    assert denied_in_both_forms(result.stdout) == "no rm -rf"

    def status() -> bool:
        done = hookbus_cli(project, "serve", "--status", "--json")
        return done.returncode == 0 and bool(done.stdout.strip())

    for warm in (False, True):
        if warm:
            wait_for(status, "the server the first call started")
        done = subprocess.run(CLIENT, input=payload, capture_output=True, cwd=project,
                              timeout=60, check=False)  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert denied_in_both_forms(done.stdout) == "no rm -rf"


#: Keys of every dialect a Claude command may meet, and values to give them.
DIALECT_KEYS = ["hook_event_name", "hookEventName", "cursor_version", "conversation_id",
                "timestamp", "sessionId", "hookName", "toolName", "tool_name", "session_id"]  # fmt: skip
NAMES = st.sampled_from([*CLAUDE_EVENTS[:6], "preToolUse", "pre_tool_use", "agentStop", ""])
VALUES = NAMES | st.integers() | st.none()


@settings(max_examples=examples(300), deadline=None)
@given(payload=st.dictionaries(st.sampled_from(DIALECT_KEYS), VALUES, max_size=6))
def test_the_client_decides_a_dialect_only_as_hookbus_does(payload: dict[str, object]) -> None:
    """Over payloads mixing every dialect's keys: wherever the client reads a payload as
    Claude's own, hookbus does too; and a payload naming a Claude event with no
    decisive mark is one the client reads as Claude's itself."""
    facts = client_facts(HOSTS["claude"], [])
    own = client.own_dialect(payload, facts)  # type: ignore[arg-type]
    if own:
        assert dialect(HOSTS["claude"], payload) is HOSTS["claude"]
    named = payload.get("hook_event_name") in CLAUDE_EVENTS
    if named and "cursor_version" not in payload and "timestamp" not in payload:
        assert own
