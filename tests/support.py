"""What several test modules share: a fail-closed shell guard, a project that enables
it, Claude Code PreToolUse payloads, and the hookbus CLI run in a project."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

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
    """``python -m hookbus ARGS`` in ``cwd``, with ``env`` added to this process's."""
    return subprocess.run(
        [sys.executable, "-m", "hookbus", *args],
        cwd=cwd, capture_output=True, text=True, timeout=120, check=False,
        env={**os.environ, **(env or {})},
    )  # fmt: skip


def assert_owned_file_round_trip(project: Path, host: str, ours: Path, theirs: Path) -> None:
    """Install twice (the second a no-op), uninstall: a host's hooks file that hookbus
    owns whole (``ours``) is gone, and the user's own file beside it (``theirs``, written
    already) is as it was, alone in its folder."""
    before = theirs.read_bytes()
    assert hookbus_cli(project, "install", "--host", host).returncode == 0
    once = ours.read_bytes()
    second = hookbus_cli(project, "install", "--host", host)
    assert second.returncode == 0 and "already up to date" in second.stdout
    assert ours.read_bytes() == once
    proc = hookbus_cli(project, "uninstall", "--host", host)
    assert proc.returncode == 0, proc.stderr
    assert not ours.exists()
    assert theirs.read_bytes() == before
    assert sorted(p.name for p in theirs.parent.iterdir()) == [theirs.name]


#: A fail-closed guard on ``rm -rf /`` that names the host it ran for, and an observer of
#: session ends: what the install tests of the contract-verified hosts enable.
HOST_GUARD = """
import hookbus

@hookbus.handler("before-tool", tools="shell", fail_closed=True, timeout=5)
def shell(event):
    if "rm -rf /" in (event.tool.command or ""):
        return hookbus.Reply.deny(f"not that ({event.host})")
    return None

@hookbus.handler("session-end")
def bye(event): ...
"""


def every_reply_part() -> list[object]:
    """A reply of each part alone, and one of them all (the merged worst case), for a
    driver's every-reply-to-every-event test."""
    from hookbus import Reply

    return [
        Reply.deny("R"), Reply.allow(), Reply.ask("R"), Reply.rewrite({"command": "ls"}),
        Reply.add_context("c"), Reply.tell_user("m"), Reply.continue_working("k"),
        Reply.stop_agent("h"), Reply(decision="deny", updated_input={"command": "ls"},
                                     context="c", message="m", keep_working="k", halt="h"),
    ]  # fmt: skip


def json_values() -> object:
    """A hypothesis strategy of any JSON value, a few leaves deep."""
    from hypothesis import strategies as st

    return st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
        max_leaves=8,
    )
