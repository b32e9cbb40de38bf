"""What several test modules share: a fail-closed shell guard, a project that enables
it, and Claude Code PreToolUse payloads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import subprocess

GOLDEN = Path(__file__).parent / "golden" / "claude"

#: A fail-closed guard on shell commands (denies ``rm -rf``); PRELUDE runs at import.
GUARD = """
import hookbus
PRELUDE

@hookbus.handler("before-tool", tools="shell", timeout=2, fail_closed=True)
def guard(event):
    if "rm -rf" in (event.tool.command or ""):
        return hookbus.Reply.deny("no rm -rf")
    return None
"""


#: Two shell handlers: one denies ``git push --force``, one always raises (fail-open).
FORCE_PUSH_HANDLERS = """
import re
import hookbus

FORCE = re.compile(r"\\bgit\\s+push\\b.*\\s(--force|-f)\\b")

@hookbus.handler("before-tool", tools="shell")
def no_force_push(event):
    if event.tool.command and FORCE.search(event.tool.command):
        return hookbus.Reply.deny("Force-pushing is not allowed here.")
    return None

@hookbus.handler("before-tool", tools="shell")
def explode(event):
    raise RuntimeError("handler bug")
"""


def pre_tool(command: str, cwd: Path) -> bytes:
    """A Claude Code PreToolUse payload running ``command`` in Bash from ``cwd``."""
    data = json.loads((GOLDEN / "PreToolUse.Bash.json").read_text())
    data["tool_input"]["command"] = command
    data["cwd"] = str(cwd)
    return json.dumps(data).encode()


def guarded_project(root: Path, module: str = "guard", prelude: str = "") -> Path:
    """``root`` as a project whose ``.hookbus.toml`` enables ``<module>:guard``."""
    root.mkdir(parents=True, exist_ok=True)
    (root / f"{module}.py").write_text(GUARD.replace("PRELUDE", prelude))
    (root / ".hookbus.toml").write_text(f'enable = ["{module}:guard"]\n')
    return root


def compile_now(project: Path, env: dict[str, str] | None = None) -> None:
    """Compile and cache ``project``'s subscription index before returning (a hook call
    caches it only after its reply, on its own time: a test must not race it)."""
    import os
    import subprocess
    import sys

    subprocess.run(
        [sys.executable, "-m", "hookbus", "manifest", "--host", "claude"],
        cwd=project, env=env or dict(os.environ), capture_output=True, timeout=120, check=True,
    )  # fmt: skip


def wait_for(predicate: object, what: str, seconds: float = 60.0) -> None:
    """Poll ``predicate()`` until it holds (what a hook writes after its reply)."""
    import time

    until = time.monotonic() + seconds
    while not predicate():  # type: ignore[operator]
        if time.monotonic() > until:
            raise AssertionError(f"{what}: not within {seconds:.0f} s")
        time.sleep(0.05)


def hookbus_cli(
    cwd: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``python -m hookbus ARGS`` in ``cwd``, its text output captured, ``env`` added to
    this process's environment."""
    import os
    import subprocess
    import sys

    return subprocess.run(
        [sys.executable, "-m", "hookbus", *args],
        cwd=cwd, capture_output=True, text=True, timeout=120, check=False,
        env={**os.environ, **(env or {})},
    )  # fmt: skip
