"""``hookbus install --host claude --plugin``: hookbus's own plugin folder (the manifest,
the same command hooks the settings install writes, and with the guard enabled the
agent.spawn module with ``hookbus guard --json`` baked in), written the same twice, and
removed whole by uninstall, the user's files kept. Claude Code itself validating the
folder is ``tests/e2e/test_claude_spawn_mod.py``."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from support import hookbus_cli, hookbus_inproc, install_project, snapshot

from hookbus.hosts.claude.plugin import GUARD_WAIT_MS, guard_argv, manifest, plugin_dir
from hookbus.hosts.shared.manifest import OWNED_MARK
from hookbus.install.plan import compiled_index, config_files


@pytest.fixture
def project(tmp_path: Path, isolated_environment: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    root = install_project(tmp_path / "proj")
    monkeypatch.chdir(root)
    return root


def folder(project: Path) -> Path:
    return project / ".claude" / "skills" / "hookbus"


def read_json(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def test_install_writes_the_plugin_with_the_settings_installs_hooks(project: Path) -> None:
    """plugin.json and hooks/hooks.json, whose hooks are exactly what the settings install
    would merge; no module without the guard; the user's settings file is not created."""
    done = hookbus_inproc(project, "install", "--host", "claude", "--plugin")
    assert done.returncode == 0, done.stderr
    plugin = read_json(folder(project) / ".claude-plugin" / "plugin.json")
    assert plugin["name"] == "hookbus"
    assert OWNED_MARK in plugin["description"]
    hooks = read_json(folder(project) / "hooks" / "hooks.json")
    assert OWNED_MARK in hooks["description"]
    assert "modules" not in hooks
    settings = hookbus_inproc(project, "manifest", "--host", "claude")
    assert hooks["hooks"] == json.loads(settings.stdout)["hooks"]
    assert {"SessionStart", "PreToolUse", "Stop"} <= set(hooks["hooks"])
    assert not (folder(project) / "hooks" / "spawn.js").exists()
    assert not (project / ".claude" / "settings.json").exists()


def test_the_guard_brings_the_module_with_the_guard_command_baked_in(project: Path) -> None:
    """With ``enable = ["guard"]``, hooks.json names ./spawn.js under modules, and the
    module runs this interpreter's hookbus ``guard --json`` by path, with its wait."""
    (project / ".hookbus.toml").write_text('enable = ["guard"]\n')
    index = compiled_index(config_files("project"))
    plan = manifest.plan(index, python=sys.executable, scope="project", project_dir=str(project))
    files = {Path(f.path).name: f.text for f in plan.owned}
    assert sorted(files) == ["hooks.json", "plugin.json", "spawn.js"]
    assert json.loads(files["hooks.json"])["modules"] == ["./spawn.js"]
    module = files["spawn.js"]
    assert module.startswith(
        f"// {OWNED_MARK}: written by 'hookbus install --host claude --plugin'"
    )
    argv = guard_argv(sys.executable)
    assert argv[:3] == [sys.executable, "-E", "-P"] and argv[4:] == ["guard", "--json"]
    assert Path(argv[3]).name == "__main__.py" and Path(argv[3]).is_file()
    assert f"const ARGV = {json.dumps(argv)}\n" in module
    assert f"const WAIT_MS = {GUARD_WAIT_MS}\n" in module
    assert "@@" not in module
    assert any("2.1.289 or later" in note for note in plan.notes)


def test_the_guard_installs_and_uninstalls_through_the_cli(project: Path) -> None:
    """``enable = ["guard"]``, installed with --plugin: the module is written, and the
    PreToolUse hook for the spawn tools; uninstall removes all three files."""
    (project / ".hookbus.toml").write_text('enable = ["guard"]\n')
    before = snapshot(project)
    done = hookbus_cli(project, "install", "--host", "claude", "--plugin")
    assert done.returncode == 0, done.stderr
    hooks = read_json(folder(project) / "hooks" / "hooks.json")
    assert hooks["modules"] == ["./spawn.js"]
    assert (folder(project) / "hooks" / "spawn.js").is_file()
    assert "Agent" in hooks["hooks"]["PreToolUse"][0]["matcher"]
    assert "note: the plugin needs Claude Code 2.1.289 or later" in done.stdout
    assert hookbus_cli(project, "uninstall", "--host", "claude", "--plugin").returncode == 0
    assert snapshot(project) == before


def test_install_twice_is_the_same_and_uninstall_keeps_the_users_files(project: Path) -> None:
    """The second install writes nothing; uninstall removes hookbus's files and the folders
    it made, and leaves the user's own file in the plugin folder, and their settings."""
    settings = project / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text('{"model": "sonnet"}\n')
    before = snapshot(project)
    assert hookbus_inproc(project, "install", "--host", "claude", "--plugin").returncode == 0
    once = snapshot(project)
    again = hookbus_inproc(project, "install", "--host", "claude", "--plugin")
    assert again.returncode == 0 and "already up to date" in again.stdout
    assert snapshot(project) == once
    assert settings.read_text() == '{"model": "sonnet"}\n'
    assert hookbus_inproc(project, "verify", "--host", "claude", "--plugin").returncode == 0
    theirs = folder(project) / "NOTES.md"
    theirs.write_text("mine\n")
    done = hookbus_inproc(project, "uninstall", "--host", "claude", "--plugin")
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in folder(project).iterdir()) == ["NOTES.md"]
    theirs.unlink()
    folder(project).rmdir()
    folder(project).parent.rmdir()  # skills/, kept for the user's file
    assert snapshot(project) == before


def test_uninstall_removes_the_folders_install_made(project: Path) -> None:
    """Nothing of the user's in .claude/: uninstall leaves the project as it found it."""
    before = snapshot(project)
    assert hookbus_inproc(project, "install", "--host", "claude", "--plugin").returncode == 0
    assert hookbus_inproc(project, "uninstall", "--host", "claude", "--plugin").returncode == 0
    assert snapshot(project) == before


def test_a_file_of_the_users_at_a_planned_path_is_refused(project: Path) -> None:
    """A hooks.json hookbus did not write stops the install, and nothing is written."""
    theirs = folder(project) / "hooks" / "hooks.json"
    theirs.parent.mkdir(parents=True)
    theirs.write_text('{"hooks": {}}\n')
    done = hookbus_inproc(project, "install", "--host", "claude", "--plugin")
    assert done.returncode == 1
    assert "not written by hookbus" in done.stderr
    assert theirs.read_text() == '{"hooks": {}}\n'
    assert not (folder(project) / ".claude-plugin").exists()


def test_dry_run_writes_nothing(project: Path) -> None:
    """--dry-run says what it would write, and writes nothing."""
    done = hookbus_inproc(project, "install", "--host", "claude", "--plugin", "--dry-run")
    assert done.returncode == 0, done.stderr
    assert "would write" in done.stdout
    assert not (project / ".claude").exists()


def test_user_scope_is_the_users_skills_folder(project: Path, tmp_path: Path) -> None:
    """--scope user writes ~/.claude/skills/hookbus/, the folder Claude auto-loads in every
    session."""
    (tmp_path / "xdg-config" / "hookbus").mkdir(parents=True)
    (tmp_path / "xdg-config" / "hookbus" / "config.toml").write_text(
        f'python_path = ["{project}"]\n' + (project / ".hookbus.toml").read_text()
    )  # the user config names hooks_mod, in the project's folder
    done = hookbus_inproc(project, "install", "--host", "claude", "--plugin", "--scope", "user")
    assert done.returncode == 0, done.stdout + done.stderr
    home = Path(os.environ["HOME"])
    assert plugin_dir("user") == str(home / ".claude" / "skills" / "hookbus")
    assert (home / ".claude" / "skills" / "hookbus" / "hooks" / "hooks.json").is_file()


@pytest.mark.parametrize(
    ("args", "said"),
    [(("--host", "codex", "--plugin"), "--plugin is for --host claude only"),
     (("--host", "claude", "--plugin", "--scope", "local"), "claude has no local settings")],
)  # fmt: skip
def test_plugin_refuses_what_it_cannot_do(project: Path, args: tuple[str, ...], said: str) -> None:
    """--plugin is Claude's alone, and a plugin folder has no local scope."""
    done = hookbus_inproc(project, "install", *args)
    assert done.returncode == 1
    assert said in done.stderr


def test_doctor_sees_the_plugin_and_does_not_advise_installing_the_settings(
    project: Path,
) -> None:
    """Installed with --plugin only: doctor reports the plugin folder installed, exits 0,
    and advises no 'install --host claude', which would run every handler twice."""
    assert hookbus_inproc(project, "install", "--host", "claude", "--plugin").returncode == 0
    proc = hookbus_inproc(project, "doctor", "--json")
    assert proc.returncode == 0, proc.stdout
    report = json.loads(proc.stdout)
    installs = next(h for h in report["hosts"] if h["host"] == "claude")["installs"]
    (plugin,) = [i for i in installs if i["installed"]]
    assert (plugin["variant"], plugin["scope"], plugin["file"]) == (
        "plugin", "project", str(folder(project)))  # fmt: skip
    assert plugin["drift"] == []
    assert not [n for n in report["notes"] if n["area"] == "claude"]
    text = hookbus_inproc(project, "doctor").stdout
    assert "install --host claude" not in text
    assert f"{folder(project)} (plugin)" in text


def test_doctor_names_a_plugin_beside_the_settings_as_a_problem(
    project: Path, tmp_path: Path
) -> None:
    """Both installed (the settings entries, and a plugin copied in by hand): doctor exits
    1 and names the plugin, and the command that removes it."""
    assert hookbus_inproc(project, "install", "--host", "claude", "--plugin").returncode == 0
    shutil.copytree(folder(project), tmp_path / "kept")
    assert hookbus_inproc(project, "uninstall", "--host", "claude", "--plugin").returncode == 0
    assert hookbus_inproc(project, "install", "--host", "claude").returncode == 0
    shutil.copytree(tmp_path / "kept", folder(project))
    proc = hookbus_inproc(project, "doctor", "--json")
    assert proc.returncode == 1
    (problem,) = json.loads(proc.stdout)["problems"]
    assert problem["subject"] == str(folder(project))
    assert "runs both" in problem["message"]
    assert problem["fix"] == (
        "run: hookbus uninstall --host claude --plugin (keeps the settings entries)")  # fmt: skip


@pytest.mark.parametrize(
    ("first", "then"),
    [(("--plugin",), ()), ((), ("--plugin",))],
    ids=["settings-after-plugin", "plugin-after-settings"],
)
def test_install_refuses_a_second_way_that_would_run_every_handler_twice(
    project: Path, first: tuple[str, ...], then: tuple[str, ...]
) -> None:
    """With the plugin installed, installing the settings (or the other way round) is
    refused, nothing is written, and the message names the command that switches."""
    assert hookbus_inproc(project, "install", "--host", "claude", *first).returncode == 0
    before = snapshot(project)
    done = hookbus_inproc(project, "install", "--host", "claude", *then)
    assert done.returncode == 1
    assert "every handler would run twice" in done.stderr
    assert (
        f"'hookbus uninstall --host claude{''.join(' ' + f for f in first)}' first" in done.stderr
    )
    assert snapshot(project) == before


def test_verify_of_the_settings_names_the_plugins_verify(project: Path) -> None:
    """Installed as a plugin only, 'verify --host claude' does not list every event as
    missing and advise an install: it names 'verify --host claude --plugin'."""
    assert hookbus_inproc(project, "install", "--host", "claude", "--plugin").returncode == 0
    done = hookbus_inproc(project, "verify", "--host", "claude")
    assert done.returncode == 1
    assert "missing" not in done.stdout
    assert "run 'hookbus verify --host claude --plugin'" in done.stderr


def test_a_plain_uninstall_removes_the_plugin_too(project: Path) -> None:
    """'uninstall --host claude' removes the plugin of its scope as well: the project is
    as it was."""
    before = snapshot(project)
    assert hookbus_inproc(project, "install", "--host", "claude", "--plugin").returncode == 0
    done = hookbus_inproc(project, "uninstall", "--host", "claude")
    assert done.returncode == 0, done.stderr
    assert f"{folder(project)}/hooks/hooks.json: removed" in done.stdout
    assert snapshot(project) == before


def test_a_plain_uninstall_names_the_command_for_a_plugin_of_another_scope(
    project: Path, tmp_path: Path
) -> None:
    """A user-scope plugin outlives a project uninstall; the uninstall names the command
    that removes it."""
    (tmp_path / "xdg-config" / "hookbus").mkdir(parents=True)
    (tmp_path / "xdg-config" / "hookbus" / "config.toml").write_text(
        f'python_path = ["{project}"]\n' + (project / ".hookbus.toml").read_text()
    )
    done = hookbus_inproc(project, "install", "--host", "claude", "--plugin", "--scope", "user")
    assert done.returncode == 0, done.stderr
    done = hookbus_inproc(project, "uninstall", "--host", "claude")
    assert done.returncode == 0, done.stderr
    user = Path(os.environ["HOME"]) / ".claude" / "skills" / "hookbus"
    assert (user / "hooks" / "hooks.json").is_file()
    assert (f"{user}: hookbus's plugin is still installed for claude; 'hookbus uninstall "
            "--host claude --plugin --scope user' removes it") in done.stdout  # fmt: skip


def test_verify_of_a_drifted_plugin_names_the_plugins_install(project: Path) -> None:
    """The plugin's files differ from the configuration: verify --plugin's fix is
    'install --host claude --plugin', not the settings install (which would refuse)."""
    assert hookbus_inproc(project, "install", "--host", "claude", "--plugin").returncode == 0
    (project / ".hookbus.toml").write_text('enable = ["hooks_mod:shell"]\n')
    done = hookbus_inproc(project, "verify", "--host", "claude", "--plugin")
    assert done.returncode == 1
    assert "fix: run: hookbus install --host claude --plugin" in done.stdout
