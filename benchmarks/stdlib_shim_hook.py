"""The hand-written hook behind hookbus's shims: the baseline of ``shim_roundtrip.py``.

The shims of the in-process hosts (OpenCode's and Kilo's plugin, Pi's extension,
Hermes's plugin) run a command per event and apply the JSON object it prints. This is
what a user would put in that command's place with the standard library only: the rule
of ``stdlib_hook.py`` (deny ``rm -rf /`` on the shell tool, no opinion on the rest),
reading each shim's envelope and answering in its reply shape. It is run as the shim
runs hookbus, ``python -P stdlib_shim_hook.py run --host H --event NATIVE``, and only
``--host`` is read.
"""

from __future__ import annotations

import json
import os
import sys

# The shims run their command with -P, which leaves this folder off the import path.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from stdlib_hook import REASON, RM_ROOT


def command_of(host: str, envelope: dict[str, object]) -> object:
    """The shell command in ``envelope``, as each shim sends it (None: not a shell call)."""
    if host in ("opencode", "kilo"):
        call, output = envelope.get("input"), envelope.get("output")
        if not isinstance(call, dict) or call.get("tool") != "bash" or not isinstance(output, dict):
            return None
        args = output.get("args")
        return args.get("command") if isinstance(args, dict) else None
    if host == "pi":
        event = envelope.get("payload")
        if not isinstance(event, dict) or event.get("toolName") != "bash":
            return None
        tool_input = event.get("input")
        return tool_input.get("command") if isinstance(tool_input, dict) else None
    if envelope.get("tool_name") != "terminal":  # hermes
        return None
    tool_input = envelope.get("tool_input")
    return tool_input.get("command") if isinstance(tool_input, dict) else None


def refusal(host: str) -> dict[str, object]:
    if host in ("opencode", "kilo"):
        return {"block": REASON}
    if host == "pi":
        return {"result": {"block": True, "reason": REASON}}
    return {"action": "block", "message": REASON}


def main() -> int:
    host = sys.argv[sys.argv.index("--host") + 1]
    try:
        envelope = json.load(sys.stdin)
    except ValueError:
        envelope = None
    command = command_of(host, envelope) if isinstance(envelope, dict) else None
    denies = isinstance(command, str) and RM_ROOT.search(command) is not None
    sys.stdout.write(json.dumps(refusal(host) if denies else {}) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
