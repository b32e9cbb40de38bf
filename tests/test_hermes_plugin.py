"""hookbus's Hermes plugin (:mod:`hookbus.hosts.hermes.plugin`): the envelope it builds is the
one Hermes gives its shell hooks; a call nobody wants in its working folder's
configuration starts nothing; each callback is bounded, catches everything, and answers
what is owed with one diagnostic when hookbus cannot answer; the entry point dispatches
in-process leaving the host's ``sys.path`` alone."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import hookbus
from hookbus.hosts.hermes import plugin as hermes_plugin
from hookbus.hosts.shared.manifest import client_file

GOLDEN = Path(__file__).parent / "golden" / "hermes" / "real"
DENY = 'import hookbus\n@hookbus.handler("before-tool", tools="shell")\ndef deny(event):\n' \
       '    return hookbus.Reply.deny("no shell")\n'  # fmt: skip


BLOCK = '{"action":"block","message":"hookbus could not run"}\n'
#: What the plugin loads hookbus's client from, whose index it reads (this hookbus's), and
#: where Hermes names the project (install bakes it: the client's ``--project``).
CLIENT = {"python": sys.executable, "client": client_file(str(Path(hookbus.__file__).parent)),
          "project": ":cwd"}  # fmt: skip


def callbacks(monkeypatch: pytest.MonkeyPatch, baked: dict[str, Any] | None) -> dict[str, Any]:
    monkeypatch.setattr(hermes_plugin, "BAKED", baked)
    monkeypatch.setattr(hermes_plugin, "_CLIENT", [])
    found: dict[str, Callable[..., Any]] = {}
    hermes_plugin.register(types.SimpleNamespace(register_hook=found.setdefault))
    return found


def event(argv: list[str] | None) -> dict[str, Any]:
    return {"argv": argv}


def wanted(fallback: str = BLOCK, tools: str | None = None) -> dict[str, Any]:
    """The baked ``wanted`` of one install whose handler (by default a fail-closed one)
    wants ``pre_tool_call``."""
    return {"/some/project": {"pre_tool_call": {"fallback": fallback, "tools": tools}}}


def test_the_envelope_is_the_one_hermes_gives_its_shell_hooks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """From the keyword arguments the real Hermes 0.19.0 passed a plugin's pre_tool_call,
    the envelope is what it wrote to a shell hook's stdin in the same run."""
    kwargs = json.loads((GOLDEN / "pre_tool_call.terminal.kwargs.jsonl").read_text())
    monkeypatch.chdir("/")
    built = json.loads(hermes_plugin.envelope("pre_tool_call", kwargs))
    sent = json.loads((GOLDEN / "pre_tool_call.terminal.json").read_text())
    assert {**built, "cwd": sent["cwd"]} == sent


def test_only_baked_events_are_registered(monkeypatch: pytest.MonkeyPatch) -> None:
    """The directory plugin registers only what it was baked with; the entry point, all."""
    baked = {"bound": 10.0, "events": {"pre_tool_call": event(["true"])}}
    assert list(callbacks(monkeypatch, baked)) == ["pre_tool_call"]
    assert tuple(callbacks(monkeypatch, None)) == hermes_plugin.EVENTS


def test_a_call_nobody_wants_in_its_folder_spawns_nothing(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The index of the configuration in effect in the working folder decides: a tool
    the project's handler does not want, and any call in a folder with no configuration
    at all, start nothing; the project's shell tool runs the command."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "m.py").write_text(DENY)
    (project / ".hookbus.toml").write_text('enable = ["m:deny"]\n')
    compiled = subprocess.run([sys.executable, "-m", "hookbus", "manifest", "--host", "hermes"],
                              cwd=project, capture_output=True, timeout=120, check=False)  # fmt: skip
    assert compiled.returncode == 0, compiled.stderr
    marker = tmp_path / "ran"
    argv = [sys.executable, "-c", f"open({str(marker)!r}, 'w')"]
    hooks = callbacks(monkeypatch, {**CLIENT, "events": {"pre_tool_call": event(argv)}})
    monkeypatch.chdir(project)
    assert hooks["pre_tool_call"](tool_name="read_file", args={}) is None
    assert not marker.exists()
    monkeypatch.chdir(tmp_path)  # no configuration here, nor above
    assert hooks["pre_tool_call"](tool_name="terminal", args={}) is None
    assert not marker.exists()
    monkeypatch.chdir(project)
    hooks["pre_tool_call"](tool_name="terminal", args={})
    assert marker.exists()


def test_a_plugin_baked_without_the_projects_whereabouts_leaves_it_to_hookbus(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A plugin installed before ``"project"`` was baked reads no index of a project (it
    cannot tell where Hermes names it): a call its project's handler does not want runs
    the command, which lets hookbus decide, rather than being answered on a guess."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "m.py").write_text(DENY)
    (project / ".hookbus.toml").write_text('enable = ["m:deny"]\n')
    compiled = subprocess.run([sys.executable, "-m", "hookbus", "manifest", "--host", "hermes"],
                              cwd=project, capture_output=True, timeout=120, check=False)  # fmt: skip
    assert compiled.returncode == 0, compiled.stderr
    marker = tmp_path / "ran"
    argv = [sys.executable, "-c", f"open({str(marker)!r}, 'w')"]
    before = {k: v for k, v in CLIENT.items() if k != "project"}
    hooks = callbacks(monkeypatch, {**before, "events": {"pre_tool_call": event(argv)}})
    monkeypatch.chdir(project)
    hooks["pre_tool_call"](tool_name="read_file", args={})
    assert marker.exists()


def test_the_reply_is_hermess_directive(monkeypatch: pytest.MonkeyPatch) -> None:
    """hookbus's stdout comes back as the dict Hermes reads; nothing printed is None; a
    rewrite's ``args`` become a modify only where Hermes has one."""
    assert hermes_plugin.directive("pre_tool_call", b"") is None
    assert hermes_plugin.directive("pre_tool_call", b"{}\n") is None
    rewrite = b'{"args":{"command":"ls"},"action":"block","message":"m"}\n'
    monkeypatch.setattr(hermes_plugin, "has_modify", lambda: False)
    assert hermes_plugin.directive("pre_tool_call", rewrite) == {"action": "block", "message": "m"}
    monkeypatch.setattr(hermes_plugin, "has_modify", lambda: True)
    assert hermes_plugin.directive("pre_tool_call", rewrite) == {
        "action": "modify", "args": {"command": "ls"}}  # fmt: skip


def test_modify_is_detected_from_hermess_code_never_assumed() -> None:
    """Without Hermes importable (here) there is no modify; with 0.19.0 neither (the e2e
    suite loads the plugin in Hermes's own interpreter)."""
    assert hermes_plugin.has_modify() is False


@pytest.mark.parametrize(
    ("argv", "why"),
    [
        (["/nonexistent/python3", "-P", "x"], "cannot run /nonexistent/python3"),
        ([sys.executable, "-c", "import sys; sys.exit(3)"], "exited 3"),
        ([sys.executable, "-c", "print('not json')"], "unreadable answer"),
    ],
    ids=["gone", "exit-code", "not-json"],
)
def test_hookbus_unable_to_answer_gives_the_fallback_and_one_diagnostic(
    monkeypatch: pytest.MonkeyPatch,
    isolated_environment: Path,
    capfd: pytest.CaptureFixture[str],
    argv: list[str],
    why: str,
) -> None:
    """Gone, failing, or printing garbage: the baked fallback (here a fail-closed block),
    one ``hookbus:`` line on stderr and one ``hook-unavailable`` line in the log."""
    hooks = callbacks(monkeypatch, {"bound": 10.0, "events": {"pre_tool_call": event(argv)},
                                    "wanted": wanted()})  # fmt: skip
    reply = hooks["pre_tool_call"](tool_name="terminal", args={"command": "ls"}, session_id="s")
    assert reply == {"action": "block", "message": "hookbus could not run"}
    [line] = (isolated_environment / "diagnostics.jsonl").read_text().splitlines()
    record = json.loads(line)
    assert (record["event"], record["host"], record["native"]) == (
        "hook-unavailable", "hermes", "pre_tool_call")  # fmt: skip
    assert why in record["message"] and "blocked the call" in record["message"]
    said = capfd.readouterr().err.splitlines()
    assert len(said) == 1 and said[0].startswith("hookbus: hermes pre_tool_call: ")


def test_without_hookbus_the_refusal_any_install_saw_applies_to_its_tools_only(
    monkeypatch: pytest.MonkeyPatch, isolated_environment: Path
) -> None:
    """hookbus gone: a tool the fail-closed handler of some install wants gets its
    block, in whatever folder (only hookbus could tell which configuration applies); a
    tool another install's handler wants, no opinion, said; an event no install wanted,
    no opinion, unsaid (hookbus gone, every event would say it again)."""
    argv = ["/nonexistent/python3"]
    baked = {"events": {"pre_tool_call": event(argv), "pre_llm_call": event(argv)},
             "wanted": {"": {"pre_tool_call": {"fallback": "", "tools": "read_file"}},
                        **wanted(tools="terminal|process")}}  # fmt: skip
    hooks = callbacks(monkeypatch, baked)
    blocked = hooks["pre_tool_call"](tool_name="terminal", args={"command": "ls"})
    assert blocked == {"action": "block", "message": "hookbus could not run"}
    assert hooks["pre_tool_call"](tool_name="read_file", args={"path": "x"}) is None
    assert hooks["pre_tool_call"](tool_name="web_search", args={}) is None
    assert hooks["pre_llm_call"](user_message="hi") is None
    said = (isolated_environment / "diagnostics.jsonl").read_text().splitlines()
    assert ["blocked the call" in x for x in said] == [True, False]


def test_the_log_folder_is_made_private_and_a_broken_one_is_no_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The state folder is created 0700; a state path that cannot be a folder loses the
    log line, never the answer."""
    state = tmp_path / "new" / "state"
    monkeypatch.setenv("HOOKBUS_STATE_DIR", str(state))
    hermes_plugin._diagnose("pre_tool_call", "test")
    assert state.stat().st_mode & 0o777 == 0o700
    (tmp_path / "file").write_text("")
    monkeypatch.setenv("HOOKBUS_STATE_DIR", str(tmp_path / "file" / "state"))
    hermes_plugin._diagnose("pre_tool_call", "test")  # no exception


def test_a_hung_hookbus_is_killed_whole_at_the_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    """A command that never answers (and its own child) is killed at the bound; the call
    gets the no-opinion well before the command's 30 s."""
    sleeper = "import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', " \
              "'import time; time.sleep(30)']); print('started', flush=True); time.sleep(30)"  # fmt: skip
    argv = [sys.executable, "-c", sleeper]
    hooks = callbacks(monkeypatch, {"bound": 2.0, "events": {"pre_tool_call": event(argv)}})
    before = set(os.listdir("/proc"))
    started = time.monotonic()
    assert hooks["pre_tool_call"](tool_name="terminal", args={}) is None
    assert time.monotonic() - started < 20
    left = [p for p in set(os.listdir("/proc")) - before
            if p.isdigit() and b"time.sleep(30)" in _cmdline(p)]  # fmt: skip
    assert left == []


def _cmdline(pid: str) -> bytes:
    """A process's command line; empty for one gone meanwhile (another test's, on a
    shared machine, can end between the listing and the read)."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def test_a_callback_never_raises(
    monkeypatch: pytest.MonkeyPatch, isolated_environment: Path
) -> None:
    """Whatever goes wrong inside (a baked entry of the wrong shape), the callback returns
    None and says so once."""
    hooks = callbacks(monkeypatch, {"events": {"pre_tool_call": event(None)}})
    assert hooks["pre_tool_call"](tool_name="terminal") is None
    assert len((isolated_environment / "diagnostics.jsonl").read_text().splitlines()) == 1


def test_a_callback_that_fails_still_gives_a_guards_block(
    monkeypatch: pytest.MonkeyPatch, isolated_environment: Path
) -> None:
    """A failure inside the callback itself (not hookbus's answer) on an event a
    fail-closed handler wants: the baked block, not a silent pass."""
    hooks = callbacks(monkeypatch, {"events": {"pre_tool_call": event(None)}, "wanted": wanted()})
    reply = hooks["pre_tool_call"](tool_name="terminal", args={"command": "rm -rf /"})
    assert reply == {"action": "block", "message": "hookbus could not run"}
    [line] = (isolated_environment / "diagnostics.jsonl").read_text().splitlines()
    assert "callback failed" in line and "blocked the call" in line


#: A fail-closed guard of the shell tool that denies a command naming "forbidden".
GUARD = 'import hookbus\n' \
        '@hookbus.handler("before-tool", tools="shell", fail_closed=True, timeout=5)\n' \
        'def guard(event):\n' \
        '    if "forbidden" in str(event.tool.input):\n' \
        '        return hookbus.Reply.deny("forbidden here")\n'  # fmt: skip


def guarded_project(tmp_path: Path, *, compiled: bool = True) -> Path:
    """A project whose ``.hookbus.toml`` enables :data:`GUARD`, its index compiled (or
    not yet: as just after the configuration changed)."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "g.py").write_text(GUARD)
    (project / ".hookbus.toml").write_text('enable = ["g:guard"]\n')
    if not compiled:
        return project
    done = subprocess.run([sys.executable, "-m", "hookbus", "manifest", "--host", "hermes"],
                          cwd=project, capture_output=True, timeout=120, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return project


def test_a_lone_surrogate_in_an_argument_still_meets_a_guard_enabled_since_install(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A tool call whose command holds a lone surrogate (a model can write ``\\udcff``
    in its JSON) reaches the project's guard, which no install saw, and is denied."""
    project = guarded_project(tmp_path)
    argv = [sys.executable, "-m", "hookbus", "run", "--host", "hermes", "--event", "pre_tool_call"]
    hooks = callbacks(monkeypatch, {**CLIENT, "events": {"pre_tool_call": event(argv)}})
    monkeypatch.chdir(project)
    for command in ("echo forbidden", "echo forbidden \udcff"):
        reply = hooks["pre_tool_call"](tool_name="terminal", args={"command": command})
        assert reply == {"action": "block", "message": "forbidden here"}, command
    assert hooks["pre_tool_call"](tool_name="terminal", args={"command": "ls \udcff"}) is None


@pytest.mark.parametrize(
    "args",
    [{(1, 2): "a key no JSON has"}, {"command": "echo forbidden", "deep": "DEEP"}],
    ids=["non-str-key", "nested-past-the-stack"],
)
def test_arguments_the_plugin_cannot_serialize_get_the_refusal_of_the_index_in_effect(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, isolated_environment: Path, args: Any
) -> None:
    """When the plugin's own code fails on a call (arguments it cannot serialize), the
    call gets the refusal the index in effect in its folder owes (a guard no install
    saw), said once; the command never runs."""
    if args.get("deep") == "DEEP":
        deep: list[Any] = []
        for _ in range(sys.getrecursionlimit() * 2):
            deep = [deep]
        args["deep"] = deep
    project = guarded_project(tmp_path)
    marker = tmp_path / "ran"
    argv = [sys.executable, "-c", f"open({str(marker)!r}, 'w')"]
    hooks = callbacks(monkeypatch, {**CLIENT, "events": {"pre_tool_call": event(argv)}})
    monkeypatch.chdir(project)
    reply = hooks["pre_tool_call"](tool_name="terminal", args=args)
    assert reply is not None and reply["action"] == "block", reply
    assert "g:guard" in reply["message"]
    assert not marker.exists()
    [line] = (isolated_environment / "diagnostics.jsonl").read_text().splitlines()
    assert "callback failed" in line and "blocked the call" in line
    assert hooks["pre_tool_call"](tool_name="read_file", args=args) is None  # not its tool


def test_the_entry_point_dispatches_in_process_leaving_sys_path_alone(tmp_path: Path) -> None:
    """Loaded as ``hookbus.hosts.hermes.plugin`` (the entry point), its callback answers from
    the handlers through a forked worker; ``sys.path`` is unchanged, and what it adds to
    ``sys.modules`` is hookbus, its dependencies msgspec and typing_extensions, and
    standard-library modules."""
    (tmp_path / "m.py").write_text(DENY)
    (tmp_path / "cfg.toml").write_text('python_path = ["."]\nenable = ["m:deny"]\n')
    probe = """
import json, sys, types
path, modules = list(sys.path), set(sys.modules)
import hookbus
from hookbus.hosts.hermes import plugin as hermes_plugin
hooks = {}
hermes_plugin.register(types.SimpleNamespace(register_hook=hooks.setdefault))
reply = hooks["pre_tool_call"](tool_name="terminal", args={"command": "ls"}, session_id="s")
new = {m.split(".")[0] for m in set(sys.modules) - modules}
print(json.dumps({"reply": reply, "path": sys.path == path,
                  "added": sorted(new - set(sys.stdlib_module_names))}))
"""
    env = {**os.environ, "HOOKBUS_CONFIG": str(tmp_path / "cfg.toml"),
           "HOOKBUS_STATE_DIR": str(tmp_path / "state")}  # fmt: skip
    done = subprocess.run([sys.executable, "-P", "-c", probe], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found["reply"] == {"action": "block", "message": "no shell"}
    assert found["path"] is True
    assert set(found["added"]) <= {"hookbus", "msgspec", "typing_extensions"}


def test_the_plugin_imports_no_runtime_and_names_the_in_process_entry() -> None:
    """The plugin file imports nothing of hookbus's runtime (its folder lies below it);
    the entry point reaches the in-process entry by the name it holds, a module with
    ``dispatch``."""
    import ast
    import importlib

    tree = ast.parse(Path(hermes_plugin.__file__).read_text())
    imported = [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    imported += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    assert not [m for m in imported if m.startswith("hookbus")], imported
    assert callable(importlib.import_module(hermes_plugin.ENTRY).dispatch)


def test_arguments_the_plugin_cannot_serialize_before_any_index_get_hookbuss_refusal(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, isolated_environment: Path
) -> None:
    """The same failure with no index compiled yet for the folder's configuration (a
    guard enabled a moment ago): hookbus itself, handed a call it cannot read, answers
    the guard's refusal."""
    project = guarded_project(tmp_path, compiled=False)
    argv = [sys.executable, "-m", "hookbus", "run", "--host", "hermes", "--event", "pre_tool_call"]
    hooks = callbacks(monkeypatch, {**CLIENT, "events": {"pre_tool_call": event(argv)}})
    monkeypatch.chdir(project)
    reply = hooks["pre_tool_call"](tool_name="terminal", args={(1, 2): "a key no JSON has"})
    assert reply is not None and reply["action"] == "block", reply
    assert "g:guard" in reply["message"]
    said = (isolated_environment / "diagnostics.jsonl").read_text()
    assert "callback failed" in said and "blocked the call" in said


def test_the_entry_points_failure_on_a_call_answers_its_guards_refusal(tmp_path: Path) -> None:
    """Loaded as the entry point, arguments the plugin cannot serialize (nested past the
    stack) on the very first call: the refusal of the fail-closed handler wanting the
    event, not a pass."""
    (tmp_path / "g.py").write_text(GUARD)
    (tmp_path / "cfg.toml").write_text('python_path = ["."]\nenable = ["g:guard"]\n')
    probe = """
import json, sys, types
from hookbus.hosts.hermes import plugin as hermes_plugin
hooks = {}
hermes_plugin.register(types.SimpleNamespace(register_hook=hooks.setdefault))
deep = []
for _ in range(sys.getrecursionlimit() * 2):
    deep = [deep]
print(json.dumps(hooks["pre_tool_call"](tool_name="terminal", args={"command": "ls", "d": deep})))
"""
    env = {**os.environ, "HOOKBUS_CONFIG": str(tmp_path / "cfg.toml"),
           "HOOKBUS_STATE_DIR": str(tmp_path / "state")}  # fmt: skip
    done = subprocess.run([sys.executable, "-P", "-c", probe], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    reply = json.loads(done.stdout)
    assert reply is not None and reply["action"] == "block", done.stderr
    assert "g:guard" in reply["message"] and "callback failed" in done.stderr


def test_the_entry_point_in_a_folder_whose_name_is_not_utf8_keeps_its_projects_guard(
    tmp_path: Path,
) -> None:
    """Loaded as the entry point in a project whose folder's name is not UTF-8 (no JSON
    spells it but as an escape hookbus's decoder replaces): the project's guard is not
    lost to the user-level nothing; the call is refused."""
    project = os.fsdecode(bytes(tmp_path) + b"/p\xff")
    os.mkdir(project)
    Path(project, "g.py").write_text(GUARD)
    Path(project, ".hookbus.toml").write_text('enable = ["g:guard"]\n')
    Path(project, ".git").mkdir()
    probe = """
import json, types
from hookbus.hosts.hermes import plugin as hermes_plugin
hooks = {}
hermes_plugin.register(types.SimpleNamespace(register_hook=hooks.setdefault))
print(json.dumps(hooks["pre_tool_call"](tool_name="terminal", args={"command": "echo forbidden"})))
"""
    env = {**os.environ, "HOOKBUS_STATE_DIR": str(tmp_path / "state")}
    done = subprocess.run([sys.executable, "-P", "-c", probe], cwd=project, env=env,
                          capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    reply = json.loads(done.stdout)
    assert reply is not None and reply["action"] == "block", done.stderr


def test_a_callback_works_inside_a_running_event_loop(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Called from a coroutine (Hermes's gateway runs agents under asyncio), a callback
    answers without entering or touching the loop, by either path."""
    import asyncio

    (tmp_path / "m.py").write_text(DENY)
    (tmp_path / "cfg.toml").write_text('python_path = ["."]\nenable = ["m:deny"]\n')
    monkeypatch.setenv("HOOKBUS_CONFIG", str(tmp_path / "cfg.toml"))
    monkeypatch.setenv("HOOKBUS_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.chdir(tmp_path)
    main = str(Path(hookbus.__file__).with_name("__main__.py"))
    argv = [sys.executable, "-P", main, "run", "--host", "hermes", "--event", "pre_tool_call"]
    directory = callbacks(monkeypatch, {"events": {"pre_tool_call": event(argv)}})
    entry = callbacks(monkeypatch, None)

    async def call(hooks: dict[str, Any]) -> Any:
        loop = asyncio.get_running_loop()
        reply = hooks["pre_tool_call"](tool_name="terminal", args={"command": "ls"})
        assert asyncio.get_running_loop() is loop and loop.is_running()
        return reply

    monkeypatch.setattr(hermes_plugin, "BAKED", {"events": {}})
    assert asyncio.run(call(directory)) == {"action": "block", "message": "no shell"}
    monkeypatch.setattr(hermes_plugin, "BAKED", None)
    assert asyncio.run(call(entry)) == {"action": "block", "message": "no shell"}
