"""``support.hookbus_inproc``: a command run in the test's own process answers exactly as
``python -m hookbus`` started as a process of its own does, and leaves the test's
process as it found it."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from support import hookbus_cli, hookbus_inproc, install_project


def test_a_command_in_process_answers_as_its_own_process_does(tmp_path: Path) -> None:
    """manifest, verify with drift, a refusal and a usage error: the same exit code,
    stdout and stderr in process as from a process of its own."""
    project = install_project(tmp_path / "proj")
    assert hookbus_cli(project, "install", "--host", "claude").returncode == 0
    (project / ".hookbus.toml").write_text('enable = ["hooks_mod:shell"]\n')
    for args in (
        ["manifest", "--host", "claude"],
        ["verify", "--host", "claude"],
        ["verify", "--host", "codex", "--scope", "local"],
        ["install", "--host", "nope"],
    ):
        started = hookbus_cli(project, *args)
        inproc = hookbus_inproc(project, *args)
        assert (inproc.returncode, inproc.stdout, inproc.stderr) == (
            started.returncode, started.stdout, started.stderr), args  # fmt: skip
    assert hookbus_inproc(project, "verify", "--host", "claude").returncode == 1


def test_a_command_in_process_gets_its_own_environment_and_folder(tmp_path: Path) -> None:
    """The command reads ``env`` and works in ``cwd`` (a user-scope install lands in the
    ``HOME`` it was given); after it, the test's environment, folder, argv and standard
    streams are as they were."""
    project = install_project(tmp_path / "proj")
    home = tmp_path / "home"
    (home / ".config" / "hookbus").mkdir(parents=True)
    (home / ".config" / "hookbus" / "config.toml").write_text('enable = ["guard"]\n')
    before = (dict(os.environ), os.getcwd(), list(sys.argv), sys.stdout, sys.stderr, sys.stdin)
    done = hookbus_inproc(project, "install", "--host", "claude", "--scope", "user",
                          env={"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config")})  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert f"{home}/.claude/settings.json: installed hookbus entries" in done.stdout
    assert (dict(os.environ), os.getcwd(), list(sys.argv), sys.stdout, sys.stderr,
            sys.stdin) == before  # fmt: skip


def test_hookbus_caches_start_fresh_for_each_command(
    tmp_path: Path, isolated_environment: Path
) -> None:
    """A state folder this process opened and checked before it became writable by every
    user is refused by doctor run in process, as a new process refuses it."""
    from hookbus.local import state

    isolated_environment.mkdir(mode=0o700)
    state.root()  # this process's descriptor of the folder, checked while it was private
    isolated_environment.chmod(0o777)
    try:
        inproc = json.loads(hookbus_inproc(tmp_path, "doctor", "--json").stdout)
        started = json.loads(hookbus_cli(tmp_path, "doctor", "--json").stdout)
    finally:
        isolated_environment.chmod(0o700)
        state.forget()
    assert inproc["state"]["problem"] == "is writable by every user"
    assert inproc["state"] == started["state"]


def test_the_hook_and_the_server_run_only_as_processes(tmp_path: Path) -> None:
    """``run``, ``serve`` and ``try`` install signal handlers, end the process or start
    servers: asked to run them in process, the helper says to use hookbus_cli."""
    for command in ("run", "serve", "try"):
        with pytest.raises(ValueError, match="hookbus_cli"):
            hookbus_inproc(tmp_path, command, "--host", "claude")


def test_this_processs_own_modules_do_not_reach_the_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A handler module an earlier test imported here under the project's module name is
    not the one the command's compile imports (a new process has none), and is back in
    ``sys.modules`` after the command."""
    import importlib

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "hooks_mod.py").write_text("def unrelated(): ...\n")
    monkeypatch.syspath_prepend(str(elsewhere))
    monkeypatch.delitem(sys.modules, "hooks_mod", raising=False)
    earlier = importlib.import_module("hooks_mod")
    project = install_project(tmp_path / "proj")
    done = hookbus_inproc(project, "install", "--host", "claude")
    assert done.returncode == 0, done.stderr
    assert sys.modules["hooks_mod"] is earlier
