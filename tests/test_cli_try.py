"""``hookbus try`` driven as a person drives it: a real process in a project, the real
hook underneath, and what it reports compared with what ``hookbus run`` answers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from support import FORCE_PUSH_HANDLERS

from hookbus.cli.render import exact
from hookbus.hosts.claude.driver import ALL_EVENTS
from hookbus.testing import run_cli

HOOKS = (
    FORCE_PUSH_HANDLERS
    + """

@hookbus.handler("before-tool", tools="shell", timeout=1)
def stuck_in_c(event):
    # Catastrophic backtracking: _sre holds the GIL, only the process watchdog ends it.
    re.match(r"(a+)+$", "a" * 64 + "b")
"""
)
FORCE_PUSH = '{"command": "git push --force origin main"}'


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "mypkg").mkdir(parents=True)
    (root / "mypkg" / "__init__.py").write_text("")
    (root / "mypkg" / "hooks.py").write_text(HOOKS)
    return root


def configure(project: Path, body: str) -> None:
    (project / ".hookbus.toml").write_text(textwrap.dedent(body))


def trial(project: Path, *args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    """``python -m hookbus try --host claude ARGS`` in ``project``, output uncoloured."""
    env = {**os.environ, "NO_COLOR": "1"}
    env.pop("FORCE_COLOR", None)
    return subprocess.run(
        [sys.executable, "-m", "hookbus", "try", "--host", "claude", *args],
        input=stdin, capture_output=True, cwd=project, env=env, timeout=120, check=False,
    )  # fmt: skip


def reported(project: Path, *args: str, stdin: bytes = b"") -> dict[str, Any]:
    """The ``--json`` report of ``try ARGS``, which must have run the hook (exit 0)."""
    proc = trial(project, *args, "--json", stdin=stdin)
    assert proc.returncode == 0, proc.stderr.decode()
    report: dict[str, Any] = json.loads(proc.stdout)
    return report


def test_try_reports_exactly_what_hookbus_run_answers_for_a_force_push(project: Path) -> None:
    """The issue's acceptance test: for a Claude PreToolUse Bash force push, the stdout and
    exit code ``try`` reports (and shows) are byte for byte what the real ``hookbus run``
    prints for the payload ``try`` sent."""
    configure(project, 'enable = ["mypkg.hooks:no_force_push"]')
    report = reported(project, "--event", "PreToolUse", "--tool", "Bash", "--input", FORCE_PUSH)
    assert report["answered_by"] == "dispatch"
    sent = report["payload"].encode()
    assert json.loads(sent)["tool_input"] == json.loads(FORCE_PUSH)
    real = run_cli("claude", sent, cwd=project, args=["--event", "PreToolUse"])
    assert report["stdout"].encode() == real.stdout
    assert report["stderr"].encode() == real.stderr
    assert report["exit_code"] == real.exit_code == 0
    assert json.loads(real.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"
    shown = trial(project, "--event", "PreToolUse", "--input", FORCE_PUSH).stdout.decode()
    assert all(f"    {line}\n" in shown for line in exact(real.stdout))


def test_the_payload_is_the_hosts_own_shape_built_by_the_driver(project: Path) -> None:
    """Without --tool, a tool event carries a harmless Bash call, with the fields Claude
    sends (transcript, permission mode, tool call id) and this folder as cwd."""
    configure(project, 'enable = ["mypkg.hooks:no_force_push"]')
    report = reported(project, "--event", "PreToolUse")
    payload = json.loads(report["payload"])
    assert payload["hook_event_name"] == "PreToolUse"
    assert payload["tool_name"] == "Bash"
    assert payload["cwd"] == str(project)
    assert payload["transcript_path"].endswith(f"/{payload['session_id']}.jsonl")
    assert payload["permission_mode"] == "default"
    assert payload["tool_use_id"].startswith("toolu_")
    assert report["event"]["tool"]["command"] == payload["tool_input"]["command"]
    assert (report["stdout"], report["exit_code"]) == ("", 0)


def test_human_output_names_each_handler_its_status_and_the_merged_decision(
    project: Path,
) -> None:
    """The sections name every handler that ran with its status and time, the merged
    decision, and the exact answer with its exit code."""
    configure(project, 'enable = ["mypkg.hooks:no_force_push", "mypkg.hooks:explode"]')
    proc = trial(project, "--event", "PreToolUse", "--input", FORCE_PUSH)
    assert proc.returncode == 0, proc.stderr.decode()
    out = proc.stdout.decode()
    sections = [line for line in out.splitlines() if line and not line.startswith(" ")]
    assert [s.split()[0] for s in sections] == [
        "payload", "event", "handlers", "merged", "diagnostics", "host",
    ]  # fmt: skip
    table = [line.split() for line in out.splitlines() if line.startswith("  mypkg.hooks:")]
    rows = {row[0]: row for row in table}
    assert rows["mypkg.hooks:no_force_push"][1:2] == ["ok"]
    assert rows["mypkg.hooks:explode"][1:2] == ["error"]
    assert all(row[3] == "ms" for row in rows.values())
    assert "  decision: deny\n" in out
    assert "  reason: Force-pushing is not allowed here.\n" in out
    assert "  exit code: 0\n" in out
    assert "tool.command: git push --force origin main" in out


def test_an_event_no_handler_wants_is_answered_at_once(project: Path) -> None:
    """An event nobody subscribes to (a Stop; a Read for a shell guard) is answered by the
    cold path at once with Claude's no-opinion, and ``try`` says so."""
    configure(project, 'enable = ["mypkg.hooks:no_force_push"]')
    for args in (["--event", "Stop"], ["--event", "PreToolUse", "--tool", "Read"]):
        report = reported(project, *args)
        assert report["answered_by"] == "cold-path"
        assert "answered at once" in report["why"]
        assert (report["stdout"], report["stderr"], report["exit_code"]) == ("", "", 0)
        assert report["outcomes"] == []
        assert report["event"]["native"] == args[1]  # decoded by try itself
    out = trial(project, "--event", "Stop").stdout.decode()
    assert "answered at once" in out
    assert "not registered" in out  # install writes no Stop hook for this configuration


def test_a_handler_that_raises_shows_error_and_the_fail_open_reply(project: Path) -> None:
    """A raising handler's outcome is ``error`` with its exception, and the host gets the
    fail-open answer: Claude's no-opinion."""
    configure(project, 'enable = ["mypkg.hooks:explode"]')
    report = reported(project, "--event", "PreToolUse")
    [outcome] = report["outcomes"]
    assert (outcome["handler"], outcome["status"]) == ("mypkg.hooks:explode", "error")
    assert "RuntimeError: handler bug" in outcome["error"]
    assert outcome["fail_closed"] is False
    assert report["reply"] == {}
    assert (report["stdout"], report["exit_code"], report["answered_by"]) == ("", 0, "dispatch")
    assert [d["event"] for d in report["diagnostics"]] == ["handler-error"]
    out = trial(project, "--event", "PreToolUse").stdout.decode()
    assert "RuntimeError: handler bug (fail-open: no reply)" in out


def test_a_worker_killed_by_the_watchdog_is_said_to_be(project: Path) -> None:
    """When the worker never answers (a handler stuck in C code), ``try`` says the watchdog
    answered, and shows the refusal it owes a fail-closed handler."""
    configure(
        project,
        """
        budget = 1.5
        enable = ["mypkg.hooks:stuck_in_c"]
        [handlers."mypkg.hooks:stuck_in_c"]
        fail_closed = true
        """,
    )
    report = reported(project, "--event", "PreToolUse")
    assert report["answered_by"] == "watchdog"
    assert "budget" in report["why"]
    decision = json.loads(report["stdout"])["hookSpecificOutput"]["permissionDecision"]
    assert decision == "deny"


def test_a_payload_file_is_sent_as_it_is(project: Path) -> None:
    """``--payload FILE`` (or ``-`` for stdin) sends the bytes unchanged, and the hook
    answers them as ``hookbus run`` does."""
    configure(project, 'enable = ["mypkg.hooks:no_force_push"]')
    data = (
        b'{"session_id": "s-1",  "cwd": "' + str(project).encode() + b'", '
        b'"hook_event_name": "PreToolUse", "tool_name": "Bash", '
        b'"tool_input": {"command": "git push -f"}}\n'
    )
    (project / "payload.json").write_bytes(data)
    from_file = reported(project, "--event", "PreToolUse", "--payload", "payload.json")
    from_stdin = reported(project, "--event", "PreToolUse", "--payload", "-", stdin=data)
    real = run_cli("claude", data, cwd=project, args=["--event", "PreToolUse"])
    for report in (from_file, from_stdin):
        assert report["payload"].encode() == data
        assert report["stdout"].encode() == real.stdout
    assert b'"permissionDecision":"deny"' in real.stdout


def test_an_unknown_event_is_a_usage_error_naming_the_valid_events(project: Path) -> None:
    """An event Claude does not have: exit 1, nothing run, and every valid event named."""
    proc = trial(project, "--event", "PreToolUs")
    assert (proc.returncode, proc.stdout) == (1, b"")
    message = proc.stderr.decode()
    assert "PreToolUs" in message
    assert all(native in message for native in ALL_EVENTS)


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--input", "{not json"], "--input is not JSON"),
        (["--input", "[1, 2]"], "--input must be a JSON object"),
        (["--input", '"ls"'], "--input must be a JSON object"),
        (["--payload", "missing.json"], "missing.json: cannot read it"),
        (["--payload", "-", "--tool", "Bash"], "--payload is sent as it is"),
    ],
    ids=["not-json", "array", "string", "unreadable-payload", "payload-and-tool"],
)
def test_bad_tool_input_or_payload_is_a_usage_error(
    project: Path, args: list[str], said: str
) -> None:
    """Tool input that is not a JSON object, or a payload that cannot be read: exit 1 with
    a message naming the problem, and no hook run."""
    proc = trial(project, "--event", "PreToolUse", *args)
    assert (proc.returncode, proc.stdout) == (1, b"")
    assert said in proc.stderr.decode()


def test_a_tool_on_an_event_without_one_names_the_events_with_one(project: Path) -> None:
    """``--tool`` on a Stop: exit 1, naming the events that carry a tool."""
    proc = trial(project, "--event", "Stop", "--tool", "Bash")
    assert proc.returncode == 1
    assert "PreToolUse" in proc.stderr.decode()
    assert "PostToolUse" in proc.stderr.decode()


def test_the_trace_is_never_written_through_a_planted_file(
    project: Path, tmp_path: Path, isolated_environment: Path
) -> None:
    """A trace path already taken (here a link to a file of the user's) is not followed
    nor overwritten: the hook still answers as usual, and says the trace failed."""
    configure(project, 'enable = ["mypkg.hooks:no_force_push"]')
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    link = tmp_path / "trace.json"
    link.symlink_to(victim)
    payload = json.loads(reported(project, "--event", "PreToolUse", "--input", FORCE_PUSH)[
        "payload"])  # fmt: skip
    env = {**os.environ, "HOOKBUS_TRACE": str(link)}
    result = run_cli("claude", payload, cwd=project, env=env, args=["--event", "PreToolUse"])
    assert json.loads(result.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert victim.read_text() == "keep me"
    log = isolated_environment / "diagnostics.jsonl"
    from support import wait_for

    wait_for(lambda: log.exists() and "trace-failed" in log.read_text(), "trace-failed logged")


def test_text_from_the_payload_cannot_rewrite_the_screen(project: Path) -> None:
    """An escape sequence or a bidi override in a tool's input is shown escaped, in the
    payload, the event and the exact bytes alike."""
    configure(project, 'enable = ["mypkg.hooks:no_force_push"]')
    command = json.dumps({"command": "echo \x1b[2J\u202e git push -f"})
    out = trial(project, "--event", "PreToolUse", "--input", command).stdout.decode()
    assert "\x1b" not in out
    assert "\u202e" not in out
    assert "tool.command: echo \\x1b[2J\\u202e git push -f" in out


#: Handlers that fail in ways a person must find: ``deep`` raises 12 calls down (deeper
#: than a traceback's bound), ``parse`` inside the standard library.
FAILING = """
import json
import hookbus

def down(n):
    if n == 0:
        raise ValueError("deep bug")  # line 7
    return down(n - 1)

@hookbus.handler("before-tool", tools="shell")
def deep(event):
    down(12)

@hookbus.handler("before-tool", tools="shell")
def parse(event):
    json.loads("{not json")  # line 16

@hookbus.handler("before-tool", tools="shell")
def fine(event):
    return None
"""


def test_a_failing_handler_is_shown_at_the_line_that_failed(project: Path) -> None:
    """A handler's failure names the file, line and function where it failed, and the
    exception: the line that raised however deep, or the handler's own line when the
    exception came from the standard library."""
    (project / "mypkg" / "failing.py").write_text(FAILING)
    configure(project, 'enable = ["mypkg.failing:deep", "mypkg.failing:parse"]')
    proc = trial(project, "--event", "PreToolUse")
    assert proc.returncode == 0, proc.stderr.decode()
    out = proc.stdout.decode()
    where = project / "mypkg" / "failing.py"
    assert f"{where}:7 in down: ValueError: deep bug (fail-open: no reply)" in out
    assert f"{where}:16 in parse: json.decoder.JSONDecodeError: Expecting" in out
    deep = next(o for o in reported(project, "--event", "PreToolUse")["outcomes"]
                if o["handler"] == "mypkg.failing:deep")  # fmt: skip
    assert 'failing.py", line 12, in deep' in deep["error"]  # the handler's own frame
    assert "frames left out" in deep["error"]


def test_a_handler_that_did_not_load_is_shown_with_the_reason(project: Path) -> None:
    """A fail-open handler that loaded once and is broken now is left out of the
    dispatch: ``try`` shows it as not loaded, with why (the file it could not import)."""
    failing = project / "mypkg" / "failing.py"
    failing.write_text(FAILING)
    configure(project, 'enable = ["mypkg.failing:fine"]')
    assert reported(project, "--event", "PreToolUse")["loaded"] == ["mypkg.failing:fine"]
    failing.write_text(FAILING.replace("def fine(event):", "def fine(event)"))
    report = reported(project, "--event", "PreToolUse")
    assert report["loaded"] == report["stand_ins"] == []
    # Where the SyntaxError is, where it is enabled, and the fix.
    told = (f"did not load: {failing}:19:16: expected ':' (enabled at {project}/.hookbus.toml"
            ":1); hooks run without it; fix: correct the error, or take it out of enable, "
            "then: hookbus trust")  # fmt: skip
    assert report["unavailable"] == {"mypkg.failing:fine": told}
    out = trial(project, "--event", "PreToolUse").stdout.decode()
    [row] = [line for line in out.splitlines() if line.startswith("  mypkg.failing:fine")]
    assert row.split()[1:3] == ["not", "loaded"]
    assert row.endswith(f"  {told} (fail-open: left out, no reply)")


def test_a_stand_in_says_whom_it_stands_in_for_and_why(project: Path) -> None:
    """A fail-closed handler that cannot load is stood in for by a refusal: its row says
    it is a stand-in, for which handler, why that did not load, and that it denied."""
    configure(
        project,
        """
        enable = ["mypkg.hooks:no_forc_push"]
        [handlers."mypkg.hooks:no_forc_push"]
        fail_closed = true
        timeout = 2
        """,
    )
    out = trial(project, "--event", "PreToolUse").stdout.decode()
    [row] = [line for line in out.splitlines() if line.startswith("  mypkg.hooks:no_forc_push")]
    assert row.split()[1] == "stand-in"
    assert row.endswith(
        "stand-in for mypkg.hooks:no_forc_push, which did not load: mypkg.hooks has no "
        "'no_forc_push'; its handlers: explode, no_force_push, stuck_in_c (enabled at "
        f"{project}/.hookbus.toml:2); it is fail-closed, so hookbus denies what it wants; "
        "fix: correct the name, then: hookbus trust (fail-closed: denied)"
    )
    assert "ok (stand-in)" not in out


def test_a_portable_kind_is_read_as_the_hosts_event_and_said_so(project: Path) -> None:
    """``--event before-tool`` sends the host's native event of that kind and says which
    it is; a kind the host has no event of is a usage error naming the kinds it has."""
    configure(project, 'enable = ["mypkg.hooks:no_force_push"]')
    report = reported(project, "--event", "before-tool", "--input", FORCE_PUSH)
    assert report["native"] == "PreToolUse"
    assert report["event_note"].startswith("before-tool is PreToolUse on claude")
    assert json.loads(report["stdout"])["hookSpecificOutput"]["permissionDecision"] == "deny"
    out = trial(project, "--event", "stop").stdout.decode()
    assert out.splitlines()[0].endswith("; stop is Stop on claude")
    edit = reported(project, "--event", "after-edit", "--tool", "Edit")
    assert (
        edit["event_note"]
        == "after-edit is PostToolUse on claude, of an edit tool (--tool names it)"
    )
    env = {**os.environ, "NO_COLOR": "1"}
    proc = subprocess.run(
        [sys.executable, "-m", "hookbus", "try", "--host", "windsurf", "--event", "session-end"],
        capture_output=True, text=True, cwd=project, env=env, timeout=120, check=False,
    )  # fmt: skip
    assert (proc.returncode, proc.stdout) == (1, "")
    assert "no windsurf event is of portable kind session-end" in proc.stderr
    assert "or a portable kind: after-edit, after-tool, before-tool," in proc.stderr


def test_try_runs_the_command_install_wrote_and_says_which_path_answered(
    project: Path,
) -> None:
    """After ``install`` (the warm client, by default) ``try`` runs the client the
    settings name and says the warm server answered once it is up; after ``install
    --no-server`` it runs ``hookbus run``, and says the cold path answered."""
    import shlex

    from support import hookbus_cli, wait_for

    configure(project, 'enable = ["mypkg.hooks:no_force_push"]')
    settings = project / ".claude" / "settings.json"
    for form, path, said in [((), "warm-server", "in the warm server"),
                             (("--no-server",), "cold", "on the cold path (hookbus run)")]:  # fmt: skip
        done = hookbus_cli(project, "install", "--host", "claude", *form)
        assert done.returncode == 0, done.stderr
        [group] = json.loads(settings.read_text())["hooks"]["PreToolUse"]
        installed = group["hooks"][0]["command"]
        first = reported(project, "--event", "PreToolUse")
        assert shlex.join(first["command"]) in installed
        if path == "warm-server":  # the client's first call started the server
            assert first["path"] in ("client-cold", "warm-server")
            wait_for(lambda: hookbus_cli(project, "serve", "--status").returncode == 0,
                     "the server the first call started")  # fmt: skip
        report = reported(project, "--event", "PreToolUse", "--input", FORCE_PUSH)
        assert shlex.join(report["command"]) in installed
        assert report["path"] == path
        assert json.loads(report["stdout"])["hookSpecificOutput"]["permissionDecision"] == "deny"
        out = trial(project, "--event", "PreToolUse").stdout.decode()
        assert f"answered by the handlers' dispatch {said}, in " in out


def test_no_configuration_found_is_said_with_where_it_looked_and_the_fix(project: Path) -> None:
    """A configuration misnamed ``hookbus.toml``: ``try`` says the hook found none, lists
    the files it looked for in order (the misnamed one with why it is not read) and ends
    with the rename that fixes it, as ``install`` does."""
    (project / "hookbus.toml").write_text('enable = ["mypkg.hooks:no_force_push"]\n')
    report = reported(project, "--event", "PreToolUse", "--tool", "Bash", "--input", FORCE_PUSH)
    misnamed, fix = project / "hookbus.toml", project / ".hookbus.toml"
    assert f"  {fix}: missing" in report["searched"]
    assert f"  {misnamed}: not read: hookbus reads .hookbus.toml (with the dot)" in (
        report["searched"])  # fmt: skip
    assert report["searched"][-1] == f"fix: mv {misnamed} {fix}"
    human = trial(project, "--event", "PreToolUse", "--tool", "Bash", "--input", FORCE_PUSH)
    text = human.stdout.decode()
    assert "  looked for, in order:\n" in text and f"  fix: mv {misnamed} {fix}\n" in text
