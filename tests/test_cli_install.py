"""``hookbus install``, ``verify`` and ``uninstall`` as a person meets them: mistakes
fail loudly with the problem and the fix, scopes and command forms, and the user's
settings file given back byte for byte."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support import hookbus_cli, hookbus_inproc

GOOD = """
import hookbus

@hookbus.handler("before-tool", tools="shell", fail_closed=True, timeout=5)
def shell(event):
    if "rm -rf /" in (event.tool.command or ""):
        return hookbus.Reply.deny("not that")
    return None

@hookbus.handler("prompt-submit")
def prompt(event): ...
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "hooks_mod.py").write_text(GOOD)
    (root / ".hookbus.toml").write_text('enable = ["hooks_mod:shell"]\n')
    return root


def settings_file(project: Path, name: str = "settings.json") -> Path:
    return project / ".claude" / name


def pre_tool_command(project: Path) -> str:
    hooks = json.loads(settings_file(project).read_text())["hooks"]
    return hooks["PreToolUse"][0]["hooks"][0]["command"]  # type: ignore[no-any-return]


SHEL = "import hookbus\n@hookbus.handler('before-tool', tools='shel')\ndef shell(e): ...\n"
SOON = 'enable = ["hooks_mod:shell"]\n[handlers."hooks_mod:shell"]\ntimeout = "soon"\n'


# -- mistakes: exit 1, nothing written, the problem and the fix named ----------------------

MISTAKES = {
    "misspelled function": (
        {"config": 'enable = ["hooks_mod:shel"]\n'},
        ["hooks_mod has no 'shel'", "its handlers: prompt, shell"],
    ),
    "wrong module": ({"config": 'enable = ["hooks_mdo:shell"]\n'}, ["no module named 'hooks_mdo'"]),
    "syntax error": ({"module": GOOD + "\ndef broken(:\n"}, ["hooks_mod.py:13:12: invalid syntax"]),
    "bad signature": (
        {"module": "import hookbus\n@hookbus.handler('stop')\ndef shell(a, b, c): ...\n"},
        ["must take (event) or (event, ctx)"],
    ),
    "missing decorator": (
        {"module": "def shell(event): ...\n"},
        ["is not marked with @hookbus.handler"],
    ),
    "unknown kind": (
        {"module": "import hookbus\n@hookbus.handler('before-tol')\ndef shell(e): ...\n"},
        ["unknown event kind 'before-tol'", "'before-tool'"],
    ),
    "unknown tool kind": (
        {"module": SHEL},
        ["unknown tool kind 'shel'", "shell", "mcp:<server>"],
    ),
    "unknown host": (
        {"module": "import hookbus\n@hookbus.handler('stop', hosts='claud')\ndef shell(e): ...\n"},
        ["unknown host 'claud'", "'claude'"],
    ),
    "invalid TOML": ({"config": "enable = [\n"}, ["unreadable", ".hookbus.toml"]),
    "unknown key": (
        {"config": 'enabel = ["hooks_mod:shell"]\n'},
        ["unknown field `enabel`", ".hookbus.toml"],
    ),
    "unknown handler name": (
        {"config": 'enable = ["shell"]\n'},
        ["unknown handler 'shell'", "module:function"],
    ),
    "bad option value": (
        {"config": SOON},
        ["timeout", "hooks_mod:shell"],
    ),
}


@pytest.mark.parametrize("mistake", sorted(MISTAKES))
def test_install_refuses_a_mistake_and_names_it(project: Path, mistake: str) -> None:
    files, expected = MISTAKES[mistake]
    if "config" in files:
        (project / ".hookbus.toml").write_text(files["config"])
    if "module" in files:
        (project / "hooks_mod.py").write_text(files["module"])
    proc = hookbus_inproc(project, "install", "--host", "claude")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    for text in expected:
        assert text in proc.stderr, (text, proc.stderr)
    assert "--force" in proc.stderr and "not installed" in proc.stderr
    assert not (project / ".claude").exists()
    # verify fails on the same mistake, saying so
    verify = hookbus_inproc(project, "verify", "--host", "claude")
    assert verify.returncode == 1
    assert expected[0] in verify.stderr


def test_force_installs_anyway_and_the_broken_guard_denies_naming_its_cause(
    project: Path,
) -> None:
    """With --force, a guard whose module does not load still guards: its events are
    registered, and the deny names the syntax error's place, not a timeout."""
    (project / "hooks_mod.py").write_text(GOOD + "\ndef broken(:\n")
    proc = hookbus_inproc(project, "install", "--host", "claude", "--force")
    assert proc.returncode == 0, proc.stderr
    hooks = json.loads(settings_file(project).read_text())["hooks"]
    assert "PreToolUse" in hooks
    entry = hooks["PreToolUse"][0]["hooks"][0]
    payload = {"session_id": "s", "transcript_path": "/t", "cwd": str(project),
               "hook_event_name": "PreToolUse", "tool_name": "Bash",
               "tool_input": {"command": "ls"}}  # fmt: skip
    run = subprocess.run(["sh", "-c", entry["command"]], input=json.dumps(payload), cwd=project,
                         capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    reply = json.loads(run.stdout)["hookSpecificOutput"]
    assert reply["permissionDecision"] == "deny"
    assert "hooks_mod.py:13:12: invalid syntax" in reply["permissionDecisionReason"]
    assert "in time" not in reply["permissionDecisionReason"]


def test_verify_reports_drift_readably_with_the_fix(project: Path) -> None:
    assert hookbus_inproc(project, "install", "--host", "claude").returncode == 0
    (project / ".hookbus.toml").write_text(
        'enable = ["hooks_mod:shell", "hooks_mod:prompt"]\n'
        '[handlers."hooks_mod:shell"]\nfail_closed = false\n'
    )
    proc = hookbus_inproc(project, "verify", "--host", "claude")
    assert proc.returncode == 1
    assert (
        "missing: UserPromptSubmit is not registered, but an enabled handler wants" in proc.stdout
    )
    assert "changed: PreToolUse: its fallback differs" in proc.stdout
    assert proc.stdout.rstrip().endswith("fix: run: hookbus install --host claude")
    hookbus_inproc(project, "install", "--host", "claude")
    assert hookbus_inproc(project, "verify", "--host", "claude").returncode == 0


# -- scopes ----------------------------------------------------------------------------------


def test_local_scope_writes_the_uncommitted_settings_and_warns_when_git_would_add_it(
    project: Path,
) -> None:
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    proc = hookbus_inproc(project, "install", "--host", "claude", "--scope", "local")
    assert proc.returncode == 0, proc.stderr
    assert settings_file(project, "settings.local.json").exists()
    assert not settings_file(project).exists()
    assert "not ignored by git" in proc.stderr
    assert "this machine's interpreter" not in proc.stderr
    (project / ".gitignore").write_text(".claude/settings.local.json\n")
    hookbus_inproc(project, "uninstall", "--host", "claude", "--scope", "local")
    again = hookbus_inproc(project, "install", "--host", "claude", "--scope", "local")
    assert "not ignored by git" not in again.stderr


def test_project_scope_warns_about_the_machines_interpreter_and_offers_portable_forms(
    project: Path,
) -> None:
    proc = hookbus_inproc(project, "install", "--host", "claude")
    assert proc.returncode == 0
    assert "its commands name this machine's interpreter" in proc.stderr
    assert sys.executable in proc.stderr and "--command path" in proc.stderr
    portable = hookbus_inproc(project, "install", "--host", "claude", "--command", "path")
    assert "this machine's interpreter" not in portable.stderr
    command = pre_tool_command(project)
    assert sys.executable not in command and "; hookbus run --host claude" in command


def test_the_shared_file_is_said_committed_only_when_git_tracks_it(project: Path) -> None:
    """Not tracked yet: said so, and a portable install suggests ``git add``; tracked:
    committed with the project; outside a repository: neither."""
    alone = hookbus_inproc(project, "install", "--host", "claude")
    assert "not in a git repository" in alone.stderr
    assert "committed" not in alone.stderr and "git add" not in alone.stderr
    hookbus_inproc(project, "uninstall", "--host", "claude")
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    untracked = hookbus_inproc(project, "install", "--host", "claude")
    assert "not tracked by git yet" in untracked.stderr
    assert "committed with the project" not in untracked.stderr
    portable = hookbus_inproc(project, "install", "--host", "claude", "--command", "path")
    assert f"git add {settings_file(project)}" in portable.stderr
    subprocess.run(["git", "add", ".claude/settings.json"], cwd=project, check=True)
    tracked = hookbus_inproc(project, "install", "--host", "claude", "--command", "absolute")
    assert "is committed with the project" in tracked.stderr


def test_git_asked_by_install_and_doctor_runs_no_command_of_the_repositorys(
    project: Path, tmp_path: Path
) -> None:
    """The repository's ``.git/config`` is the project's (an agent can write it): its
    ``core.fsmonitor`` command, which git runs for an index read, never runs when install
    (project and local scope) and doctor ask git whether a settings file is tracked or
    ignored."""
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    ran = tmp_path / "fsmonitor-ran"
    subprocess.run(["git", "config", "core.fsmonitor", f"touch {ran}; echo"], cwd=project,
                   check=True)  # fmt: skip
    shared = hookbus_cli(project, "install", "--host", "claude")
    assert "not tracked by git yet" in shared.stderr  # git was asked
    local = hookbus_cli(project, "install", "--host", "claude", "--scope", "local")
    assert "is not ignored by git" in local.stderr  # and asked again
    doctor = hookbus_cli(project, "doctor")
    assert "not tracked by git yet" in doctor.stdout
    assert not ran.exists()


def test_a_configurations_names_are_printed_escaped(project: Path) -> None:
    """A cloned project's ``enable`` names with an escape sequence and a bidi override
    (TOML ``\\u`` escapes) reach the terminal escaped in install's problems."""
    (project / ".hookbus.toml").write_text('enable = ["\\u001b[2Jevil\\u202e:h"]\n')
    for scope in ("project", "local"):
        done = hookbus_inproc(project, "install", "--host", "claude", "--scope", scope)
        assert "evil" in done.stderr, done.stderr
        assert "\x1b" not in done.stderr and "\u202e" not in done.stderr
        assert "\\x1b[2Jevil\\u202e" in done.stderr


def test_user_scope_reads_the_user_configuration_only(
    project: Path, tmp_path: Path, isolated_environment: Path
) -> None:
    """Run inside a project, --scope user still follows the user's configuration alone;
    a handler module next to it is importable."""
    home = tmp_path / "home"
    user_dir = tmp_path / "xdg-config" / "hookbus"
    user_dir.mkdir(parents=True)
    (user_dir / "mine.py").write_text(GOOD)
    (user_dir / "config.toml").write_text('enable = ["mine:prompt"]\n')
    (project / ".hookbus.toml").write_text('enable = ["hooks_mod:shell"]\n')
    proc = hookbus_inproc(project, "install", "--host", "claude", "--scope", "user",
                       env={"HOME": str(home)})  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    hooks = json.loads((home / ".claude" / "settings.json").read_text())["hooks"]
    assert sorted(hooks) == ["UserPromptSubmit"]
    assert not (project / ".claude").exists()


# -- the command forms and their fallbacks ------------------------------------------------

PAYLOAD = {"session_id": "s", "transcript_path": "/t", "hook_event_name": "PreToolUse",
           "tool_name": "Bash", "tool_input": {"command": "rm -rf /"}}  # fmt: skip


def run_entry(
    command: str, cwd: Path, path: str, env: dict[str, str] | None = None
) -> dict[str, object]:
    """Run an installed command as Claude does; its one reply (exit 0, one JSON object)."""
    proc = subprocess.run(["/bin/sh", "-c", command], input=json.dumps({**PAYLOAD, "cwd": str(cwd)}),
                          cwd=cwd, capture_output=True, text=True, timeout=60, check=False,
                          env={**os.environ, "PATH": path, **(env or {})})  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)["hookSpecificOutput"]  # type: ignore[no-any-return]


@pytest.mark.parametrize("form", ["path", "module"])
def test_portable_forms_run_hookbus_found_on_path_and_refuse_without_it(
    project: Path, tmp_path: Path, form: str
) -> None:
    """With hookbus on PATH the guard answers; without it (no such program, or a python3
    that cannot import hookbus) the command's fallback denies for the fail-closed guard."""
    assert hookbus_inproc(project, "install", "--host", "claude", "--command", form).returncode == 0
    command = pre_tool_command(project)
    venv_bin = tmp_path / "venv-bin"
    venv_bin.mkdir()
    (venv_bin / "hookbus").symlink_to(Path(sys.executable).with_name("hookbus"))
    # A wrapper, not a link: a linked interpreter would not find its virtual environment.
    (venv_bin / "python3").write_text(f'#!/bin/sh\nexec {sys.executable} "$@"\n')
    (venv_bin / "python3").chmod(0o755)
    found = run_entry(command, project, f"{venv_bin}:/usr/bin:/bin")
    assert found["permissionDecisionReason"] == "not that"
    bare = tmp_path / "bare-bin"
    bare.mkdir()
    (bare / "python3").symlink_to(Path(sys.base_prefix) / "bin" / "python3")
    for path in (str(tmp_path / "nothing"), f"{bare}:/usr/bin:/bin"):
        fallback = run_entry(command, project, path)
        assert fallback["permissionDecision"] == "deny"
        assert "hookbus could not run" in str(fallback["permissionDecisionReason"])


# -- uninstall gives the user's file back -------------------------------------------------

STYLES = {
    "compact, no final newline": '{"model":"opus","permissions":{"allow":["Bash(ls)"]}}',
    "odd key order, final newline": '{\n  "zeta": true,\n  "alpha": [1, 2,   3],\n  "model": "opus"\n}\n',
    "tabs and a hook of the user's": '{\n\t"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./mine.sh"}]}]},\n\t"model": "x"\n}',
    "spaces around colons": '{ "a" : 1 , "b" : { "c" : [ ] } }\n\n',
    "empty object": "{}",
}


@pytest.mark.parametrize("style", sorted(STYLES))
def test_install_install_uninstall_restores_the_file_byte_for_byte(
    project: Path, style: str
) -> None:
    original = STYLES[style].encode()
    path = settings_file(project)
    path.parent.mkdir()
    path.write_bytes(original)
    assert hookbus_cli(project, "install", "--host", "claude").returncode == 0
    assert json.loads(path.read_bytes())["hooks"]["PreToolUse"]
    backup = path.with_name("settings.json.hookbus-backup")
    assert backup.read_bytes() == original
    # A second install that changes the entries must not replace the user's original.
    (project / ".hookbus.toml").write_text('enable = ["hooks_mod:shell", "hooks_mod:prompt"]\n')
    assert hookbus_cli(project, "install", "--host", "claude").returncode == 0
    assert hookbus_cli(project, "install", "--host", "claude").returncode == 0
    assert backup.read_bytes() == original
    proc = hookbus_cli(project, "uninstall", "--host", "claude")
    assert proc.returncode == 0, proc.stderr
    assert path.read_bytes() == original
    assert not backup.exists()


def test_uninstall_after_a_user_edit_keeps_the_edit_and_the_layout(project: Path) -> None:
    """Edited since install: the backup is stale, so only hookbus's entries are taken out
    of the file as it is now; the rest of its bytes stay."""
    path = settings_file(project)
    path.parent.mkdir()
    path.write_text('{"model":"opus"}')
    hookbus_inproc(project, "install", "--host", "claude")
    edited = path.read_text().replace('"model":"opus"', '"model":"sonnet","theme":"dark"')
    path.write_text(edited)
    assert hookbus_inproc(project, "uninstall", "--host", "claude").returncode == 0
    assert path.read_text() == '{"model":"sonnet","theme":"dark"}'


def test_uninstall_removes_a_file_install_created(project: Path) -> None:
    assert hookbus_inproc(project, "install", "--host", "claude").returncode == 0
    assert settings_file(project).exists()
    proc = hookbus_inproc(project, "uninstall", "--host", "claude")
    assert "hookbus created it" in proc.stdout
    assert not settings_file(project).exists()
    assert not settings_file(project).with_name("settings.json.hookbus-backup").exists()


def test_the_module_form_refuses_when_python3_imports_a_broken_hookbus(
    project: Path, tmp_path: Path
) -> None:
    """A half-removed install (its package raises at import) is no pass for the guard."""
    assert (
        hookbus_inproc(project, "install", "--host", "claude", "--command", "module").returncode
        == 0
    )
    broken = tmp_path / "broken" / "hookbus"
    broken.mkdir(parents=True)
    (broken / "__init__.py").write_text("raise RuntimeError('half removed')\n")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    # A python3 whose hookbus is the broken one (it takes the command's -E off: the
    # package it imports comes from PYTHONPATH, as if installed there).
    python3 = Path(sys.base_prefix) / "bin" / "python3"
    (bin_dir / "python3").write_text(
        f'#!/bin/sh\n[ "$1" = -E ] && shift\nPYTHONPATH={broken.parent} exec {python3} "$@"\n'
    )
    (bin_dir / "python3").chmod(0o755)
    reply = run_entry(pre_tool_command(project), project, f"{bin_dir}:/usr/bin:/bin")
    assert reply["permissionDecision"] == "deny"
    assert "hookbus could not run" in str(reply["permissionDecisionReason"])


def test_a_hookbus_on_path_that_cannot_start_is_no_pass_for_the_guard(
    project: Path, tmp_path: Path
) -> None:
    """The path form with a console script whose interpreter is gone (a pipx venv after a
    Python upgrade): the shell says 126/127, and the command's fallback denies."""
    assert (
        hookbus_inproc(project, "install", "--host", "claude", "--command", "path").returncode == 0
    )
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "hookbus").write_text("#!/nonexistent/python3\n")
    (bin_dir / "hookbus").chmod(0o755)
    reply = run_entry(pre_tool_command(project), project, f"{bin_dir}:/usr/bin:/bin")
    assert reply["permissionDecision"] == "deny"
    assert "hookbus could not run" in str(reply["permissionDecisionReason"])


def test_a_half_removed_hookbus_is_no_pass_for_the_guard(project: Path, tmp_path: Path) -> None:
    """The absolute form with a package that imports its CLI but no longer its runtime (an
    upgrade racing the hook): Python exits 1, and the command's fallback denies, once."""
    import shutil

    import hookbus

    # a working hook's own answer passes through alone
    assert hookbus_inproc(project, "install", "--host", "claude", "--no-server").returncode == 0
    assert run_entry(pre_tool_command(project), project, os.environ["PATH"])[
        "permissionDecisionReason"] == "not that"  # fmt: skip
    # An interpreter whose hookbus is a copy (it takes the command's -E off: the package
    # comes from PYTHONPATH, as if installed there), installed whole, then half removed.
    broken = tmp_path / "broken"
    shutil.copytree(Path(hookbus.__file__).parent, broken / "hookbus")
    python = tmp_path / "bin" / "python"
    python.parent.mkdir()
    python.write_text(f'#!/bin/sh\n[ "$1" = -E ] && shift\nPYTHONPATH={broken} exec '
                      f'{sys.executable} "$@"\n')  # fmt: skip
    python.chmod(0o755)
    done = hookbus_inproc(
        project, "install", "--host", "claude", "--no-server", "--python", str(python)
    )
    assert done.returncode == 0, done.stderr
    assert str(broken / "hookbus" / "__main__.py") in pre_tool_command(project)
    shutil.rmtree(broken / "hookbus" / "runtime")
    reply = run_entry(pre_tool_command(project), project, os.environ["PATH"])
    assert reply["permissionDecision"] == "deny"
    assert "hookbus could not run" in str(reply["permissionDecisionReason"])


# -- found by review ------------------------------------------------------------------


def test_python_given_by_name_is_written_as_its_absolute_path(project: Path) -> None:
    """``--python python3`` would be tested as ./python3 in the agent's folder, and never
    run: it is resolved on PATH and written absolute."""
    name = Path(sys.executable).name
    env = {"PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    proc = hookbus_inproc(project, "install", "--host", "claude", "--python", name, env=env)
    assert proc.returncode == 0, proc.stderr
    assert f"[ -x {sys.executable} ]" in pre_tool_command(project)
    missing = hookbus_inproc(project, "install", "--host", "claude", "--python", "nopython9")
    assert missing.returncode == 1 and "no such interpreter" in missing.stderr


@pytest.mark.parametrize("value", ['{"matcher": "Bash", "hooks": []}', '"abc"', "null"])
def test_an_event_that_is_not_a_list_of_groups_is_refused_not_rearranged(
    project: Path, value: str
) -> None:
    path = settings_file(project)
    path.parent.mkdir()
    text = '{"hooks": {"PreToolUse": ' + value + "}}"
    path.write_text(text)
    proc = hookbus_inproc(project, "install", "--host", "claude")
    assert proc.returncode == 1
    assert "hooks.PreToolUse is not a list" in proc.stderr and "Traceback" not in proc.stderr
    assert path.read_text() == text


def test_the_backup_is_as_private_as_the_settings_file(project: Path) -> None:
    path = settings_file(project)
    path.parent.mkdir()
    path.write_text('{"env": {"ANTHROPIC_API_KEY": "sk-secret"}}')
    path.chmod(0o600)
    assert hookbus_inproc(project, "install", "--host", "claude").returncode == 0
    assert (path.stat().st_mode & 0o777, path.with_name("settings.json.hookbus-backup")
            .stat().st_mode & 0o777) == (0o600, 0o600)  # fmt: skip


def test_uninstall_works_when_a_handler_module_ends_its_importer(project: Path) -> None:
    """Uninstall is the way out of a broken guard: it imports no handler."""
    assert hookbus_cli(project, "install", "--host", "claude").returncode == 0
    (project / "hooks_mod.py").write_text("import os\nos._exit(3)\n" + GOOD)
    proc = hookbus_cli(project, "uninstall", "--host", "claude")
    assert proc.returncode == 0, proc.stderr
    assert not settings_file(project).exists()


def test_a_settings_folder_that_cannot_be_written_is_a_message_not_a_traceback(
    project: Path,
) -> None:
    if os.geteuid() == 0:  # root writes anywhere: make the folder a file instead
        (project / ".claude").write_text("not a folder")
    else:
        (project / ".claude").mkdir(mode=0o500)
    proc = hookbus_inproc(project, "install", "--host", "claude")
    assert proc.returncode == 1
    assert ".claude" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.parametrize(
    "original",
    ['{"model":"opus","hooks":{}}', '{"hooks": {"Stop": []}, "model": "x"}'],
)
def test_the_users_empty_containers_come_back_too(project: Path, original: str) -> None:
    path = settings_file(project)
    path.parent.mkdir()
    path.write_text(original)
    assert hookbus_inproc(project, "install", "--host", "claude").returncode == 0
    assert hookbus_inproc(project, "uninstall", "--host", "claude").returncode == 0
    assert path.read_text() == original


def test_uninstall_keeps_an_edit_that_only_changed_a_values_type(project: Path) -> None:
    """``1`` edited to ``true`` after install is an edit: the backup is not restored."""
    path = settings_file(project)
    path.parent.mkdir()
    path.write_text('{"spinnerTipsEnabled": 1}')
    hookbus_inproc(project, "install", "--host", "claude")
    path.write_text(
        path.read_text().replace('"spinnerTipsEnabled": 1', '"spinnerTipsEnabled": true')
    )
    assert hookbus_inproc(project, "uninstall", "--host", "claude").returncode == 0
    assert json.loads(path.read_text()) == {"spinnerTipsEnabled": True}


def test_the_committed_settings_follow_the_projects_configuration_alone(
    project: Path, tmp_path: Path
) -> None:
    """A personal guard in the installer's user configuration must not reach the file
    their teammates get (with its refusals); the local settings, this machine's, have it."""
    user_dir = tmp_path / "xdg-config" / "hookbus"
    user_dir.mkdir(parents=True)
    (user_dir / "mine.py").write_text(GOOD)
    (user_dir / "config.toml").write_text('enable = ["mine:prompt"]\n')
    assert hookbus_inproc(project, "install", "--host", "claude").returncode == 0
    assert sorted(json.loads(settings_file(project).read_text())["hooks"]) == [
        "PreSkillShellCommand", "PreToolUse"]  # fmt: skip
    assert (
        hookbus_inproc(project, "install", "--host", "claude", "--scope", "local").returncode == 0
    )
    local = json.loads(settings_file(project, "settings.local.json").read_text())["hooks"]
    assert "UserPromptSubmit" in local


# -- no configuration found: a mistake, said with where hookbus looked --------------------


def test_a_misnamed_configuration_is_named_with_the_rename_that_fixes_it(project: Path) -> None:
    """``hookbus.toml`` (no dot) is no configuration: install exits 1, lists the files it
    looked for in order, names the misnamed one and the ``mv`` that fixes it, and writes
    nothing."""
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    (project / ".hookbus.toml").rename(project / "hookbus.toml")
    (project / "src").mkdir()
    proc = hookbus_inproc(project / "src", "install", "--host", "claude")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    lines = proc.stderr.splitlines()
    assert lines[1:4] == [f"  {project / 'src' / '.hookbus.toml'}: missing",
                          f"  {project / '.hookbus.toml'}: missing",
                          f"  {project / 'hookbus.toml'}: not read: hookbus reads .hookbus.toml "
                          "(with the dot)"]  # fmt: skip
    assert lines[-1] == f"fix: mv {project / 'hookbus.toml'} {project / '.hookbus.toml'}"
    assert not (project / ".claude").exists()


def test_scope_user_with_only_a_project_configuration_says_to_install_for_the_project(
    project: Path, tmp_path: Path
) -> None:
    """``--scope user`` reads the user configuration alone: with none, install exits 1
    naming the project's file it does not read and the scope that reads it."""
    proc = hookbus_inproc(project, "install", "--host", "claude", "--scope", "user",
                       env={"HOME": str(tmp_path / "home")})  # fmt: skip
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert f"{tmp_path / 'xdg-config' / 'hookbus' / 'config.toml'}: missing" in proc.stderr
    assert f"{project / '.hookbus.toml'}: not read: --scope user reads your user" in proc.stderr
    assert "fix: hookbus install --host claude --scope project" in proc.stderr
    assert not (tmp_path / "home" / ".claude").exists()


def test_scope_project_with_only_a_user_configuration_offers_the_scopes_that_read_it(
    project: Path, tmp_path: Path
) -> None:
    """The committed settings follow the project's configuration alone: with only the
    user's, install exits 1 saying it is not read there, and offers local or user."""
    (project / ".hookbus.toml").unlink()
    user_dir = tmp_path / "xdg-config" / "hookbus"
    user_dir.mkdir(parents=True)
    (user_dir / "config.toml").write_text("")
    proc = hookbus_inproc(project, "install", "--host", "claude")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert f"{user_dir / 'config.toml'}: not read: the project's committed settings" in proc.stderr
    assert proc.stderr.splitlines()[-1] == (
        "fix: hookbus install --host claude --scope local (this machine's settings of the "
        "project, your configuration and the project's); or hookbus install --host claude "
        "--scope user (your settings, for every project)")  # fmt: skip


def test_hookbus_config_naming_no_file_is_said_with_its_fix(project: Path) -> None:
    """``HOOKBUS_CONFIG`` naming a file that does not exist: exit 1, the path and the fix."""
    gone = project / "gone.toml"
    proc = hookbus_inproc(project, "install", "--host", "claude", env={"HOOKBUS_CONFIG": str(gone)})
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert f"fix: create {gone}, or unset HOOKBUS_CONFIG" in proc.stderr
    assert not (project / ".claude").exists()
