"""The user's configuration file that becomes untrusted (writable by others, in a folder
others can write, another user's), unreadable, or replaced by a folder, a FIFO, a socket
or a link to one keeps the fail-closed guard of its last good version, as a file that
stops parsing does, through the real ``hookbus run`` and the warm server's client; a
file the user removes takes its guard with it. (Run as root, a file of mode 000 is still
readable: that case is then only a change of mode; "another user's" needs root.)"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from servers import stop_servers
from support import GUARD, pre_tool, wait_for

import hookbus
from hookbus.hosts.shared.manifest import CLIENT_LAUNCHER, client_folder

ROOT = os.geteuid() == 0
COLD = [sys.executable, "-m", "hookbus", "run", "--host", "claude", "--event", "PreToolUse",
        "--timeout", "10"]  # fmt: skip
CLIENT = [sys.executable, "-I", "-S", "-c", CLIENT_LAUNCHER, client_folder(str(Path(hookbus.__file__).parent)),
          "--host", "claude", "--project", "CLAUDE_PROJECT_DIR:", "--event", "PreToolUse",
          "--timeout", "10"]  # fmt: skip


class User:
    """A home of the hooks' user: its configuration folder, state folder and a project
    folder with no configuration of its own."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.folder = base / "config" / "hookbus"
        self.file = self.folder / "config.toml"
        self.state = base / "state"
        self.work = base / "work"
        self.env = {**os.environ, "XDG_CONFIG_HOME": str(base / "config"), "HOME": str(base),
                    "HOOKBUS_STATE_DIR": str(self.state), "HOOKBUS_SERVE_IDLE": "60"}  # fmt: skip

    def call(self, argv: list[str], command: str) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(argv, input=pre_tool(command, self.work),
                              capture_output=True, cwd=self.work, env=self.env, timeout=60,
                              check=False)  # fmt: skip

    def served(self) -> bool:
        return any((self.state / "run").glob("server-*.pid"))

    def diagnostics(self) -> str:
        log = self.state / "diagnostics.jsonl"
        return log.read_text() if log.exists() else ""


@pytest.fixture
def user() -> Iterator[User]:
    """The user's fail-closed guard denying ``rm -rf``, enabled in their configuration,
    its index compiled and a warm server started by a first call of the client."""
    base = Path(tempfile.mkdtemp(prefix="hookbus-user-"))
    found = User(base)
    try:
        found.folder.mkdir(parents=True)
        found.work.mkdir()
        (found.folder / "guard.py").write_text(GUARD.replace("PRELUDE", ""))
        found.file.write_text('enable = ["guard:guard"]\n')
        assert denied(found.call(COLD, "rm -rf /tmp/x"))
        wait_for(lambda: list((found.state / "index").glob("*.json")), "the index saved")
        assert denied(found.call(CLIENT, "rm -rf /tmp/x"))
        wait_for(found.served, "the server the client started")
        yield found
    finally:
        stop_servers(found.state)
        shutil.rmtree(base, ignore_errors=True)


def denied(done: subprocess.CompletedProcess[bytes]) -> bool:
    assert done.returncode == 0, done.stderr
    if not done.stdout.strip():
        return False
    return json.loads(done.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"


def _socket(path: Path) -> None:
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(path))
    sock.close()


def _replaced_by(make: Callable[[Path], None], *, link: bool = False) -> Callable[[User], None]:
    def change(user: User) -> None:
        user.file.unlink()
        if link:
            make(user.base / "elsewhere")
            user.file.symlink_to(user.base / "elsewhere")
        else:
            make(user.file)

    return change


CHANGES: dict[str, Callable[[User], None]] = {
    "writable-by-all": lambda user: user.file.chmod(0o666),
    "folder-writable-by-all": lambda user: user.folder.chmod(0o777),
    "unreadable": lambda user: user.file.chmod(0o000),
    "a-folder": _replaced_by(Path.mkdir),
    "a-fifo": _replaced_by(os.mkfifo),
    "a-socket": _replaced_by(_socket),
    "a-link-to-a-folder": _replaced_by(Path.mkdir, link=True),
    "a-link-to-a-fifo": _replaced_by(os.mkfifo, link=True),
    "a-link-to-a-socket": _replaced_by(_socket, link=True),
}
if ROOT:
    CHANGES["another-users"] = lambda user: os.chown(user.file, 65534, 65534)


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_a_user_file_made_untrusted_or_unreadable_keeps_its_guard(user: User, change: str) -> None:
    """After the change, ``rm -rf`` is still denied by ``hookbus run`` and by the client
    (whose server answers), and the diagnostic names the file and the fix."""
    CHANGES[change](user)
    assert denied(user.call(COLD, "rm -rf /tmp/y"))
    assert denied(user.call(CLIENT, "rm -rf /tmp/y"))
    assert user.served()
    if ROOT and change == "unreadable":
        return  # root reads it: nothing to report
    lines = [json.loads(line) for line in user.diagnostics().splitlines()]
    ignored = [d for d in lines if d["event"] == "config-ignored"]
    assert ignored and ignored[-1]["file"] == str(user.file), lines
    assert "fix:" in ignored[-1]["message"] and "remove it" in ignored[-1]["message"]


@pytest.mark.parametrize("folder_writable", [False, True])
def test_a_user_file_removed_takes_its_guard_unless_others_could_remove_it(
    user: User, folder_writable: bool
) -> None:
    """Removing the file is the user's intent: its guard is gone, on both paths. Gone
    from a folder another user can write, it may not be: the guard stays."""
    if folder_writable:
        user.folder.chmod(0o777)
    user.file.unlink()
    for argv in (COLD, CLIENT):
        assert denied(user.call(argv, "rm -rf /tmp/z")) is folder_writable


def test_the_client_never_answers_from_the_index_of_the_project_alone(user: User) -> None:
    """With a project configuration too, and a fresh index of it alone (from a time the
    user had no file), a FIFO in place of the user's file does not make the client read
    that index: the call goes to the server, which keeps the user's guard."""
    (user.work / ".git").mkdir()
    (user.work / ".hookbus.toml").write_text("enable = []\n")
    user.file.rename(user.folder / "away.toml")
    indexes = user.state / "index"
    before = set(indexes.glob("*.json"))
    assert not denied(user.call(COLD, "rm -rf /tmp/w"))  # the project's index alone
    wait_for(lambda: len(set(indexes.glob("*.json")) - before) == 1, "the project's index")
    (user.folder / "away.toml").rename(user.file)
    assert denied(user.call(COLD, "rm -rf /tmp/w"))  # the index of both files
    wait_for(lambda: len(set(indexes.glob("*.json")) - before) == 2, "the index of both")
    user.file.unlink()
    os.mkfifo(user.file)
    assert denied(user.call(CLIENT, "rm -rf /tmp/w"))
