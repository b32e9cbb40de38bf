"""Handlers the end-to-end tests enable in a throwaway project.

The harness copies this file into the project as ``e2e_handlers.py`` and enables
``e2e_handlers:<name>`` in its ``.hookbus.toml``; options come from the handler's section
there. It runs inside ``hookbus run``, so it imports hookbus and the standard library only.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

import msgspec

import hookbus

#: Every portable kind. Handlers only get events hookbus's manifest registered, so the
#: recorder subscribes to all of them; ``other`` (the rest of Claude's 34 native events)
#: has a recorder of its own, as it registers every remaining event.
PORTABLE_KINDS = (
    "session-start", "prompt-submit", "before-tool", "after-tool", "after-edit", "stop",
    "subagent-start", "subagent-stop", "pre-compact", "session-end", "model-switch",
)  # fmt: skip


def _append(path: str, record: dict[str, Any]) -> None:
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(record) + "\n")


def _agent(agent: hookbus.Agent) -> dict[str, Any]:
    return {"role": agent.role, "id": agent.id, "type": agent.type}


class RecordOptions(msgspec.Struct, frozen=True):
    path: str


def _record(event: hookbus.Event, path: str) -> None:
    """Append what ``event`` decoded to, and its raw payload, as one JSON line."""
    tool = getattr(event, "tool", None)
    entry: dict[str, Any] = {
        "t": time.time(),
        "kind": event.kind,
        "native": event.native,
        "host": event.host,
        "session_id": event.session_id,
        "cwd": event.cwd,
        "agent": _agent(event.agent),
        "tool": None if tool is None else {"name": tool.name, "kind": tool.kind,
                                           "command": tool.command, "call_id": tool.call_id},
        "raw": json.loads(bytes(event.raw)),
    }  # fmt: skip
    for name in ("source", "prompt", "error", "stop_hook_active", "last_message", "final_text",
                 "reason", "child_transcript_path", "child_ids"):  # fmt: skip
        if hasattr(event, name):
            entry[name] = getattr(event, name)
    if isinstance(event, hookbus.SubagentStart | hookbus.SubagentStop):
        entry["child"] = _agent(event.child)
    _append(path, entry)


@hookbus.handler(*PORTABLE_KINDS, options=RecordOptions)
def record(event: hookbus.Event, ctx: hookbus.Context) -> None:
    _record(event, ctx.options.path)


@hookbus.handler("other", options=RecordOptions)
def record_other(event: hookbus.Event, ctx: hookbus.Context) -> None:
    _record(event, ctx.options.path)


@hookbus.handler("other", natives="MessageDisplay", options=RecordOptions)
def record_display(event: hookbus.Event, ctx: hookbus.Context) -> None:
    """MessageDisplay is registered only when a handler names it (one process a message)."""
    _record(event, ctx.options.path)


@hookbus.handler(
    "other", natives=("BeforeModel", "AfterModel", "BeforeToolSelection"), options=RecordOptions
)
def record_model(event: hookbus.Event, ctx: hookbus.Context) -> None:
    """Gemini's model events are registered only when a handler names them."""
    _record(event, ctx.options.path)


class DenyOptions(msgspec.Struct, frozen=True):
    reason: str


@hookbus.handler("before-tool", tools="shell", options=DenyOptions)
def deny_shell(event: hookbus.BeforeTool, ctx: hookbus.Context) -> hookbus.Reply:
    return hookbus.Reply.deny(ctx.options.reason)


@hookbus.handler("prompt-submit", options=DenyOptions)
def deny_prompt(event: hookbus.PromptSubmit, ctx: hookbus.Context) -> hookbus.Reply:
    return hookbus.Reply.deny(ctx.options.reason)


@hookbus.handler("pre-compact", options=DenyOptions)
def deny_compact(event: hookbus.PreCompact, ctx: hookbus.Context) -> hookbus.Reply:
    """Refuses a compaction (Pi cancels it)."""
    return hookbus.Reply.deny(ctx.options.reason)


class RewriteOptions(msgspec.Struct, frozen=True):
    command: str


@hookbus.handler("before-tool", tools="shell", options=RewriteOptions)
def rewrite_shell(event: hookbus.BeforeTool, ctx: hookbus.Context) -> hookbus.Reply:
    """Replaces the whole input with just ``command`` (hosts that merge keep the rest)."""
    return hookbus.Reply.rewrite({"command": ctx.options.command})


class TextOptions(msgspec.Struct, frozen=True):
    text: str


@hookbus.handler("session-start", options=TextOptions)
def session_context(event: hookbus.SessionStart, ctx: hookbus.Context) -> hookbus.Reply:
    return hookbus.Reply.add_context(ctx.options.text)


@hookbus.handler("prompt-submit", options=TextOptions)
def prompt_context(event: hookbus.PromptSubmit, ctx: hookbus.Context) -> hookbus.Reply:
    return hookbus.Reply.add_context(ctx.options.text)


@hookbus.handler("after-tool", tools="shell", options=TextOptions)
def tool_context(event: hookbus.AfterTool, ctx: hookbus.Context) -> hookbus.Reply:
    """Context after a shell call: the one place Cline reads context from (its lifecycle
    hooks run detached, their output unread)."""
    return hookbus.Reply.add_context(ctx.options.text)


@hookbus.handler("stop", options=TextOptions)
def keep_working(event: hookbus.Stop, ctx: hookbus.Context) -> hookbus.Reply:
    """Asks to keep working every time; hookbus's loop guard must drop the second ask."""
    return hookbus.Reply.continue_working(ctx.options.text)


@hookbus.handler("before-tool", tools="shell", timeout=1)
def hang(event: hookbus.BeforeTool) -> None:
    time.sleep(30)


@hookbus.handler("before-tool", tools="shell", timeout=1, fail_closed=True)
def hang_fail_closed(event: hookbus.BeforeTool) -> None:
    time.sleep(30)


class SpawnOptions(msgspec.Struct, frozen=True):
    #: The file the detached child writes about a second after the session ended.
    marker: str
    #: Where this handler writes its timings, as JSON.
    timings: str


_CHILD = "import sys, time; time.sleep(1); open(sys.argv[1], 'w').write(str(time.time()))"


def _process_start(pid: int) -> float:
    """Wall-clock start time of process ``pid`` (Linux /proc; 10 ms resolution)."""
    with open(f"/proc/{pid}/stat") as f:
        ticks = int(f.read().rpartition(")")[2].split()[19])
    with open("/proc/uptime") as f:
        uptime = float(f.read().split()[0])
    return time.time() - uptime + ticks / os.sysconf("SC_CLK_TCK")


def _hook_pid() -> int:
    """The ``hookbus run`` process: this one, or its parent when hookbus forked a worker."""
    with open(f"/proc/{os.getppid()}/cmdline", "rb") as f:
        return os.getppid() if b"hookbus" in f.read() else os.getpid()


@hookbus.handler("session-end", options=SpawnOptions)
def spawn_at_end(event: hookbus.SessionEnd, ctx: hookbus.Context) -> None:
    """Start slow work detached and return at once, like a reconciler would."""
    entered = time.time()
    pid = ctx.spawn_detached([sys.executable, "-c", _CHILD, ctx.options.marker])
    timings = {
        "hook_started": _process_start(_hook_pid()),
        "handler_entered": entered,
        "handler_returned": time.time(),
        "child_pid": pid,
    }
    with open(ctx.options.timings, "w", encoding="utf-8") as f:
        json.dump(timings, f)


@hookbus.handler("before-tool", tools="shell")
def sleep_30(event: hookbus.BeforeTool) -> None:
    """Sleeps far past every budget (no timeout of its own: the budget ends it)."""
    time.sleep(30)


@hookbus.handler("before-tool", tools="shell")
def spin_in_c(event: hookbus.BeforeTool) -> None:
    """Catastrophic backtracking: ``_sre`` holds the GIL for minutes, so no thread of the
    process runs meanwhile; only killing the process ends it."""
    import re

    re.match(r"(a+)+$", "a" * 64 + "b")
