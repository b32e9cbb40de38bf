"""``hookbus guard --json``: the guard's decision for a caller that is not a hook.

Claude Code's ``agent.spawn`` module (``hookbus install --host claude --plugin``) hands
each spawn here, with the parent's effective model, and applies the answer: the same
decision and the same single dispatch row as the PreToolUse guard. The wire format::

    stdin  {"host": "claude", "session_id": "...", "cwd": "...", "call_id": "...",
            "agent_type": "Explore", "model": "opus", "parent_model": "claude-sonnet-4-5",
            "prompt": "..."}
    stdout {"action": "cap", "model": "sonnet", "clear_model": false, "message": "",
            "reasons": ["over-parent"]}

``model`` set: the child runs on it; ``clear_model``: the child's model is dropped (it
inherits the parent); action ``refuse``/``block``: the spawn is refused with ``message``;
anything else leaves the spawn alone. Exit 0 whenever an answer is printed; the caller
fails open on anything else.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any

import msgspec

from hookbus.bus.host import Capabilities

#: The most a spawn request may be (a brief can be long; the guard reads only its head).
MAX_REQUEST = 4 << 20
#: Every wait (the store's lock) ends by then.
DEADLINE = 5.0
#: The host whose plugin module asks, when a request does not say.
MODULE_HOST = "claude"


class Answer(msgspec.Struct, frozen=True, kw_only=True):
    action: str
    model: str | None = None
    clear_model: bool = False
    message: str = ""
    reasons: tuple[str, ...] = ()


def add_arguments(commands: Any) -> None:
    sub: argparse.ArgumentParser = commands.add_parser(
        "guard", help="decide one subagent spawn (for Claude's agent.spawn module)",
        description="Read one spawn request (JSON) on stdin and print the guard's answer "
        "(JSON) on stdout, recording its dispatch row. See docs/guard.md.",
    )  # fmt: skip
    sub.add_argument("--json", action="store_true", required=True,
                     help="JSON in, JSON out (the only form)")  # fmt: skip
    sub.set_defaults(main=main)


def main(opts: argparse.Namespace) -> int:
    from hookbus.handlers.guard.handler import SpawnRequest, decide_request

    deadline = time.monotonic() + DEADLINE
    data = sys.stdin.buffer.read(MAX_REQUEST + 1)
    if len(data) > MAX_REQUEST:
        sys.stderr.write(f"hookbus guard: the request is over {MAX_REQUEST} bytes\n")
        return 2
    try:
        request = msgspec.json.decode(data, type=SpawnRequest)
    except msgspec.DecodeError as exc:
        sys.stderr.write(f"hookbus guard: unreadable request: {exc}\n")
        return 2
    request = msgspec.structs.replace(request, host=request.host or MODULE_HOST)
    enabled, options, problems = _options(request.cwd)
    if not enabled:
        # The module outlived the configuration that installed it: no guard, no opinion.
        sys.stdout.buffer.write(msgspec.json.encode(Answer(action="pass")) + b"\n")
        return 0
    store: list[Any] = []

    def open_store() -> Any:
        if not store:
            from hookbus.local.store import open_store as opener

            store.append(opener(deadline))
        return store[0]

    verdict = decide_request(request, _capabilities(request.host), options=options,
                             problems=problems, env=os.environ, store=open_store)  # fmt: skip
    if verdict is None:
        answer = Answer(action="pass")
    else:
        refused = verdict.refuses
        answer = Answer(action=verdict.action, model=None if refused else verdict.model,
                        clear_model=verdict.clear_model and not refused,
                        message=verdict.message, reasons=verdict.reasons)  # fmt: skip
    sys.stdout.buffer.write(msgspec.json.encode(answer) + b"\n")
    sys.stdout.flush()
    return 0


def _capabilities(host: str) -> Capabilities:
    """What ``host`` can do with a reply to its spawn tool's before-tool (a host hookbus
    does not know can do nothing: the guard passes)."""
    from hookbus import hosts

    if host not in hosts.NAMES:
        return Capabilities()
    driver = hosts.driver(host)
    return driver.capabilities(next(iter(driver.natives("before-tool")), ""))


def _options(cwd: str) -> tuple[bool, Any, tuple[str, ...]]:
    """Whether the configuration in effect for ``cwd`` enables the guard, its options as
    the hook would see them, and their problems."""
    from hookbus.handlers.guard.options import GuardOptions
    from hookbus.local.discover import config_paths
    from hookbus.runtime.config import load

    loaded = load(config_paths(cwd or None))
    for ref in loaded.settings.handlers:
        if ref.name == "guard":
            from hookbus.bus.options import convert_options

            try:
                options, problems = convert_options(ref.settings.options, GuardOptions)
            except msgspec.ValidationError as exc:  # GuardOptions has no required field
                return True, GuardOptions(), (str(exc),)
            return True, options, tuple(problems)
    return False, None, ()
