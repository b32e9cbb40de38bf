"""A group of handlers sharing one options section, and what each member gets from its
context, through the real ``hookbus run`` as Claude Code runs it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from support import BUS_VOCABULARY, compile_now, hookbus_cli, wait_for

from hookbus.runtime import inproc
from hookbus.runtime.index import read
from hookbus.testing import CliResult, run_cli

GOLDEN = Path(__file__).parent / "golden" / "claude"
TRANSCRIPT = Path(__file__).parent / "transcripts" / "claude-2.1.332-subagent-parent.jsonl"

#: A group of two members that print what they saw (as a deny reason, or as context);
#: importing the module leaves a mark in ``imported.txt``.
HOOKS = """
import json, os
import hookbus, msgspec

with open(os.path.join(os.path.dirname(__file__), "imported.txt"), "a") as mark:
    mark.write("imported\\n")


class Route(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    mode: str = "enforce"


class Options(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    mode: str = "enforce"
    hosts: dict[str, Route] = msgspec.field(default_factory=dict)


def seen(ctx):
    facts = ctx.transcript()
    return json.dumps({
        "handler": ctx.handler, "env": dict(ctx.env), "project_dir": ctx.project_dir,
        "model": facts.model, "assistant_turn": facts.assistant_turn,
        "problems": list(ctx.problems), "options": msgspec.to_builtins(ctx.options),
    })


@hookbus.handler("before-tool", tools="agent", hosts="claude", options=Options,
                 env=("HOOKBUS_T_MODEL", "HOOKBUS_T_UNSET"), fail_closed=True, timeout=5)
def on_spawn(event, ctx):
    return hookbus.Reply.deny(seen(ctx))


@hookbus.handler("session-start", options=Options)
def on_start(event, ctx):
    return hookbus.Reply.add_context(seen(ctx))


GUARD = hookbus.group(on_spawn, on_start)
"""

CONFIG = """
enable = ["hooks:GUARD"]

[handlers."hooks:GUARD"]
mode = "warn"
priority = 5

[handlers."hooks:GUARD".hosts.claude]
mode = "off"

[handlers."hooks:GUARD".hosts.codex]
mode = 3
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "hooks.py").write_text(HOOKS)
    (root / ".hookbus.toml").write_text(CONFIG)
    return root


def payload(name: str, project: Path) -> dict[str, object]:
    data: dict[str, object] = json.loads((GOLDEN / name).read_text())
    data["cwd"] = str(project / "sub")
    data["transcript_path"] = str(TRANSCRIPT)
    return data


def hook(project: Path, name: str, **env: str) -> CliResult:
    environ = {**os.environ, "CLAUDE_PROJECT_DIR": str(project), **env}
    return run_cli("claude", payload(name, project), cwd=project, env=environ)


def codes(state: Path, code: str) -> list[dict[str, object]]:
    """The diagnostics of ``code`` in the log so far."""
    path = state / "diagnostics.jsonl"
    lines = path.read_text().splitlines() if path.exists() else []
    return [d for d in map(json.loads, lines) if d["event"] == code]


def test_each_member_sees_its_name_env_project_transcript_options_and_problems(
    project: Path, isolated_environment: Path
) -> None:
    """Through ``hookbus run``: the spawn member gets its declared variables that are
    set, Claude's project folder, the real transcript's model, the section's valid parts
    (claude's host section kept, codex's dropped) and the line naming what was dropped;
    the config-invalid diagnostic names the file."""
    result = hook(project, "PreToolUse.Agent.json", HOOKBUS_T_MODEL="haiku", OTHER="x")
    assert result.exit_code == 0
    out = json.loads(result.stdout)["hookSpecificOutput"]
    assert out["permissionDecision"] == "deny"
    assert json.loads(out["permissionDecisionReason"]) == {
        "handler": "hooks:GUARD.on_spawn",
        "env": {"HOOKBUS_T_MODEL": "haiku"},
        "project_dir": str(project),
        "model": "claude-opus-5-5",
        "assistant_turn": True,
        "problems": ["hosts.codex.mode: Expected `str`, got `int`; dropped"],
        "options": {"mode": "warn", "hosts": {"claude": {"mode": "off"}}},
    }
    wait_for(lambda: codes(isolated_environment, "config-invalid"), "config-invalid logged")
    found = codes(isolated_environment, "config-invalid")
    assert all(str(project / ".hookbus.toml") in str(d["message"]) for d in found)
    assert any("hosts.codex.mode" in str(d["message"]) for d in found)


def test_the_index_routes_each_event_only_to_the_members_that_want_it(project: Path) -> None:
    """Each member has its own index entry (the section's priority on each); a Bash call
    (no member wants it) never imports the module; a session start reaches its member."""
    compile_now(project)
    data = read([str(project / ".hookbus.toml")]).data
    assert data is not None
    assert [(h["name"], h["config"], h["member"]) for h in data["handlers"]] == [
        ("hooks:GUARD.on_spawn", "hooks:GUARD", "on_spawn"),
        ("hooks:GUARD.on_start", "hooks:GUARD", "on_start"),
    ]
    # The one section's priority is every member's.
    assert [h["subscription"]["priority"] for h in data["handlers"]] == [5, 5]  # type: ignore[index]
    mark = project / "imported.txt"
    mark.unlink()
    assert hook(project, "PreToolUse.Bash.json").stdout == b""
    assert not mark.exists()
    start = json.loads(hook(project, "SessionStart.startup.json").stdout)
    seen = json.loads(start["hookSpecificOutput"]["additionalContext"])
    assert (seen["handler"], seen["env"]) == ("hooks:GUARD.on_start", {})
    assert mark.read_text() == "imported\n"


def test_the_index_knows_the_environment_each_hosts_handlers_declare(project: Path) -> None:
    """Lookup.declared_env: the union of env= of the handlers routed on a host (the spawn
    member is Claude's only)."""
    compile_now(project)
    lookup = read([str(project / ".hookbus.toml")])
    assert lookup.fresh
    assert lookup.declared_env("claude") == ["HOOKBUS_T_MODEL", "HOOKBUS_T_UNSET"]
    assert lookup.declared_env("codex") == []


def test_a_fail_closed_member_that_cannot_load_is_stood_in_for_alone(project: Path) -> None:
    """After the module breaks, the fail-closed member's stand-in denies what it wanted,
    naming the member; the fail-open member's event is answered with no opinion."""
    compile_now(project)
    (project / "hooks.py").write_text("raise ImportError('broken on purpose')\n")
    spawn = json.loads(hook(project, "PreToolUse.Agent.json").stdout)["hookSpecificOutput"]
    assert spawn["permissionDecision"] == "deny"
    assert "hooks:GUARD.on_spawn did not load" in spawn["permissionDecisionReason"]
    assert "broken on purpose" in spawn["permissionDecisionReason"]
    assert hook(project, "SessionStart.startup.json").stdout == b""


def test_members_with_different_options_are_unavailable_naming_both(
    project: Path, isolated_environment: Path
) -> None:
    """A group whose members declare different options= types does not load; the
    handler-unavailable diagnostic names both functions."""
    (project / "hooks.py").write_text(
        HOOKS.replace(
            '@hookbus.handler("session-start", options=Options)',
            '@hookbus.handler("session-start", options=Route)',
        )
    )
    hook(project, "SessionStart.startup.json")
    wait_for(lambda: codes(isolated_environment, "handler-unavailable"), "unavailable logged")
    [found] = codes(isolated_environment, "handler-unavailable")
    assert "on_start" in str(found["message"])
    assert "on_spawn" in str(found["message"])


def test_doctor_lists_the_members(project: Path) -> None:
    """``hookbus doctor`` names each member of the group."""
    compile_now(project)
    out = hookbus_cli(project, "doctor").stdout
    assert "hooks:GUARD.on_spawn" in out
    assert "hooks:GUARD.on_start" in out


def test_the_in_process_runtime_gives_the_same_context(project: Path) -> None:
    """inproc.dispatch (plugin hosts) hands the member the same project and transcript."""
    result = inproc.dispatch("claude", payload("PreToolUse.Agent.json", project),
                             project=str(project))  # fmt: skip
    reason = json.loads(result.output.stdout)["hookSpecificOutput"]["permissionDecisionReason"]
    seen = json.loads(reason)
    assert (seen["handler"], seen["model"]) == ("hooks:GUARD.on_spawn", "claude-opus-5-5")
    assert seen["project_dir"] == str(project / "sub")  # CLAUDE_PROJECT_DIR is not set


PROBE = """
import sys
from hookbus.cli import main
code = main(["run", "--host", "claude"])
with open(sys.argv[1], "w") as out:
    out.write("\\n".join(sorted(sys.modules)))
sys.exit(code)
"""


def test_an_event_no_member_wants_imports_nothing_new(project: Path) -> None:
    """With a group declaring env= enabled, a warm Bash call still answers with the
    standard library alone: no msgspec, no bus, no transcript reader, no handler."""
    compile_now(project)
    data = json.dumps(payload("PreToolUse.Bash.json", project)).encode()
    seen = project / "modules.txt"
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, str(seen)],
        input=data, capture_output=True, cwd=project, timeout=60, check=True,
    )  # fmt: skip
    assert (proc.stdout, proc.stderr) == (b"", b"")
    modules = set(seen.read_text().split())
    assert "hookbus.runtime.hook" in modules
    assert (
        not {"msgspec", "hooks", "hookbus.hosts.shared.transcript", "hookbus.bus.options"} & modules
    )
    # Of the bus, its vocabulary only; of the hosts, Claude's facts only (no driver).
    assert {m for m in modules if m.startswith("hookbus.bus.")} <= BUS_VOCABULARY
    assert {m for m in modules if m.startswith("hookbus.hosts.")} <= {
        "hookbus.hosts.shared", "hookbus.hosts.shared.facts", "hookbus.hosts.shared.names",
        "hookbus.hosts.claude", "hookbus.hosts.claude.facts",
    }  # fmt: skip


def test_the_configuration_text_of_this_module_is_valid_toml() -> None:
    """CONFIG parses (a guard against a typo in the fixture itself)."""
    import tomllib

    assert tomllib.loads(textwrap.dedent(CONFIG))["enable"] == ["hooks:GUARD"]
