"""A Claude Code PreToolUse hook written with the standard library only.

It is the baseline of ``hook_latency.py``: the same rule as the benchmark's hookbus
handlers (deny ``rm -rf /`` on Bash, no opinion on anything else), written the way a
hand-made hook would be, with ``json`` and ``re`` and nothing else. Run it as
``python stdlib_hook.py`` with the hook payload on stdin; it prints Claude's deny JSON
or nothing, and always exits 0.
"""

from __future__ import annotations

import json
import re
import sys

#: ``rm`` whose flags include both ``r`` and ``f`` (``-rf``, ``-fr``, ``-rfv``...), on ``/``.
RM_ROOT = re.compile(r"\brm\s+-(?=[a-zA-Z]*r)(?=[a-zA-Z]*f)[a-zA-Z]+\s+/(?:\s|$)")
REASON = "rm -rf / is never allowed"


def denies(payload: object) -> bool:
    """True when ``payload`` is a Bash call whose command removes the root recursively."""
    if not isinstance(payload, dict) or payload.get("tool_name") != "Bash":
        return False
    tool_input = payload.get("tool_input")
    command = tool_input.get("command") if isinstance(tool_input, dict) else None
    return isinstance(command, str) and RM_ROOT.search(command) is not None


def main() -> int:
    try:
        payload = json.load(sys.stdin)
    except ValueError:
        return 0  # not a payload we can judge: no opinion
    if denies(payload):
        reply = {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": REASON,
            }
        }
        sys.stdout.write(json.dumps(reply) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
