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
    # An exception whose message itself fails: said, not a failed compile.
    "unreadable message": ("class E(Exception):\n    def __str__(self): raise ValueError\n"
                           "raise E()", "guards.py:5:1: E: (its message could not be read)"),
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


def test_an_error_in_a_module_it_imports_is_placed_at_that_module_s_line(
    project: Path, isolated_environment: Path
) -> None:
    """A handler module importing one of the user's that fails: the line shown is the
    failing one, in that module, not the handler's import of it nor hookbus's."""
    (project / "helper.py").write_text("LIMIT = 3\nWORDS = undefined_words()\n")
    (project / "guards.py").write_text("import helper\n" + GUARDS)
    hookbus_cli(project, "doctor", env={"HOME": str(project.parent / "home")})
    [found] = logged(isolated_environment, "handler-unavailable")
    assert f"did not load: {project}/helper.py:2:9: NameError: name 'undefined_words'" in str(
        found["message"])  # fmt: skip


def typo(project: Path) -> Path:
    """``project``'s configuration with the guard's module misspelt, on its 3rd line."""
    config = project / ".hookbus.toml"
    config.write_text('budget = 3\nenable = [\n  "guardz:no_rm",\n]\n')
    return config


def deny_reason(project: Path, command: str = "ls", **env: str) -> str | None:
    """The reason of ``hookbus run --host claude``'s deny of a Bash ``command`` in
    ``project`` (None: no deny)."""
    from support import pre_tool

    proc = hookbus_cli(project, "run", "--host", "claude", env=env,
                       stdin=pre_tool(command, project).decode())  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    if not proc.stdout:
        return None
    out = json.loads(proc.stdout)["hookSpecificOutput"]
    assert out["permissionDecision"] == "deny"
    return str(out["permissionDecisionReason"])


def test_a_misspelt_handler_is_refused_naming_the_enable_line_and_the_fix(
    project: Path,
) -> None:
    """A handler misspelt in a trusted project's ``enable`` may be a guard, so every call
    is still denied; the deny says what failed, the file and line of the entry, and the
    edits that fix it (the name, or ``fail_closed = false``), then trust and doctor."""
    config = typo(project)
    reason = deny_reason(project)
    assert reason is not None
    for said in ("guardz:no_rm did not load: no module named 'guardz'",
                 f"(enabled at {config}:3)", "correct the name",
                 'add fail_closed = false to [handlers."guardz:no_rm"] in that file',
                 "then: hookbus trust", "hookbus doctor"):  # fmt: skip
        assert said in reason, reason
    assert "\n" not in reason and len(reason) < 400 + len(str(config))


def test_each_edit_the_deny_names_ends_it(project: Path) -> None:
    """Following the deny: ``fail_closed = false`` lets calls through (the handler is not
    a guard); correcting the name brings the real guard back."""
    config = typo(project)
    with config.open("a") as f:
        f.write('[handlers."guardz:no_rm"]\nfail_closed = false\n')
    assert deny_reason(project) is None
    config.write_text('budget = 3\nenable = [\n  "guards:no_rm",\n]\n')
    assert deny_reason(project) is None
    assert deny_reason(project, "rm -rf /") == "no rm -rf"


def test_the_fix_of_a_users_handler_names_the_users_file(project: Path, tmp_path: Path) -> None:
    """A handler misspelt in the user's configuration: the deny points at that file's
    line, and asks for no trust (the user's file needs none)."""
    (project / ".hookbus.toml").unlink()
    user = tmp_path / "xdg-config" / "hookbus" / "config.toml"
    user.parent.mkdir(parents=True)
    user.write_text('enable = ["guardz:no_rm"]\n')
    reason = deny_reason(project)
    assert reason is not None and f"(enabled at {user}:1)" in reason, reason
    assert "hookbus trust" not in reason


def test_the_index_refusal_the_client_and_shims_answer_names_it_too(project: Path) -> None:
    """The refusals compiled into the index (what the warm server's client, the shims
    and the watchdog answer when no worker does) lead with the handler that did not
    load, as the stand-in's deny does: one text, from one place."""
    from hookbus.runtime.compile import compile_index

    config = typo(project)
    data = compile_index([str(config)]).data
    owed = json.loads(data["refusals"]["claude"]["PreToolUse"]["stdout"])
    reason = owed["hookSpecificOutput"]["permissionDecisionReason"]
    assert reason == deny_reason(project)


def test_verify_in_the_typo_state_leads_with_the_problem_not_install(project: Path) -> None:
    """``verify`` after the typo: the configuration's problem with its line and fix, the
    events the unknown handler makes missing in one line, and no advice to run
    ``install`` (which refuses while the problem stands)."""
    env = {"HOME": str(project.parent / "home")}
    assert hookbus_cli(project, "install", "--host", "claude", env=env).returncode == 0
    config = typo(project)
    proc = hookbus_cli(project, "verify", "--host", "claude", env=env)
    assert proc.returncode == 1
    assert f"guardz:no_rm: did not load: no module named 'guardz' (enabled at {config}:3)" in (
        proc.stderr)  # fmt: skip
    assert "fail_closed = false" in proc.stderr
    missing = [line for line in proc.stdout.splitlines() if "missing:" in line]
    assert len(missing) == 1 and "UserPromptSubmit, " in missing[0], proc.stdout
    assert "hookbus install" not in proc.stdout + proc.stderr
    assert "fix: fix the configuration's 1 problem (above) first" in proc.stdout


def test_doctor_in_the_typo_state_leads_with_the_problem_not_install(project: Path) -> None:
    """``doctor`` after the typo says the same as ``verify``: the configuration's problem
    first, the drift it causes with the missing events in one line, and no advice to run
    ``install``, which refuses while the problem stands."""
    env = {"HOME": str(project.parent / "home")}
    assert hookbus_cli(project, "install", "--host", "claude", env=env).returncode == 0
    config = typo(project)
    proc = hookbus_cli(project, "doctor", env=env)
    assert proc.returncode == 1
    problems = [line for line in proc.stdout.splitlines() if line.startswith("problem: ")]
    assert f"(enabled at {config}:3)" in problems[0], proc.stdout
    assert "install refuses until then" in proc.stdout, proc.stdout
    assert "hookbus install --host claude" not in proc.stdout, proc.stdout
    missing = [line for line in proc.stdout.splitlines() if "missing:" in line]
    assert len(missing) == 2 and all("UserPromptSubmit, " in m for m in missing), proc.stdout
