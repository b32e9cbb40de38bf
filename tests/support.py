"""What several test modules share: a fail-closed shell guard, a project that enables
it, Claude Code PreToolUse payloads, and the install tests' project and CLI runner."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from hypothesis import strategies as st

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


#: What the install tests of the Claude-style hosts enable: a fail-closed guard on shell
#: commands and the github MCP server (``shell``), and a handler of the session's start
#: and stop (``lifecycle``).
SHELL_AND_LIFECYCLE = """
import hookbus

@hookbus.handler("before-tool", tools=("shell", "mcp:github"), fail_closed=True, timeout=5)
def shell(event):
    if "rm -rf /" in (event.tool.command or ""):
        return hookbus.Reply.deny("not that")
    return None

@hookbus.handler("session-start", "stop")
def lifecycle(event): ...
"""


def install_project(root: Path) -> Path:
    """``root`` as a project enabling ``hooks_mod:shell`` and ``hooks_mod:lifecycle``."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "hooks_mod.py").write_text(SHELL_AND_LIFECYCLE)
    (root / ".hookbus.toml").write_text('enable = ["hooks_mod:shell", "hooks_mod:lifecycle"]\n')
    return root


def hookbus_cli(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``python -m hookbus ARGS`` in ``cwd``, its output captured as text."""
    return subprocess.run(
        [sys.executable, "-m", "hookbus", *args],
        cwd=cwd, capture_output=True, text=True, timeout=120, check=False, env={**os.environ},
    )  # fmt: skip


def without_hookbus(command: str, nowhere: Path) -> subprocess.CompletedProcess[str]:
    """An installed hook ``command`` run by ``/bin/sh`` with ``PATH`` at the empty folder
    ``nowhere``: what its fallback answers when hookbus (or Python) cannot be found."""
    return subprocess.run(
        ["/bin/sh", "-c", command], input="{}", capture_output=True, text=True, timeout=60,
        check=False, env={**os.environ, "PATH": str(nowhere)},
    )  # fmt: skip


#: Short JSON values of any shape, for the decoders' property tests.
SHORT_TEXT = st.text(max_size=40)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | SHORT_TEXT,
    lambda kids: st.lists(kids, max_size=3) | st.dictionaries(SHORT_TEXT, kids, max_size=3),
    max_leaves=8,
)
