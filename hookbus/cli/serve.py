"""``hookbus serve [--detach] [--idle SECONDS]``, ``serve --stop``, ``serve --status
[--json]``: the warm server (:mod:`hookbus.runtime.server`, docs/server.md)."""

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
    parser.set_defaults(main=main)


def main(opts: argparse.Namespace) -> int:
    if opts.status:
        return _status(as_json=opts.json)
    if opts.stop:
        return _stop()
    from hookbus.runtime import server

    if not sys.flags.safe_path and sys.path and sys.path[0] in ("", os.getcwd()):
        # python -m put the folder it was started in first on the path: a project's
        # modules there would shadow every other project's of the same name.
        del sys.path[0]
    idle = server.idle_seconds(opts.idle)
    if opts.inherit:
        sock_fd, lock_fd, started, served = opts.inherit.split(",")
        listener = server.Listener.inherited(int(sock_fd), int(lock_fd))
        return server.Server(listener, idle=idle, started=float(started),
                             served=int(served)).run()  # fmt: skip
    if opts.detach:
        return _detach(idle)
    try:
        listener = server.Listener.bind()
    except (server.AnotherServer, OSError) as exc:
        sys.stderr.write(f"hookbus serve: {exc}\n")
        return 1
    sys.stderr.write(f"hookbus serve: listening on {listener.path} (pid {os.getpid()})\n")
    return server.Server(listener, idle=idle).run()


def _detach(idle: float) -> int:
    """Fork a daemon (new session, stdio on /dev/null, working folder /); wait until it
    says it is bound, or why it is not."""
    from hookbus.runtime import server

    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_end)
        code = 1
        try:
            os.setsid()
            if os.fork():
                os._exit(0)
            os.chdir("/")
            null = os.open(os.devnull, os.O_RDWR)
            for std in (0, 1, 2):
                os.dup2(null, std)
            os.close(null)
            try:
                listener = server.Listener.bind()
            except (server.AnotherServer, OSError) as exc:
                os.write(write_end, f"{exc}\n".encode())
                os._exit(1)
            os.write(write_end, f"ok {os.getpid()} {listener.path}\n".encode())
            os.close(write_end)
            code = server.Server(listener, idle=idle).run()
        finally:
            os._exit(code)
    os.close(write_end)
    os.waitpid(pid, 0)
    said = b""
    until = time.monotonic() + START_WITHIN
    import select

    while time.monotonic() < until and select.select([read_end], [], [], 0.5)[0]:
        chunk = os.read(read_end, 4096)
        if not chunk:
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
    from hookbus.runtime.server import server_status

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
    from hookbus.runtime import wire
    from hookbus.runtime.server import server_status

    found = server_status()
    if found is None:
        sys.stderr.write("hookbus serve: no server is running\n")
        return 1
    try:
        wire.ask("stop")
    except OSError as exc:
        sys.stderr.write(f"hookbus serve: cannot stop server {found.pid}: {exc}\n")
        return 1
    from hookbus.runtime.server import running

    until = time.monotonic() + STOP_WITHIN
    while time.monotonic() < until:
        if not running():
            sys.stdout.write(f"hookbus server {found.pid} stopped\n")
            return 0
        time.sleep(0.05)
    sys.stderr.write(f"hookbus serve: server {found.pid} still runs after {STOP_WITHIN:g}s\n")
    return 1
