"""The subscription index: routes per host, matching on the cold path, cache freshness."""

from __future__ import annotations

import os
from pathlib import Path

from hookbus.local.discover import config_paths
from hookbus.runtime import compile as compiler
from hookbus.runtime import index

HANDLERS = """
import hookbus

@hookbus.handler("before-tool", tools=["shell", "mcp:github"])
def shell_and_github(event): ...

@hookbus.handler("after-edit")
def edits(event): ...

@hookbus.handler("before-tool", tools="other")
def odd_tools(event): ...

@hookbus.handler("other", natives="Notification")
def notes(event): ...
"""


def compiled(root: Path) -> index.Lookup:
    """Compile the index of ``root``'s configuration, cache it, and read it back."""
    files = config_paths(str(root))
    compiler.save(files, compiler.compile_index(files).data)
    lookup = index.read(files)
    assert lookup.fresh, lookup.problem
    return lookup


def project(tmp_path: Path, enable: str) -> Path:
    # A module name of its own per test: handler folders are appended to sys.path, so an
    # earlier test's module of the same name would be found first in this process.
    name = f"idx_{tmp_path.name.replace('-', '_')}"
    root = tmp_path / "proj"
    root.mkdir(exist_ok=True)
    (root / f"{name}.py").write_text(HANDLERS)
    (root / ".hookbus.toml").write_text(f"enable = {enable.replace('idx_handlers', name)}\n")
    return root


def test_routes_name_only_subscribed_events_and_tools(tmp_path: Path) -> None:
    """Each handler's kinds and tool kinds become native events and tool names."""
    root = project(
        tmp_path, '["idx_handlers:shell_and_github", "idx_handlers:edits", "idx_handlers:notes"]'
    )
    lookup = compiled(root)
    assert lookup.data is not None
    routes = lookup.data["routes"]["claude"]
    assert sorted(routes) == ["Notification", "PostToolUse", "PreSkillShellCommand", "PreToolUse"]
    wanted = lambda native, tool: lookup.wanted("claude", native, tool)  # noqa: E731
    assert wanted("PreToolUse", "Bash") == [0]
    assert wanted("PreToolUse", "mcp__github__search") == [0]
    assert wanted("PreToolUse", "mcp__gitlab__search") == []
    assert wanted("PreToolUse", "Read") == []
    assert wanted("PostToolUse", "Write") == [1]
    assert wanted("PostToolUse", "Bash") == []
    assert wanted("Notification", None) == [2]
    assert wanted("Stop", None) == []


def test_tool_kind_other_means_tools_the_driver_does_not_know(tmp_path: Path) -> None:
    """``other`` routes unknown tool names, not known or MCP ones."""
    root = project(tmp_path, '["idx_handlers:odd_tools"]')
    lookup = compiled(root)
    assert lookup.wanted("claude", "PreToolUse", "CronCreate") == [0]
    assert lookup.wanted("claude", "PreToolUse", "Bash") == []
    assert lookup.wanted("claude", "PreToolUse", "mcp__x__y") == []


def test_cache_is_fresh_until_config_or_handler_changes(tmp_path: Path) -> None:
    """A cached index reads back fresh, and stale (never as an answer) after an edit of a
    handler module or of the configuration, or under another hookbus version."""
    root = project(tmp_path, '["idx_handlers:edits"]')
    files = config_paths(str(root))
    first = compiled(root)
    (handlers,) = root.glob("idx_*.py")
    handlers.write_text(HANDLERS + "\n# edited\n")
    os.utime(handlers, ns=(1, 2))
    stale = index.read(files)
    assert stale.freshness == "stale"
    assert stale.data == first.data  # the old declarations still tell who the guards are
    assert stale.wanted("claude", "PostToolUse", "Write") == [0]
    assert index.read(files).fresh is False
    second = compiled(root)
    assert second.data is not None and first.data is not None
    assert second.data["watch"] != first.data["watch"]
    second.data["hookbus"] = "0.0.0-older"
    compiler.save(files, second.data)
    assert index.read(files).freshness == "stale"


def test_no_configuration_means_no_index(tmp_path: Path) -> None:
    """Without any configuration file nothing is subscribed and nothing is built."""
    lookup = index.read(config_paths(str(tmp_path)))
    assert lookup.fresh
    assert lookup.wanted("claude", "PreToolUse", "Bash") == []


def test_a_missing_or_refused_index_is_not_fresh(
    tmp_path: Path, isolated_environment: Path
) -> None:
    """No cache yet, or a state root another user could write: never fresh."""
    root = project(tmp_path, '["idx_handlers:edits"]')
    files = config_paths(str(root))
    assert index.read(files).freshness == "missing"
    compiled(root)
    isolated_environment.chmod(0o777)
    from hookbus.local import state

    state.forget()
    refused = index.read(files)
    assert refused.freshness == "refused"
    assert "writable by every user" in str(refused.problem)


def test_edits_to_modules_a_handler_imports_are_noticed(tmp_path: Path) -> None:
    """guards/__init__.py re-exporting guards/impl.py: an edit of impl.py recompiles."""
    root = tmp_path / "proj"
    package = root / f"guards_{tmp_path.name.replace('-', '_')}"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("from .impl import guard\n")
    (package / "impl.py").write_text(
        "import hookbus\n@hookbus.handler('stop')\ndef guard(event): ...\n"
    )
    (root / ".hookbus.toml").write_text(f'enable = ["{package.name}:guard"]\n')
    first = compiled(root)
    assert first.data is not None
    assert str(package / "impl.py") in [w[0] for w in first.data["watch"]]
