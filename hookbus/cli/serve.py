"""``hookbus serve [--detach] [--idle SECONDS]``, ``serve --stop``, ``serve --status
[--json]``: the warm server (:mod:`hookbus.runtime.warm.server`, docs/server.md)."""

from __future__ import annotations

import argparse
import os
import sys
import time

#: How long ``--detach`` waits for the socket to accept, and ``--stop`` for the exit.
START_WITHIN = 30.0
STOP_WITHIN = 90.0


def add_arguments(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser("serve", help="the warm hook server (see docs/server.md)")
    what = parser.add_mutually_exclusive_group()
    what.add_argument("--detach", action="store_true",
                      help="run in the background; return once the socket accepts")  # fmt: skip
    what.add_argument("--stop", action="store_true", help="stop the running server")
    what.add_argument("--status", action="store_true", help="show the running server")
    parser.add_argument("--json", action="store_true", help="--status as JSON")
    parser.add_argument("--idle", metavar="SECONDS",
                        help="exit after this long without a request (default "
                        "$HOOKBUS_SERVE_IDLE, else 900)")  # fmt: skip
    parser.add_argument("--inherit", help=argparse.SUPPRESS)  # a re-executing server's own
    parser.add_argument("--ready-fd", type=int, help=argparse.SUPPRESS)  # --detach's own
    parser.set_defaults(main=main)


def main(opts: argparse.Namespace) -> int:
    if opts.status:
        return _status(as_json=opts.json)
    if opts.stop:
        return _stop()
    if opts.detach:
        return _detach(opts.idle)
    # The server answers every project: it runs from a folder none of them owns, and
    # imports nothing from the one it was started in (installed hooks start it with
    # -E -P from /; ``python -m hookbus serve`` put that folder first on the path, a
    # PYTHONPATH of ``.`` or ``:/x`` names it too).
    try:
        here = os.getcwd()
    except OSError:
        here = ""
    os.chdir("/")
    sys.path[:] = [p for p in sys.path if os.path.isabs(p) and p != here]
    from hookbus.runtime.warm import server

    idle = server.idle_seconds(opts.idle)
    if opts.inherit:
        sock_fd, lock_fd, started, served = opts.inherit.split(",")
        listener = server.Listener.inherited(int(sock_fd), int(lock_fd))
        return server.Server(listener, idle=idle, started=float(started),
                             served=int(served)).run()  # fmt: skip
    try:
        listener = server.Listener.bind()
    except (server.AnotherServer, OSError) as exc:
        _ready(opts.ready_fd, str(exc), f"{exc}")
        return 1
    _ready(opts.ready_fd, f"ok {os.getpid()} {listener.path}",
           f"listening on {listener.path} (pid {os.getpid()})")  # fmt: skip
    return server.Server(listener, idle=idle).run()


def _ready(fd: int | None, said: str, person: str) -> None:
    """Tell ``serve --detach`` (on ``fd``: ``said``) or the person at the terminal
    (``person``) whether the server listens."""
    if fd is None:
        sys.stderr.write(f"hookbus serve: {person}\n")
        return
    try:
        os.write(fd, f"{said}\n".encode())
    finally:
        os.close(fd)


def _detach(idle: str | None) -> int:
    """Start a server as installed hooks do (:func:`hookbus.local.interpreter.spawn_server`: a
    fresh interpreter in its own session, from /, with a fixed environment); wait until
    it says it is bound, or why it is not."""
    import hookbus
    from hookbus.local.interpreter import spawn_server

    read_end, write_end = os.pipe()
    main = os.path.join(os.path.dirname(os.path.abspath(hookbus.__file__)), "__main__.py")
    args = [f"--ready-fd={write_end}", *(["--idle", idle] if idle is not None else [])]
    try:
        spawn_server(main, *args, keep_fd=write_end)
    except OSError as exc:
        sys.stderr.write(f"hookbus serve: cannot start the server: {exc}\n")
        return 1
    finally:
        os.close(write_end)
    said = b""
    until = time.monotonic() + START_WITHIN
    import select

    while (left := until - time.monotonic()) > 0 and select.select([read_end], [], [], left)[0]:
        chunk = os.read(read_end, 4096)
        if not chunk:  # it said all, or ended
            break
        said += chunk
    os.close(read_end)
    text = said.decode("utf-8", "replace").strip()
    if not text.startswith("ok "):
        sys.stderr.write(f"hookbus serve: {text or 'the server did not start'}\n")
        return 1
    _, daemon, path = text.split(" ", 2)
    sys.stdout.write(f"hookbus server {daemon} listening on {path}\n")
    return 0


def _status(*, as_json: bool) -> int:
    from hookbus.runtime.warm.server import server_status

    found = server_status()
    if found is None:
        sys.stderr.write("hookbus serve: no server is running\n")
        return 1
    if as_json:
        import msgspec

        sys.stdout.write(msgspec.json.encode(found).decode() + "\n")
        return 0
    uptime = time.time() - found.started
    sys.stdout.write(
        f"hookbus server {found.pid} (hookbus {found.version}) on {found.socket}\n"
        f"  up {uptime:.0f}s, {found.served} requests served, {found.rss_kb} KiB resident\n"
        f"  {found.workers.count} workers ({found.workers.busy} in a call), "
        f"{found.warm} handler modules warm\n"
    )
    return 0


def _stop() -> int:
    from hookbus.runtime.warm import wire
    from hookbus.runtime.warm.server import server_status

    found = server_status()
    if found is None:
        sys.stderr.write("hookbus serve: no server is running\n")
        return 1
    try:
        wire.ask("stop")
    except OSError as exc:
        sys.stderr.write(f"hookbus serve: cannot stop server {found.pid}: {exc}\n")
        return 1
    from hookbus.runtime.warm.server import running

    until = time.monotonic() + STOP_WITHIN
    while time.monotonic() < until:
        if not running():
            sys.stdout.write(f"hookbus server {found.pid} stopped\n")
            return 0
        time.sleep(0.05)
    sys.stderr.write(f"hookbus serve: server {found.pid} still runs after {STOP_WITHIN:g}s\n")
    return 1
