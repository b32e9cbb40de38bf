"""Configuration files: discovery, merging, and what happens to bad parts."""

from __future__ import annotations

from pathlib import Path

import pytest

from hookbus.local.discover import config_paths
from hookbus.runtime.config import load


def write(path: Path, text: str) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return str(path)


def test_project_config_is_found_above_the_working_directory(tmp_path: Path) -> None:
    """The nearest .hookbus.toml at or above the cwd is the project's."""
    project = write(tmp_path / "repo" / ".hookbus.toml", "")
    nested = tmp_path / "repo" / "src" / "pkg"
    nested.mkdir(parents=True)
    assert config_paths(str(nested)) == [project]


def test_user_config_comes_first_and_hookbus_config_replaces_both(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """User config has the lowest precedence; HOOKBUS_CONFIG is the only file when set."""
    user = write(tmp_path / "xdg-config" / "hookbus" / "config.toml", "")
    project = write(tmp_path / "repo" / ".hookbus.toml", "")
    assert config_paths(str(tmp_path / "repo")) == [user, project]
    monkeypatch.setenv("HOOKBUS_CONFIG", str(tmp_path / "other.toml"))
    assert config_paths(str(tmp_path / "repo")) == []  # named but missing: said, not read
    write(tmp_path / "other.toml", "")
    assert config_paths(str(tmp_path / "repo")) == [str(tmp_path / "other.toml")]


def test_files_merge_in_precedence_order(tmp_path: Path) -> None:
    """Later files override the budget and add handlers; a project may not disable a
    handler the user's own configuration enables, nor change its settings or options
    (the agent can write the project's file: ``limit``, or ``words = []``, would weaken
    a guard as surely as switching it off), and says so."""
    user = write(
        tmp_path / "user.toml",
        """
budget = 2.0
enable = ["a:one", "a:two"]
[handlers."a:one"]
limit = 1
timeout = 3
""",
    )
    project = write(
        tmp_path / "p" / ".hookbus.toml",
        """
budget = 1.0
enable = ["a:three"]
disable = ["a:two"]
[handlers."a:one"]
limit = 5
""",
    )
    loaded = load([user, project])
    settings = loaded.settings
    assert [p.problem for p in loaded.problems] == [
        "disable 'a:two' ignored: your user configuration enables it, and a project cannot "
        "switch it off",
        "[handlers.'a:one'] ignored: your user configuration enables this handler, and a "
        "project cannot change its settings (set them in your user configuration)",
    ]
    assert settings.budget == 1.0
    assert [h.name for h in settings.handlers] == ["a:one", "a:two", "a:three"]
    one = settings.handlers[0].settings
    assert (one.options, one.timeout) == ({"limit": 1}, 3)
    # Each file's own folder is importable: handler modules live next to their config.
    assert settings.python_path == (str(tmp_path), str(tmp_path / "p"))


def test_invalid_values_are_reported_and_defaults_kept(tmp_path: Path) -> None:
    """A wrong type or unknown key is a problem naming the file; valid keys still count."""
    path = write(
        tmp_path / "c.toml",
        """
budget = -1
colour = "blue"
enable = ["a:one", "ghost"]
[handlers."a:one"]
timeout = "soon"
x = 1
[handlers."a:orphan"]
y = 2
""",
    )
    loaded = load([path])
    messages = [p.problem for p in loaded.problems]
    assert all(p.source == path for p in loaded.problems)
    assert any("budget must be positive" in m for m in messages)
    assert any("colour" in m for m in messages)
    assert any("unknown handler 'ghost'" in m for m in messages)
    assert any("timeout" in m for m in messages)
    assert any("'a:orphan'" in m and "not enabled" in m for m in messages)
    assert loaded.settings.budget == 5.0
    assert [h.name for h in loaded.settings.handlers] == ["a:one"]
    assert loaded.settings.handlers[0].settings.options == {"x": 1}


def test_unreadable_file_is_skipped_with_a_problem(tmp_path: Path) -> None:
    """A file that is not TOML contributes nothing but a problem report."""
    path = write(tmp_path / "bad.toml", "enable = [")
    loaded = load([path, str(tmp_path / "missing.toml")])
    assert loaded.settings.handlers == ()
    assert len(loaded.problems) == 2


def test_one_bad_item_keeps_the_rest_of_a_list_and_section(tmp_path: Path) -> None:
    """A non-name in ``enable`` or a bad ``timeout`` costs only itself."""
    path = write(
        tmp_path / "c.toml",
        """
enable = ["a:one", 7, "a:two"]
[handlers."a:one"]
timeout = "1.5"
fail_closed = true
""",
    )
    loaded = load([path])
    assert [h.name for h in loaded.settings.handlers] == ["a:one", "a:two"]
    one = loaded.settings.handlers[0].settings
    assert (one.fail_closed, one.timeout) == (True, None)
    assert len(loaded.problems) == 2


def test_project_search_stops_at_the_repository_root(tmp_path: Path) -> None:
    """A .hookbus.toml above the repository (a shared parent folder) is not the project's."""
    write(tmp_path / ".hookbus.toml", 'enable = ["evil:x"]')
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    (tmp_path / "repo" / "src").mkdir()
    assert config_paths(str(tmp_path / "repo" / "src")) == []


def test_a_configuration_anyone_could_write_is_ignored(
    tmp_path: Path, isolated_environment: Path
) -> None:
    """A world-writable .hookbus.toml is skipped with a diagnostic: it names code to run."""
    path = write(tmp_path / "p" / ".hookbus.toml", "")
    Path(path).chmod(0o666)
    assert config_paths(str(tmp_path / "p")) == []
    assert "config-ignored" in (isolated_environment / "diagnostics.jsonl").read_text()


def test_a_timeout_that_is_not_positive_finite_seconds_keeps_the_declared_one(
    tmp_path: Path,
) -> None:
    """``timeout = 0`` or ``-1`` (integers) and ``inf`` are refused like ``-1.5``: the
    handler keeps its declared timeout, rather than failing to load."""
    for value in ("0", "-1", "-1.5", "inf"):
        path = write(
            tmp_path / f"t{value}.toml",
            f'enable = ["a:one"]\n[handlers."a:one"]\ntimeout = {value}\n',
        )
        loaded = load([path])
        assert loaded.settings.handlers[0].settings.timeout is None, value
        assert any("positive finite seconds" in p.problem for p in loaded.problems), value


@pytest.mark.timeout(60)
def test_each_enabled_name_gets_its_line_in_one_pass_over_a_large_file(tmp_path: Path) -> None:
    """20 000 names in ``enable`` (a planted file): each handler's ``enabled_at`` is its
    own line, found in one pass (one search of the file per name took minutes, during
    which every hook of the project denied for want of an index)."""
    names = [f"mod{i}:handler" for i in range(20_000)]
    body = "enable = [\n" + "".join(f'  "{n}",  # "mod0:handler"\n' for n in names) + "]\n"
    path = write(tmp_path / "config.toml", body)
    refs = {ref.name: ref for ref in load([path]).settings.handlers}
    assert refs["mod0:handler"].settings.enabled_at == f"{path}:2"
    assert refs["mod19999:handler"].settings.enabled_at == f"{path}:20001"
