"""``hookbus uninstall`` gives back exactly what was there, for every host whose hooks
live in a settings file of the user's (the shared atomic write with its backup): after
installs that changed the configuration and the command form, the file byte for byte
(or no file, when there was none), no backup left, no folder install made."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from support import SHELL_AND_LIFECYCLE, hookbus_cli, hookbus_inproc, snapshot

from hookbus.hosts import HOSTS
from hookbus.hosts import manifest as load
from hookbus.hosts.shared import documents
from hookbus.hosts.shared.manifest import Manifest, Scope

#: The configuration: a shell guard and a lifecycle handler, then the guard alone.
BOTH = 'python_path = ["."]\nenable = ["hooks_mod:shell", "hooks_mod:lifecycle"]\n'
GUARD_ONLY = 'python_path = ["."]\nenable = ["hooks_mod:shell"]\n'
#: Flags a host needs for its hooks to go into its settings file (Hermes's default is
#: its plugin, whose ``config.yaml`` entry no reinstall changes).
INTO_SETTINGS = {"hermes": ("--via", "hooks")}


def scope_of(manifest: Manifest) -> Scope:
    """The scope install writes by default: the project's, else the host's only one."""
    return "project" if "project" in manifest.scopes else next(iter(manifest.scopes))


#: Every host install merges entries into a settings file for.
DOCUMENT_HOSTS = sorted(
    host for host, facts in HOSTS.items()
    if facts.manifest and load(host).plan(None, python=sys.executable,
                                          scope=scope_of(load(host))).documents
)  # fmt: skip


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """A project enabling a shell guard and a lifecycle handler (named by
    ``HOOKBUS_CONFIG``: the same configuration for every scope), and a home folder."""
    project = tmp_path / "proj"
    project.mkdir()
    (project / "hooks_mod.py").write_text(SHELL_AND_LIFECYCLE)
    config = project / ".hookbus.toml"
    config.write_text(BOTH)
    monkeypatch.setenv("HOOKBUS_CONFIG", str(config))
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for variable in ("HERMES_HOME", "KIMI_SHARE_DIR", "CODEX_HOME", "GEMINI_CLI_HOME"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.chdir(project)
    return project, home


def _renamed(value: Any) -> Any:
    """``value`` with every string naming hookbus replaced by the user's own command."""
    if isinstance(value, dict):
        return {k: _renamed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_renamed(v) for v in value]
    return "./mine.sh" if isinstance(value, str) and "hookbus" in value else value


def users_own_file(host: str, project: Path) -> tuple[Path, bytes]:
    """The settings file of ``host`` and a text of it the user wrote: hooks of their own
    in the host's shape (hookbus's entries with every word of hookbus's replaced), in a
    layout of theirs (compact JSON, no final newline; a comment atop TOML and YAML)."""
    from hookbus.install.plan import compiled_index, config_files
    from hookbus.install.write import holds_ours

    manifest = load(host)
    scope = scope_of(manifest)
    via = {"via": "hooks"} if host in INTO_SETTINGS else {}
    plan = manifest.plan(compiled_index(config_files(scope)), python=sys.executable,
                         scope=scope, project_dir=str(project), **via)  # fmt: skip
    (document,) = plan.documents
    codec = documents.CODECS[document.format]
    theirs = manifest.merge(codec.load(""), _renamed(document.entries))
    if document.format == "json":
        text = json.dumps(theirs, separators=(",", ":"))
    else:
        text = "# mine, by hand\n" + documents.dump(theirs, document.format)
    assert not holds_ours(manifest, codec.load(text))
    return Path(document.path), text.encode()


@pytest.mark.parametrize("start", ["no file", "the user's hooks"])
@pytest.mark.parametrize("host", DOCUMENT_HOSTS)
def test_uninstall_after_changed_reinstalls_gives_back_what_was_there(
    world: tuple[Path, Path], host: str, start: str
) -> None:
    """Install, reinstall with one handler fewer, reinstall in another command form,
    uninstall: the project and home folders are as they were, byte for byte (a changed
    reinstall backed up hookbus's own file, which uninstall then gave back)."""
    project, home = world
    if start == "the user's hooks":
        path, original = users_own_file(host, project)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(original)
    before = snapshot(project), snapshot(home)
    flags = INTO_SETTINGS.get(host, ())
    assert hookbus_cli(project, "install", "--host", host, *flags).returncode == 0
    (project / ".hookbus.toml").write_text(GUARD_ONLY)
    changed = hookbus_cli(project, "install", "--host", host, *flags)
    assert changed.returncode == 0, changed.stderr
    form = hookbus_cli(project, "install", "--host", host, *flags, "--command", "path")
    assert form.returncode == 0, form.stderr
    done = hookbus_cli(project, "uninstall", "--host", host)
    assert done.returncode == 0, done.stderr
    (project / ".hookbus.toml").write_text(BOTH)
    assert (snapshot(project), snapshot(home)) == before, done.stdout


def test_a_backup_holding_hookbus_entries_is_no_original(world: tuple[Path, Path]) -> None:
    """A backup an earlier version made of hookbus's own file (on a changed reinstall) is
    not given back as the user's: uninstall removes the file install created, and it."""
    project, _ = world
    assert hookbus_inproc(project, "install", "--host", "claude").returncode == 0
    settings = project / ".claude" / "settings.json"
    backup = settings.with_name("settings.json.hookbus-backup")
    backup.write_bytes(settings.read_bytes())
    done = hookbus_inproc(project, "uninstall", "--host", "claude")
    assert done.returncode == 0, done.stderr
    assert "hookbus created it" in done.stdout
    assert not (project / ".claude").exists()


@pytest.mark.parametrize(("host", "folder"), [("claude", ".claude"), ("cline", ".clinerules"),
                                              ("pi", ".pi"), ("opencode", ".opencode")])  # fmt: skip
def test_a_folder_the_user_had_stays_though_empty(
    world: tuple[Path, Path], host: str, folder: str
) -> None:
    """Uninstall removes only folders install made: the user's own empty one stays."""
    project, home = world
    (project / folder).mkdir()
    before = snapshot(project), snapshot(home)
    assert hookbus_inproc(project, "install", "--host", host).returncode == 0
    done = hookbus_inproc(project, "uninstall", "--host", host)
    assert done.returncode == 0, done.stderr
    assert (snapshot(project), snapshot(home)) == before, done.stdout
