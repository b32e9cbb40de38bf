"""What several test modules share: a fail-closed shell guard, a project that enables
it, Claude Code PreToolUse payloads, the hookbus CLI run in a folder, merged replies
of every shape for property tests, and the install tests' project and checks."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec
from hypothesis import strategies as st

import hookbus
from hookbus.bus.replies import Reply
from hookbus.hosts.shared.manifest import CLIENT_LAUNCHER, client_folder

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

GOLDEN = Path(__file__).parent / "golden" / "claude"


#: What the cold path takes of the bus: its vocabulary (and the index's shape), none of its
#: machinery.
BUS_VOCABULARY = frozenset(
    {"hookbus.bus.output", "hookbus.bus.budgets", "hookbus.bus.subscriptions"}
)


def client_call(host: str, event: str | None = None, timeout: float | None = None) -> str:
    """The words of install's default command (the warm server's client) that name the
    client's launcher, this hookbus's package, ``host`` and, when given, ``event`` and the
    client's ``--timeout``, as the shell reads them."""
    words = [CLIENT_LAUNCHER, client_folder(str(Path(hookbus.__file__).parent)), "--host", host]
    if event is not None:
        words += ["--event", event]
    if timeout is not None:
        words += ["--timeout", f"{timeout:g}"]
    return " ".join(map(shlex.quote, words))


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
    cwd: Path, *args: str, env: dict[str, str] | None = None, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    """``python -m hookbus ARGS`` in ``cwd``, with ``env`` over this environment."""
    return subprocess.run(
        [sys.executable, "-m", "hookbus", *args],
        cwd=cwd, capture_output=True, text=True, timeout=120, check=False,
        env={**os.environ, **(env or {})}, input=stdin,
    )  # fmt: skip


TEXT = st.text(max_size=40)
#: Any merged reply: every field empty or set, in any combination.
REPLIES = st.builds(
    Reply,
    decision=st.sampled_from([None, "allow", "deny", "ask"]),
    reason=TEXT,
    updated_input=st.none() | st.dictionaries(st.text(max_size=5), TEXT, max_size=2),
    context=st.none() | TEXT,
    message=st.none() | TEXT,
    keep_working=st.none() | TEXT,
    halt=st.none() | TEXT,
)


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


def check_round_trip(project: Path, host: str, path: Path, original: bytes) -> dict[str, Any]:
    """Through the real CLI in an :func:`install_project`: the user's ``path`` holding
    ``original``, installed, installed again with one handler fewer, verified clean, then
    found drifted once the handler is back, and uninstalled: ``path`` holds ``original``
    byte for byte again. Returns the settings as the second install left them."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(original)
    assert hookbus_cli(project, "install", "--host", host).returncode == 0
    (project / ".hookbus.toml").write_text('enable = ["hooks_mod:shell"]\n')
    assert hookbus_cli(project, "install", "--host", host).returncode == 0
    installed: dict[str, Any] = json.loads(path.read_text())
    assert hookbus_cli(project, "verify", "--host", host).returncode == 0
    (project / ".hookbus.toml").write_text('enable = ["hooks_mod:shell", "hooks_mod:lifecycle"]\n')
    drifted = hookbus_cli(project, "verify", "--host", host)
    assert (drifted.returncode, "missing: SessionStart" in drifted.stdout) == (1, True)
    done = hookbus_cli(project, "uninstall", "--host", host)
    assert done.returncode == 0, done.stderr
    assert path.read_bytes() == original
    return installed


def json_line(data: dict[str, Any]) -> bytes:
    """``data`` as a Claude-style host reads a reply: one JSON object and a newline."""
    return msgspec.json.encode(data) + b"\n"


def hook_specific(event: str, **fields: Any) -> bytes:
    """A reply holding only ``hookSpecificOutput`` for ``event``."""
    return json_line({"hookSpecificOutput": {"hookEventName": event, **fields}})


def check_fallback(project: Path, host: str, path: Path, nowhere: Path) -> None:
    """Installed with ``--command path`` into ``path`` of an :func:`install_project`, and
    run with hookbus nowhere on ``PATH``: the fail-closed PreToolUse's fallback prints the
    Claude-style JSON deny with exit 0; SessionStart's prints nothing (on Claude-style
    hosts plain text there would become context)."""
    assert hookbus_cli(project, "install", "--host", host, "--command", "path").returncode == 0
    hooks = json.loads(path.read_text())["hooks"]
    deny = without_hookbus(hooks["PreToolUse"][-1]["hooks"][0]["command"], nowhere)
    assert deny.returncode == 0
    specific = json.loads(deny.stdout)["hookSpecificOutput"]
    assert specific["permissionDecision"] == "deny"
    assert "hookbus could not run" in specific["permissionDecisionReason"]
    quiet = without_hookbus(hooks["SessionStart"][-1]["hooks"][0]["command"], nowhere)
    assert (quiet.returncode, quiet.stdout.strip()) == (0, "")


def any_reply() -> SearchStrategy[Reply]:
    """A hypothesis strategy of every merged reply a driver may have to encode."""
    return REPLIES


def listing(folder: Path) -> list[Path]:
    """Every file and folder below ``folder`` but Python's bytecode caches: importing a
    project's handler module writes its ``__pycache__`` (install's compile does, as every
    hook does) unless ``PYTHONDONTWRITEBYTECODE`` is set, which is Python's, not ours."""
    return [p for p in sorted(folder.rglob("*"))
            if "__pycache__" not in p.relative_to(folder).parts]  # fmt: skip


def snapshot(folder: Path) -> dict[str, tuple[bytes, int]]:
    """Every file and folder below ``folder`` (:func:`listing`): its bytes and mode (to
    compare a folder with itself before an install and after the uninstall)."""
    return {str(p.relative_to(folder)): (p.read_bytes() if p.is_file() else b"", p.stat().st_mode)
            for p in listing(folder)}  # fmt: skip


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


def warm_stress() -> Any:
    """benchmarks/warm_stress.py as a module (the suite's stress tests run its code)."""
    import importlib.util

    path = Path(__file__).resolve().parent.parent / "benchmarks" / "warm_stress.py"
    if "warm_stress" not in sys.modules:
        spec = importlib.util.spec_from_file_location("warm_stress", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules["warm_stress"] = module  # its dataclass looks itself up there
        spec.loader.exec_module(module)
    return sys.modules["warm_stress"]


#: A user handler denying every shell call, fail-closed (its failure or an unreadable
#: payload refuses too): for tests of what a driver cannot read.
FAIL_CLOSED_SHELL = """
import hookbus

@hookbus.handler("before-tool", tools="shell", timeout=10, fail_closed=True)
def no_shell(event):
    return hookbus.Reply.deny("no shell")
"""
