"""Claude Code's settings: generate, install, verify and uninstall hookbus's entries."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from support import client_call

import hookbus
from hookbus import hosts
from hookbus.hosts.claude import manifest
from hookbus.hosts.shared.manifest import CLIENT_LAUNCHER, client_argv

HANDLERS = """
import hookbus

@hookbus.handler("before-tool", tools="shell")
def shell(event): ...

@hookbus.handler("before-tool", tools=["edit", "mcp:github"])
def edits(event): ...

@hookbus.handler("session-end")
def bye(event): ...

@hookbus.handler("prompt-submit")
def prompt(event): ...
"""

USER_SETTINGS = {
    "model": "opus",
    "permissions": {"allow": ["Bash(npm test)"]},
    "hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./mine.sh"}]}],
        "Notification": [{"hooks": [{"type": "command", "command": "notify-send hi"}]}],
    },
}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "man_handlers.py").write_text(HANDLERS)
    (root / ".hookbus.toml").write_text('enable = ["man_handlers:shell", "man_handlers:bye"]\n')
    return root


def cli(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hookbus", *args, "--host", "claude"],
        cwd=project, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip


def settings(project: Path) -> dict[str, object]:
    return json.loads((project / ".claude" / "settings.json").read_text())  # type: ignore[no-any-return]


@pytest.mark.parametrize("server", [True, False], ids=["default", "no-server"])
def test_manifest_registers_only_subscribed_events_and_tools(project: Path, server: bool) -> None:
    """One entry per wanted event, absolute interpreter, timeouts in seconds; SessionEnd
    keeps Claude's 1.5 s budget (no timeout that would raise it for every hook). By
    default the command is the warm server's client, which always has a deadline (Claude's
    own 1.5 s for SessionEnd) and names no variables (it sends its whole environment);
    with ``--no-server``, ``hookbus run`` itself, with ``-E -P``."""
    proc = cli(project, "manifest", *(() if server else ("--no-server",)))
    assert proc.returncode == 0, proc.stderr
    folder = Path(hookbus.__file__).parent
    python = sys.executable
    if server:
        launcher = shlex.quote(CLIENT_LAUNCHER)
        client = folder / "runtime" / "warm"
        checks = f"if [ -x {python} ] && [ -f {client / 'client.py'} ]; then"
        command = (f"{checks} {python} -I -S -c {launcher} {client} --host claude "
                   "--project CLAUDE_PROJECT_DIR: --event")  # fmt: skip
        end, tail = "SessionEnd --timeout 1.5", ""
    else:
        main = folder / "__main__.py"
        checks = f"if [ -x {python} ] && [ -f {main} ]; then"
        command = f"{checks} {python} -E -P {main} run --host claude --event"
        end, tail = "SessionEnd", ""
    # The hook's own exit passes through; Claude's no-opinion should Python or hookbus be
    # gone, or fail before answering.
    fallback = "s=$?; [ $s -ne 1 ] && [ $s -lt 126 ] && exit $s; fi; exit 0"

    def shell(event: str) -> dict[str, object]:
        return {"matcher": "Bash|PowerShell", "hooks": [{"type": "command", "timeout": 10,
                "command": f"{command} {event} --timeout 10{tail}; {fallback}"}]}  # fmt: skip

    assert json.loads(proc.stdout) == {
        "hooks": {
            "PreToolUse": [shell("PreToolUse")],
            # skills' embedded shell commands, guarded too
            "PreSkillShellCommand": [shell("PreSkillShellCommand")],
            "SessionEnd": [
                {"hooks": [{"type": "command", "command": f"{command} {end}; {fallback}"}]}
            ],
        }
    }


def test_matchers_are_exact_names_or_anchored_regexes() -> None:
    """Plain names stay a name list; with MCP prefixes the regex is anchored."""
    assert (
        manifest.manifest.matcher({"names": ["Bash"], "prefixes": [], "unknown": False}) == "Bash"
    )
    regex = manifest.manifest.matcher(
        {"names": ["Edit", "Write"], "prefixes": ["mcp__github__"], "unknown": False}
    )
    assert regex == "^(?:Edit|Write)$|^mcp__github__"
    assert manifest.manifest.matcher(None) is None
    assert manifest.manifest.matcher({"names": [], "prefixes": [], "unknown": True}) is None


def test_install_keeps_every_user_entry_and_is_idempotent(project: Path) -> None:
    """Install merges ours beside the user's hooks and keys, backs up, and a second
    install changes nothing."""
    path = project / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text(json.dumps(USER_SETTINGS, indent=2))
    first = cli(project, "install")
    assert first.returncode == 0, first.stderr
    result = settings(project)
    assert result["model"] == "opus" and result["permissions"] == USER_SETTINGS["permissions"]
    hooks = result["hooks"]
    assert hooks["Notification"] == USER_SETTINGS["hooks"]["Notification"]  # type: ignore[index]
    assert hooks["PreToolUse"][0] == USER_SETTINGS["hooks"]["PreToolUse"][0]  # type: ignore[index]
    assert client_call("claude") in hooks["PreToolUse"][1]["hooks"][0]["command"]  # type: ignore[index]
    assert (
        json.loads((project / ".claude" / "settings.json.hookbus-backup").read_text())
        == USER_SETTINGS
    )
    second = cli(project, "install")
    assert "already up to date" in second.stdout
    assert settings(project) == result
    assert cli(project, "verify").returncode == 0


def test_verify_reports_drift_after_the_configuration_changes(project: Path) -> None:
    """Enabling a handler for a new event shows up as drift until installed again."""
    cli(project, "install")
    (project / ".hookbus.toml").write_text(
        'enable = ["man_handlers:shell", "man_handlers:prompt"]\n'
    )
    proc = cli(project, "verify")
    assert proc.returncode == 1
    assert "missing: UserPromptSubmit" in proc.stdout
    assert "stale: SessionEnd" in proc.stdout
    cli(project, "install")
    assert cli(project, "verify").returncode == 0
    assert "SessionEnd" not in settings(project)["hooks"]  # type: ignore[operator]


def test_uninstall_removes_only_ours(project: Path) -> None:
    """Uninstall leaves the user's settings exactly as they were before install."""
    path = project / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text(json.dumps(USER_SETTINGS))
    cli(project, "install")
    assert cli(project, "uninstall").returncode == 0
    assert settings(project) == USER_SETTINGS


def test_dry_run_writes_nothing(project: Path) -> None:
    """--dry-run prints the would-be file and leaves the disk alone."""
    proc = cli(project, "install", "--dry-run")
    assert proc.returncode == 0
    assert "PreToolUse" in json.loads(proc.stdout)["hooks"]
    assert not (project / ".claude").exists()


def test_unparseable_settings_are_refused_not_overwritten(project: Path) -> None:
    """A settings file that is not JSON is left untouched, with a clear message."""
    path = project / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text("{ not json")
    proc = cli(project, "install")
    assert proc.returncode == 1
    assert "not valid JSON" in proc.stderr and "will not overwrite" in proc.stderr
    assert path.read_text() == "{ not json"


def test_install_with_nothing_enabled_creates_no_settings_file(project: Path) -> None:
    """No subscribed event, no file: an empty settings.json still slows Claude's start."""
    (project / ".hookbus.toml").write_text("")
    proc = cli(project, "install")
    assert proc.returncode == 0
    assert "nothing to install" in proc.stdout
    assert not (project / ".claude").exists()


def test_install_from_a_subfolder_writes_the_projects_settings(project: Path) -> None:
    """Run in src/, install still writes <project>/.claude/settings.json, where Claude reads."""
    sub = project / "src" / "pkg"
    sub.mkdir(parents=True)
    assert cli(sub, "install").returncode == 0
    assert (project / ".claude" / "settings.json").exists()
    assert not (sub / ".claude").exists()


def test_a_symlinked_settings_file_stays_a_symlink(project: Path) -> None:
    """A settings file linked to another file of the project keeps its link: the link's
    target is what gets rewritten. (A link leading out of the project is refused, and
    the user's own files may be links: tests/test_install_links.py.)"""
    target = project / "shared" / "settings.json"
    target.parent.mkdir()
    target.write_text(json.dumps(USER_SETTINGS))
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").symlink_to(target)
    assert cli(project, "install").returncode == 0
    assert (project / ".claude" / "settings.json").is_symlink()
    assert client_call("claude") in target.read_text()


def test_an_interpreter_that_cannot_run_the_hook_is_refused(project: Path, tmp_path: Path) -> None:
    """``--python`` must run ``-P -m hookbus``: an old Python exits 2 on -P, a block."""
    fake = tmp_path / "python3.10"
    fake.write_text("#!/bin/sh\necho 'Unknown option: -P' >&2\nexit 2\n")
    fake.chmod(0o755)
    proc = cli(project, "install", "--python", str(fake))
    assert proc.returncode == 1
    assert "cannot run 'python -P -m hookbus'" in proc.stderr
    assert not (project / ".claude").exists()


def test_a_handler_module_that_prints_cannot_corrupt_the_manifest(project: Path) -> None:
    """Handler modules are imported in a child for the CLI too: prints stay out of its JSON."""
    (project / "man_handlers.py").write_text("print('loaded!')\n" + HANDLERS)
    proc = cli(project, "manifest")
    assert "PreToolUse" in json.loads(proc.stdout)["hooks"]


def test_verify_fails_when_a_configured_handler_cannot_load(project: Path) -> None:
    """A guard that cannot be imported is reported by verify, not silently absent."""
    (project / ".hookbus.toml").write_text('enable = ["man_handlers:shell", "missing_mod:x"]\n')
    cli(project, "install")
    proc = cli(project, "verify")
    assert proc.returncode == 1
    assert "missing_mod" in proc.stderr


def test_a_handler_of_one_tool_by_name_registers_only_that_tool(tmp_path: Path) -> None:
    """``tools="name:SubagentHandback"`` registers PreToolUse for that tool alone, not a
    hook process on every tool call (as kind ``other`` would)."""
    root = tmp_path / "named"
    root.mkdir()
    (root / "named_tool.py").write_text(
        "import hookbus\n\n"
        '@hookbus.handler("before-tool", tools="name:SubagentHandback")\n'
        "def handback(event): ...\n"
    )
    (root / ".hookbus.toml").write_text('enable = ["named_tool:handback"]\n')
    proc = cli(root, "manifest")
    assert proc.returncode == 0, proc.stderr
    hooks = json.loads(proc.stdout)["hooks"]
    assert sorted(hooks) == ["PreToolUse"]
    assert [g["matcher"] for g in hooks["PreToolUse"]] == ["SubagentHandback"]


#: Where each host names its project, as its client command says it (``--project``).
PROJECT_WORDS = {
    "claude": "CLAUDE_PROJECT_DIR:", "codex": ":cwd", "gemini": "GEMINI_PROJECT_DIR:cwd",
    "cline": ":workspaceRoots", "qwen": "QWEN_PROJECT_DIR:cwd",
    "copilot": "COPILOT_PROJECT_DIR,CLAUDE_PROJECT_DIR:cwd", "vscode": ":cwd", "kimi": ":cwd",
    "cursor": "CURSOR_PROJECT_DIR:workspace_roots,cwd", "antigravity": ":workspacePaths",
    "droid": "FACTORY_PROJECT_DIR:cwd", "qoder": ":cwd", "kiro": ":cwd", "windsurf": ":",
    "goose": ":working_dir", "grok": "GROK_WORKSPACE_ROOT:workspaceRoot,cwd",
    "openhands": "OPENHANDS_PROJECT_DIR:working_dir", "pi": ":cwd", "hermes": ":cwd",
    "opencode": ":directory", "kilo": ":directory",
}  # fmt: skip


def test_each_client_command_names_where_its_host_names_the_project() -> None:
    """The server form's command carries its host's project variables and payload paths
    in one word no shell needs quoted, so the client keeps no table of hosts."""
    assert set(PROJECT_WORDS) == set(hosts.NAMES)
    for host, word in PROJECT_WORDS.items():
        argv = client_argv(sys.executable, host, "E", 10)
        assert argv[argv.index("--project") + 1] == word
        assert shlex.quote(word) == word
