"""Realistic Windsurf Cascade payloads, one per native event, for ``hookbus try``.

The shape is the vendor page's (https://docs.windsurf.com/windsurf/cascade/hooks): the
common fields ``agent_action_name``, ``trajectory_id``, ``execution_id``, ``timestamp``
(ISO 8601 with its offset, as live captures show), then ``model_name`` (live captures
only, heywood8/rosetta ``docs/hooks/windsurf.md``) and the event's ``tool_info``. A tool
event carries the operation of its event; an MCP event the MCP tool asked for
(``mcp__<server>__<tool>``), else GitHub's ``list_commits``. Loaded only by
:meth:`hookbus.hosts.shared.driver.BaseDriver.sample`, never on a hook's path.
"""

from __future__ import annotations

import hashlib
import posixpath
import uuid
from typing import Any

from hookbus.bus.errors import SampleError
from hookbus.hosts.shared.driver import filled
from hookbus.hosts.windsurf.driver import MCP_EVENTS, MCP_PREFIX

TOOL_EVENTS = (
    "pre_read_code", "post_read_code", "pre_write_code", "post_write_code",
    "pre_run_command", "post_run_command", "pre_mcp_tool_use", "post_mcp_tool_use",
)  # fmt: skip

EDITS = [{"old_string": "# Project", "new_string": "# The project"}]
#: Each event's harmless ``tool_info``.
TOOL_INFO: dict[str, dict[str, Any]] = {
    "pre_read_code": {"file_path": "{cwd}/README.md"},
    "post_read_code": {"file_path": "{cwd}/README.md"},
    "pre_write_code": {"file_path": "{cwd}/README.md", "edits": EDITS},
    "post_write_code": {"file_path": "{cwd}/README.md", "edits": EDITS},
    "pre_run_command": {"command_line": "git status", "cwd": "{cwd}"},
    "post_run_command": {"command_line": "git status", "cwd": "{cwd}"},
    "pre_user_prompt": {"user_prompt": "Run the tests and fix what fails"},
    "post_cascade_response": {"response": "### Planner Response\n\nAll tests pass now."},
    "post_cascade_response_with_transcript": {
        "transcript_path": "{home}/.windsurf/transcripts/{session}.jsonl"},
    # The hook runs in the new worktree: the folder asked for.
    "post_setup_worktree": {"worktree_path": "{cwd}",
                            "root_workspace_path": "{home}/projects/{name}"},
}  # fmt: skip
MCP_CALL = ("github", "list_commits", {"owner": "code-owner", "repo": "my-cool-repo",
                                       "sha": "main", "perPage": 1})  # fmt: skip


def _mcp(tool: str | None, tool_input: dict[str, object] | None) -> dict[str, Any]:
    server, name, arguments = MCP_CALL
    if tool is not None:
        server, sep, name = tool.removeprefix(MCP_PREFIX).partition("__")
        if not tool.startswith(MCP_PREFIX) or not sep:
            raise SampleError("windsurf", f"windsurf's MCP events carry MCP tools, not {tool!r}",
                              tool, ("mcp__<server>__<tool>",), "their names are")  # fmt: skip
    if tool_input is not None:
        arguments = dict(tool_input)
    return {"mcp_server_name": server, "mcp_tool_name": name, "mcp_tool_arguments": arguments}


def payload(
    native: str,
    tool: str | None,
    tool_input: dict[str, object] | None,
    *,
    cwd: str,
    session_id: str,
) -> dict[str, Any]:
    """The payload of ``native`` as Windsurf sends it, in folder ``cwd``."""
    names = {"cwd": cwd, "session": session_id, "home": "/home/dev",
             "name": posixpath.basename(cwd.rstrip("/")).replace(" ", "-")}  # fmt: skip
    digest = hashlib.sha256(session_id.encode()).hexdigest()
    if native in MCP_EVENTS:
        info = _mcp(tool, tool_input)
        if native == "post_mcp_tool_use":
            info["mcp_result"] = '[{"sha": "4f2c1e0", "message": "Fix the build"}]'
    elif tool_input is not None:
        info = dict(tool_input)
    else:
        info = filled(TOOL_INFO[native], names)
    return {
        "agent_action_name": native,
        "trajectory_id": session_id,
        "execution_id": str(uuid.UUID(digest[:32])),
        "timestamp": "2026-12-01T10:12:03.025401-05:00",
        "model_name": "SWE-1.6 Slow",
        "tool_info": info,
    }
