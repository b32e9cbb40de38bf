"""Run a real host program headless in a throwaway HOME and project, with hookbus installed.

A :class:`Workspace` is one test's scratch world: ``home/`` (the host's HOME), ``project/``
(its working directory, where hookbus is configured and installed) and ``state/``
(``HOOKBUS_STATE_DIR``). :class:`Claude` runs Claude Code there against a fake model.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hookbus.testing.fake_models import FakeAnthropic, FakeOpenAIResponses, Scenario

if TYPE_CHECKING:
    from hookbus.local.store import Dispatch

HERE = Path(__file__).resolve().parent
HANDLERS_MODULE = "e2e_handlers"
INSTALL_TIMEOUT = 60.0
#: Below pytest's own 60 s per test, so a hung host fails with its output shown.
RUN_TIMEOUT = 45.0
#: Environment that keeps Claude Code offline (no telemetry, updates or error reports).
CLAUDE_OFFLINE_ENV = {
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_ERROR_REPORTING": "1",
}
Options = Mapping[str, object]
#: The info lines of a warm server's life, which every workspace now has.
SERVER_LIFE = ("server-started", "server-stopped")


def capturing_goldens() -> bool:
    """True when real payloads are to be saved as goldens (``HOOKBUS_E2E_GOLDEN=1``); the
    recorder of ``other`` events is then enabled too, so every native event is seen."""
    return os.environ.get("HOOKBUS_E2E_GOLDEN") == "1"


def toml_value(value: object) -> str:
    """A TOML literal for the few option types tests use."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float | str):
        return json.dumps(value)  # JSON strings and numbers are valid TOML
    if isinstance(value, list | tuple):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    raise TypeError(f"no TOML literal for {value!r}")


def read_json_lines(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@dataclass
class Workspace:
    """One test's scratch folders and what hookbus wrote in them."""

    root: Path
    #: What the last ``hookbus install`` printed.
    install_output: str = ""

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def project(self) -> Path:
        return self.root / "project"

    @property
    def state(self) -> Path:
        return self.root / "state"

    @property
    def tmp(self) -> Path:
        return self.root / "tmp"

    @property
    def events_path(self) -> Path:
        """Where the ``record`` handler appends the events it got."""
        return self.root / "events.jsonl"

    def create(self) -> Workspace:
        for folder in (self.home, self.project, self.state, self.tmp):
            folder.mkdir(parents=True, exist_ok=True)
        return self

    def base_env(self) -> dict[str, str]:
        """A clean environment: nothing of the caller's HOME, host or hookbus settings.
        No ``XDG_RUNTIME_DIR``: the warm server the installed client starts listens in
        the workspace's own ``state/run/``, never beside the user's or another test's."""
        return {
            # The workspace's own bin/ first: a test puts programs there (hookbus on PATH).
            "PATH": f"{self.root / 'bin'}:{os.environ.get('PATH', '/usr/bin:/bin')}",
            "LANG": "C.UTF-8",
            "HOME": str(self.home),
            "TMPDIR": str(self.tmp),
            "HOOKBUS_STATE_DIR": str(self.state),
        }

    def install_hookbus(
        self,
        handlers: Mapping[str, Options | None],
        *,
        record: bool = True,
        args: Sequence[str] = (),
        host: str = "claude",
        env: Mapping[str, str] | None = None,
    ) -> None:
        """Enable ``e2e_handlers:<name>`` for each of ``handlers`` (with its options), the
        event recorder first unless ``record`` is false, and run ``hookbus install``
        (with ``args``, and ``env`` added to the environment) for ``host``."""
        shutil.copyfile(HERE / f"{HANDLERS_MODULE}.py", self.project / f"{HANDLERS_MODULE}.py")
        wanted: dict[str, Options | None] = {}
        if record:
            wanted["record"] = {"path": str(self.events_path)}
            if capturing_goldens():
                wanted["record_other"] = {"path": str(self.events_path)}
        wanted.update(handlers)
        names = [f"{HANDLERS_MODULE}:{name}" for name in wanted]
        lines = [f"enable = {toml_value(names)}"]
        for name, options in zip(names, wanted.values(), strict=True):
            if options:
                lines += ["", f"[handlers.{json.dumps(name)}]"]
                lines += [f"{key} = {toml_value(value)}" for key, value in options.items()]
        (self.project / ".hookbus.toml").write_text("\n".join(lines) + "\n")
        argv = [sys.executable, "-m", "hookbus", "install", "--host", host, *args]
        done = subprocess.run(
            argv,
            cwd=self.project,
            env={**self.base_env(), **(env or {})},
            capture_output=True,
            text=True,
            timeout=INSTALL_TIMEOUT,
            stdin=subprocess.DEVNULL,
            check=False,
        )
        assert done.returncode == 0, f"{' '.join(argv)} failed:\n{done.stdout}{done.stderr}"
        self.install_output = done.stdout

    def events(self, *, other: bool = False) -> list[dict[str, Any]]:
        """What the recorders got, in order; events of kind ``other`` only when asked."""
        found = read_json_lines(self.events_path)
        return found if other else [e for e in found if e["kind"] != "other"]

    def diagnostics(self, *, server: bool = False) -> list[dict[str, Any]]:
        """The state folder's diagnostics; the warm server's own start and stop lines
        (info: install's default command starts one on its first call) only when asked."""
        found = read_json_lines(self.state / "diagnostics.jsonl")
        return found if server else [d for d in found if d.get("event") not in SERVER_LIFE]

    def placeholders(self) -> dict[str, str]:
        """Scratch paths (longest first) and the placeholders that stand for them."""
        project = str(self.project)
        pairs = {
            # Claude names a project's transcript folder after its path, [^A-Za-z0-9] -> "-".
            re.sub("[^A-Za-z0-9]", "-", project): "<project-slug>",
            project: "<project>",
            str(self.home): "<home>",
            str(self.root): "<tmp>",
        }
        return dict(sorted(pairs.items(), key=lambda kv: -len(kv[0])))

    def anonymized(self, value: Any) -> Any:
        """``value`` with this workspace's absolute paths replaced by placeholders."""
        text = json.dumps(value)
        for path, placeholder in self.placeholders().items():
            text = text.replace(path, placeholder)
        return json.loads(text)

    def save_goldens(self, folder: Path, seen: set[str]) -> None:
        """Save the raw payload of each native event recorded here, one file per event
        name (``<Event>.json``), unless ``seen`` already has it; add it to ``seen``."""
        folder.mkdir(parents=True, exist_ok=True)
        for event in self.events(other=True):
            native = event["native"]
            if native not in seen:
                seen.add(native)
                text = json.dumps(self.anonymized(event["raw"]), indent=2)
                (folder / f"{native}.json").write_text(text + "\n")


@dataclass(frozen=True)
class Finished:
    """A finished process."""

    returncode: int
    stdout: str
    stderr: str
    #: Command lines of processes of its group still alive after it exited (then killed).
    leftovers: tuple[str, ...]


@dataclass(frozen=True)
class HostRun:
    """One finished run of a host program: each host's run adds its fake model and the
    readers of its own output."""

    argv: list[str]
    process: Finished
    seconds: float

    @property
    def returncode(self) -> int:
        return self.process.returncode

    def json_lines(self) -> list[dict[str, Any]]:
        """The JSON object lines of stdout (a host's ``--json`` stream)."""
        return [
            json.loads(line) for line in self.process.stdout.splitlines() if line.startswith("{")
        ]

    def describe(self) -> str:
        p = self.process
        return (
            f"$ {' '.join(self.argv)}\nrc={p.returncode} after {self.seconds:.1f}s\n"
            f"left behind: {list(p.leftovers)}{self.more_left_behind()}\n"
            f"--- stdout\n{p.stdout[-4000:]}\n--- stderr\n{p.stderr[-4000:]}"
        )

    def more_left_behind(self) -> str:
        return ""


@dataclass(frozen=True)
class Run(HostRun):
    """One finished host run."""

    #: ``time.time()`` right after the host process exited.
    ended: float
    model: FakeAnthropic

    @property
    def output(self) -> dict[str, Any]:
        """The ``--output-format json`` result."""
        result: dict[str, Any] = json.loads(self.process.stdout)
        return result


def run_process(argv: list[str], *, cwd: Path, env: Mapping[str, str], timeout: float) -> Finished:
    """Run ``argv`` with stdin on /dev/null in a process group of its own, which is killed
    when it is done. On timeout, AssertionError says what it printed."""
    process = subprocess.Popen(
        argv,
        cwd=cwd,
        env=dict(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_group(process.pid)
        stdout, stderr = process.communicate()
        raise AssertionError(
            f"{argv[0]} did not finish within {timeout:.0f}s; killed\n"
            f"--- stdout\n{stdout[-4000:]}\n--- stderr\n{stderr[-4000:]}"
        ) from None
    finally:
        leftovers = kill_group(process.pid)
        process.wait()
    return Finished(process.returncode, stdout, stderr, leftovers)


def kill_group(pgid: int) -> tuple[str, ...]:
    """Kill process group ``pgid``; the command lines of the processes it still had."""
    members = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, IndexError, ValueError):
            fields = stat.read_text().rpartition(")")[2].split()
            if int(fields[2]) == pgid and fields[0] != "Z":
                cmdline = (stat.parent / "cmdline").read_bytes()
                # An empty command line is a process caught between exit and zombie (its
                # memory, and with it argv, already released): it is not left behind.
                if cmdline:
                    members.append(cmdline.replace(b"\0", b" ").decode(errors="replace").strip())
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signal.SIGKILL)
    return tuple(members)


@dataclass(frozen=True)
class Claude:
    """Claude Code (a pinned real binary) in one workspace."""

    executable: Path
    workspace: Workspace

    def run(
        self,
        prompt: str,
        scenario: Scenario | Mapping[str, Any],
        *,
        tools: Sequence[str] = ("Bash",),
        timeout: float = RUN_TIMEOUT,
        args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
    ) -> Run:
        """``claude -p PROMPT [ARGS]`` in the project, against a fake model playing
        ``scenario``, with ``env`` added to the workspace's environment.

        Never ``--bare``: it skips hooks. ``--allowedTools`` lets the scripted calls run
        without a permission prompt (``-p`` mode denies what needs one).
        """
        ws = self.workspace
        argv = [str(self.executable), "-p", prompt, "--output-format", "json", *args,
                "--allowedTools", *tools]  # fmt: skip
        with FakeAnthropic(scenario, log_path=ws.root / "requests.jsonl") as model:
            env = {**ws.base_env(), **(env or {}), **CLAUDE_OFFLINE_ENV,
                   "ANTHROPIC_BASE_URL": model.url, "ANTHROPIC_API_KEY": "sk-ant-fake"}  # fmt: skip
            started = time.monotonic()
            done = run_process(argv, cwd=ws.project, env=env, timeout=timeout)
            ended = time.time()
            seconds = time.monotonic() - started
        return Run(argv, done, seconds, ended, model)


#: ``$CODEX_HOME/config.toml`` of a test run: the fake provider (its port set per run with
#: ``-c``), no approvals, no sandbox, no update check, no analytics; the project trusted,
#: or Codex ignores its ``.codex/`` folder (hook trust is bypassed per run instead).
CODEX_CONFIG = """\
model = "gpt-fake"
model_provider = "fake"
approval_policy = "never"
sandbox_mode = "danger-full-access"
check_for_update_on_startup = false

[model_providers.fake]
name = "Fake loopback"
base_url = "http://127.0.0.1:9/v1"
env_key = "FAKE_OPENAI_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0

[analytics]
enabled = false

[projects.{project}]
trust_level = "trusted"
"""


@dataclass(frozen=True)
class CodexRun(HostRun):
    """One finished ``codex exec --json`` run."""

    model: FakeOpenAIResponses

    @property
    def items(self) -> list[dict[str, Any]]:
        """The ``--json`` stream's events."""
        return self.json_lines()


@dataclass(frozen=True)
class Codex:
    """The Codex CLI (a pinned real binary) in one workspace."""

    executable: Path
    workspace: Workspace

    @property
    def home(self) -> Path:
        return self.workspace.root / "codex_home"

    def run(self, prompt: str, scenario: Scenario | Mapping[str, Any], *,
            timeout: float = RUN_TIMEOUT) -> CodexRun:  # fmt: skip
        """``codex exec --json PROMPT`` in the project against a fake Responses server.

        Hook trust is bypassed for this run only (``--dangerously-bypass-hook-trust``: a
        user trusts hooks in ``/hooks``); ``--disable plugins`` keeps Codex offline.
        """
        ws = self.workspace
        self.home.mkdir(exist_ok=True)
        config = CODEX_CONFIG.format(project=json.dumps(str(ws.project)))
        (self.home / "config.toml").write_text(config)
        with FakeOpenAIResponses(scenario, log_path=ws.root / "requests.jsonl") as model:
            argv = [str(self.executable), "exec", "--json", "--skip-git-repo-check",
                    "--dangerously-bypass-hook-trust", "--disable", "plugins",
                    "-c", f'model_providers.fake.base_url="{model.url}/v1"', prompt]  # fmt: skip
            env = {**ws.base_env(), "CODEX_HOME": str(self.home), "FAKE_OPENAI_KEY": "sk-fake",
                   "SHELL": "/bin/bash"}  # fmt: skip
            started = time.monotonic()
            done = run_process(argv, cwd=ws.project, env=env, timeout=timeout)
            seconds = time.monotonic() - started
        return CodexRun(argv, done, seconds, model)


def dispatches(ws: Workspace) -> list[Dispatch]:
    """The dispatch rows in the workspace's store (what the guard recorded)."""
    from hookbus.local.store import FILE, Store

    store = Store(str(ws.state / FILE), time.monotonic() + 30)
    try:
        return store.dispatches()
    finally:
        store.close()
