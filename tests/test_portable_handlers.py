"""The bus and the handlers are portable: no module of ``hookbus/bus/`` or
``hookbus/handlers/`` names a host or imports a host's module (issue 27). What a handler
needs to know of a host is a capability the host's driver declares."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import hookbus
from hookbus.hosts import NAMES

PACKAGE = Path(hookbus.__file__).parent
PORTABLE = ("bus", "handlers")


def _modules() -> list[Path]:
    return sorted(p for folder in PORTABLE for p in (PACKAGE / folder).rglob("*.py"))


def host_mentions(source: str) -> list[str]:
    """Each string constant of ``source`` that is a host's name, or a ``host/tool`` key,
    and each import of :mod:`hookbus.hosts`, as ``line: what``. A string that only
    begins like a host's name (Anthropic's model ids begin ``claude-``) is not one."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if node.value in NAMES or node.value.partition("/")[0] in NAMES:
                found.append(f"{node.lineno}: the string {node.value!r}")
        elif isinstance(node, ast.Import):
            found += [f"{node.lineno}: import {a.name}" for a in node.names
                      if a.name == "hookbus.hosts" or a.name.startswith("hookbus.hosts.")]  # fmt: skip
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            names = [a.name for a in node.names]
            if module == "hookbus.hosts" or module.startswith("hookbus.hosts."):
                found.append(f"{node.lineno}: from {module} import {', '.join(names)}")
            elif module == "hookbus" and "hosts" in names:
                found.append(f"{node.lineno}: from hookbus import hosts")
    return sorted(found, key=lambda line: int(line.partition(":")[0]))


def test_the_checker_tells_a_host_name_from_a_model_id_prefix() -> None:
    """The check flags a host's name, a ``host/tool`` key and an import of a host module,
    and not a string that merely starts like a host's name."""
    source = (
        'A = "claude"\nB = "opencode/task"\nC = "claude-"\nD = "claude-sonnet-4-5"\n'
        "import hookbus.hosts.codex.driver\nfrom hookbus import hosts\n"
        "from hookbus.hosts import HOSTS\n"
    )
    assert host_mentions(source) == [
        "1: the string 'claude'",
        "2: the string 'opencode/task'",
        "5: import hookbus.hosts.codex.driver",
        "6: from hookbus import hosts",
        "7: from hookbus.hosts import HOSTS",
    ]


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_host_name_in_the_bus_or_the_handlers(path: Path) -> None:
    """No module of the bus or of the built-in handlers names a host or imports one."""
    assert host_mentions(path.read_text(encoding="utf-8")) == []
