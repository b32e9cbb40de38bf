"""A real ``hookbus serve`` in a workspace's state folder, for the in-process hosts' warm
path (``install --server``): started before the host runs, stopped (and its workers
killed) after, and asked how many calls it served."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

from .harness import Workspace


def _hookbus(ws: Workspace, env: Mapping[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hookbus", *args], cwd=ws.project,
                          env={**ws.base_env(), **env}, capture_output=True, text=True,
                          timeout=60, check=False)  # fmt: skip


def served(ws: Workspace, env: Mapping[str, str] | None = None) -> int:
    """Calls the workspace's server has served (it must be running)."""
    done = _hookbus(ws, env or {}, "serve", "--status", "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    count: int = json.loads(done.stdout)["served"]
    return count


@contextlib.contextmanager
def server(ws: Workspace, env: Mapping[str, str] | None = None) -> Iterator[None]:
    """``hookbus serve --detach`` in ``ws``'s state folder for the block's length."""
    started = _hookbus(ws, env or {}, "serve", "--detach")
    assert started.returncode == 0, started.stdout + started.stderr
    try:
        yield
    finally:
        stop(ws.state / "run")


def stop(folder: Path) -> None:
    """The server of ``folder`` and its workers killed, waited for (no process is left)."""
    try:
        pid = int(next(folder.glob("server-*.pid")).read_text())
    except (OSError, ValueError, StopIteration):
        return
    children = Path(f"/proc/{pid}/task/{pid}/children")
    for child in children.read_text().split() if children.exists() else ():
        with contextlib.suppress(ProcessLookupError):
            os.killpg(int(child), signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    until = time.monotonic() + 30
    while Path(f"/proc/{pid}").exists() and time.monotonic() < until:
        with contextlib.suppress(OSError):
            if Path(f"/proc/{pid}/stat").read_text().split(")")[1].split()[0] == "Z":
                return
        time.sleep(0.05)


#: The server's own note that it could not build a handler with required options ahead
#: (it is built without them; its children still run it with them): not the shim's.
SERVER_NOTES = ("server-warm-failed",)


def problems(ws: Workspace) -> list[dict[str, object]]:
    """The workspace's diagnostics but the info lines and :data:`SERVER_NOTES`."""
    return [d for d in ws.diagnostics()
            if d["level"] != "info" and d["event"] not in SERVER_NOTES]  # fmt: skip
