"""The Codex CLI driver: the shared contract, every reply checked against the JSON Schemas
Codex 0.171.0 ships, and what is particular to Codex."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any, ClassVar

import jsonschema
import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import examples

from hookbus import Reply
from hookbus.bus.errors import DecodeError
from hookbus.bus.events import AfterEdit, BeforeTool, Event, FileChange
from hookbus.bus.output import HookOutput
from hookbus.hosts.codex import driver as codex
from hookbus.testing.contract import SAMPLE_CWD, SAMPLE_SESSION, DriverContract, ReplyCase

GOLDEN = Path(__file__).parent / "golden" / "codex"
SCHEMAS = Path(__file__).parent / "codex_schemas"


def slug(native: str) -> str:
    """``PreToolUse`` -> ``pre-tool-use``, as Codex names its schema files."""
    return "".join(f"-{c.lower()}" if c.isupper() else c for c in native).lstrip("-")


@cache
def schema(native: str, direction: str) -> dict[str, Any] | None:
    path = SCHEMAS / f"{slug(native)}.command.{direction}.schema.json"
    return json.loads(path.read_text()) if path.exists() else None


def validate_reply(native: str, output: HookOutput) -> None:
    """What Codex itself checks: exit 0, and stdout empty or one object its schema admits."""
    assert output.exit_code == 0
    assert output.stderr == b""
    if not output.stdout:
        return
    found = output_validator(native)
    assert found is not None, f"{native} has no output schema: it must print nothing"
    found.validate(json.loads(output.stdout))


@cache
def output_validator(native: str) -> jsonschema.protocols.Validator | None:
    """The validator of ``native``'s output schema, the schema checked once: the fuzz
    test validates thousands of replies, and ``jsonschema.validate`` checks the schema
    itself again on each (nine tenths of its time)."""
    found = schema(native, "output")
    if found is None:
        return None
    kind = jsonschema.validators.validator_for(found)
    kind.check_schema(found)
    return kind(found)


def hso(event: str, fields: str) -> bytes:
    return (
        b'{"hookSpecificOutput":{"hookEventName":"'
        + event.encode()
        + b'",'
        + fields.encode()
        + b"}}\n"
    )


PRE_DENY_R = hso("PreToolUse", '"permissionDecision":"deny","permissionDecisionReason":"R"')


class TestCodexContract(DriverContract):
    """The shared contract, on payloads captured from the real Codex 0.171.0
    (``golden/codex/real``) and on schema-built ones."""

    host = "codex"
    golden_dir = GOLDEN
    before_tool_golden = "real/PreToolUse.Bash"
    refusals: ClassVar[dict[str, HookOutput]] = {
        "PreToolUse": HookOutput(PRE_DENY_R),
        "PermissionRequest": HookOutput(
            hso("PermissionRequest", '"decision":{"behavior":"deny","message":"R"}')
        ),
        "UserPromptSubmit": HookOutput(b'{"decision":"block","reason":"R"}\n'),
        "PostToolUse": HookOutput(b'{"decision":"block","reason":"R"}\n'),
        # Nothing to refuse: the refusal is the no-opinion, empty stdout.
        "SessionStart": HookOutput(),
        "Stop": HookOutput(),
        "SessionEnd": HookOutput(),
        "Interrupt": HookOutput(),
    }
    reply_cases = (
        ReplyCase(id="pre-tool-deny", payload="real/PreToolUse.Bash", reply=Reply.deny("no"),
                  stdout=hso("PreToolUse", '"permissionDecision":"deny","permissionDecisionReason":"no"')),
        ReplyCase(id="pre-tool-deny-without-reason-still-says-why", payload="real/PreToolUse.Bash",
                  reply=Reply(decision="deny", reason="  "),
                  stdout=hso("PreToolUse", '"permissionDecision":"deny","permissionDecisionReason":'
                             '"Denied by a hookbus handler."')),
        # Codex refuses a bare allow and any ask (the whole reply would fail, open).
        ReplyCase(id="pre-tool-allow-is-no-opinion", payload="real/PreToolUse.Bash",
                  reply=Reply.allow("fine"), stdout=b""),
        ReplyCase(id="pre-tool-ask-denies", payload="real/PreToolUse.Bash", reply=Reply.ask("sure?"),
                  stdout=hso("PreToolUse", '"permissionDecision":"deny","permissionDecisionReason":"sure?"')),
        ReplyCase(id="pre-tool-rewrite-grants", payload="real/PreToolUse.Bash",
                  reply=Reply.rewrite({"command": "npm test"}),
                  stdout=hso("PreToolUse", '"permissionDecision":"allow","updatedInput":{"command":"npm test"}')),
        ReplyCase(id="pre-tool-context", payload="real/PreToolUse.Bash", reply=Reply.add_context("slow"),
                  stdout=hso("PreToolUse", '"additionalContext":"slow"')),
        ReplyCase(id="pre-tool-message", payload="real/PreToolUse.Bash", reply=Reply.tell_user("hi"),
                  stdout=b'{"systemMessage":"hi"}\n'),
        ReplyCase(id="pre-tool-halt-is-dropped", payload="real/PreToolUse.Bash",
                  reply=Reply.stop_agent("out of budget"), stdout=b""),
        ReplyCase(id="post-tool-deny-is-feedback", payload="real/PostToolUse.Bash",
                  reply=Reply.deny("looks wrong"), stdout=b'{"decision":"block","reason":"looks wrong"}\n'),
        ReplyCase(id="post-tool-context", payload="real/PostToolUse.Bash", reply=Reply.add_context("note"),
                  stdout=hso("PostToolUse", '"additionalContext":"note"')),
        ReplyCase(id="post-tool-halt", payload="real/PostToolUse.Bash", reply=Reply.stop_agent("enough"),
                  stdout=b'{"continue":false,"stopReason":"enough"}\n'),
        ReplyCase(id="prompt-deny-blocks", payload="real/UserPromptSubmit", reply=Reply.deny("secret"),
                  stdout=b'{"decision":"block","reason":"secret"}\n'),
        ReplyCase(id="prompt-context", payload="real/UserPromptSubmit", reply=Reply.add_context("main"),
                  stdout=hso("UserPromptSubmit", '"additionalContext":"main"')),
        ReplyCase(id="session-start-context", payload="real/SessionStart", reply=Reply.add_context("rules"),
                  stdout=hso("SessionStart", '"additionalContext":"rules"')),
        ReplyCase(id="subagent-start-context", payload="real/SubagentStart", reply=Reply.add_context("kid"),
                  stdout=hso("SubagentStart", '"additionalContext":"kid"')),
        ReplyCase(id="stop-keep-working", payload="real/Stop", reply=Reply.continue_working("test first"),
                  stdout=b'{"decision":"block","reason":"test first"}\n'),
        ReplyCase(id="stop-context-is-dropped", payload="real/Stop", reply=Reply.add_context("x"), stdout=b""),
        ReplyCase(id="subagent-stop-keep-working", payload="real/SubagentStop",
                  reply=Reply.continue_working("add Result:"), stdout=b'{"decision":"block","reason":"add Result:"}\n'),
        ReplyCase(id="permission-allow", payload="PermissionRequest.Bash", reply=Reply.allow(),
                  stdout=hso("PermissionRequest", '"decision":{"behavior":"allow"}')),
        ReplyCase(id="permission-deny", payload="PermissionRequest.Bash", reply=Reply.deny("not in CI"),
                  stdout=hso("PermissionRequest", '"decision":{"behavior":"deny","message":"not in CI"}')),
        ReplyCase(id="pre-compact-halt", payload="PreCompact.auto", reply=Reply.stop_agent("no"),
                  stdout=b'{"continue":false,"stopReason":"no"}\n'),
        ReplyCase(id="interrupt-message", payload="Interrupt", reply=Reply(message="bye", halt="x"),
                  stdout=b'{"systemMessage":"bye"}\n'),
        ReplyCase(id="session-end-says-nothing", payload="real/SessionEnd",
                  reply=Reply(context="x", message="y", halt="z"), stdout=b""),
        ReplyCase(id="no-opinion", payload="real/PreToolUse.Bash", reply=Reply(), stdout=b""),
    )  # fmt: skip

    def validate(self, native: str | None, output: HookOutput) -> None:
        validate_reply(native or "PreToolUse", output)


def decode(name: str) -> Any:
    return codex.driver.decode((GOLDEN / f"{name}.json").read_bytes())


REPLIES = [
    Reply.deny("R"), Reply.allow(), Reply.ask("R"), Reply.rewrite({"command": "ls"}),
    Reply.add_context("c"), Reply.tell_user("m"), Reply.continue_working("k"),
    Reply.stop_agent("h"), Reply(decision="deny", updated_input={"command": "ls"}, context="c",
                                 message="m", keep_working="k", halt="h"),
    Reply(updated_input={"command": "ls"}, context="c", message="m", halt="h"),
]  # fmt: skip


@pytest.mark.parametrize("native", codex.ALL_EVENTS)
@pytest.mark.parametrize("reply", REPLIES, ids=lambda r: ",".join(msgspec.structs.asdict(r)))
def test_every_reply_to_every_event_validates_against_its_shipped_schema(
    native: str, reply: Reply
) -> None:
    """Whatever a merged reply holds, each event's stdout is one its own schema admits;
    what it could not take is reported as dropped, never sent."""
    encoded = codex.driver.encode(native, reply)
    validate_reply(native, encoded.output)
    sent = json.loads(encoded.output.stdout or b"{}")
    assert "permissionDecision" not in sent.get("hookSpecificOutput", {}) or sent[
        "hookSpecificOutput"
    ]["permissionDecision"] in ("deny", "allow")
    if sent.get("hookSpecificOutput", {}).get("permissionDecision") == "allow":
        assert "updatedInput" in sent["hookSpecificOutput"]
    if reply != Reply() and not encoded.output.stdout:
        assert encoded.dropped or (reply.decision == "allow" and native != "PreToolUse")


def test_the_driver_knows_exactly_the_events_codex_ships_schemas_for() -> None:
    """The twelve events are those of the 23 shipped schemas (SessionEnd: input only)."""
    inputs = {p.name.split(".")[0] for p in SCHEMAS.glob("*.command.input.schema.json")}
    assert inputs == {slug(n) for n in codex.ALL_EVENTS}
    assert len(list(SCHEMAS.glob("*.schema.json"))) == 23


@pytest.mark.parametrize("native", codex.ALL_EVENTS)
def test_samples_validate_against_the_shipped_input_schemas(native: str) -> None:
    """What ``hookbus try`` sends is a payload Codex itself could send."""
    data = codex.driver.sample(native, cwd=SAMPLE_CWD, session_id=SAMPLE_SESSION)
    found = schema(native, "input")
    assert found is not None
    jsonschema.validate(json.loads(data), found)


def test_real_goldens_validate_against_the_shipped_input_schemas() -> None:
    """The payloads captured from the real program fit the schemas it ships."""
    for path in sorted((GOLDEN / "real").glob("*.json")):
        if path.name.endswith(".expected.json") or path.stem == "PreModelRequest":
            continue
        data = json.loads(path.read_text())
        found = schema(data["hook_event_name"], "input")
        assert found is not None, path
        jsonschema.validate(data, found)


@pytest.mark.parametrize(
    ("payload", "kind", "server"),
    [
        ("real/PreToolUse.Bash", "shell", None),
        ("PreToolUse.apply_patch", "edit", None),
        ("real/PreToolUse.spawn_agent", "agent", None),
        ("PreToolUse.collaborationspawn_agent", "agent", None),
        ("PreToolUse.mcp", "mcp", "github"),
        ("real/PreToolUse.multi_agent_v1wait_agent", "other", None),
    ],
)
def test_tool_names_map_to_portable_kinds(payload: str, kind: str, server: str | None) -> None:
    """Codex's hook tool names become portable tool kinds; MCP tools keep their server."""
    event = decode(payload)
    assert isinstance(event, BeforeTool)
    assert (event.tool.kind, event.tool.mcp_server) == (kind, server)


def test_shell_command_and_spawn_are_read_from_the_input() -> None:
    """A shell call's command and a spawn's message and type are portable fields."""
    assert decode("real/PreToolUse.Bash").tool.command == "echo hi | tee ran_proof.txt"
    (spawn,) = decode("PreToolUse.collaborationspawn_agent").tool.spawns
    assert (spawn.description, spawn.prompt[:6]) == ("find_order_validation", "Locate")


def test_spawn_agent_result_names_the_child_it_started() -> None:
    """spawn_agent's result is a JSON string holding the child's id (real 0.171.0)."""
    assert decode("real/PostToolUse.spawn_agent").child_ids == (
        "01a2318f-5f48-7783-88a5-d0f138dc507c",
    )


def test_subagent_identity() -> None:
    """Subagent events name the child; a tool call inside the child runs as the subagent."""
    stop = decode("real/SubagentStop")
    assert (stop.child.id, stop.child.type, stop.agent.is_subagent) == (
        "01a2318f-5f48-7783-88a5-d0f138dc507c", "default", False)  # fmt: skip
    assert stop.final_text == "Subagent finished: printed from-subagent."
    inner = decode("real/PreToolUse.Bash.in-subagent")
    assert inner.agent.is_subagent and inner.agent.id == stop.child.id


PATCH = """*** Begin Patch
*** Add File: a.txt
+hi
*** Update File: src/b.py
@@
-x
+y
*** Update File: c.py
*** Move to: d/c.py
*** Delete File: /abs/e.md
*** End Patch"""


@pytest.mark.parametrize(
    ("patch", "expected"),
    [
        (PATCH, [("add", "/p/a.txt", None), ("update", "/p/src/b.py", None),
                 ("move", "/p/d/c.py", "/p/c.py"), ("delete", "/abs/e.md", None)]),
        ("*** Begin Patch\r\n*** Update File: x.py\r\n*** End Patch\r\n", [("update", "/p/x.py", None)]),
        ("", []),
        ("not a patch\n*** Add File: \n+x", []),
        ("*** Begin Patch\n*** Delete File: gone.txt\n*** End Patch", [("delete", "/p/gone.txt", None)]),
    ],
)  # fmt: skip
def test_apply_patch_paths(patch: str, expected: list[tuple[str, str, str | None]]) -> None:
    """The files an apply_patch envelope adds, updates, moves and deletes, made absolute."""
    changes = codex.patch_changes(patch, "/p")
    assert [(c.action, c.path, c.from_path) for c in changes] == expected


def test_apply_patch_is_an_edit_with_every_path_and_an_after_edit() -> None:
    """An apply_patch call names every file it touches; its after-tool yields an after-edit
    with each change."""
    event = decode("PostToolUse.apply_patch")
    assert event.tool.paths[:2] == (
        "/home/dev/shop-api/docs/new.md",
        "/home/dev/shop-api/src/app.py",
    )
    (edit,) = codex.driver.derive(event)
    assert isinstance(edit, AfterEdit)
    assert edit.changes[2] == FileChange(
        action="move", path="/home/dev/shop-api/src/new_name.py",
        from_path="/home/dev/shop-api/src/old_name.py")  # fmt: skip


def test_rewrite_is_declared_as_granting_permission() -> None:
    """Only PreToolUse rewrites, and a rewrite grants the call too: a guard reads it."""
    caps = codex.driver.capabilities("PreToolUse")
    assert caps.rewrite_input and caps.rewrite_grants_permission and not caps.ask
    assert not codex.driver.capabilities("PermissionRequest").rewrite_input


def test_dropped_parts_are_reported() -> None:
    """A bare allow, an ask and a halt on PreToolUse are reported, never sent."""
    dropped = codex.driver.encode("PreToolUse", Reply(decision="ask", halt="h")).dropped
    assert {d.field for d in dropped} == {"decision", "halt"}
    assert codex.driver.encode("PreToolUse", Reply.allow()).dropped[0].field == "decision"
    rewrite = Reply(decision="allow", updated_input={"command": "ls"})
    assert codex.driver.encode("PreToolUse", rewrite).dropped == ()


def test_no_opinion_is_empty_for_every_event_and_timeouts_are_codexs() -> None:
    """Empty stdout, exit 0 everywhere; 600 s, SessionEnd and Interrupt clamped to 3 s."""
    assert all(codex.driver.no_opinion(n) == HookOutput() for n in codex.ALL_EVENTS)
    assert codex.driver.timeout("PreToolUse") == 600.0
    assert codex.driver.timeout("SessionEnd") == codex.driver.timeout("Interrupt") == 3.0


scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
#: One level of nesting is enough to put a list or an object where a string belongs.
json_values = (
    scalars | st.lists(scalars, max_size=4) | st.dictionaries(st.text(), scalars, max_size=4)
)
FIELDS = st.sampled_from([
    "session_id", "cwd", "transcript_path", "hook_event_name", "model", "turn_id",
    "permission_mode", "tool_name", "tool_input", "tool_use_id", "tool_response", "agent_id",
    "agent_type", "stop_hook_active", "prompt", "source", "reason", "trigger",
    "last_assistant_message", "agent_transcript_path",
])  # fmt: skip
BASE = {"session_id": "s", "cwd": "/p", "tool_name": "apply_patch",
        "tool_input": {"command": PATCH}}  # fmt: skip


@settings(max_examples=examples(300), deadline=None)
@given(
    event=st.sampled_from([*codex.ALL_EVENTS, "PreModelRequest"]),
    overrides=st.dictionaries(FIELDS, json_values, max_size=4),
    tool=st.sampled_from([*codex.TOOLS, "mcp__x__y", "mcp__", "other"]),
)
def test_any_field_values_decode_or_raise_decode_error(
    event: str, overrides: dict[str, object], tool: str
) -> None:
    """Wrong types anywhere give a DecodeError (answered as no opinion), never a crash;
    a payload that decodes keeps its event name."""
    payload = json.dumps({**BASE, "tool_name": tool, "hook_event_name": event, **overrides})
    try:
        decoded = codex.driver.decode(payload.encode())
    except DecodeError:
        return
    assert isinstance(decoded, Event)
    assert decoded.native == overrides.get("hook_event_name", event)


@settings(max_examples=examples(200), deadline=None)
@given(st.text())
def test_any_patch_text_parses_to_changes(patch: str) -> None:
    """Any text as an apply_patch input parses, to changes with a path each."""
    for change in codex.patch_changes(patch, "/p"):
        assert change.path


PROBE_HANDLER = """
import os, sys
import hookbus

@hookbus.handler("before-tool")
def no(event):
    with open(os.environ["PROBE_MODULES"], "w") as out:
        out.write("\\n".join(sorted(sys.modules)))
    return hookbus.Reply.deny("probe")
"""


@pytest.mark.parametrize(("host", "other"), [("codex", "claude"), ("claude", "codex")])
def test_a_hook_of_one_host_never_imports_the_other_hosts_driver(
    host: str, other: str, tmp_path: Path
) -> None:
    """Where a handler runs (the event decoded, the bus dispatching) once the index is
    compiled, the host's own driver is loaded and the other host's is not: drivers load
    by name on first use."""
    import os
    import subprocess
    import sys

    (tmp_path / "guards_probe.py").write_text(PROBE_HANDLER)
    config = tmp_path / "probe.toml"
    config.write_text('python_path = ["."]\nenable = ["guards_probe:no"]\n')
    payload = json.loads((GOLDEN / "real/PreToolUse.Bash.json").read_text())
    payload["cwd"] = str(tmp_path)
    seen = tmp_path / "modules.txt"
    env = {**os.environ, "HOOKBUS_CONFIG": str(config), "HOOKBUS_STATE_DIR": str(tmp_path / "st"),
           "PROBE_MODULES": str(seen)}  # fmt: skip
    # Twice: the first call compiles the subscription index, for every host; the second
    # is every later hook call, reading it.
    for _ in range(2):
        done = subprocess.run([sys.executable, "-m", "hookbus", "run", "--host", host],
                              input=json.dumps(payload).encode(), capture_output=True,
                              cwd=tmp_path, env=env, timeout=60, check=False)  # fmt: skip
        assert b"probe" in done.stdout, done
    modules = set(seen.read_text().split())
    assert f"hookbus.hosts.{host}" in modules
    assert f"hookbus.hosts.{other}" not in modules
