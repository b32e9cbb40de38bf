"""A project's install and uninstall never write or remove through a link leading out of
the project (an agent's ``.claude`` linked to the user's ``~/.claude``): they refuse,
changing nothing; removing the folders install made stays inside the scope's folder;
the user's own links (dotfiles) still work for the user scope."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from support import hookbus_inproc

from hookbus.hosts.shared import folders

ENABLE = 'enable = ["guard"]\n'


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """A home whose user configuration enables the guard, and a git project enabling it
    too."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("PI_CODING_AGENT_DIR", raising=False)
    user_config = Path(os.environ["XDG_CONFIG_HOME"]) / "hookbus" / "config.toml"
    user_config.parent.mkdir(parents=True)
    user_config.write_text(ENABLE)
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    (project / ".hookbus.toml").write_text(ENABLE)
    monkeypatch.chdir(project)
    return home, project


def tree(folder: Path) -> dict[str, tuple[str, bytes, int]]:
    """Every entry below ``folder``, links not followed: its kind, bytes (a link's
    target) and mode."""
    found = {}
    for path in sorted(folder.rglob("*")):
        st = path.lstat()
        if path.is_symlink():
            found[str(path)] = ("link", os.readlink(path).encode(), st.st_mode)
        elif path.is_dir():
            found[str(path)] = ("dir", b"", st.st_mode)
        else:
            found[str(path)] = ("file", path.read_bytes(), st.st_mode)
    return found


def install(project: Path, host: str, *flags: str) -> None:
    done = hookbus_inproc(project, "install", "--host", host, "--no-server", *flags)
    assert done.returncode == 0, done.stderr


def assert_refused(done: subprocess.CompletedProcess[str], link: Path, host: str) -> None:
    """Exit 1, saying the link, where it leads and the two ways out."""
    assert done.returncode == 1, (done.stdout, done.stderr)
    said = done.stderr
    assert f"{link} is a link to " in said, said
    assert "nothing changed" in said and f"rm {link}" in said, said
    assert f"--host {host} --scope user" in said, said


@pytest.mark.parametrize("scope", ["project", "local"])
@pytest.mark.parametrize("planted", ["folder", "file"])
def test_uninstall_in_the_project_refuses_a_link_to_the_users_claude(
    world: tuple[Path, Path], scope: str, planted: str
) -> None:
    """The project's .claude (or its settings file) replaced by a link into the user's
    ~/.claude: uninstall exits 1 and the user's folder is untouched, byte for byte."""
    home, project = world
    install(project, "claude", "--scope", "user")
    install(project, "claude", "--scope", scope)
    name = "settings.json" if scope == "project" else "settings.local.json"
    if planted == "folder":
        for path in (project / ".claude").iterdir():
            path.unlink()
        (project / ".claude").rmdir()
        link, target = project / ".claude", home / ".claude"
    else:
        (project / ".claude" / name).unlink()
        link, target = project / ".claude" / name, home / ".claude" / "settings.json"
    link.symlink_to(target)
    before = tree(home)
    done = hookbus_inproc(project, "uninstall", "--host", "claude", "--scope", scope)
    assert_refused(done, link, "claude")
    assert tree(home) == before
    assert (home / ".claude" / "settings.json").is_file()


@pytest.mark.parametrize("scope", ["project", "local"])
def test_install_in_the_project_refuses_to_write_through_the_link(
    world: tuple[Path, Path], scope: str
) -> None:
    """A project install where .claude links to the user's ~/.claude writes nothing
    there (the project's hooks would become the user's): exit 1, the folder unchanged."""
    home, project = world
    install(project, "claude", "--scope", "user")
    (project / ".claude").symlink_to(home / ".claude")
    before = tree(home), tree(project)
    for flags in ((), ("--dry-run",)):
        done = hookbus_inproc(project, "install", "--host", "claude", "--scope", scope, *flags)
        assert_refused(done, project / ".claude", "claude")
    assert (tree(home), tree(project)) == before


def test_a_hook_file_of_the_users_is_not_removed_through_a_link(
    world: tuple[Path, Path],
) -> None:
    """Pi's project extension folder linked to the user's: a project uninstall removes
    not the user's own hookbus.ts (a file hookbus owns), nor its folders."""
    home, project = world
    install(project, "pi", "--scope", "user")
    extensions = home / ".pi" / "agent" / "extensions"
    assert (extensions / "hookbus.ts").is_file()
    (project / ".pi").mkdir()
    (project / ".pi" / "extensions").symlink_to(extensions)
    before = tree(home)
    done = hookbus_inproc(project, "uninstall", "--host", "pi")
    assert_refused(done, project / ".pi" / "extensions", "pi")
    assert tree(home) == before


def test_a_link_inside_the_project_is_the_projects_own(world: tuple[Path, Path]) -> None:
    """A .claude linked to another folder of the same project is followed: install and
    uninstall work there, and the folder stays."""
    _, project = world
    (project / "config" / "claude").mkdir(parents=True)
    (project / ".claude").symlink_to(project / "config" / "claude")
    install(project, "claude")
    assert (project / "config" / "claude" / "settings.json").is_file()
    done = hookbus_inproc(project, "uninstall", "--host", "claude")
    assert done.returncode == 0, done.stderr
    assert not (project / "config" / "claude" / "settings.json").exists()
    assert (project / ".claude").is_symlink()


def test_the_users_claude_may_be_a_link(world: tuple[Path, Path]) -> None:
    """The user's ~/.claude a link into their dotfiles (stow): a user install writes the
    settings there, and uninstall gives the file back byte for byte, link and folder
    kept."""
    home, project = world
    dotfiles = home / "dotfiles" / "claude"
    dotfiles.mkdir(parents=True)
    (dotfiles / "settings.json").write_text('{"theme": "dark"}\n')
    (home / ".claude").symlink_to(dotfiles)
    before = tree(home)
    install(project, "claude", "--scope", "user")
    assert "hookbus" in (dotfiles / "settings.json").read_text()
    assert (home / ".claude").is_symlink()
    done = hookbus_inproc(project, "uninstall", "--host", "claude", "--scope", "user")
    assert done.returncode == 0, done.stderr
    assert tree(home) == before


def test_prune_stays_inside_its_bound(tmp_path: Path) -> None:
    """Folders hookbus made are removed up to the bound, never the bound itself nor a
    folder outside it."""
    project = tmp_path / "proj"
    folders.make(str(project / ".claude" / "skills"))  # proj made by hookbus too
    removed = folders.prune(str(project / ".claude" / "skills"), within=str(project))
    assert removed == [str(project / ".claude" / "skills"), str(project / ".claude")]
    assert project.is_dir()
    outside = tmp_path / "home" / ".claude"
    folders.make(str(outside))
    assert folders.prune(str(outside), within=str(project)) == []
    assert outside.is_dir()
