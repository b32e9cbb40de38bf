"""``hookbus install --host opencode`` (and ``kilo``): one owned plugin file, the shim with
the wanted events baked in, beside the user's own plugins, given back exactly as it was;
and the installed shim itself, run by Node as OpenCode runs it, driving the real CLI."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from support import assert_owned_file_round_trip, hookbus_inproc, install_project, snapshot

THEIRS = "export const Mine = async () => ({})\n"
NODE = shutil.which("node")
needs_node = pytest.mark.skipif(NODE is None, reason="node is not on PATH")


@pytest.fixture
def project(tmp_path: Path, isolated_environment: Path) -> Path:
    return install_project(tmp_path / "proj")


def plugin(project: Path, host: str = "opencode") -> Path:
    folder = ".opencode" if host == "opencode" else ".kilo"
    return project / folder / "plugin" / "hookbus.js"


def shim_config(path: Path) -> dict[str, Any]:
    text = path.read_text()
    start = text.index("const CONFIG = ") + len("const CONFIG = ")
    end = text.index("\n}\n", start) + 2
    config: dict[str, Any] = json.loads(text[start:end])
    return config


@pytest.mark.parametrize("host", ["opencode", "kilo"])
def test_install_bakes_only_the_wanted_events_with_their_fallbacks(
    project: Path, host: str
) -> None:
    """The shell guard's before hook (only for the shell tools, its fallback a block: the
    guard is fail-closed) and the lifecycle handler's session start and stop; nothing else."""
    result = hookbus_inproc(project, "install", "--host", host, "--no-server")
    assert result.returncode == 0, result.stderr
    path = plugin(project, host)
    assert "hookbus-owned-file" in path.read_text()
    config = shim_config(path)
    assert config["host"] == host
    events = config["events"]
    assert list(events) == ["session.created", "tool.execute.before", "session.idle"]
    before = events["tool.execute.before"]
    assert before["fallback"] == {
        "block": "hookbus could not run, and a fail-closed handler wants this event"}  # fmt: skip
    assert before["tools"] == {"names": ["bash", "shell"], "prefixes": []}
    assert events["session.idle"]["fallback"] == {}
    argv = before["argv"]
    assert os.path.isabs(argv[0]) and argv[1:4] == ["-E", "-P", argv[3]]
    assert argv[4:] == ["run", "--host", host, "--event", "tool.execute.before", "--timeout", "10"]
    assert before["wait_ms"] == 12000
    package = "@opencode-ai/plugin" if host == "opencode" else "@kilocode/plugin"
    assert f"note: {host} waits for {package} in {project / ('.' + host)}" in result.stdout


def test_install_twice_then_uninstall_keeps_the_users_plugin(project: Path) -> None:
    theirs = project / ".opencode" / "plugin" / "mine.js"
    theirs.parent.mkdir(parents=True)
    theirs.write_text(THEIRS)
    before = snapshot(project)
    assert_owned_file_round_trip(project, "opencode", plugin(project), theirs)
    assert snapshot(project) == before


def test_uninstall_removes_the_folders_install_made(project: Path) -> None:
    before = snapshot(project)
    assert hookbus_inproc(project, "install", "--host", "kilo").returncode == 0
    assert plugin(project, "kilo").exists()
    assert hookbus_inproc(project, "uninstall", "--host", "kilo").returncode == 0
    assert snapshot(project) == before


def test_install_refuses_a_hookbus_js_of_the_users(project: Path) -> None:
    path = plugin(project)
    path.parent.mkdir(parents=True)
    path.write_text(THEIRS)
    result = hookbus_inproc(project, "install", "--host", "opencode")
    assert result.returncode != 0
    assert "not written by hookbus" in result.stdout + result.stderr
    assert path.read_text() == THEIRS


def test_user_scope_is_the_xdg_config_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--scope user`` is ``$XDG_CONFIG_HOME/opencode/plugin`` (else ``~/.config``)."""
    from hookbus.hosts.kilo.manifest import manifest as kilo
    from hookbus.hosts.opencode.manifest import manifest

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    assert manifest.path("user", None) == str(tmp_path / "xdg/opencode/plugin/hookbus.js")
    assert kilo.path("project", str(tmp_path)) == str(tmp_path / ".kilo/plugin/hookbus.js")
    monkeypatch.delenv("XDG_CONFIG_HOME")
    assert kilo.path("user", None) == os.path.expanduser("~/.config/kilo/plugin/hookbus.js")


def test_verify_sees_an_edited_plugin_and_nothing_is_planned_without_handlers(
    project: Path,
) -> None:
    assert hookbus_inproc(project, "install", "--host", "opencode").returncode == 0
    assert hookbus_inproc(project, "verify", "--host", "opencode").returncode == 0
    path = plugin(project)
    path.write_text(path.read_text().replace('"wait_ms": 12000', '"wait_ms": 1'))
    assert hookbus_inproc(project, "verify", "--host", "opencode").returncode == 1
    (project / ".hookbus.toml").write_text("enable = []\n")
    assert hookbus_inproc(project, "install", "--host", "opencode").returncode == 0
    assert not path.exists()


def installed_package(folder: Path, package: str = "@opencode-ai/plugin") -> None:
    """What npm leaves in ``folder``: the package, and a lock whose root lists it."""
    (folder / "node_modules" / package).mkdir(parents=True)
    lock = {"lockfileVersion": 3, "packages": {"": {"dependencies": {package: "^1.18.33"}}}}
    (folder / "package-lock.json").write_text(json.dumps(lock))


def test_no_note_where_the_package_is_installed(project: Path, tmp_path: Path) -> None:
    for folder in (project / ".opencode", tmp_path / "xdg-config" / "opencode"):
        installed_package(folder)
    result = hookbus_inproc(project, "install", "--host", "opencode")
    assert result.returncode == 0 and "note:" not in result.stdout


FAKE_NPM = """#!/bin/sh
# npm install --prefix FOLDER ... SPEC, as install runs it: logged, then what npm leaves.
echo "$@" >> "$NPM_LOG"
[ -n "$NPM_FAILS" ] && { echo "npm error code ENOTCACHED" >&2; exit 1; }
folder=$3; for spec; do :; done  # the last argument
mkdir -p "$folder/node_modules/@opencode-ai/plugin"
printf '{"packages": {"": {"dependencies": {"@opencode-ai/plugin": "%s"}}}}' "$spec" > "$folder/package-lock.json"
"""


@pytest.fixture
def fake_npm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fake npm and a fake opencode (1.18.33) on PATH; the npm calls' log."""
    bin_dir = tmp_path / "fake-bin"
    bin_dir.mkdir()
    npm = bin_dir / "npm"
    npm.write_text(FAKE_NPM)
    opencode = bin_dir / "opencode"
    opencode.write_text("#!/bin/sh\necho 1.18.33\n")
    for program in (npm, opencode):
        program.chmod(0o755)
    log = tmp_path / "npm.log"
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    monkeypatch.setenv("HOOKBUS_NPM", "npm")
    monkeypatch.setenv("NPM_LOG", str(log))
    return log


def test_install_runs_opencodes_npm_step_ahead_in_each_folder_once(
    project: Path, tmp_path: Path, fake_npm: Path
) -> None:
    """The package OpenCode would install at its start (at its own version), into the
    project's and the user's config folder; a second install finds them satisfied."""
    result = hookbus_inproc(project, "install", "--host", "opencode")
    assert result.returncode == 0, result.stderr
    folders = [project / ".opencode", tmp_path / "xdg-config" / "opencode"]
    calls = fake_npm.read_text().splitlines()
    assert calls == [f"install --prefix {f} --no-audit --no-fund --prefer-offline "
                     "--fetch-retries=0 @opencode-ai/plugin@1.18.33" for f in folders]  # fmt: skip
    for folder in folders:
        assert f"{folder}: installed @opencode-ai/plugin with npm" in result.stdout
    assert "note:" not in result.stdout
    again = hookbus_inproc(project, "install", "--host", "opencode")
    assert again.returncode == 0 and fake_npm.read_text().splitlines() == calls
    dry = hookbus_inproc(project, "install", "--host", "opencode", "--dry-run")
    assert dry.returncode == 0 and fake_npm.read_text().splitlines() == calls


def test_an_npm_that_fails_leaves_the_command_to_run_and_the_plugin_installed(
    project: Path, fake_npm: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NPM_FAILS", "1")
    result = hookbus_inproc(project, "install", "--host", "opencode")
    assert result.returncode == 0, result.stderr
    assert plugin(project).exists()
    folder = project / ".opencode"
    assert (f"note: opencode waits for @opencode-ai/plugin in {folder} before it loads any "
            "plugin: offline, ~70 s at every start until it is there; npm failed (npm error "
            "code ENOTCACHED), run it once online: ") in result.stdout  # fmt: skip
    assert (f"/fake-bin/npm install --prefix {folder} --no-audit --no-fund --prefer-offline "
            "--fetch-retries=0 @opencode-ai/plugin@1.18.33\n") in result.stdout  # fmt: skip


def test_a_dry_run_says_it_would_install_and_runs_nothing(project: Path, fake_npm: Path) -> None:
    result = hookbus_inproc(project, "install", "--host", "opencode", "--dry-run")
    assert result.returncode == 0
    assert f"{project / '.opencode'}: would install @opencode-ai/plugin with npm" in result.stdout
    assert not fake_npm.exists()


# -- the shim, run by Node ------------------------------------------------------------------

DRIVE = """
const mod = await import(process.argv[2])
const calls = JSON.parse(process.argv[3])
const hooks = await mod.HookbusPlugin({ directory: process.cwd() })
const results = []
for (const [name, input, output] of calls) {
  const keep = output && output.args
  const started = Date.now()
  try {
    if (name === "event") await hooks.event(input)
    else if (hooks[name]) await hooks[name](input, output)
    results.push({ ok: true, output, same: !keep || output.args === keep, ms: Date.now() - started })
  } catch (e) {
    results.push({ ok: false, error: e.message, ms: Date.now() - started })
  }
}
console.log(JSON.stringify(results))
"""
REWRITE = """
import hookbus

@hookbus.handler("before-tool", tools="shell")
def shell(event):
    if event.tool.command == "rm -rf /":
        return hookbus.Reply.deny("not that")
    if event.tool.command == "make":
        return hookbus.Reply.rewrite({"command": "make -n"})
    return None

@hookbus.handler("after-tool", tools="shell")
def note(event):
    return hookbus.Reply.add_context("E2E-NOTE")
"""


def bash(command: str, session: str = "ses_1") -> list[Any]:
    return ["tool.execute.before", {"tool": "bash", "sessionID": session, "callID": "c"},
            {"args": {"command": command, "description": "d", "timeout": 5}}]  # fmt: skip


def drive(project: Path, calls: list[Any], host: str = "opencode") -> tuple[list[Any], str]:
    script = project / "drive.mjs"
    script.write_text(DRIVE)
    done = subprocess.run(
        [NODE or "node", str(script), str(plugin(project, host)), json.dumps(calls)],
        cwd=project, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout), done.stderr


def diagnostics(state: Path) -> list[dict[str, Any]]:
    log = state / "diagnostics.jsonl"
    lines = log.read_text().splitlines() if log.exists() else []
    return [d for d in map(json.loads, lines) if d["level"] != "info"]


@needs_node
def test_the_shim_blocks_rewrites_in_place_and_appends_context(
    project: Path, isolated_environment: Path
) -> None:
    """Through the real CLI: a deny throws the reason, a rewrite edits ``output.args``
    (the same object, its other keys gone), no opinion leaves the call as it was, and
    after-tool context is appended to what the model reads."""
    (project / "hooks_mod.py").write_text(REWRITE)
    (project / ".hookbus.toml").write_text('enable = ["hooks_mod:shell", "hooks_mod:note"]\n')
    assert hookbus_inproc(project, "install", "--host", "opencode").returncode == 0
    after = ["tool.execute.after", {"tool": "bash", "sessionID": "s", "callID": "c",
             "args": {"command": "ls"}}, {"title": "ls", "output": "a\\n", "metadata": {}}]  # fmt: skip
    results, stderr = drive(project, [bash("rm -rf /"), bash("make"), bash("ls"), after])
    denied, rewritten, untouched, noted = results
    assert (denied["ok"], denied["error"]) == (False, "not that")
    assert rewritten["output"]["args"] == {"command": "make -n"} and rewritten["same"]
    assert untouched["output"]["args"] == {"command": "ls", "description": "d", "timeout": 5}
    assert noted["output"]["output"] == "a\\n\n\nE2E-NOTE"
    assert (stderr, diagnostics(isolated_environment)) == ("", [])


#: Drives the shim's before hook with args JSON.stringify cannot serialise on its own.
DRIVE_ODD = """
const mod = await import(process.argv[2])
const hooks = await mod.HookbusPlugin({ directory: process.cwd() })
const cyclic = { command: "rm -rf /", description: "d" }
cyclic.self = { parent: cyclic }
const odd = {
  cyclic,
  bigint: { command: "rm -rf /", description: "d", timeout: 10n },
  tojson: { command: "rm -rf /", toJSON() { throw new Error("no JSON here") } },
  harmless: { command: "ls", description: "d", timeout: 10n },
}
const results = {}
for (const [name, args] of Object.entries(odd)) {
  try {
    await hooks["tool.execute.before"]({ tool: "bash", sessionID: "s", callID: "c" }, { args })
    results[name] = { ok: true }
  } catch (e) {
    results[name] = { ok: false, error: e.message }
  }
}
console.log(JSON.stringify(results))
"""


@needs_node
@pytest.mark.parametrize("host", ["opencode", "kilo"])
def test_args_json_cannot_hold_are_not_let_through(
    project: Path, host: str, isolated_environment: Path
) -> None:
    """A cycle or a BigInt in a tool's args reaches the fail-closed guard (a marker, a
    string), which denies; args whose serialising throws get the refusal the guard owes;
    harmless args with a BigInt still pass."""
    assert hookbus_inproc(project, "install", "--host", host).returncode == 0
    script = project / "drive_odd.mjs"
    script.write_text(DRIVE_ODD)
    done = subprocess.run([NODE or "node", str(script), str(plugin(project, host))], cwd=project,
                          capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    results = json.loads(done.stdout)
    assert results["cyclic"] == results["bigint"] == {"ok": False, "error": "not that"}
    assert results["tojson"] == {"ok": False, "error": "hookbus could not run, and a "
                                 "fail-closed handler wants this event"}  # fmt: skip
    assert results["harmless"] == {"ok": True}
    lines = diagnostics(isolated_environment)
    assert [d["event"] for d in lines] == ["hook-unavailable"]
    assert "cannot serialise the payload (no JSON here)" in lines[0]["message"]


@needs_node
def test_hookbus_gone_answers_the_fallback_with_one_diagnostic_each(
    project: Path, isolated_environment: Path, tmp_path: Path
) -> None:
    """The interpreter named at install is gone: the fail-closed guard's before hook
    blocks (its baked fallback), the session start changes nothing; each failure writes
    one stderr line and one ``hook-unavailable`` line in the log."""
    assert hookbus_inproc(project, "install", "--host", "opencode").returncode == 0
    path = plugin(project)
    python = shim_config(path)["events"]["tool.execute.before"]["argv"][0]
    path.write_text(
        path.read_text().replace(json.dumps(python), json.dumps(str(tmp_path / "nope")))
    )
    created = ["event", {"event": {"type": "session.created", "properties": {
        "sessionID": "s", "info": {"id": "s"}}}}, None]  # fmt: skip
    results, stderr = drive(project, [bash("ls"), created])
    assert results[0] == {"ok": False, "error": "hookbus could not run, and a fail-closed "
                          "handler wants this event", "ms": results[0]["ms"]}  # fmt: skip
    assert results[1]["ok"]
    lines = diagnostics(isolated_environment)
    assert [(d["event"], d["native"]) for d in lines] == [
        ("hook-unavailable", "tool.execute.before"), ("hook-unavailable", "session.created")]  # fmt: skip
    assert stderr.count("hookbus: ") == 2
    assert oct(os.stat(isolated_environment).st_mode & 0o777) == "0o700"


@needs_node
def test_a_hung_hookbus_is_killed_at_the_bound_with_its_children(
    project: Path, isolated_environment: Path, tmp_path: Path
) -> None:
    """hookbus that never answers (and a child of its own): the shim kills the whole
    group at its bound and answers the fallback; nothing is left running."""
    (project / ".hookbus.toml").write_text('enable = ["hooks_mod:lifecycle"]\n')
    assert hookbus_inproc(project, "install", "--host", "opencode").returncode == 0
    marker = tmp_path / "hung-child"
    hung = tmp_path / "hung.sh"
    hung.write_text(
        textwrap.dedent(f"""\
        #!/bin/sh
        sleep 300 &
        echo $! > {marker}
        sleep 300
    """)
    )
    hung.chmod(0o755)
    path = plugin(project)
    config = shim_config(path)
    python = config["events"]["session.created"]["argv"][0]
    text = path.read_text().replace(json.dumps(python), json.dumps(str(hung)))
    path.write_text(text.replace('"wait_ms": 12000', '"wait_ms": 2000'))
    created = ["event", {"event": {"type": "session.created", "properties": {
        "sessionID": "s", "info": {"id": "s"}}}}, None]  # fmt: skip
    results, _ = drive(project, [created])
    assert results[0]["ok"] and 2000 <= results[0]["ms"] < 30000
    [line] = diagnostics(isolated_environment)
    assert "no answer from hookbus in 2000 ms" in line["message"]
    child = int(marker.read_text())
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and os.path.exists(f"/proc/{child}"):
        time.sleep(0.05)
    assert not os.path.exists(f"/proc/{child}") or "Z" in Path(f"/proc/{child}/stat").read_text()


@needs_node
def test_unwanted_tools_and_events_spawn_nothing(
    project: Path, isolated_environment: Path, tmp_path: Path
) -> None:
    """A read call (the guard wants the shell only) and a streaming bus event never reach
    hookbus: with hookbus gone, they leave no diagnostic."""
    assert hookbus_inproc(project, "install", "--host", "opencode").returncode == 0
    path = plugin(project)
    python = shim_config(path)["events"]["tool.execute.before"]["argv"][0]
    path.write_text(
        path.read_text().replace(json.dumps(python), json.dumps(str(tmp_path / "nope")))
    )
    read = ["tool.execute.before", {"tool": "read", "sessionID": "s", "callID": "c"},
            {"args": {"filePath": "/etc/hosts"}}]  # fmt: skip
    part = ["event", {"event": {"type": "message.part.updated", "properties": {}}}, None]
    results, stderr = drive(project, [read, part, part])
    assert all(r["ok"] for r in results)
    assert (stderr, diagnostics(isolated_environment)) == ("", [])


@needs_node
def test_a_child_sessions_calls_carry_its_parent(project: Path, tmp_path: Path) -> None:
    """The shim remembers a child's session.created and names its parent in the child's
    later hooks: the handler sees a subagent."""
    seen = tmp_path / "seen.jsonl"
    (project / "hooks_mod.py").write_text(
        textwrap.dedent(f"""\
        import json
        import hookbus

        @hookbus.handler("before-tool")
        def who(event):
            with open({str(seen)!r}, "a") as f:
                f.write(json.dumps([event.session_id, event.agent.role, event.agent.parent_id]) + "\\n")
    """)
    )
    (project / ".hookbus.toml").write_text('enable = ["hooks_mod:who"]\n')
    assert hookbus_inproc(project, "install", "--host", "opencode").returncode == 0
    child = ["event", {"event": {"type": "session.created", "properties": {
        "sessionID": "ses_child", "info": {"id": "ses_child", "parentID": "ses_main",
                                           "agent": "general"}}}}, None]  # fmt: skip
    drive(project, [bash("ls", "ses_main"), child, bash("ls", "ses_child")])
    assert [json.loads(line) for line in seen.read_text().splitlines()] == [
        ["ses_main", "main", None], ["ses_child", "subagent", "ses_main"]]  # fmt: skip


def test_a_folder_is_satisfied_only_as_opencode_judges_it(tmp_path: Path) -> None:
    """OpenCode's own check (Npm.install in 1.18.33): a node_modules/, and a lock whose
    root lists the package and every dependency the folder's package.json names."""
    from hookbus.hosts.shared.npm import satisfied

    package = "@opencode-ai/plugin"
    assert not satisfied(str(tmp_path), package)
    installed_package(tmp_path, package)
    assert satisfied(str(tmp_path), package)
    (tmp_path / "package.json").write_text(json.dumps({"devDependencies": {"left-pad": "1"}}))
    assert not satisfied(str(tmp_path), package)
    (tmp_path / "package-lock.json").write_text("not json")
    assert not satisfied(str(tmp_path), package)
