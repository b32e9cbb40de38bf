"""``hookbus run --host NAME [--event NATIVE] [--timeout SECONDS]``: the hook entrypoint.

This is the cold path every tool call pays for, so it imports the standard library only
until it knows a handler wants the event: read stdin (at most 1 MiB), peek at the event
and tool names, consult the subscription index, and answer "no opinion" at once when
nobody subscribes. Only then does :mod:`hookbus.watchdog` decode, dispatch and encode.

It never exits 2 (Claude and others read that as "block") and never prints a traceback:
every failure is a diagnostic line in the state directory and a valid native reply.
"""

from __future__ import annotations

import json
import os
import sys
import time

from hookbus import diagnostics, index
from hookbus.drivers import HOSTS, Peek

MAX_INPUT = 1 << 20
USAGE = "usage: hookbus run --host NAME [--event NATIVE] [--timeout SECONDS]"


class Options:
    __slots__ = ("event", "host", "timeout")

    def __init__(self) -> None:
        self.host = ""
        self.event: str | None = None
        self.timeout: float | None = None


def parse(argv: list[str]) -> Options:
    """Parse ``run``'s few options by hand: argparse costs milliseconds on every hook."""
    opts = Options()
    args = iter(argv)
    for arg in args:
        name, eq, value = arg.partition("=")
        if name not in ("--host", "--event", "--timeout"):
            raise ValueError(f"unknown argument {arg!r}; {USAGE}")
        if not eq:
            value = next(args, "")
        if not value:
            raise ValueError(f"{name} needs a value; {USAGE}")
        if name == "--host":
            opts.host = value
        elif name == "--event":
            opts.event = value
        else:
            opts.timeout = float(value)
            if not opts.timeout > 0:
                raise ValueError(f"--timeout must be positive, not {value}")
    if not opts.host:
        raise ValueError(f"--host is required; {USAGE}")
    return opts


def read_stdin(limit: int = MAX_INPUT) -> bytes:
    """Up to ``limit + 1`` bytes of stdin (one more than allowed tells "too large")."""
    try:
        stream = sys.stdin.buffer
    except AttributeError:  # stdin closed by the host
        return b""
    chunks, size = [], 0
    while size <= limit:
        chunk = stream.read(limit + 1 - size)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def answer(stdout: bytes, stderr: bytes = b"", exit_code: int = 0) -> int:
    for fd, data in ((1, stdout), (2, stderr)):
        view = memoryview(data)
        while view:
            try:
                view = view[os.write(fd, view) :]
            except OSError:  # the host stopped reading; nothing more to do
                break
    return exit_code


def no_opinion(peek: Peek | None) -> int:
    if peek is None:
        return answer(b"")
    return answer(peek.no_opinion_stdout, b"", peek.no_opinion_exit)


def peek_payload(data: bytes, peek: Peek, event: str | None) -> tuple[dict[str, object], str]:
    """The payload as a dict and its native event name; ValueError saying what is wrong."""
    if len(data) > MAX_INPUT:
        raise ValueError(f"input larger than {MAX_INPUT} bytes")
    try:
        payload = json.loads(data)
    except RecursionError:
        raise ValueError("input JSON is nested too deeply") from None
    except UnicodeDecodeError as exc:
        raise ValueError(f"input is not UTF-8: {exc.reason} at byte {exc.start}") from None
    except ValueError as exc:
        raise ValueError(f"input is not JSON: {exc}") from None
    if not isinstance(payload, dict):
        raise ValueError(f"input is a JSON {type(payload).__name__}, not an object")  # noqa: TRY004
    native = event or payload.get(peek.event_field)
    if not isinstance(native, str) or not native:
        raise ValueError(f"{peek.event_field} is {native!r}, not an event name")
    return payload, native


def sniff(data: bytes, field: str) -> str | None:
    """The string value of ``field`` near the start of a payload too large or too broken
    to parse (hosts write the event and tool names before the tool's input)."""
    import re

    found = re.search(rb'"' + re.escape(field.encode()) + rb'"\s*:\s*"([^"\\]{1,200})"',
                      data[:65536])  # fmt: skip
    return found.group(1).decode("utf-8", "replace") if found else None


def refuse_if_guarded(data: bytes, peek: Peek, opts: Options) -> int | None:
    """Unreadable input for an event a fail-closed handler wants is denied, not let
    through: a guard must not be bypassed by a payload made too large or malformed."""
    native = opts.event or sniff(data, peek.event_field)
    if not native:
        return None
    compiled = index.load(peek.project_dir())
    wanted = index.wanted(compiled, opts.host, native, sniff(data, peek.tool_field))
    if not compiled or not wanted:
        return None
    closed = index.fail_closed([compiled["handlers"][i] for i in wanted])
    if not closed:
        return None
    from hookbus import drivers
    from hookbus.watchdog import refusal

    out = refusal(drivers.load(opts.host), native, closed, "could not read this event")
    diagnostics.emit("input-refused", f"denied for fail-closed {closed}", host=opts.host,
                     native=native)  # fmt: skip
    return answer(out.stdout, out.stderr, out.exit_code)


def main(argv: list[str]) -> int:
    started = time.monotonic()
    try:
        opts = parse(argv)
    except ValueError as exc:
        diagnostics.emit("usage-invalid", str(exc), argv=argv)
        return no_opinion(None)
    peek = HOSTS.get(opts.host)
    if peek is None:
        known = ", ".join(sorted(HOSTS))
        diagnostics.emit("usage-invalid", f"unknown host {opts.host!r}; known: {known}")
        return no_opinion(None)
    try:
        data = read_stdin()
        try:
            payload, native = peek_payload(data, peek, opts.event)
        except ValueError as exc:
            diagnostics.emit("input-invalid", str(exc), host=opts.host, bytes=len(data))
            return refuse_if_guarded(data, peek, opts) or no_opinion(peek)
        # The project's configuration, even when the agent has cd-ed out of the project.
        compiled = index.load(peek.project_dir())
        wanted = index.wanted(compiled, opts.host, native, payload.get(peek.tool_field))
        if not compiled or not wanted:
            return no_opinion(peek)
        from hookbus.watchdog import dispatch_guarded

        out = dispatch_guarded(data, opts, native, compiled, wanted, started)
        return answer(out.stdout, out.stderr, out.exit_code)
    except Exception as exc:  # a bug of ours must not become the host's problem
        import traceback

        diagnostics.emit("internal-error", repr(exc), host=opts.host,
                         error=traceback.format_exc(limit=8))  # fmt: skip
        return no_opinion(peek)
