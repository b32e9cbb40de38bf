"""Test helpers: run payload bytes through the real decode -> bus -> encode path in-process.

    from hookbus.testing import HookClient

    client = HookClient("claude", handlers=[no_force_push])
    result = client.run(payload_bytes)
    assert result.json["hookSpecificOutput"]["permissionDecision"] == "deny"

Nothing is faked but what is truly external: diagnostics are captured instead of written
(see :attr:`HookResult.diagnostics`). The process-level parts of ``hookbus run`` (stdin
limit, subscription index, watchdog) are covered by :func:`run_cli`, which starts the real
command as a host would.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import msgspec

from hookbus import hosts
from hookbus.bus.budgets import DEFAULT_BUDGET
from hookbus.bus.dispatch import Bus, Dispatch, Handler
from hookbus.bus.events import Event
from hookbus.bus.marks import Group
from hookbus.runtime.process import process


class Diagnostic(msgspec.Struct, frozen=True, kw_only=True):
    """One captured diagnostic: its code (``handler-timeout``...), message and fields."""

    code: str
    message: str
    fields: dict[str, object] = msgspec.field(default_factory=dict)


class HookResult(msgspec.Struct, frozen=True, kw_only=True):
    """What the host would have seen, plus what hookbus made of the call."""

    stdout: bytes
    stderr: bytes
    exit_code: int
    event: Event | None = None
    dispatch: Dispatch | None = None
    diagnostics: tuple[Diagnostic, ...] = ()

    @property
    def json(self) -> Any:
        """stdout parsed as JSON (None when the reply is empty)."""
        return json.loads(self.stdout) if self.stdout.strip() else None

    def codes(self) -> list[str]:
        return [d.code for d in self.diagnostics]


def as_bytes(payload: bytes | str | Mapping[str, Any]) -> bytes:
    if isinstance(payload, bytes):
        return payload
    if isinstance(payload, str):
        return payload.encode()
    return json.dumps(payload).encode()


class HookClient:
    """A host's hook call, in-process, with the real driver and a real bus."""

    def __init__(
        self,
        host: str,
        handlers: Sequence[Handler | Group | Callable[..., Any]] = (),
        *,
        budget: float = DEFAULT_BUDGET,
        settings: Any = None,
    ) -> None:
        self.driver = hosts.driver(host)
        self.bus = Bus(handlers, budget=budget, settings=settings, hosts=hosts.known_names())

    def run(
        self,
        payload: bytes | str | Mapping[str, Any],
        *,
        event: str | None = None,
        deadline: float | None = None,
    ) -> HookResult:
        captured: list[Diagnostic] = []

        def emit(code: str, message: str, **fields: object) -> None:
            captured.append(Diagnostic(code=code, message=message, fields=fields))

        result = process(
            as_bytes(payload),
            driver=self.driver,
            bus=self.bus,
            emit=emit,
            native=event,
            deadline=deadline,
        )
        out = result.output
        return HookResult(
            stdout=out.stdout,
            stderr=out.stderr,
            exit_code=out.exit_code,
            event=result.event,
            dispatch=result.dispatch,
            diagnostics=tuple(captured),
        )


class CliResult(msgspec.Struct, frozen=True, kw_only=True):
    stdout: bytes
    stderr: bytes
    exit_code: int
    seconds: float


def run_cli(
    host: str,
    payload: bytes | str | Mapping[str, Any],
    *,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    args: Sequence[str] = (),
    timeout: float = 60.0,
    launcher: Sequence[str] = ("-m", "hookbus"),
) -> CliResult:
    """Run ``python -m hookbus run --host HOST`` as a host does: stdin in, reply out.

    ``launcher`` replaces ``-m hookbus`` (a test host registers itself in a script of its
    own, then hands over to :func:`hookbus.cli.main`)."""
    import time

    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, *launcher, "run", "--host", host, *args],
        input=as_bytes(payload),
        capture_output=True,
        cwd=cwd,
        env=dict(os.environ if env is None else env),
        timeout=timeout,
        check=False,
    )
    return CliResult(
        stdout=proc.stdout,
        stderr=proc.stderr,
        exit_code=proc.returncode,
        seconds=time.perf_counter() - started,
    )
