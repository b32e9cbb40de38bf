"""``hookbus run`` driven as Claude Code drives it: a real process, stdin in, reply out."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from support import BUS_VOCABULARY, FORCE_PUSH_HANDLERS, compile_now, wait_for

import hookbus
from hookbus.testing import CliResult, run_cli

GOLDEN = Path(__file__).parent / "golden" / "claude"

HOOKS = (
    FORCE_PUSH_HANDLERS
    + """
import sys, time

@hookbus.handler("before-tool", tools="shell", timeout=1)
def sleepy(event):
    time.sleep(30)

@hookbus.handler("before-tool", tools="shell", timeout=1)
def stuck_in_c(event):
    # Catastrophic backtracking: _sre holds the GIL, no Python-level timeout can fire.
    re.match(r"(a+)+$", "a" * 64 + "b")

@hookbus.handler("before-tool", tools="shell")
def chatty(event):
    print("handler noise on stdout")
    print("handler noise on stderr", file=sys.stderr)
    return hookbus.Reply.add_context("quiet please")

@hookbus.handler("session-end")
def reconcile(event, ctx):
    out = event.cwd + "/reconciled.txt"
    ctx.spawn_detached([sys.executable, "-c",
        "import sys, time; time.sleep(6.0); open(sys.argv[1], 'w').write('done')", out])
"""
)


def pre_tool(command: str, cwd: Path) -> dict[str, object]:
    payload = json.loads((GOLDEN / "PreToolUse.Bash.json").read_text())
    payload["tool_input"]["command"] = command
    payload["cwd"] = str(cwd)
    return payload  # type: ignore[no-any-return]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "mypkg").mkdir(parents=True)
    (root / "mypkg" / "__init__.py").write_text("")
    (root / "mypkg" / "hooks.py").write_text(HOOKS)
    return root


def configure(project: Path, body: str) -> None:
    (project / ".hookbus.toml").write_text(textwrap.dedent(body))


def hook(project: Path, payload: object) -> CliResult:
    return run_cli("claude", payload, cwd=project)  # type: ignore[arg-type]


def diagnostics(state: Path) -> list[dict[str, object]]:
    path = state / "diagnostics.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_user_handler_denies_force_push_in_claudes_format(project: Path) -> None:
    """The issue's example: a user handler from .hookbus.toml denies a force push."""
    configure(project, 'enable = ["mypkg.hooks:no_force_push"]')
    result = hook(project, pre_tool("git push --force origin main", project))
    assert result.exit_code == 0
    assert json.loads(result.stdout) == {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "Force-pushing is not allowed here.",
        }
    }
    assert result.stderr == b""


def test_user_handler_allows_everything_else(project: Path) -> None:
    """Anything else gets Claude's "no opinion": exit 0 and no output at all."""
    configure(project, 'enable = ["mypkg.hooks:no_force_push"]')
    for command in ("git push origin main", "npm test"):
        result = hook(project, pre_tool(command, project))
        assert (result.exit_code, result.stdout, result.stderr) == (0, b"", b"")


@pytest.mark.parametrize(
    ("handler", "code"),
    [("explode", "handler-error"), ("sleepy", "handler-timeout")],
)
def test_failing_handler_leaves_the_tool_allowed(
    project: Path, isolated_environment: Path, handler: str, code: str
) -> None:
    """A raising or hanging handler fails open: the tool stays allowed, the force-push
    deny of the other handler still stands, and a diagnostic names the culprit."""
    configure(project, f'enable = ["mypkg.hooks:{handler}", "mypkg.hooks:no_force_push"]')
    assert hook(project, pre_tool("ls", project)).stdout == b""
    denied = hook(project, pre_tool("git push -f", project))
    assert json.loads(denied.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"
    found = [d for d in diagnostics(isolated_environment) if d["event"] == code]
    assert found
    assert all(d["handler"] == f"mypkg.hooks:{handler}" for d in found)


@pytest.mark.parametrize("handler", ["explode", "sleepy"])
def test_fail_closed_handler_denies_when_it_fails(
    project: Path, isolated_environment: Path, handler: str
) -> None:
    """The same failures deny the tool when the handler is declared fail-closed."""
    configure(
        project,
        f"""
        enable = ["mypkg.hooks:{handler}"]
        [handlers."mypkg.hooks:{handler}"]
        fail_closed = true
        timeout = 1
        """,
    )
    result = hook(project, pre_tool("ls", project))
    out = json.loads(result.stdout)["hookSpecificOutput"]
    assert out["permissionDecision"] == "deny"
    assert f"mypkg.hooks:{handler}" in out["permissionDecisionReason"]


@pytest.mark.parametrize("fail_closed", [False, True])
def test_watchdog_answers_when_a_handler_is_stuck_in_c_code(
    project: Path, isolated_environment: Path, fail_closed: bool
) -> None:
    """A handler holding the GIL in C cannot be timed out from Python; the process
    watchdog still answers before the budget ends: no opinion, or deny if fail-closed.
    The index is compiled first: a watchdog firing before the declaration is known
    refuses (the handler may be a guard), as a loaded machine can make it."""
    configure(
        project,
        f"""
        budget = 1.5
        enable = ["mypkg.hooks:stuck_in_c"]
        [handlers."mypkg.hooks:stuck_in_c"]
        fail_closed = {str(fail_closed).lower()}
        """,
    )
    compile_now(project)
    result = hook(project, pre_tool("ls", project))
    assert result.exit_code == 0
    assert result.seconds < 10  # the host's limit for this hook (manifest timeout)
    if fail_closed:
        decision = json.loads(result.stdout)["hookSpecificOutput"]["permissionDecision"]
        assert decision == "deny"
    else:
        assert result.stdout == b""
    fired = [d for d in diagnostics(isolated_environment) if d["event"] == "watchdog-fired"]
    assert [d["handlers"] for d in fired] == [["mypkg.hooks:stuck_in_c"]]


def test_handler_output_never_reaches_the_hosts_stdout(project: Path) -> None:
    """Prints in a handler cannot corrupt the JSON reply (stdout is the reply channel)."""
    configure(project, 'enable = ["mypkg.hooks:chatty"]')
    result = hook(project, pre_tool("ls", project))
    assert json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"] == "quiet please"
    assert b"noise" not in result.stdout + result.stderr


def test_session_end_returns_at_once_while_the_detached_child_finishes(project: Path) -> None:
    """SessionEnd's handler starts a real child that works for 6 s; the hook returns
    before it, and the child completes after the hook has exited. (The hook is given 10 s,
    as a settings ``timeout`` would: within Claude's own 1.5 s a loaded machine may not
    even reach the handler, and then no child is started.)"""
    configure(project, 'budget = 8\nenable = ["mypkg.hooks:reconcile"]')
    payload = json.loads((GOLDEN / "SessionEnd.json").read_text())
    payload["cwd"] = str(project)
    result = run_cli("claude", payload, cwd=project, args=("--timeout", "10"))
    assert (result.exit_code, result.stdout) == (0, b"")
    proof = project / "reconciled.txt"
    assert not proof.exists()  # the child is still sleeping: the hook did not wait for it
    for _ in range(300):
        if proof.exists():
            break
        time.sleep(0.1)
    assert proof.read_text() == "done"


PROBE = """
import sys
from hookbus.cli import main
code = main(["run", "--host", "claude"])
with open(sys.argv[1], "w") as out:
    out.write("\\n".join(sorted(sys.modules)))
sys.exit(code)
"""


def test_unsubscribed_event_imports_neither_anyio_nor_any_handler(project: Path) -> None:
    """A PreToolUse nobody wants is answered by the standard library alone once the index
    is cached; the first call (no index yet) compiles it in its worker, and even then no
    handler module is ever imported by the process that answers the host."""
    configure(project, 'enable = ["mypkg.hooks:reconcile"]')  # session-end only
    payload = json.dumps(pre_tool("ls", project)).encode()
    seen = project / "modules.txt"
    for run in ("cold: compiles the index in the worker", "warm: reads the cached index"):
        proc = subprocess.run(
            [sys.executable, "-c", PROBE, str(seen)],
            input=payload, capture_output=True, cwd=project, timeout=30, check=True,
        )  # fmt: skip
        assert (proc.stdout, proc.stderr) == (b"", b""), run
        modules = set(seen.read_text().split())
        assert "hookbus.runtime.hook" in modules, run
        heavy = {"anyio", "structlog", "sqlite3", "hookbus.local.store", "hookbus.testing"}
        assert not heavy & modules, run
        assert not {"mypkg", "mypkg.hooks"} & modules, run
        if run.startswith("warm"):
            assert "msgspec" not in modules
            assert not any(
                m.startswith(("hookbus.bus.", "hookbus.handlers."))
                for m in modules - BUS_VOCABULARY
            )


def test_broken_configuration_keeps_valid_parts(project: Path, isolated_environment: Path) -> None:
    """A bad value or an unknown handler is a config-invalid diagnostic; the rest works."""
    configure(
        project,
        """
        budget = "soon"
        enable = ["mypkg.hooks:no_force_push", "nope"]
        """,
    )
    result = hook(project, pre_tool("git push --force", project))
    assert json.loads(result.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"
    problems = [
        d["message"] for d in diagnostics(isolated_environment) if d["event"] == "config-invalid"
    ]
    assert any("budget" in str(p) for p in problems)
    assert any("unknown handler 'nope'" in str(p) for p in problems)


def test_unparseable_configuration_answers_no_opinion(
    project: Path, isolated_environment: Path
) -> None:
    """A config file that is not TOML breaks nothing: no opinion, one diagnostic."""
    (project / ".hookbus.toml").write_text("enable = [unterminated")
    result = hook(project, pre_tool("git push --force", project))
    assert (result.exit_code, result.stdout, result.stderr) == (0, b"", b"")
    codes = [d["event"] for d in diagnostics(isolated_environment)]
    assert codes == ["index-missing", "config-invalid"]  # the first call compiles it


def test_index_follows_edits_of_the_handler_module(project: Path) -> None:
    """Changing what a handler subscribes to takes effect on the next hook call."""
    configure(project, 'enable = ["mypkg.hooks:reconcile"]')
    assert hook(project, pre_tool("git push --force", project)).stdout == b""
    hooks = project / "mypkg" / "hooks.py"
    hooks.write_text(HOOKS.replace('@hookbus.handler("session-end")', '@hookbus.handler("before-tool")')
                     .replace("def reconcile(event, ctx):", "def reconcile(event, ctx):\n    return hookbus.Reply.deny('now subscribed')"))  # fmt: skip
    os.utime(hooks, ns=(time.time_ns(), time.time_ns() + 10**9))
    result = hook(project, pre_tool("ls", project))
    assert (
        json.loads(result.stdout)["hookSpecificOutput"]["permissionDecisionReason"]
        == "now subscribed"
    )


def test_bad_arguments_answer_the_hosts_no_opinion(project: Path) -> None:
    """A wrong command line with a known host is not the host's problem: its no-opinion."""
    for args in (["--host", "claude", "--bogus"], ["--host", "claude", "--timeout", "inf"]):
        proc = subprocess.run(
            [sys.executable, "-m", "hookbus", "run", *args],
            input=b"{}", capture_output=True, cwd=project, timeout=30, check=False,
        )  # fmt: skip
        assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")


def test_unknown_host_is_a_loud_exit_1(project: Path) -> None:
    """No reply can be right for a host hookbus does not know (a command written by a newer
    hookbus): it says so on stderr and exits 1, never guessing a dialect."""
    argv = [sys.executable, "-m", "hookbus", "run", "--host", "nonesuch"]
    proc = subprocess.run(argv, input=b"{}", capture_output=True, cwd=project, timeout=30,
                          check=False)  # fmt: skip
    assert (proc.returncode, proc.stdout) == (1, b"")
    assert b"unknown host 'nonesuch'" in proc.stderr


@pytest.mark.parametrize("gone", ["interpreter", "package"])
def test_the_commands_fallback_answers_when_python_or_hookbus_is_gone(
    project: Path, tmp_path: Path, gone: str
) -> None:
    """The installed command answers Claude's no-opinion itself when its interpreter or
    hookbus's package has gone, and the refusal when a fail-closed handler wants the event."""
    from hookbus.hosts.claude.manifest import command

    for guarded, expected in ((False, None), (True, "deny")):
        line = command(sys.executable, "PreToolUse", 10, guarded=guarded)
        main = str(Path(hookbus.__file__).with_name("__main__.py"))
        line = line.replace(sys.executable if gone == "interpreter" else main,
                            str(tmp_path / "gone"))  # fmt: skip
        proc = subprocess.run(line, shell=True, input=json.dumps(pre_tool("ls", project)).encode(),
                              capture_output=True, cwd=project, timeout=30, check=False)  # fmt: skip
        assert proc.returncode == 0
        out = (
            json.loads(proc.stdout)["hookSpecificOutput"]["permissionDecision"]
            if proc.stdout
            else None
        )
        assert out == expected


def test_help_lists_the_commands() -> None:
    """``python -m hookbus --help`` names every command."""
    proc = subprocess.run([sys.executable, "-m", "hookbus", "--help"], capture_output=True,
                          text=True, timeout=30, check=True)  # fmt: skip
    for command in ("run", "manifest", "verify", "install", "uninstall"):
        assert command in proc.stdout


@pytest.mark.parametrize(
    ("own", "host", "expected"),
    [
        (5.0, 600.0, 5.0),  # hookbus's budget, far inside Claude's 600 s
        (5.0, 10.0, 5.0),  # the manifest's timeout of 10 s leaves a 1 s margin
        (5.0, 1.5, 1.0),  # Claude's SessionEnd: 1.5 s for all hooks; ours answers in 1 s
        (30.0, 30.0, 27.0),  # never above the host's limit minus 10 %
    ],
)
def test_budget_never_exceeds_the_hosts_limit_minus_a_margin(
    own: float, host: float, expected: float
) -> None:
    """The dispatch budget: the configured one, capped below the host's own limit."""
    from hookbus.bus.budgets import budget

    assert budget(own, host) == pytest.approx(expected)


def test_configuration_follows_the_project_not_the_agents_cd(project: Path, tmp_path: Path) -> None:
    """A model that cd-s out of the project does not escape its guard: the config is found
    from CLAUDE_PROJECT_DIR, as Claude sets it for every hook."""
    configure(project, 'enable = ["mypkg.hooks:no_force_push"]')
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {**os.environ, "CLAUDE_PROJECT_DIR": str(project)}
    result = run_cli("claude", pre_tool("git push --force", elsewhere), cwd=elsewhere, env=env)
    assert json.loads(result.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_concurrent_hooks_share_the_index_and_the_log_without_losses(
    project: Path, isolated_environment: Path
) -> None:
    """Twelve hook processes at once, on a cold index: every reply is right, the cached
    index is whole, and each process's diagnostic line is in the log, intact. (The
    budget is long: 24 cold interpreters at once on a loaded 2-core machine import
    slowly, and this fail-open handler's timeout would let a deny through, correctly.)"""
    configure(project, 'budget = 60\nenable = ["mypkg.hooks:no_force_push"]')
    deny = json.dumps(pre_tool("git push --force", project)).encode()
    command = [sys.executable, "-m", "hookbus", "run", "--host", "claude"]
    procs = [
        subprocess.Popen(command, cwd=project, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
        for _ in range(24)
    ]  # fmt: skip
    for i, p in enumerate(procs):  # all of them get their input before any is read
        assert p.stdin is not None
        p.stdin.write(deny if i % 2 == 0 else b"not json")
        p.stdin.close()
    outputs = []
    for p in procs:
        assert p.stdout is not None and p.stderr is not None
        with p.stdout, p.stderr:
            outputs.append((p.stdout.read(), p.stderr.read()))
        p.wait(timeout=60)
    for stdout, stderr in outputs[::2]:
        assert json.loads(stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"
        assert stderr == b""
    index = isolated_environment / "index"
    wait_for(lambda: list(index.glob("*.json")), "the index the workers cache after replying")
    (cached,) = index.glob("*.json")
    assert json.loads(cached.read_text())["complete"] is True
    codes = [d["event"] for d in diagnostics(isolated_environment)]
    # Each cold call says it compiled the index itself; every bad input is logged once.
    assert sorted(set(codes)) == ["index-missing", "input-invalid"]
    assert codes.count("input-invalid") == 12


# -- what a hostile or clumsy environment must not break --------------------------------

NOISY_GUARD = """
import os, sys, time
import hookbus
print("guard loaded", flush=True)          # at import: must not reach the host
if os.environ.get("GUARD_IMPORT") == "exit":
    sys.exit(2)                              # e.g. an argparse at module level
if os.environ.get("GUARD_IMPORT") == "sleep":
    time.sleep(3)
if os.environ.get("GUARD_IMPORT") == "hang":
    time.sleep(30)

@hookbus.handler("before-tool", tools="shell", timeout=2, fail_closed=True)
def guard(event):
    if "rm -rf" in (event.tool.command or ""):
        return hookbus.Reply.deny("no rm -rf")
    return None

@hookbus.handler("before-tool", tools="shell")
def forks_then_denies(event):
    if os.fork() == 0:                       # a grandchild holding every inherited fd
        time.sleep(10)
        os._exit(0)
    return hookbus.Reply.deny("denied by a forking handler")
"""


@pytest.fixture
def guarded(project: Path) -> Path:
    (project / "guard.py").write_text(NOISY_GUARD)
    configure(project, 'enable = ["guard:guard"]')
    return project


def test_handler_import_output_cannot_reach_the_host_even_on_a_cold_index(guarded: Path) -> None:
    """The first call after a configuration change compiles the index in an isolated
    child: the module's print at import stays out of the reply, and the deny stands."""
    result = hook(guarded, pre_tool("rm -rf /", guarded))
    assert json.loads(result.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert b"guard loaded" not in result.stdout + result.stderr


def test_handler_that_exits_at_import_never_makes_the_hook_exit_2(
    guarded: Path, isolated_environment: Path
) -> None:
    """A SystemExit(2) at import is never the hook's exit code (a block with Claude's JSON
    ignored): the hook exits 0, and, the handler's declaration being unknown, answers the
    deny of a possible guard with the real cause."""
    env = {**os.environ, "GUARD_IMPORT": "exit"}
    result = run_cli("claude", pre_tool("ls", guarded), cwd=guarded, env=env)
    assert (result.exit_code, result.stderr) == (0, b"")
    reason = json.loads(result.stdout)["hookSpecificOutput"]["permissionDecisionReason"]
    assert "guard:guard" in reason and "SystemExit: 2" in reason
    codes = [d["event"] for d in diagnostics(isolated_environment)]
    assert "handler-unavailable" in codes


def test_slow_handler_import_is_waited_for_within_the_budget(
    guarded: Path, isolated_environment: Path
) -> None:
    """A guard module that takes 3 s to import on a cold index is waited for, inside the
    5 s budget: its own answers come through, not a guess."""
    env = {**os.environ, "GUARD_IMPORT": "sleep"}
    result = run_cli("claude", pre_tool("rm -rf /", guarded), cwd=guarded, env=env)
    assert (
        json.loads(result.stdout)["hookSpecificOutput"]["permissionDecisionReason"] == "no rm -rf"
    )
    result = run_cli("claude", pre_tool("ls", guarded), cwd=guarded, env=env)
    assert (result.exit_code, result.stdout) == (0, b"")


def test_a_guard_whose_import_outlives_the_budget_denies_and_is_remembered(
    guarded: Path, isolated_environment: Path
) -> None:
    """An import longer than the 3 s budget is cut by the watchdog: the call is denied (the
    declaration is unknown, so it may be a guard), the hung import is remembered, and the
    next call denies at once, saying which module hung, without importing it again (with
    the whole budget to spare: a loaded machine must not turn it into a second cut)."""
    configure(guarded, 'budget = 3\nenable = ["guard:guard"]')
    env = {**os.environ, "GUARD_IMPORT": "hang"}
    first = run_cli("claude", pre_tool("ls", guarded), cwd=guarded, env=env)
    assert json.loads(first.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"
    fired = [d for d in diagnostics(isolated_environment) if d["event"] == "watchdog-fired"]
    assert "while importing handler guard:guard" in str(fired[0]["message"])
    second = run_cli("claude", pre_tool("ls", guarded), cwd=guarded, env=env)
    reason = json.loads(second.stdout)["hookSpecificOutput"]["permissionDecisionReason"]
    assert "guard:guard did not load: importing its module took longer" in reason


def test_fail_closed_guard_is_not_bypassed_by_an_oversized_payload(guarded: Path) -> None:
    """A payload past the 1 MiB limit is denied when a fail-closed guard wants its event."""
    payload = pre_tool("ls", guarded)
    payload["tool_input"]["padding"] = "x" * (2 << 20)  # type: ignore[index]
    result = hook(guarded, payload)
    out = json.loads(result.stdout)["hookSpecificOutput"]
    assert out["permissionDecision"] == "deny"
    assert "guard:guard" in out["permissionDecisionReason"]


def test_fail_closed_guard_is_not_bypassed_by_a_wrongly_typed_field(guarded: Path) -> None:
    """A payload the strict decoder rejects is denied for a fail-closed guard..."""
    payload = pre_tool("ls", guarded)
    payload["tool_use_id"] = 5
    result = hook(guarded, payload)
    assert json.loads(result.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_wrongly_typed_field_is_no_opinion_without_a_fail_closed_guard(project: Path) -> None:
    """...and answered with no opinion when every interested handler is fail-open."""
    configure(project, 'enable = ["mypkg.hooks:no_force_push"]')
    payload = pre_tool("git push --force", project)
    payload["tool_use_id"] = 5
    assert hook(project, payload).stdout == b""


def test_a_handler_that_forks_still_gets_its_reply_through(guarded: Path) -> None:
    """The worker's reply is length-framed: a grandchild holding the pipe cannot stall it."""
    configure(guarded, 'enable = ["guard:forks_then_denies"]')
    result = hook(guarded, pre_tool("ls", guarded))
    assert json.loads(result.stdout)["hookSpecificOutput"]["permissionDecisionReason"] == (
        "denied by a forking handler"
    )
    assert result.seconds < 5


def test_project_files_cannot_shadow_the_standard_library(guarded: Path) -> None:
    """The installed command (``python -P``) ignores a json.py or token.py in the folder
    the agent works in."""
    from hookbus.hosts.claude.manifest import command

    (guarded / "json.py").write_text("raise SystemExit(3)\n")
    (guarded / "token.py").write_text("raise SystemExit(3)\n")
    proc = subprocess.run(
        command(sys.executable, "PreToolUse", 10), shell=True, input=json.dumps(pre_tool("rm -rf /", guarded)).encode(),
        capture_output=True, cwd=guarded, timeout=30, check=False,
    )  # fmt: skip
    assert proc.returncode == 0
    assert json.loads(proc.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_config_fail_closed_without_timeout_keeps_the_guard(
    project: Path, isolated_environment: Path
) -> None:
    """fail_closed set in configuration without a timeout uses the budget as its timeout
    (and says so) rather than dropping the guard altogether."""
    configure(project, """
        budget = 3.0
        enable = ["mypkg.hooks:explode"]
        [handlers."mypkg.hooks:explode"]
        fail_closed = true
    """)  # fmt: skip
    result = hook(project, pre_tool("ls", project))
    assert json.loads(result.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "config-invalid" in [d["event"] for d in diagnostics(isolated_environment)]


HANGS_AT_IMPORT = """
import time
import hookbus
time.sleep(30)

@hookbus.handler("stop")
def never(event): ...
"""


def test_a_hanging_new_module_leaves_the_other_guards_on(
    guarded: Path, isolated_environment: Path
) -> None:
    """Enabling a module that hangs at import must not switch the working guard off: the
    first call is cut by the watchdog and answered with the known guard's refusal, the
    hang is remembered, and later calls neither import it again nor let the command by."""
    assert json.loads(hook(guarded, pre_tool("rm -rf /", guarded)).stdout)  # index compiled
    (guarded / "hangs.py").write_text(HANGS_AT_IMPORT)
    configure(guarded, 'budget = 2\nenable = ["guard:guard", "hangs:never"]')
    for _ in range(3):
        result = hook(guarded, pre_tool("rm -rf /", guarded))
        assert json.loads(result.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"
    codes = [d["event"] for d in diagnostics(isolated_environment)]
    assert codes.count("watchdog-fired") == 1  # one hung import; the later calls skip it
    assert "handler-unavailable" in codes


def test_lone_surrogates_do_not_blind_a_guard(tmp_path: Path) -> None:
    """JSON may spell text msgspec refuses (a lone surrogate); the README's guard still
    sees the force push around it."""
    example = Path(__file__).resolve().parent.parent / "examples" / "no-force-push"
    payload = (example / "force-push.json").read_text().replace("--force", "--force \\ud800")
    assert "\\ud800" in payload
    result = run_cli("claude", payload, cwd=example)
    assert json.loads(result.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_a_fail_closed_guard_whose_module_breaks_still_denies(
    guarded: Path, isolated_environment: Path
) -> None:
    """A guard module that stops importing (a dependency uninstalled) keeps its last good
    declaration: being fail-closed, it denies rather than silently vanishing."""
    assert json.loads(hook(guarded, pre_tool("rm -rf /", guarded)).stdout)  # index compiled
    guard = guarded / "guard.py"
    guard.write_text("import a_dependency_that_is_gone\n" + NOISY_GUARD)
    result = hook(guarded, pre_tool("ls", guarded))
    out = json.loads(result.stdout)["hookSpecificOutput"]
    assert out["permissionDecision"] == "deny"
    assert "guard:guard" in out["permissionDecisionReason"]
    assert "handler-unavailable" in [d["event"] for d in diagnostics(isolated_environment)]


def test_an_unreadable_payload_is_refused_whatever_tool_name_it_seems_to_carry(
    guarded: Path,
) -> None:
    """A payload too large to read whose first "tool_name" is a decoy inside a tool's
    input (as a host writing tool_input first, or a model, could make it): the guard on
    shell commands still gets its refusal, since the tool of an unreadable payload counts
    as unknown."""
    assert json.loads(hook(guarded, pre_tool("rm -rf /", guarded)).stdout)  # index compiled
    decoy = '{"hook_event_name": "PreToolUse", "tool_input": {"tool_name": "Read", "pad": "'
    payload = decoy + "x" * (2 << 20) + '"}, "tool_name": "Bash", "session_id": "s", "cwd": "/"}'
    result = run_cli("claude", payload, cwd=guarded, args=["--event", "PreToolUse"])
    assert json.loads(result.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"
