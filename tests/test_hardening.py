"""Ways a guard was found to be bypassed, or a reply lost, by an adversarial review of the
runtime; each is answered now, through the real CLI."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support import compile_now, guarded_project, pre_tool, wait_for

from hookbus.testing import run_cli

HOOK = ["--event", "PreToolUse", "--timeout", "10"]


def decision(stdout: bytes) -> str | None:
    if not stdout.strip():
        return None
    return str(json.loads(stdout)["hookSpecificOutput"]["permissionDecision"])


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return guarded_project(tmp_path / "project")


def test_a_configuration_that_stops_parsing_keeps_its_guards(project: Path) -> None:
    """One TOML syntax error (a half-saved editor buffer, an agent's write) must not
    switch the guards of the last good configuration off: they are kept, and deny."""
    compile_now(project)
    (project / ".hookbus.toml").write_text('enable = ["guard:guard"]\nbudget = 3 x\n')
    result = run_cli("claude", pre_tool("rm -rf victim", project), cwd=project, args=HOOK)
    assert decision(result.stdout) == "deny"
    reason = json.loads(result.stdout)["hookSpecificOutput"]["permissionDecisionReason"]
    assert "cannot be read" in reason


@pytest.mark.parametrize(
    "extra",
    [["--verbose"], ["--timeout", "0"], ["--timeout", "nan"], ["--timeout", "1e20"], ["--event"]],
    ids=["unknown-flag", "zero-timeout", "nan-timeout", "overflowing-timeout", "missing-value"],
)
def test_a_bad_argument_does_not_skip_the_guard(project: Path, extra: list[str]) -> None:
    """A flag another hookbus version wrote, or a bad value, is reported and ignored: the
    guard still answers."""
    compile_now(project)
    result = run_cli("claude", pre_tool("rm -rf victim", project), cwd=project,
                     args=["--event", "PreToolUse", *extra])  # fmt: skip
    assert (result.exit_code, decision(result.stdout)) == (0, "deny")


def test_a_deleted_working_folder_still_finds_the_user_guard(
    tmp_path: Path, isolated_environment: Path
) -> None:
    """The agent's folder deleted under the hook, the guard in the user configuration:
    still denied (the working folder is not needed to read the user's file)."""
    user = tmp_path / "xdg-config" / "hookbus"
    guarded_project(user)
    (user / ".hookbus.toml").rename(user / "config.toml")
    (user / "config.toml").write_text('python_path = ["."]\nenable = ["guard:guard"]\n')
    gone = tmp_path / "gone"
    gone.mkdir()
    script = 'cd "$1" && rmdir "$1" && exec "$0" -m hookbus run --host claude --event PreToolUse'
    proc = subprocess.run(["/bin/sh", "-c", script, sys.executable, str(gone)],
                          input=pre_tool("rm -rf victim", tmp_path), capture_output=True,
                          timeout=60, check=False)  # fmt: skip
    assert (proc.returncode, decision(proc.stdout)) == (0, "deny")


def test_a_worker_that_fails_before_it_knows_leaves_the_refusal(
    project: Path, isolated_environment: Path
) -> None:
    """A worker that crashes before it has said who wants the event (a corrupted index
    here) sends no reply of its own: the watchdog's refusal stands."""
    compile_now(project)
    (cached,) = (isolated_environment / "index").glob("*.json")
    data = json.loads(cached.read_text())
    data["settings"]["python_path"] = 5
    cached.write_text(json.dumps(data))
    result = run_cli("claude", pre_tool("rm -rf victim", project), cwd=project, args=HOOK)
    assert decision(result.stdout) == "deny"


EDITED_INTO_A_GUARD = """
import hookbus

@hookbus.handler("before-tool", tools="shell", timeout=2, fail_closed=True)
def a(event):
    if "rm -rf" in (event.tool.command or ""):
        return hookbus.Reply.deny("a is a guard now")
"""


def test_a_handler_edited_into_a_guard_is_not_judged_by_its_old_declaration(
    tmp_path: Path,
) -> None:
    """A stale index says handler a is no guard; a was just edited into one while another
    module now hangs at import: the watchdog, cut short, refuses rather than trusting the
    old declaration."""
    root = tmp_path / "p3"
    root.mkdir()
    (root / "a.py").write_text(
        'import hookbus\n\n@hookbus.handler("before-tool", tools="shell")\ndef a(event): ...\n'
    )
    (root / "b.py").write_text('import hookbus\n\n@hookbus.handler("after-edit")\ndef b(e): ...\n')
    (root / ".hookbus.toml").write_text('budget = 2\nenable = ["a:a", "b:b"]\n')
    compile_now(root)
    (root / "a.py").write_text(EDITED_INTO_A_GUARD)
    (root / "b.py").write_text("import time\ntime.sleep(60)\n" + (root / "b.py").read_text())
    for path in (root / "a.py", root / "b.py"):
        os.utime(path, ns=(time.time_ns(), time.time_ns() + 10**9))
    result = run_cli("claude", pre_tool("rm -rf victim", root), cwd=root, args=HOOK)
    assert decision(result.stdout) == "deny"


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_a_signal_while_the_payload_is_still_coming_refuses_for_the_guard(
    project: Path, sig: signal.Signals
) -> None:
    """Half a payload on a stdin left open, then the host's signal: the event (named by
    ``--event``) is one the guard wants, so the answer is its refusal."""
    compile_now(project)
    proc = subprocess.Popen(
        [sys.executable, "-m", "hookbus", "run", "--host", "claude", *HOOK], cwd=project,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    try:
        proc.stdin.write(pre_tool("rm -rf victim", project)[:50])
        proc.stdin.flush()
        time.sleep(1.0)  # not a margin: the hook must simply be reading by then
        proc.send_signal(sig)
        out, err = proc.stdout.read(), proc.stderr.read()
        assert proc.wait(timeout=30) == 0
    finally:
        proc.kill()
        for pipe in (proc.stdin, proc.stdout, proc.stderr):
            pipe.close()
    assert decision(out) == "deny"
    assert b"Traceback" not in err


HANGS_WHEN_TOLD = """
import os, time
import hookbus

if os.environ.get("HANG_AT_IMPORT"):
    time.sleep(60)

@hookbus.handler("before-tool", tools="shell")
def c(event):
    return None
"""


def test_a_hung_import_is_skipped_by_the_next_calls_on_a_fresh_index(
    project: Path, isolated_environment: Path
) -> None:
    """A non-guard module that hangs at import (the index already knows it): the first call
    is cut by the watchdog, the next ones do not import it again, and commands the guard
    allows run."""
    (project / "hangs.py").write_text(HANGS_WHEN_TOLD)
    (project / ".hookbus.toml").write_text('budget = 2\nenable = ["guard:guard", "hangs:c"]\n')
    compile_now(project)
    env = {**os.environ, "HANG_AT_IMPORT": "1"}
    first = run_cli("claude", pre_tool("ls", project), cwd=project, env=env, args=HOOK)
    assert first.exit_code == 0
    skip = isolated_environment / "index"
    wait_for(lambda: list(skip.glob("*.skip")), "the hung import remembered")
    for _ in range(2):
        result = run_cli("claude", pre_tool("ls", project), cwd=project, env=env, args=HOOK)
        assert (result.exit_code, result.stdout) == (0, b"")
    log = (isolated_environment / "diagnostics.jsonl").read_text()
    assert log.count('"watchdog-fired"') == 1


def test_a_configuration_nested_too_deeply_is_unreadable_not_fatal(
    tmp_path: Path,
) -> None:
    """A TOML value nested thousands of levels deep is an unreadable file (reported), not
    a RecursionError that turns every event into a refusal."""
    root = tmp_path / "deep"
    root.mkdir()
    (root / ".hookbus.toml").write_text("extra = " + "[" * 3000 + "]" * 3000 + "\n")
    result = run_cli("claude", pre_tool("ls", root), cwd=root, args=HOOK)
    assert (result.exit_code, result.stdout) == (0, b"")


def test_a_project_folder_whose_name_is_not_utf8_gets_its_guard(tmp_path: Path) -> None:
    """A folder name that is not UTF-8 (``caf\\xe9``) is cached in the index like any other,
    and the guard there answers."""
    root = Path(os.fsdecode(os.fsencode(str(tmp_path)) + b"/caf\xe9"))
    guarded_project(root)
    for _ in range(2):
        result = run_cli("claude", pre_tool("rm -rf victim", root), cwd=root, args=HOOK)
        assert decision(result.stdout) == "deny"
    result = run_cli("claude", pre_tool("ls", root), cwd=root, args=HOOK)
    assert (result.exit_code, result.stdout) == (0, b"")


def test_an_interpreter_that_lost_hookbus_runs_the_package_beside_its_command(
    project: Path, tmp_path: Path
) -> None:
    """An editable install removed from the hook's interpreter (its ``.pth`` gone) while
    the checkout stays: the command's ``__main__.py`` uses the package beside it, so the
    guard still answers instead of a traceback and exit 1 (which Claude lets through)."""
    import sysconfig

    venv = tmp_path / "venv"
    base = Path(sys.base_prefix) / "bin" / "python3"
    subprocess.run([str(base), "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    site = Path(sysconfig.get_paths()["purelib"])  # msgspec and the rest, but not hookbus
    (next((venv / "lib").glob("python3*")) / "site-packages" / "deps.pth").write_text(f"{site}\n")
    main = Path(__file__).resolve().parent.parent / "hookbus" / "__main__.py"
    check = subprocess.run([str(venv / "bin" / "python"), "-P", "-c", "import hookbus"],
                           capture_output=True, timeout=60, check=False)  # fmt: skip
    assert check.returncode != 0  # hookbus itself is not importable there
    proc = subprocess.run(
        [str(venv / "bin" / "python"), "-P", str(main), "run", "--host", "claude", *HOOK],
        input=pre_tool("rm -rf victim", project), cwd=project, capture_output=True,
        timeout=60, check=False,
    )  # fmt: skip
    assert (proc.returncode, decision(proc.stdout)) == (0, "deny")


def test_a_project_file_cannot_switch_off_a_guard_of_the_user(
    tmp_path: Path, isolated_environment: Path
) -> None:
    """The user's own configuration enables a guard; a project ``.hookbus.toml`` (which the
    agent itself can write) that disables it, or sets ``fail_closed = false``, is ignored
    on those points, and said so."""
    user = guarded_project(tmp_path / "xdg-config" / "hookbus")
    (user / ".hookbus.toml").rename(user / "config.toml")
    (user / "config.toml").write_text('python_path = ["."]\nenable = ["guard:guard"]\n')
    root = tmp_path / "project"
    root.mkdir()
    for body in ('disable = ["guard:guard"]\n',
                 '[handlers."guard:guard"]\nfail_closed = false\ntimeout = 2\n'):  # fmt: skip
        (root / ".hookbus.toml").write_text(body)
        result = run_cli("claude", pre_tool("rm -rf victim", root), cwd=root, args=HOOK)
        assert decision(result.stdout) == "deny"
    wait_for(lambda: "a project cannot" in (isolated_environment / "diagnostics.jsonl").read_text(),
             "the ignored override reported")  # fmt: skip


OPTIONED_GUARD = """
import msgspec
import hookbus

class Words(msgspec.Struct):
    words: tuple[str, ...] = ("rm -rf",)

@hookbus.handler("before-tool", tools="shell", timeout=2, fail_closed=True, options=Words)
def guard(event, ctx):
    if any(w in (event.tool.command or "") for w in ctx.options.words):
        return hookbus.Reply.deny("no " + ", ".join(ctx.options.words))
    return None
"""


def users_guard_and_project(tmp_path: Path, project_config: str) -> tuple[Path, Path]:
    """The user's configuration folder, enabling :data:`OPTIONED_GUARD` (kept there),
    and a project whose ``.hookbus.toml`` is ``project_config``."""
    user = tmp_path / "xdg-config" / "hookbus"
    user.mkdir(parents=True)
    (user / "guard.py").write_text(OPTIONED_GUARD)
    (user / "config.toml").write_text('enable = ["guard:guard"]\n')
    root = tmp_path / "project"
    root.mkdir()
    (root / ".hookbus.toml").write_text(project_config)
    return user, root


def test_a_project_file_cannot_empty_the_options_of_a_guard_of_the_user(
    tmp_path: Path, isolated_environment: Path
) -> None:
    """``words = []`` in a project's section would make the user's guard allow
    everything: a project cannot change the settings of a handler the user enables."""
    _, root = users_guard_and_project(
        tmp_path, '[handlers."guard:guard"]\nwords = []\ntimeout = 0.5\n'
    )
    result = run_cli("claude", pre_tool("rm -rf victim", root), cwd=root, args=HOOK)
    assert decision(result.stdout) == "deny"
    assert b"no rm -rf" in result.stdout


def test_a_broken_user_file_does_not_let_a_project_weaken_the_users_guard(
    tmp_path: Path, isolated_environment: Path
) -> None:
    """The project enables the user's guard itself, with ``words = []`` and
    ``fail_closed = false`` (ignored while the user's file says it enables the guard);
    a half-saved user file must not let them apply."""
    user, root = users_guard_and_project(
        tmp_path,
        'enable = ["guard:guard"]\n[handlers."guard:guard"]\nwords = []\nfail_closed = false\n',
    )
    first = run_cli("claude", pre_tool("rm -rf victim", root), cwd=root, args=HOOK)
    assert b"no rm -rf" in first.stdout
    wait_for(lambda: list((isolated_environment / "index").glob("*.json")), "the index saved")
    (user / "config.toml").write_text('enable = ["guard:guard"\n')  # half saved
    result = run_cli("claude", pre_tool("rm -rf victim", root), cwd=root, args=HOOK)
    assert decision(result.stdout) == "deny", result.stdout


def test_an_edit_to_a_module_a_handler_imports_from_python_path_is_noticed(
    tmp_path: Path,
) -> None:
    """A handler whose tools come from a rules module on the configuration's
    ``python_path``, outside its folder (installed hooks ignore ``PYTHONPATH``): editing
    the rules recompiles the index, and the guard the edit makes is applied on the next
    call."""
    lib = tmp_path / "extlib"
    (lib / "extpkg").mkdir(parents=True)
    (lib / "extpkg" / "__init__.py").write_text("")
    (lib / "extpkg" / "rules.py").write_text('TOOLS = ("edit",)\n')
    (lib / "extpkg" / "hooks.py").write_text(
        "import hookbus\nfrom extpkg import rules\n\n"
        "@hookbus.handler('before-tool', tools=rules.TOOLS, timeout=2, fail_closed=True)\n"
        "def guard(event):\n    return hookbus.Reply.deny('by the rules')\n\n"
        "@hookbus.handler('before-tool', tools='shell')\n"
        "def logger(event):\n    return None\n"
    )
    root = tmp_path / "project"
    root.mkdir()
    (root / ".hookbus.toml").write_text(
        f'python_path = ["{lib}"]\nenable = ["extpkg.hooks:guard", "extpkg.hooks:logger"]\n'
    )
    env = dict(os.environ)
    compile_now(root, env)
    assert run_cli("claude", pre_tool("ls", root), cwd=root, env=env, args=HOOK).stdout == b""
    rules = lib / "extpkg" / "rules.py"
    rules.write_text('TOOLS = ("shell",)\n')
    os.utime(rules, ns=(time.time_ns(), time.time_ns() + 10**9))
    result = run_cli("claude", pre_tool("ls", root), cwd=root, env=env, args=HOOK)
    assert decision(result.stdout) == "deny"
