"""``hookbus doctor``: a healthy install exits 0; each way a hook would misbehave exits 1
and is named."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from support import hookbus_inproc

HANDLERS = """
import hookbus

@hookbus.handler("before-tool", tools="shell", timeout=2, fail_closed=True)
def guard(event): ...

@hookbus.handler("session-end")
def bye(event): ...

@hookbus.handler("prompt-submit")
def prompt(event): ...
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A repository whose ``.hookbus.toml`` enables a guard and a session-end handler."""
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)  # discovery looks no higher
    (root / "doc_handlers.py").write_text(HANDLERS)
    (root / ".hookbus.toml").write_text('enable = ["doc_handlers:guard", "doc_handlers:bye"]\n')
    (tmp_path / "home").mkdir()
    return root


def hookbus(project: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """The CLI in ``project`` (in this process: :func:`support.hookbus_inproc`), with its
    own home (so ~/.claude is the test's own)."""
    return hookbus_inproc(project, *args, env={"HOME": str(project.parent / "home"), **env},
                          unset=("NO_COLOR", "FORCE_COLOR"))  # fmt: skip


def hookbus_process(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """:func:`hookbus` run as a process of its own, as a person runs it."""
    environ = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    environ.update(HOME=str(project.parent / "home"))
    return subprocess.run(
        [sys.executable, "-m", "hookbus", *args], cwd=project, env=environ,
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


def has_row(out: str, *cells: object) -> bool:
    """True when ``out`` has a table row with ``cells`` in order (columns padded)."""
    return re.search(" +".join(re.escape(str(c)) for c in cells), out) is not None


def installed(project: Path) -> Path:
    proc = hookbus(project, "install", "--host", "claude")
    assert proc.returncode == 0, proc.stderr
    return project / ".claude" / "settings.json"


def test_a_healthy_install_exits_0(project: Path) -> None:
    """Installed from this interpreter, with every handler loading: exit 0, and the
    installed file, the interpreter, the configuration and the handlers are shown."""
    settings = installed(project)
    proc = hookbus_process(project, "doctor")  # the real CLI, end to end
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    assert has_row(out, "project", settings, "server", "3 (PreToolUse")
    assert f"ok {sys.executable}" in out
    assert has_row(out, "in effect", project / ".hookbus.toml")
    assert has_row(out, "doc_handlers:guard", "before-tool", "yes", "ok")
    assert "ok: nothing would make a hook misbehave" in out
    assert "drift" not in out


def _missing_interpreter(project: Path, state: Path) -> None:
    settings = project / ".claude" / "settings.json"
    gone = str(project.parent / "gone" / "python3")
    settings.write_text(settings.read_text().replace(sys.executable, gone))


def _unloadable_handler(project: Path, state: Path) -> None:
    with (project / "doc_handlers.py").open("a") as f:
        f.write("\ndef broken(:\n")


def _foreign_owned_config(project: Path, state: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("giving a file to another user needs root")
    os.chown(project / ".hookbus.toml", 65534, 65534)


def _group_writable_state(project: Path, state: Path) -> None:
    state.chmod(0o770)


def _drift(project: Path, state: Path) -> None:
    (project / ".hookbus.toml").write_text(
        'enable = ["doc_handlers:guard", "doc_handlers:bye", "doc_handlers:prompt"]\n'
    )


def _old_form(project: Path, state: Path) -> None:
    """The commands as earlier versions wrote them: no ``--project`` for the client."""
    settings = project / ".claude" / "settings.json"
    text = settings.read_text()
    assert " --project CLAUDE_PROJECT_DIR: " in text
    settings.write_text(text.replace(" --project CLAUDE_PROJECT_DIR: ", " "))


def _invalid_toml(project: Path, state: Path) -> None:
    (project / ".hookbus.toml").write_text("enable = [\n")


BROKEN: list[tuple[Callable[[Path, Path], None], list[str]]] = [
    (_missing_interpreter, ["gone/python3 in the command is missing", "only the command's "
     "fallback: a refusal (deny) for PreToolUse", "no opinion for SessionEnd"]),
    (_unloadable_handler, ["doc_handlers:guard: did not load: ", "doc_handlers.py:13:12: "
                           "invalid syntax"]),
    (_foreign_owned_config, ["owned by uid 65534", "so it is not read", "chown/chmod"]),
    (_group_writable_state, ["is writable by group", "fix: chmod 700"]),
    (_drift, ["missing: UserPromptSubmit is not registered",
              "fix: run: hookbus install --host claude"]),
    (_old_form, ["changed: PreToolUse: its command differs",
                "fix: run: hookbus install --host claude"]),
    (_invalid_toml, [".hookbus.toml: config-invalid: unreadable", "TOMLDecodeError"]),
]  # fmt: skip


@pytest.mark.parametrize(("breaks", "named"), BROKEN, ids=[b.__name__[1:] for b, _ in BROKEN])
def test_each_broken_setup_exits_1_and_names_its_problem(
    project: Path, isolated_environment: Path, breaks: Callable[[Path, Path], None],
    named: list[str],
) -> None:  # fmt: skip
    """A setup broken after a good install exits 1, and the output says what is wrong."""
    installed(project)
    breaks(project, isolated_environment)
    proc = hookbus(project, "doctor")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    for words in named:
        assert words in proc.stdout, proc.stdout
    assert "Traceback" not in proc.stderr


def test_a_missing_interpreter_is_not_reported_as_drift(project: Path) -> None:
    """The entries are compared as if the command named a working interpreter: the
    missing one is one problem, not a difference in every entry."""
    installed(project)
    _missing_interpreter(project, Path())
    proc = hookbus(project, "doctor", "--json")
    report = json.loads(proc.stdout)
    (install,) = [i for i in report["hosts"][0]["installs"] if i["installed"]]
    assert install["drift"] == []
    assert [p["subject"] for p in report["problems"]] == [install["file"]]


def test_json_holds_the_facts_and_the_problems(project: Path) -> None:
    """``--json`` is one object: ok, problems, and every section's facts."""
    settings = installed(project)
    healthy = json.loads(hookbus(project, "doctor", "--json", "--host", "claude").stdout)
    assert (healthy["ok"], healthy["problems"]) == (True, [])
    assert {"notes", "hosts", "configuration", "handlers", "state", "diagnostics"} <= set(healthy)
    (host,) = healthy["hosts"]
    project_scope = host["installs"][0]
    assert (host["host"], project_scope["scope"], project_scope["file"]) == (
        "claude", "project", str(settings))  # fmt: skip
    assert project_scope["form"] == "server" and project_scope["entries"] == 3
    (interpreter,) = project_scope["interpreters"]
    assert (interpreter["program"], interpreter["ok"]) == (sys.executable, True)
    assert [(i["variant"], i["scope"]) for i in host["installs"] if not i["installed"]] == [
        ("default", "local"), ("default", "user"), ("plugin", "project"), ("plugin", "user")]  # fmt: skip
    assert healthy["configuration"] == {
        "in_effect": [str(project / ".hookbus.toml")], "ignored": []}  # fmt: skip
    guard = healthy["handlers"][0]
    assert (guard["name"], guard["kinds"], guard["fail_closed"], guard["loads"]) == (
        "doc_handlers:guard", ["before-tool"], True, True)  # fmt: skip
    assert (healthy["state"]["mode"], healthy["state"]["ok"]) == ("0700", True)
    _drift(project, Path())
    proc = hookbus(project, "doctor", "--json")
    broken = json.loads(proc.stdout)
    assert (proc.returncode, broken["ok"]) == (1, False)
    assert [p["area"] for p in broken["problems"]] == ["claude"]
    assert broken["problems"][0]["fix"] == "run: hookbus install --host claude"


def test_colour_only_when_asked_or_on_a_terminal(project: Path) -> None:
    """Piped output is plain text; FORCE_COLOR=1 paints it."""
    installed(project)
    assert "\033[" not in hookbus(project, "doctor").stdout
    assert "\033[" in hookbus(project, "doctor", FORCE_COLOR="1").stdout


def test_the_last_diagnostics_are_shown_and_a_bad_line_tolerated(
    project: Path, isolated_environment: Path
) -> None:
    """The log's last lines are shown, oldest first; one that is not JSON is shown as is."""
    installed(project)
    line = {"event": "handler-timeout", "level": "warning",
            "timestamp": "2026-01-02T03:04:05.000Z", "message": "guard took too long"}  # fmt: skip
    log = isolated_environment / "diagnostics.jsonl"
    log.write_text(json.dumps(line) + "\n{not json\n")
    log.chmod(0o600)
    proc = hookbus(project, "doctor")
    assert proc.returncode == 0, proc.stdout
    shown = proc.stdout.split("last diagnostics", 1)[1]
    assert has_row(shown, "2026-01-02T03:04:05.000Z", "handler-timeout", "guard took too long")
    assert "{not json" in shown and "'hookbus log' for more" in shown


def test_an_event_a_handler_wants_that_no_scope_registers_is_a_problem(
    project: Path, tmp_path: Path
) -> None:
    """A user-scope install for the user's own handler, and a project guard installed in
    no scope: each scope is up to date with its configuration, yet no hook runs the
    guard. Doctor names the events and the handler."""
    user_dir = tmp_path / "xdg-config" / "hookbus"
    user_dir.mkdir(parents=True)
    (user_dir / "mine.py").write_text(HANDLERS)
    (user_dir / "config.toml").write_text('enable = ["mine:prompt"]\n')
    proc = hookbus(project, "install", "--host", "claude", "--scope", "user")
    assert proc.returncode == 0, proc.stderr
    doctor = hookbus(project, "doctor")
    assert doctor.returncode == 1, doctor.stdout
    assert "PreToolUse" in doctor.stdout and "registered in no scope" in doctor.stdout
    [line] = [ln for ln in doctor.stdout.splitlines() if "registered in no scope" in ln]
    assert "doc_handlers:guard" in line and "never run" in line
    installed(project)
    assert hookbus(project, "doctor").returncode == 0


def test_a_one_host_user_reads_the_problems_first_and_the_other_hosts_once(
    project: Path,
) -> None:
    """Claude installed, its entries drifted: doctor's first line is the problem, the
    hosts not installed are one line, and the whole fits a screen; --all shows each of
    them with its files and its note."""
    installed(project)
    _drift(project, Path())
    proc = hookbus(project, "doctor")
    assert proc.returncode == 1, proc.stdout
    lines = proc.stdout.splitlines()
    assert lines[0].startswith(f"problem: {project / '.claude' / 'settings.json'}: ")
    assert lines[1] == "  fix: run: hookbus install --host claude"
    assert len(lines) <= 35, proc.stdout  # a screen; 170 lines before
    (absent,) = [line for line in lines if "codex" in line]
    assert absent.startswith("not installed for codex, gemini, ")
    assert "kilo" in absent and "claude" not in absent and "--all" in absent
    assert "not installed: enabled handlers want" not in proc.stdout
    every = hookbus(project, "doctor", "--all")
    assert every.returncode == 1
    assert has_row(every.stdout, "project", project / ".codex" / "hooks.json", "-", "not installed")
    assert "codex: not installed: enabled handlers want PreToolUse" in every.stdout
    assert "not installed for" not in every.stdout


def _installable() -> list[str]:
    from hookbus.hosts import HOSTS

    return [name for name, facts in HOSTS.items() if facts.manifest]


@pytest.mark.parametrize("host", _installable())
def test_doctor_sees_every_hosts_install(project: Path, tmp_path: Path, host: str) -> None:
    """Whatever a host's install writes (settings entries, hook files, a plugin or shim),
    doctor reports it installed, shows its table, and says nothing about it being absent."""
    # Hosts with only a user scope (Kimi, Hermes) follow the user's configuration.
    user = tmp_path / "xdg-config" / "hookbus"
    user.mkdir(parents=True)
    (user / "config.toml").write_text(
        f'python_path = ["{project}"]\n' + (project / ".hookbus.toml").read_text()
    )
    done = hookbus(project, "install", "--host", host, HOOKBUS_NPM="")
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(hookbus(project, "doctor", "--json").stdout)
    (seen,) = [h for h in report["hosts"] if h["host"] == host]
    assert any(i["installed"] for i in seen["installs"]), seen
    assert not [n for n in report["notes"] if n["area"] == host and "not installed" in n["message"]]
    lines = hookbus(project, "doctor").stdout.splitlines()
    assert host in lines
    (absent,) = [line for line in lines if line.startswith("not installed for ")]
    assert re.search(rf"\b{host}\b", absent) is None
