"""The subscription index: routes per host, matching on the cold path, cache freshness."""

from __future__ import annotations

import os
from pathlib import Path

from hookbus import index

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
    compiled = index.load(str(root))
    routes = compiled["routes"]["claude"]  # type: ignore[index]
    assert sorted(routes) == ["Notification", "PostToolUse", "PreSkillShellCommand", "PreToolUse"]
    wanted = lambda native, tool: index.wanted(compiled, "claude", native, tool)  # noqa: E731
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
    compiled = index.build([str(root / ".hookbus.toml")])
    assert index.wanted(compiled, "claude", "PreToolUse", "CronCreate") == [0]
    assert index.wanted(compiled, "claude", "PreToolUse", "Bash") == []
    assert index.wanted(compiled, "claude", "PreToolUse", "mcp__x__y") == []


def test_cache_is_reused_until_config_or_handler_changes(tmp_path: Path) -> None:
    """The compiled index is read back while fresh and rebuilt after an edit."""
    root = project(tmp_path, '["idx_handlers:edits"]')
    first = index.load(str(root), wait=30)
    path = Path(index.index_path([str(root / ".hookbus.toml")]))
    assert path.exists()
    built_at = path.stat().st_mtime_ns
    assert index.load(str(root), wait=30) == first
    assert path.stat().st_mtime_ns == built_at
    (handlers,) = root.glob("idx_*.py")
    handlers.write_text(HANDLERS + "\n# edited\n")
    os.utime(handlers, ns=(1, 2))
    assert index.load(str(root), wait=30)["watch"] != first["watch"]  # type: ignore[index]


def test_no_configuration_means_no_index(tmp_path: Path) -> None:
    """Without any configuration file nothing is subscribed and nothing is built."""
    assert index.load(str(tmp_path)) is None
    assert index.wanted(None, "claude", "PreToolUse", "Bash") == []


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
    first = index.load(str(root), wait=30)
    assert first is not None
    assert str(package / "impl.py") in [w[0] for w in first["watch"]]
