"""The real Cline CLI, headless, in one :class:`~tests.e2e.harness.Workspace`.

Two steps per run, from the project, against
:class:`~hookbus.testing.fake_models.FakeOpenAIChat`:

1. ``cline auth -p openai-compatible -k sk-fake -m fake-model -b URL/v1`` writes the
   provider into ``~/.cline/data/settings/providers.json``; ``cline`` itself has no
   base-URL flag. It is a whole CLI start (about 4 s here), so :func:`authenticate` runs
   it once a session, with a placeholder URL, and each run copies the file it wrote into
   its HOME with the fake's URL of that run in place of the placeholder.
2. ``cline -P openai-compatible -m fake-model --json PROMPT`` runs the task in act mode
   with every tool auto-approved (the default of a prompt given on the command line) and
   prints one JSON object a line. ``-p`` would be plan mode in 3.0.65, not "print".

``CLINE_SESSION_BACKEND_MODE=local`` keeps the session in the CLI's own process: without
it the CLI starts a hub daemon (``cline --cline-hub-daemon``) that outlives it.
``CLINE_NO_AUTO_UPDATE=1`` stops the update check. HOME is the workspace's, so no user's
hooks (``~/Documents/Cline/Hooks``, ``~/.cline/hooks``) run.

Cline spawns its lifecycle hooks (TaskStart, TaskComplete, SessionShutdown...) and that
hub daemon with ``detached: true`` (``@cline/core`` ``runSubprocessEvent``): each is the
leader of a session of its own, out of reach of ``run_process``'s process-group kill. So
after the CLI exits the runner waits for every process that still has the workspace's
HOME (a detached hook still recording its event), kills what is left after
:data:`SETTLE_TIMEOUT` and reports it in :attr:`ClineRun.detached`.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from servers import is_server

from hookbus.testing.fake_models import FakeOpenAIChat, Scenario

from .harness import RUN_TIMEOUT, HostRun, Workspace, run_process

PROVIDER = "openai-compatible"
MODEL = "fake-model"
ENV = {"CLINE_SESSION_BACKEND_MODE": "local", "CLINE_NO_AUTO_UPDATE": "1"}
AUTH_TIMEOUT = 30.0
#: The base URL :func:`authenticate` gives ``cline auth``; nothing listens there.
PLACEHOLDER_URL = "http://127.0.0.1:9/v1"
PROVIDERS = Path(".cline", "data", "settings", "providers.json")
#: How long detached hooks get to finish after the CLI exited (they take well under 1 s).
SETTLE_TIMEOUT = 15.0


def with_home(home: Path) -> dict[int, str]:
    """Live processes (zombies aside) whose environment has ``HOME=home``: pid -> command
    line. The warm server the installed client started is not one: it outlives the run by
    design (the workspace's teardown stops it)."""
    needle = b"\0HOME=" + os.fsencode(home) + b"\0"
    found = {}
    for environ in Path("/proc").glob("[0-9]*/environ"):
        with contextlib.suppress(OSError, IndexError):
            pid = int(environ.parent.name)
            state = (environ.parent / "stat").read_text().rpartition(")")[2].split()[0]
            if pid != os.getpid() and state != "Z" and needle in b"\0" + environ.read_bytes():
                cmdline = (environ.parent / "cmdline").read_bytes()
                if is_server(cmdline.split(b"\0")):
                    continue
                found[pid] = cmdline.replace(b"\0", b" ").decode(errors="replace").strip()
    return found


def settle(home: Path, timeout: float = SETTLE_TIMEOUT) -> tuple[str, ...]:
    """Wait for the processes with ``HOME=home`` to end; kill those left after ``timeout``
    and return their command lines."""
    deadline = time.monotonic() + timeout
    while (alive := with_home(home)) and time.monotonic() < deadline:
        time.sleep(0.1)
    for pid in alive:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    return tuple(alive.values())


def authenticate(executable: Path, folder: Path) -> str:
    """What ``cline auth`` writes as ``providers.json`` for the fake provider at
    :data:`PLACEHOLDER_URL` (run in ``folder``, its HOME)."""
    home, project = folder / "home", folder / "project"
    project.mkdir(parents=True)
    auth = [str(executable), "auth", "-p", PROVIDER, "-k", "sk-fake", "-m", MODEL,
            "-b", PLACEHOLDER_URL]  # fmt: skip
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), **ENV}
    done = run_process(auth, cwd=project, env=env, timeout=AUTH_TIMEOUT)
    assert (done.returncode, done.leftovers, settle(home)) == (0, (), ()), done
    text = (home / PROVIDERS).read_text()
    assert PLACEHOLDER_URL in text, text
    return text


@dataclass(frozen=True)
class ClineRun(HostRun):
    """One finished ``cline --json`` run."""

    model: FakeOpenAIChat
    #: Command lines of detached processes (hooks, a hub daemon) still alive
    #: :data:`SETTLE_TIMEOUT` after the CLI exited (then killed).
    detached: tuple[str, ...]

    @property
    def lines(self) -> list[dict[str, Any]]:
        """The ``--json`` stream: ``hook_event``, ``agent_event``, ``run_result``, ..."""
        return self.json_lines()

    @property
    def result(self) -> dict[str, Any]:
        """The ``run_result`` line (``finishReason``, ``text``, ``iterations``)."""
        [found] = [line for line in self.lines if line.get("type") == "run_result"]
        return found

    def more_left_behind(self) -> str:
        return f", detached: {list(self.detached)}"


@dataclass(frozen=True)
class Cline:
    """The Cline CLI (a pinned real program) in one workspace."""

    executable: Path
    workspace: Workspace
    #: ``providers.json`` as :func:`authenticate` got it.
    providers: str

    def env(self) -> dict[str, str]:
        return {**self.workspace.base_env(), **ENV}

    def run(
        self, prompt: str, scenario: Scenario | Mapping[str, Any], *, timeout: float = RUN_TIMEOUT
    ) -> ClineRun:
        ws = self.workspace
        with FakeOpenAIChat(scenario, log_path=ws.root / "requests.jsonl") as model:
            providers = ws.home / PROVIDERS
            providers.parent.mkdir(parents=True, exist_ok=True)
            providers.write_text(self.providers.replace(PLACEHOLDER_URL, f"{model.url}/v1"))
            argv = [str(self.executable), "-P", PROVIDER, "-m", MODEL, "--json", prompt]
            started = time.monotonic()
            done = run_process(argv, cwd=ws.project, env=self.env(), timeout=timeout)
            seconds = time.monotonic() - started
            detached = settle(ws.home)
        return ClineRun(argv, done, seconds, model, detached)
