"""A handler that does not load, as a person meets it: why it failed as ``path:line:col:
message`` (not a Python repr), where it is enabled, and the edit that fixes it; in the
deny a host gets, in ``doctor``, in the diagnostics and in ``verify``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import hookbus_cli

GUARDS = """\
import hookbus

@hookbus.handler("before-tool", tools="shell", timeout=2, fail_closed=True)
def no_rm(event):
    if "rm -rf" in (event.tool.command or ""):
        return hookbus.Reply.deny("no rm -rf")
    return None
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A repository whose ``.hookbus.toml`` enables the fail-closed ``guards:no_rm``."""
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)  # discovery looks no higher
    (root / "guards.py").write_text(GUARDS)
    (root / ".hookbus.toml").write_text('enable = ["guards:no_rm"]\n')
    (tmp_path / "home").mkdir()
    return root


def logged(state: Path, code: str) -> list[dict[str, object]]:
    """The diagnostics of ``code`` in the log of the state folder ``state``."""
    log = state / "diagnostics.jsonl"
    lines = log.read_text().splitlines() if log.exists() else []
    return [d for d in map(json.loads, lines) if d["event"] == code]


#: A broken line put into guards.py (as its 3rd line), and how it is shown.
BROKEN = {
    "syntax error": ("def broken(:", "guards.py:3:12: invalid syntax"),
    "import error": ("import requestz", "guards.py:3:1: ModuleNotFoundError: No module named "
                     "'requestz'"),
    "name error": ("x = undefined + 1", "guards.py:3:5: NameError: name 'undefined' is not "
                   "defined"),
}  # fmt: skip


@pytest.mark.parametrize("broken", sorted(BROKEN))
def test_a_module_that_fails_at_import_is_shown_as_path_line_col_message(
    project: Path, isolated_environment: Path, broken: str
) -> None:
    """A handler module that raises at import is shown as ``path:line:col: message``, in
    ``doctor`` and in the diagnostics alike, never as the exception's repr."""
    line, shown = BROKEN[broken]
    source = GUARDS.splitlines(keepends=True)
    (project / "guards.py").write_text("".join([*source[:2], line + "\n", *source[2:]]))
    doctor = hookbus_cli(project, "doctor", env={"HOME": str(project.parent / "home")})
    assert f"{project}/{shown}" in doctor.stdout, doctor.stdout
    [found] = logged(isolated_environment, "handler-unavailable")
    assert f"{project}/{shown}" in str(found["message"])
    for said in (doctor.stdout, str(found["message"])):
        assert "Error(" not in said
