"""What ``hookbus doctor`` finds: the facts of one report (``--json`` prints them as they
are) and its findings, each a *problem* (a hook would misbehave: exit 1) or a *note*."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import TypedDict

    from hookbus.hosts.shared.manifest import Scope

    class Finding(TypedDict):
        area: str  # the host's name, "configuration", "handlers" or "state"
        subject: str  # the file, handler or folder it is about
        message: str
        fix: str | None

    class InterpreterData(TypedDict):
        program: str  # as the command names it ("hookbus", "python3": on PATH)
        main: str | None  # hookbus's __main__.py the command runs (absolute form)
        found: str | None  # where the program is (on this PATH for the PATH forms)
        ok: bool
        hookbus: str | None  # the version of the hookbus it imports
        problem: str | None

    class InstallData(TypedDict):
        scope: Scope
        variant: str  # "default", or "plugin" (install --plugin: Claude's plugin folder)
        file: str
        installed: bool  # False: no hookbus entries in it (or no file)
        form: str | None
        events: list[str]  # the native events with hookbus entries
        entries: int
        interpreters: list[InterpreterData]
        drift: list[str]  # differences from the configuration
        error: str | None  # why the file cannot be read

    class HostData(TypedDict):
        host: str
        installs: list[InstallData]

    class IgnoredData(TypedDict):
        path: str
        why: str

    class ConfigurationData(TypedDict):
        in_effect: list[str]
        ignored: list[IgnoredData]

    class HandlerFact(TypedDict):
        name: str
        target: str
        kinds: list[str] | None  # None: its declaration is unknown (never loaded)
        fail_closed: bool
        loads: bool
        unavailable: str | None

    class StateData(TypedDict):
        path: str
        exists: bool
        mode: str | None  # "0700"
        owner: int | None
        ok: bool
        problem: str | None

    class ServerData(TypedDict):
        running: bool
        pid: int | None
        version: str | None
        uptime: float | None  # seconds
        served: int | None  # requests
        rss_kb: int | None
        warm: int | None  # handler modules kept warm
        workers: int | None  # persistent workers
        socket: str | None

    class DiagnosticData(TypedDict):
        time: str | None
        code: str | None
        level: str | None
        message: str

    class DiagnosticsData(TypedDict):
        file: str
        last: list[DiagnosticData]  # oldest first
        problem: str | None

    class Report(TypedDict):
        ok: bool
        problems: list[Finding]
        notes: list[Finding]
        hosts: list[HostData]
        configuration: ConfigurationData
        handlers: list[HandlerFact]
        state: StateData
        server: ServerData
        diagnostics: DiagnosticsData


class Findings:
    """The problems (exit 1) and notes found so far."""

    def __init__(self) -> None:
        self.problems: list[Finding] = []
        self.notes: list[Finding] = []

    def problem(self, area: str, subject: str, message: str, fix: str | None) -> None:
        self.problems.append({"area": area, "subject": subject, "message": message, "fix": fix})

    def note(self, area: str, subject: str, message: str, fix: str | None = None) -> None:
        self.notes.append({"area": area, "subject": subject, "message": message, "fix": fix})


def strings(value: object, change: Callable[[str], str]) -> object:
    """``value`` (plain JSON data) with ``change`` applied to every string in it."""
    if isinstance(value, str):
        return change(value)
    if isinstance(value, dict):
        return {k: strings(v, change) for k, v in value.items()}
    if isinstance(value, list):
        return [strings(v, change) for v in value]
    return value
