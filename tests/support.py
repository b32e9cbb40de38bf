"""What several test modules share: a fail-closed shell guard, a project that enables
it, Claude Code PreToolUse payloads, the hookbus CLI run in a folder, merged replies
of every shape for property tests, and the install tests' project and checks."""

from __future__ import annotations

import contextlib
import functools
import json
import os
import shlex
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec
from hypothesis import strategies as st

import hookbus
from hookbus import hosts
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
    client's launcher, this hookbus's package, ``host`` and where it names its project
    (``--project``, pinned per host by ``test_manifest``) and, when given, ``event`` and the
    client's ``--timeout``, as the shell reads them."""
    words = [CLIENT_LAUNCHER, client_folder(str(Path(hookbus.__file__).parent)), "--host", host,
             "--project", hosts.facts(host).project_word]  # fmt: skip
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


#: Whether this run checks each property on all its examples (:func:`in_full`); set by
#: ``conftest.py``.
PROPERTIES_IN_FULL = True


def in_full(markexpr: str | None) -> bool:
    """Whether a run of ``-m markexpr`` checks each property on all its examples: one that
    includes the ``stress`` tests does (CI's ``-m 'not e2e'``, a run of everything); the
    unit run (``-m 'not e2e and not stress'``), the edit-and-test loop's, on a fifth."""
    from _pytest.mark.expression import Expression

    if not markexpr:
        return True
    try:  # would a ``stress`` test be selected? (pytest's own reading of ``-m``)
        return Expression.compile(markexpr).evaluate(
            lambda name, /, **kwargs: name == "stress" and not kwargs)  # fmt: skip
    except Exception:  # an expression this cannot read: in full, to be safe
        return True


def examples(full: int) -> int:
    """The ``max_examples`` of a property whose full count is ``full``, for this run."""
    return full if PROPERTIES_IN_FULL else max(full // 5, 10)


#: The commands :func:`hookbus_inproc` runs: they parse arguments, read and write files and
#: start processes of their own, and leave nothing behind in the process that ran them
#: (``run``, ``serve`` and ``try`` install signal handlers, end with ``os._exit`` or
#: start servers: they run in a process of their own, :func:`hookbus_cli`).
IN_PROCESS = frozenset({"manifest", "install", "verify", "uninstall", "doctor", "trust"})

#: Set by conftest's ``trusted_projects`` for each test: what it does before a process
#: starts (trust the test's projects, in the trust store that process would read), and
#: its patches of this process, which a process of hookbus's own would not have.
process_start: Callable[[dict[str, str], Path], None] | None = None
test_patches: list[tuple[object, str, object]] = []


def hookbus_inproc(
    cwd: Path,
    *args: str,
    env: dict[str, str] | None = None,
    stdin: str | None = None,
    unset: tuple[str, ...] = (),
) -> subprocess.CompletedProcess[str]:
    """:func:`hookbus_cli` run in this process: the same arguments, the same result,
    without an interpreter's start. As a process of its own would, the command gets its
    own working folder, environment (``env`` over this one: ``HOME``, ``XDG_*``), ``argv``,
    file descriptors 0, 1 and 2 (what its children inherit, and what hookbus writes to
    fd 2 directly) and a fresh start of hookbus's caches; none of the test's patches; and
    it may import nothing but hookbus and the standard library (a project's handler would
    stay in ``sys.modules``), nor change ``sys.path``: that fails the test. Everything is
    put back after it, whatever it raised. ``unset``: variables of this environment the
    command does not get (unless ``env`` gives them)."""
    if not args or args[0] not in IN_PROCESS:
        raise ValueError(f"hookbus {' '.join(args[:1])} runs in a process of its own: hookbus_cli")
    environ = {**{k: v for k, v in os.environ.items() if k not in unset}, **(env or {})}
    if process_start is not None:
        process_start(environ, cwd)
    with _as_a_process(cwd, environ, stdin or "") as streams:
        code = _exit_code(list(args))
    out, err = (_decoded(s) for s in streams)
    return subprocess.CompletedProcess([sys.executable, "-m", "hookbus", *args], code, out, err)


def _exit_code(args: list[str]) -> int:
    """What ``python -m hookbus ARGS`` would exit with, its traceback (if any) on stderr."""
    import traceback

    from hookbus.cli import main

    try:
        return main(args)
    except SystemExit as exc:  # argparse's usage errors, and sys.exit
        if exc.code is None or isinstance(exc.code, int):
            return exc.code or 0
        print(exc.code, file=sys.stderr)
        return 1
    except Exception:
        traceback.print_exc()
        return 1


@contextlib.contextmanager
def _as_a_process(cwd: Path, environ: dict[str, str], stdin: str) -> Iterator[list[Any]]:
    """This process made to look like a fresh ``python -m hookbus`` started in ``cwd`` with
    ``environ`` and ``stdin``; yields the files fd 1 and fd 2 are written to."""
    import locale
    import tempfile

    encoding = locale.getpreferredencoding(False)
    saved_environ, saved_cwd = dict(os.environ), os.getcwd()
    saved_argv, saved_path = sys.argv, list(sys.path)
    saved_streams = sys.stdin, sys.stdout, sys.stderr
    # What this process imported that a new one would not have (the tests' own modules,
    # an earlier test's handler module of the same name): out of the way while the
    # command runs, as the children it forks (the index's compile) would inherit them.
    stashed = {name: module for name, module in sys.modules.items() if _foreign(module)}
    modules = set(sys.modules)
    for stream in saved_streams[1:]:
        stream.flush()
    files = [tempfile.TemporaryFile() for _ in range(3)]  # noqa: SIM115 (closed below)
    files[0].write(stdin.encode(encoding))
    files[0].seek(0)
    saved_fds = [os.dup(fd) for fd in (0, 1, 2)]
    patched = [(obj, name, getattr(obj, name)) for obj, name, _ in test_patches]
    try:
        for fd, file in enumerate(files):
            os.dup2(file.fileno(), fd)
        sys.stdin = open(0, encoding=encoding, closefd=False)  # noqa: SIM115
        sys.stdout = open(1, "w", encoding=encoding, closefd=False,  # noqa: SIM115
                          errors=sys.__stdout__.errors if sys.__stdout__ else "strict")  # fmt: skip
        sys.stderr = open(2, "w", encoding=encoding, errors="backslashreplace",  # noqa: SIM115
                          closefd=False)  # fmt: skip
        os.environ.clear()
        os.environ.update(environ)
        os.chdir(cwd)
        sys.argv = [os.path.join(os.path.dirname(hookbus.__file__), "__main__.py")]
        for name in stashed:
            del sys.modules[name]
        sys.path[:] = [os.getcwd(), *_import_path(environ)]  # what python -m puts first
        command_path = list(sys.path)
        for obj, name, original in test_patches:
            setattr(obj, name, original)
        _fresh_caches()
        yield files[1:]
    finally:
        for stream in (sys.stdin, sys.stdout, sys.stderr):
            stream.close()  # not the descriptor: closefd=False
        for obj, name, value in patched:
            setattr(obj, name, value)
        sys.stdin, sys.stdout, sys.stderr = saved_streams
        for fd, saved in enumerate(saved_fds):
            os.dup2(saved, fd)
            os.close(saved)
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_environ)
        sys.argv = saved_argv
        changed_path, sys.path[:] = sys.path != command_path, saved_path
        foreign = sorted(name for name in set(sys.modules) - modules if _foreign(sys.modules[name]))
        for name in foreign:
            del sys.modules[name]
        sys.modules.update(stashed)
        _fresh_caches()
        for file in files[1:]:
            file.seek(0)
        files[0].close()
    assert not foreign and not changed_path, (
        f"the command imported {foreign} or changed sys.path: run it with hookbus_cli"
    )


def _fresh_caches() -> None:
    """hookbus's module-level caches as a new process has them: the state root's
    descriptor, deferred diagnostics, the package file each interpreter imports, the
    last index parsed, the groups judged private."""
    from hookbus.hosts.shared import manifest
    from hookbus.local import diagnostics, state, trust
    from hookbus.runtime import index

    state.forget()
    diagnostics._pending = None
    manifest.hookbus_file.cache_clear()
    if "hookbus.hosts.hermes.manifest" in sys.modules:
        sys.modules["hookbus.hosts.hermes.manifest"].interpreter.cache_clear()
    index._parsed = (b"", None)
    trust._private_group.clear()


def _foreign(module: Any) -> bool:
    """Whether ``module`` is neither hookbus's nor installed with this Python."""
    file = getattr(module, "__file__", None)
    return isinstance(file, str) and not file.startswith(_homes())


@functools.cache
def _homes() -> tuple[str, ...]:
    """The folders of hookbus's package and of this Python's own modules, as given and as
    real paths, each ending in a separator."""
    import sysconfig

    homes = {os.path.dirname(hookbus.__file__), sys.prefix, sys.base_prefix,
             *sysconfig.get_paths().values()}  # fmt: skip
    return tuple(os.path.join(p, "") for h in homes for p in {h, os.path.realpath(h)})


_PATH_ENV = ("PYTHONPATH", "PYTHONHOME", "PYTHONNOUSERSITE", "PYTHONUSERBASE", "HOME")


def _import_path(environ: dict[str, str]) -> list[str]:
    """``sys.path`` of this Python started with ``environ``, but its first entry (the
    script's folder): asked of a real one once for each value of what it depends on."""
    return list(_started_path(tuple(environ.get(name) for name in _PATH_ENV)))


@functools.cache
def _started_path(values: tuple[str | None, ...]) -> tuple[str, ...]:
    env = {k: v for k, v in os.environ.items() if k not in _PATH_ENV}
    env.update({k: v for k, v in zip(_PATH_ENV, values, strict=True) if v is not None})
    code = "import json, sys; print(json.dumps(sys.path[1:]))"
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           env=env, check=True, timeout=60).stdout  # fmt: skip
    return tuple(json.loads(found))


def _decoded(file: Any) -> str:
    """A stream's bytes as ``subprocess.run(text=True)`` decodes them."""
    import locale

    text: str = file.read().decode(locale.getpreferredencoding(False))
    file.close()
    return text.replace("\r\n", "\n").replace("\r", "\n")


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
    """Through the CLI (in this process: :func:`hookbus_inproc`) in an
    :func:`install_project`: the user's ``path`` holding ``original``, installed,
    installed again with one handler fewer, verified clean, then found drifted once the
    handler is back, and uninstalled: ``path`` holds ``original`` byte for byte again. Returns the settings as the second install left them."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(original)
    assert hookbus_inproc(project, "install", "--host", host).returncode == 0
    (project / ".hookbus.toml").write_text('enable = ["hooks_mod:shell"]\n')
    assert hookbus_inproc(project, "install", "--host", host).returncode == 0
    installed: dict[str, Any] = json.loads(path.read_text())
    assert hookbus_inproc(project, "verify", "--host", host).returncode == 0
    (project / ".hookbus.toml").write_text('enable = ["hooks_mod:shell", "hooks_mod:lifecycle"]\n')
    drifted = hookbus_inproc(project, "verify", "--host", host)
    assert (drifted.returncode, "missing: SessionStart" in drifted.stdout) == (1, True)
    done = hookbus_inproc(project, "uninstall", "--host", host)
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
    assert hookbus_inproc(project, "install", "--host", host, "--command", "path").returncode == 0
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
