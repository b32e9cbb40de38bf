"""``hookbus install --host kimi --scope user``: ``[[hooks]]`` tables in Kimi's
``config.toml``, the user's settings, hooks and comments kept, uninstall leaving the
file byte for byte."""

from __future__ import annotations

import json
import subprocess
import tomllib
from pathlib import Path

import pytest
from support import GUARD, client_call, hookbus_inproc

#: The shared fail-closed shell guard, and a Stop handler.
GOOD = (
    GUARD.replace("PRELUDE", "")
    + """
@hookbus.handler("stop")
def bye(event): ...
"""
)
#: A user's own Kimi configuration, as a person writes it.
THEIRS = """\
# Kimi settings: edited by hand
default_model = "kimi-k2-turbo"   # the fast one

[[hooks]]
# keep .env out of the model's hands
event = "PreToolUse"
command = ".kimi/hooks/protect-env.sh"
matcher = "WriteFile|StrReplaceFile"
timeout = 10

[models.kimi-k2-turbo]
provider = "moonshot"
max_context_size = 262144
"""
GOLDEN = Path(__file__).parent / "golden" / "kimi"


@pytest.fixture
def share(tmp_path: Path, isolated_environment: Path) -> Path:
    user_dir = tmp_path / "xdg-config" / "hookbus"
    user_dir.mkdir(parents=True)
    (user_dir / "mine.py").write_text(GOOD)
    (user_dir / "config.toml").write_text('enable = ["mine:guard", "mine:bye"]\n')
    folder = tmp_path / "kimi-share"
    folder.mkdir()
    return folder


def kimi(share: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return hookbus_inproc(share, *args, "--host", "kimi", "--scope", "user",
                       env={"KIMI_SHARE_DIR": str(share)})  # fmt: skip


def test_install_writes_kimis_tables_after_the_users(share: Path) -> None:
    """One ``[[hooks]]`` table per event after the user's own, with ``event``,
    ``command``, an anchored ``matcher`` and ``timeout`` in whole seconds; the user's
    comments and settings as they were; verify clean."""
    config = share / "config.toml"
    config.write_text(THEIRS)
    proc = kimi(share, "install")
    assert proc.returncode == 0, proc.stderr
    text = config.read_text()
    assert text.startswith(THEIRS.split("[models", maxsplit=1)[0])
    assert "# keep .env out of the model's hands" in text and "# the fast one" in text
    hooks = tomllib.loads(text)["hooks"]
    assert [h["event"] for h in hooks] == ["PreToolUse", "PreToolUse", "Stop"]
    ours = hooks[1]
    assert sorted(ours) == ["command", "event", "matcher", "timeout"]
    assert ours["matcher"] == "^(?:Shell)$" and ours["timeout"] == 10
    assert client_call("kimi", "PreToolUse") in ours["command"]
    assert tomllib.loads(text)["models"]["kimi-k2-turbo"]["max_context_size"] == 262144
    assert kimi(share, "verify").returncode == 0


def test_install_install_uninstall_leaves_the_file_byte_for_byte(share: Path) -> None:
    """Install twice (the second a no-op), uninstall: the user's file exactly."""
    config = share / "config.toml"
    config.write_text(THEIRS)
    assert kimi(share, "install").returncode == 0
    once = config.read_bytes()
    second = kimi(share, "install")
    assert second.returncode == 0 and "already up to date" in second.stdout
    assert config.read_bytes() == once
    assert kimi(share, "uninstall").returncode == 0
    assert config.read_text() == THEIRS


def test_uninstall_after_the_user_edited_keeps_the_edit(share: Path) -> None:
    """A setting changed since install stays; only hookbus's tables go."""
    config = share / "config.toml"
    config.write_text(THEIRS)
    assert kimi(share, "install").returncode == 0
    config.write_text(config.read_text().replace("262144", "131072"))
    assert kimi(share, "uninstall").returncode == 0
    text = config.read_text()
    assert "131072" in text and "--host kimi" not in text
    assert [h["command"] for h in tomllib.loads(text)["hooks"]] == [".kimi/hooks/protect-env.sh"]


def test_a_new_file_is_created_and_removed(share: Path) -> None:
    """With no config.toml, install writes one holding only hookbus's tables; uninstall
    removes it."""
    assert kimi(share, "install").returncode == 0
    assert sorted(tomllib.loads((share / "config.toml").read_text())) == ["hooks"]
    assert kimi(share, "uninstall").returncode == 0
    assert not (share / "config.toml").exists()


def test_verify_sees_drift(share: Path) -> None:
    """A changed timeout is drift; install repairs it."""
    assert kimi(share, "install").returncode == 0
    config = share / "config.toml"
    config.write_text(config.read_text().replace("timeout = 10", "timeout = 99", 1))
    verify = kimi(share, "verify")
    assert verify.returncode == 1 and "PreToolUse: differs" in verify.stdout
    assert kimi(share, "install").returncode == 0
    assert kimi(share, "verify").returncode == 0


def test_a_layout_hookbus_will_not_rewrite_is_refused(share: Path) -> None:
    """``hooks`` as an inline array: refused, the file untouched."""
    config = share / "config.toml"
    inline = 'hooks = [{event = "Stop", command = "./done.sh"}]\n'
    config.write_text(inline)
    proc = kimi(share, "install")
    assert proc.returncode != 0 and "[[hooks]]" in proc.stderr
    assert config.read_text() == inline


def test_kimi_has_no_project_scope(share: Path) -> None:
    """``--scope project`` is refused, naming the user scope; without ``--scope`` the
    user scope, Kimi's only one, is the one installed."""
    env = {"KIMI_SHARE_DIR": str(share)}
    proc = hookbus_inproc(share, "install", "--host", "kimi", "--scope", "project", env=env)
    assert proc.returncode != 0 and "user" in proc.stderr
    assert not (share / "config.toml").exists()
    assert hookbus_inproc(share, "install", "--host", "kimi", env=env).returncode == 0
    assert client_call("kimi") in (share / "config.toml").read_text()


def test_the_installed_command_denies_in_kimis_form(share: Path, tmp_path: Path) -> None:
    """The command as written, run as Kimi runs it (a shell, the payload on stdin): the
    JSON deny with exit 0 for ``rm -rf``; nothing for a harmless command."""
    assert kimi(share, "install").returncode == 0
    (table,) = [h for h in tomllib.loads((share / "config.toml").read_text())["hooks"]
                if h["event"] == "PreToolUse"]  # fmt: skip
    payload = json.loads((GOLDEN / "PreToolUse.Shell.json").read_text())

    def run(command: str) -> subprocess.CompletedProcess[str]:
        data = {**payload, "cwd": str(tmp_path), "tool_input": {"command": command}}
        return subprocess.run(["sh", "-c", table["command"]], input=json.dumps(data),
                              cwd=tmp_path, capture_output=True, text=True, timeout=60,
                              check=False)  # fmt: skip

    done = run("rm -rf /")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["hookSpecificOutput"] == {
        "hookEventName": "PreToolUse", "permissionDecision": "deny",
        "permissionDecisionReason": "no rm -rf"}  # fmt: skip
    assert run("git status").stdout == ""
