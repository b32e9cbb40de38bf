"""A Claude install run by Copilot stands aside for Copilot's own hookbus install, and
only when that install surely runs for the same event and tool."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import hookbus
from hookbus.hosts import HOSTS
from hookbus.hosts.shared.manifest import CLIENT_LAUNCHER
from hookbus.hosts.shared.native_install import (
    CLIENT_IMPORT,
    copilot_handles,
    grok_handles,
    is_hookbus,
    stands_aside,
)
from hookbus.local import project_trust

GOLDEN = Path(__file__).parent / "golden"
MAIN = str(Path(hookbus.__file__).with_name("__main__.py"))
#: The shape ``hookbus install --host copilot`` writes (absolute form), with real paths.
COMMAND = (f"if [ -x {sys.executable} ] && [ -f {MAIN} ]; then {sys.executable} -P {MAIN} run "
           "--host copilot --event {event} --timeout 10; s=$?; [ $s -ne 1 ] && [ $s -lt 126 ] "
           "&& exit $s; fi; exit 0")  # fmt: skip


def as_installed(path: Path, document: object) -> Path:
    """``document`` written at ``path`` as ``hookbus install`` writes a hooks file: its
    bytes recorded in the trust store (only those count, in a project)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document))
    project_trust.record_hook_file(str(path))
    return path


def copilot_install(folder: Path, entries: dict[str, list[dict[str, object]]]) -> Path:
    return as_installed(folder / ".github" / "hooks" / "hookbus.json",
                        {"version": 1, "hooks": entries})  # fmt: skip


def entry(event: str, matcher: str | None = None) -> dict[str, object]:
    found: dict[str, object] = {"type": "command", "bash": COMMAND.format(event=event)}
    if matcher is not None:
        found["matcher"] = matcher
    return found


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "proj" / ".git").mkdir(parents=True)  # the project search stops here
    return tmp_path / "proj"


NO_HOME = {"COPILOT_HOME": "/nonexistent/copilot-home"}


def test_the_copilot_file_of_the_same_event_is_found(project: Path) -> None:
    """hookbus's command for the camelCase name of a PascalCase event is found, whichever
    spelling is asked."""
    path = copilot_install(project, {"preToolUse": [entry("preToolUse")]})
    assert copilot_handles("PreToolUse", "Bash", str(project), NO_HOME) == str(path)
    assert copilot_handles("preToolUse", "bash", str(project), NO_HOME) == str(path)
    assert copilot_handles("Stop", None, str(project), NO_HOME) is None


def test_stop_is_agent_stop_and_the_user_scope_counts(project: Path, tmp_path: Path) -> None:
    """Stop is Copilot's agentStop; ``$COPILOT_HOME/hooks/hookbus.json`` counts too."""
    home = tmp_path / "copilot-home"
    path = home / "hooks" / "hookbus.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"hooks": {"agentStop": [entry("agentStop")]}}))
    env = {"COPILOT_HOME": str(home)}
    assert copilot_handles("Stop", None, str(project), env) == str(path)


@pytest.mark.parametrize(
    ("tool", "matcher", "handled"),
    [
        ("Bash", "^(?:bash|powershell)$", True),  # Claude's Bash is Copilot's bash
        ("Write", "^(?:create|edit)$", False),  # spelled differently: not sure, not aside
        ("Bash", "^(?:view)$", False),
        (None, "^(?:bash)$", False),
        ("Bash", "([", False),  # a matcher Copilot could not use either
    ],
)
def test_a_matcher_must_take_the_tool(
    project: Path, tool: str | None, matcher: str, handled: bool
) -> None:
    """With a matcher, the Copilot command counts only when it takes the tool."""
    copilot_install(project, {"preToolUse": [entry("preToolUse", matcher)]})
    assert (copilot_handles("PreToolUse", tool, str(project), NO_HOME) is not None) is handled


@pytest.mark.parametrize(
    "document",
    [
        "not json",
        json.dumps({"hooks": {"preToolUse": [{"type": "command", "bash": "my-own-hook"}]}}),
        json.dumps({"hooks": {"preToolUse": [entry("postToolUse")]}}),
        json.dumps({"hooks": {"preToolUse": [{**entry("preToolUse"), "type": "prompt"}]}}),
        json.dumps({"hooks": {"preToolUse": [COMMAND.format(event="preToolUse")]}}),
        json.dumps({"hooks": []}),
        json.dumps([]),
    ],
)
def test_anything_but_hookbuss_own_command_for_the_event_is_not_enough(
    project: Path, document: str
) -> None:
    """A user's hook, another event's command, a broken file: the Claude command does
    not stand aside (handled twice is a nuisance, never handled a hole in a guard)."""
    path = project / ".github" / "hooks" / "hookbus.json"
    path.parent.mkdir(parents=True)
    path.write_text(document)
    assert copilot_handles("PreToolUse", "Bash", str(project), NO_HOME) is None


def test_only_a_copilot_payload_reaching_another_hosts_command_stands_aside(
    project: Path,
) -> None:
    """Copilot's own command, and Claude's payload in Claude's command, never stand aside."""
    copilot_install(project, {"preToolUse": [entry("preToolUse")]})
    payload = {"cwd": str(project)}
    claude, copilot = HOSTS["claude"], HOSTS["copilot"]
    same = {"payload": payload, "environ": NO_HOME}
    assert stands_aside(claude, copilot, native="PreToolUse", tool="Bash", **same)
    assert not stands_aside(copilot, copilot, native="preToolUse", tool="bash", **same)
    assert not stands_aside(claude, claude, native="PreToolUse", tool="Bash", **same)


DENY_HANDLER = """
import hookbus

@hookbus.handler("before-tool", tools="shell")
def no(event):
    return hookbus.Reply.deny(f"no from {event.host}")
"""


def run_claude_command(
    project: Path, *, write_handler: bool = True
) -> subprocess.CompletedProcess[bytes]:
    if write_handler:
        (project / "guards_no.py").write_text(DENY_HANDLER)
    config = project / "no.toml"
    config.write_text('python_path = ["."]\nenable = ["guards_no:no"]\n')
    payload = json.loads((GOLDEN / "copilot/real/PreToolUse.Bash.claude-settings.json").read_text())
    payload["cwd"] = str(project)
    env = {**os.environ, **NO_HOME, "HOOKBUS_CONFIG": str(config),
           "HOOKBUS_STATE_DIR": str(project / "st")}  # fmt: skip
    env.pop("COPILOT_PROJECT_DIR", None)
    return subprocess.run([sys.executable, "-m", "hookbus", "run", "--host", "claude"],
                          input=json.dumps(payload).encode(), capture_output=True, cwd=project,
                          env=env, timeout=60, check=False)  # fmt: skip


def test_a_claude_command_leaves_the_event_to_copilots_install(project: Path) -> None:
    """With Copilot's own install of the event beside it, the Claude command answers
    Copilot's no-opinion (the Copilot command denies); without it, it denies itself."""
    done = run_claude_command(project)
    assert (done.returncode, json.loads(done.stdout)["permissionDecision"]) == (0, "deny")
    copilot_install(project, {"preToolUse": [entry("preToolUse", "^(?:bash|powershell)$")]})
    done = run_claude_command(project)
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")


def test_a_hooks_file_an_agent_wrote_in_the_project_does_not_silence_the_guard(
    project: Path,
) -> None:
    """A ``.github/hooks/hookbus.json`` that ``hookbus install`` did not write (an agent's,
    whose command passes every check and does nothing), or one changed after install,
    does not make the Claude command stand aside: the guard denies."""
    forged = {"version": 1, "hooks": {"preToolUse": [entry("preToolUse").copy()]}}
    forged["hooks"]["preToolUse"][0]["bash"] = COMMAND.format(event="preToolUse").replace(
        f"{sys.executable} -P {MAIN} run", "true run"
    )
    path = project / ".github" / "hooks" / "hookbus.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(forged))
    done = run_claude_command(project)
    assert (done.returncode, json.loads(done.stdout)["permissionDecision"]) == (0, "deny")
    copilot_install(project, {"preToolUse": [entry("preToolUse")]})
    assert copilot_handles("PreToolUse", "Bash", str(project), NO_HOME) == str(path)
    path.write_text(path.read_text() + " ")  # changed after install
    assert copilot_handles("PreToolUse", "Bash", str(project), NO_HOME) is None


def test_a_user_hooks_file_with_nan_is_not_relied_on(project: Path, tmp_path: Path) -> None:
    """A user-scope hooks file holding ``NaN`` (which Python's json reads and JavaScript's
    JSON.parse refuses, so the host would not run it) does not count."""
    home = tmp_path / "copilot-home"
    path = home / "hooks" / "hookbus.json"
    path.parent.mkdir(parents=True)
    good = json.dumps({"hooks": {"agentStop": [entry("agentStop")]}})
    path.write_text(good)
    env = {"COPILOT_HOME": str(home)}
    assert copilot_handles("Stop", None, str(project), env) == str(path)
    path.write_text(good[:-1] + ', "x": NaN}')
    assert copilot_handles("Stop", None, str(project), env) is None


@pytest.mark.parametrize(
    "checks",
    [
        "[ -x /nonexistent/python3 ] && [ -f {main} ]",
        "[ -x {python} ] && [ -f /nonexistent/hookbus/__main__.py ]",
        "command -v hookbus-not-on-this-path >/dev/null 2>&1",
        "true",
    ],
)
def test_a_copilot_command_that_would_fall_back_is_not_relied_on(
    project: Path, checks: str
) -> None:
    """When the Copilot command's checks fail now (its interpreter or hookbus gone), Copilot
    runs its fallback, which may be a no-opinion: the Claude command handles the event."""
    bash = COMMAND.format(event="preToolUse").replace(
        f"[ -x {sys.executable} ] && [ -f {MAIN} ]",
        checks.format(main=MAIN, python=sys.executable),
    )
    copilot_install(project, {"preToolUse": [{"type": "command", "bash": bash}]})
    assert copilot_handles("PreToolUse", "Bash", str(project), NO_HOME) is None
    copilot_install(project, {"preToolUse": [entry("preToolUse")]})
    assert copilot_handles("PreToolUse", "Bash", str(project), NO_HOME) is not None


def cursor_install(folder: Path, entries: dict[str, list[dict[str, object]]]) -> Path:
    return as_installed(folder / ".cursor" / "hooks.json", {"version": 1, "hooks": entries})


def cursor_entry(event: str) -> dict[str, object]:
    command = COMMAND.replace("--host copilot", "--host cursor").format(event=event)
    return {"type": "command", "command": command, "timeout": 10}


def test_a_claude_command_stands_aside_for_cursors_own_install(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Cursor payload in a Claude command stands aside when ``.cursor/hooks.json``
    holds hookbus's Cursor command for the event (Claude's Stop is Cursor's stop); a
    user's own entry, or a Copilot-shaped one, is not enough."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # no ~/.cursor/hooks.json
    claude, host = HOSTS["claude"], HOSTS["cursor"]
    same = {"payload": {"workspace_roots": [str(project)]}, "environ": {}}
    cursor_install(project, {"stop": [{"command": "./my-own-hook.sh"}],
                             "preToolUse": [entry("preToolUse")]})  # fmt: skip
    assert not stands_aside(claude, host, native="Stop", tool=None, **same)
    assert not stands_aside(claude, host, native="preToolUse", tool="Shell", **same)
    path = cursor_install(project, {"stop": [cursor_entry("stop")],
                                    "preToolUse": [cursor_entry("preToolUse")]})  # fmt: skip
    assert stands_aside(claude, host, native="Stop", tool=None, **same) == str(path)
    assert stands_aside(claude, host, native="preToolUse", tool="Shell", **same) == str(path)
    assert not stands_aside(host, host, native="preToolUse", tool="Shell", **same)


# -- Grok Build, which runs .claude/settings.json hooks too ----------------------------

GROK_COMMAND = COMMAND.replace("--host copilot", "--host grok")


def grok_install(folder: Path, event: str, matcher: str | None = None,
                 command: str | None = None) -> Path:  # fmt: skip
    """hookbus's grouped Grok entry for ``event`` in ``folder/hooks/hookbus.json``."""
    group: dict[str, object] = {"hooks": [{"type": "command", "timeout": 10,
                                           "command": command or GROK_COMMAND.format(event=event)}]}  # fmt: skip
    if matcher is not None:
        group["matcher"] = matcher
    return as_installed(folder / "hooks" / "hookbus.json", {"hooks": {event: [group]}})


@pytest.fixture
def grok_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # ~/.claude is read
    return {"GROK_HOME": str(tmp_path / "grok-home")}


@pytest.mark.parametrize(
    ("matcher", "tool", "handled"),
    [
        (None, "run_terminal_command", True),
        ("*", "run_terminal_command", True),
        ("run_terminal_command|write", "run_terminal_command", True),  # exact names
        ("run_terminal", "run_terminal_command", False),  # a simple name is not a prefix
        ("^linear__", "linear__save_issue", True),  # anything else: an unanchored regex
        ("terminal", "run_terminal_command", False),  # simple form: exact, not searched
        ("([", "run_terminal_command", False),  # Grok matches nothing with a bad regex
        ("explore", None, False),  # a matcher testing another field: not sure
    ],
)
def test_a_grok_matcher_is_read_as_grok_reads_it(
    tmp_path: Path, grok_env: dict[str, str], matcher: str | None, tool: str | None,
    handled: bool,
) -> None:  # fmt: skip
    """Grok's user ``hookbus.json`` counts only when its matcher takes the tool
    (``matcher.rs``: exact names in the simple form, else an unanchored regex)."""
    grok_install(Path(grok_env["GROK_HOME"]), "pre_tool_use", matcher)
    found = grok_handles("pre_tool_use", tool, str(tmp_path / "proj"), grok_env)
    assert (found is not None) is handled


def test_grok_entries_of_another_event_or_a_fallback_do_not_count(
    tmp_path: Path, grok_env: dict[str, str]
) -> None:
    """Another event's command, a user's own command, one whose checks fail now (Grok
    would run its fallback), or a disabled one is not hookbus surely answering."""
    home = Path(grok_env["GROK_HOME"])
    grok_install(home, "pre_tool_use", command=GROK_COMMAND.format(event="post_tool_use"))
    assert grok_handles("pre_tool_use", "run_terminal_command", None, grok_env) is None
    grok_install(home, "pre_tool_use", command="bin/safe-shell.sh")
    assert grok_handles("pre_tool_use", "run_terminal_command", None, grok_env) is None
    gone = GROK_COMMAND.format(event="pre_tool_use").replace(sys.executable, "/nonexistent/py")
    grok_install(home, "pre_tool_use", command=gone)
    assert grok_handles("pre_tool_use", "run_terminal_command", None, grok_env) is None
    grok_install(home, "stop")
    assert grok_handles("stop", None, None, grok_env) is not None
    # A hook of hookbus.json disabled in Grok's /hooks tab: not sure which, so none counts.
    (home / "disabled-hooks").write_text("# mine\nglobal/hookbus:stop[0].hooks[0]\n")
    assert grok_handles("stop", None, None, grok_env) is None


def test_the_project_grok_file_counts_unless_a_user_claude_install_may_be_running(
    tmp_path: Path, grok_env: dict[str, str]
) -> None:
    """The workspace's ``.grok/hooks/hookbus.json`` runs only in a trusted folder: it
    counts only when no user-scope Claude settings hold hookbus for the event, so that the
    running Claude command came from the project, behind the same trust."""
    project = tmp_path / "proj"
    path = grok_install(project / ".grok", "pre_tool_use")
    assert grok_handles("pre_tool_use", "run_terminal_command", str(project), grok_env) == str(path)
    claude = tmp_path / "home" / ".claude" / "settings.local.json"
    claude.parent.mkdir(parents=True)
    claude.write_text(json.dumps({"hooks": {"PreToolUse": [{"hooks": [
        {"type": "command", "command": "hookbus run --host claude --event PreToolUse"}]}]}}))  # fmt: skip
    assert grok_handles("pre_tool_use", "run_terminal_command", str(project), grok_env) is None
    assert grok_handles("stop", None, str(project), grok_env) is None  # no stop entry


def test_a_grok_payload_in_a_claude_command_stands_aside_for_groks_install(
    tmp_path: Path, grok_env: dict[str, str]
) -> None:
    """stands_aside asks Grok's files for a Grok payload, and never for Grok's own command."""
    path = grok_install(Path(grok_env["GROK_HOME"]), "pre_tool_use")
    payload = {"cwd": str(tmp_path), "workspaceRoot": str(tmp_path)}
    same = {"payload": payload, "environ": grok_env, "native": "pre_tool_use",
            "tool": "run_terminal_command"}  # fmt: skip
    assert stands_aside(HOSTS["claude"], HOSTS["grok"], **same) == str(path)  # type: ignore[arg-type]
    assert stands_aside(HOSTS["grok"], HOSTS["grok"], **same) is None  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("event", "host"),
    [("pre_tool_use", "grok"), ("PreToolUse", "vscode"), ("stop", "grok"), ("Stop", "vscode")],
)
def test_grok_and_vscode_payloads_are_told_apart_by_their_event_spelling(
    event: str, host: str
) -> None:
    """Both name the event in ``hookEventName`` and both send a timestamp and a
    ``sessionId`` (Copilot's marks): Grok spells it snake_case, VS Code PascalCase."""
    from hookbus.runtime.peek import dialect

    payload: dict[str, object] = {"hookEventName": event, "sessionId": "s", "timestamp": 1}
    assert dialect(HOSTS["claude"], payload).name == host
    assert dialect(HOSTS["claude"], {"sessionId": "s", "timestamp": 1}).name == "copilot"


def test_the_client_command_is_recognised_as_hookbus() -> None:
    """The warm server's client (install's default form) is hookbus's command for its
    host, as ``hookbus run`` is; its words are those the launcher holds."""
    assert CLIENT_IMPORT in CLIENT_LAUNCHER
    client = f"python -I -S -c '{CLIENT_LAUNCHER}' /x/hookbus --host copilot --event preToolUse"
    assert is_hookbus(client, "copilot") and not is_hookbus(client, "cursor")
    assert is_hookbus("hookbus run --host copilot --event preToolUse", "copilot")
    assert not is_hookbus("hookbus run --host copilotx --event preToolUse", "copilot")


def test_a_stand_aside_from_a_fail_closed_guard_is_logged(project: Path) -> None:
    """A Claude command standing aside for Copilot's install of an event a fail-closed
    guard wants answers no opinion and logs ``stood-aside`` naming the guard and the file
    (the fuzz test's Claude payloads carrying Copilot's ``timestamp`` key were answered
    so with nothing in the log)."""
    (project / "guards_no.py").write_text(
        DENY_HANDLER.replace('tools="shell"', 'tools="shell", timeout=10, fail_closed=True')
    )
    done = run_claude_command(project, write_handler=False)  # compiles the index
    assert json.loads(done.stdout)["permissionDecision"] == "deny"
    hooks = copilot_install(project, {"preToolUse": [entry("preToolUse")]})
    log = project / "st" / "diagnostics.jsonl"
    done = run_claude_command(project, write_handler=False)
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    lines = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    aside = [line for line in lines if line["event"] == "stood-aside"]
    assert [(a["level"], a["file"], a["handlers"]) for a in aside] == [
        ("info", str(hooks), ["guards_no:no"])
    ], lines


@pytest.mark.parametrize("host", ["cursor", "copilot", "vscode", "grok"])
def test_only_the_recorded_file_where_the_host_reads_it_counts(
    host: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Project A's recorded hooks file makes the Claude command stand aside for a payload
    of A; not for A's subfolder opened as the workspace (the host reads no parent's
    file), not for project B whose hooks folder is a symbolic link to A's, and not for A
    named through a link to it."""
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))  # no user-scope file of any host
    env = {"COPILOT_HOME": str(home / ".copilot"), "GROK_HOME": str(home / ".grok")}
    a, b, link = tmp_path / "projA", tmp_path / "projB", tmp_path / "linkA"
    (a / "sub").mkdir(parents=True)
    b.mkdir()
    link.symlink_to(a)
    if host == "grok":
        hooks = {"pre_tool_use": [{"hooks": [{"type": "command", "command": GROK_COMMAND.format(
            event="pre_tool_use")}]}]}  # fmt: skip
        as_installed(a / ".grok" / "hooks" / "hookbus.json", {"hooks": hooks})
        (b / ".grok").symlink_to(a / ".grok")
        native, tool = "pre_tool_use", "run_terminal_cmd"
    else:
        folder, name, native, tool = {
            "cursor": (".cursor", "hooks.json", "preToolUse", "Shell"),
            "copilot": (".github", "hooks/hookbus.json", "preToolUse", "bash"),
            "vscode": (".github", "hooks/hookbus-vscode.json", "PreToolUse", None),
        }[host]
        command = COMMAND.replace("--host copilot", f"--host {host}").format(event=native)
        key = "bash" if host == "copilot" else "command"
        as_installed(a / folder / name,
                     {"version": 1, "hooks": {native: [{"type": "command", key: command}]}})  # fmt: skip
        (b / folder).symlink_to(a / folder)

    def aside(root: Path) -> str | None:
        if host == "grok":
            environ = {**env, "GROK_WORKSPACE_ROOT": str(root)}
        else:
            environ = {**env, "CURSOR_PROJECT_DIR": str(root), "COPILOT_PROJECT_DIR": str(root)}
        payload = {"cwd": str(root)}  # VS Code's project is its payload's cwd
        return stands_aside(HOSTS["claude"], HOSTS[host], native=native, tool=tool,
                            payload=payload, environ=environ)  # fmt: skip

    assert aside(a)
    assert aside(a / "sub") is None
    assert aside(b) is None
    assert aside(link) is None
