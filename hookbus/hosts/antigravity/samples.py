"""Realistic Antigravity (agy 1.3.1) payloads, one per native event, for ``hookbus try``.

Key sets and order are those of the live 1.3.1 captures in ``ajms/orchestrator``
(``crates/orch-agent/tests/fixtures/antigravity/hooks/*.json``): the common fields, then
the event's own. A tool event carries the tool asked for, else a harmless
``run_command`` ``git status``; every tool's arguments carry agy's two UI keys. Loaded
only by :meth:`hookbus.hosts.shared.driver.BaseDriver.sample`, never on a hook's path.
"""

from __future__ import annotations

from typing import Any

from hookbus.hosts.shared.driver import filled

#: The event's own fields (PreInvocation: the first model call of a new conversation).
EVENTS: dict[str, dict[str, Any]] = {
    "PreInvocation": {"invocationNum": 0, "initialNumSteps": 0},
    "PreToolUse": {},
    "PostToolUse": {"error": ""},
    "PostInvocation": {"invocationNum": 0, "initialNumSteps": 0},
    "Stop": {"executionNum": 1, "terminationReason": "NO_TOOL_CALL", "error": "",
             "fullyIdle": True},
}  # fmt: skip

TOOL_EVENTS = ("PreToolUse", "PostToolUse")
DEFAULT_TOOL = "run_command"

#: A harmless input per tool (PascalCase, as the model writes it).
TOOLS: dict[str, dict[str, Any]] = {
    "run_command": {"CommandLine": "git status", "Cwd": "{cwd}", "WaitMsBeforeAsync": 2000},
    "view_file": {"AbsolutePath": "{cwd}/README.md"},
    "write_to_file": {"TargetFile": "{cwd}/NOTES.md", "CodeContent": "# Notes\n",
                      "Overwrite": False, "Description": "Start a notes file"},
    "invoke_subagent": {"Subagents": [{"Model": "inherit", "Prompt": "List the test files.",
                                       "Role": "Researcher", "TypeName": "research",
                                       "Workspace": "inherit"}]},
}  # fmt: skip


def payload(
    native: str,
    tool: str | None,
    tool_input: dict[str, object] | None,
    *,
    cwd: str,
    session_id: str,
) -> dict[str, Any]:
    """The payload of ``native`` (one of :data:`EVENTS`) as agy 1.3.1 sends it."""
    brain = f"/home/dev/.gemini/antigravity-cli/brain/{session_id}"
    data: dict[str, Any] = {
        "conversationId": session_id,
        "workspacePaths": [cwd],
        "transcriptPath": f"{brain}/.system_generated/logs/transcript_full.jsonl",
        "artifactDirectoryPath": brain,
        "modelName": "gemini-3.8-flash-high",
    }
    if native in TOOL_EVENTS:
        name = tool or DEFAULT_TOOL
        if tool_input is not None:
            args = dict(tool_input)
        else:
            args = {**filled(TOOLS.get(name, {}), {"cwd": cwd}), "toolAction": "Running",
                    "toolSummary": name}  # fmt: skip
        data["stepIdx"] = 2
        data["toolCall"] = {"name": name, "args": args}
    data.update(EVENTS[native])
    return data
