"""A stand-in for ``hookbus serve`` that speaks wire protocol v1 (docs/client.md), for the
client's tests until the real server can be started in them: it listens on the socket
the client looks for and answers each request as its ``mode`` says."""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from pathlib import Path
from typing import Literal

Mode = Literal[
    "answer", "hang", "die-mid-reply", "die-late", "version", "busy", "junk", "unanswered"
]
#: How long mode ``die-late`` waits before it cuts its reply short.
LATE = 1.5
#: What the stand-in answers in mode ``answer`` (nothing hookbus itself would write).
STDOUT = b'{"from": "the fake server"}\n'
STDERR = b"fake server's stderr\n"
EXIT = 2


def frame(data: bytes) -> bytes:
    return len(data).to_bytes(4, "big") + data


def read_frame(conn: socket.socket) -> bytes:
    size = _exact(conn, 4)
    return _exact(conn, int.from_bytes(size, "big"))


def _exact(conn: socket.socket, n: int) -> bytes:
    buf = b""
    while len(buf) < n:
        chunk = conn.recv(n - len(buf))
        if not chunk:
            raise ConnectionError("the client went away")
        buf += chunk
    return buf


class FakeServer:
    """Listens on ``path`` in a thread; ``requests`` holds each (header, payload) read."""

    def __init__(self, path: Path, mode: Mode = "answer", exit: str = str(EXIT)) -> None:
        self.path = path
        self.mode = mode
        #: The JSON text of the answer's ``exit`` (mode ``answer``): any value, valid or not.
        self.exit = exit
        self.requests: list[tuple[dict[str, object], bytes]] = []
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        # A path past sockaddr_un's 108 bytes (a deep pytest folder) is bound through a
        # descriptor of its folder, as the server binds it.
        folder = os.open(path.parent, os.O_PATH | os.O_DIRECTORY)
        try:
            self.listener.bind(f"/proc/self/fd/{folder}/{path.name}")
        finally:
            os.close(folder)
        self.listener.listen(16)
        self.held: list[socket.socket] = []
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            try:
                self._answer(conn)
            except OSError:
                conn.close()

    def _answer(self, conn: socket.socket) -> None:
        head = json.loads(read_frame(conn))
        payload = read_frame(conn)
        self.requests.append((head, payload))
        if self.mode == "hang":
            self.held.append(conn)  # accepted, read, never answered
            return
        if self.mode == "version":
            refusal = {"ok": False, "refused": "version", "message": "server is 9.9"}
            conn.sendall(frame(json.dumps(refusal).encode()))
        elif self.mode == "busy":
            refusal = {"ok": False, "refused": "busy", "message": "too many"}
            conn.sendall(frame(json.dumps(refusal).encode()))
        elif self.mode == "unanswered":
            refusal = {"ok": False, "refused": "unanswered", "message": "its worker ended"}
            conn.sendall(frame(json.dumps(refusal).encode()))
        elif self.mode == "junk":
            conn.sendall(b"\xff\xff\xff\xffnot a frame")
        elif self.mode in ("die-mid-reply", "die-late"):
            if self.mode == "die-late":
                time.sleep(LATE)
            conn.sendall(frame(b'{"ok": true, "exit": 0}') + frame(STDOUT)[:7])
        else:
            status = f'{{"ok": true, "exit": {self.exit}}}'.encode()
            conn.sendall(frame(status) + frame(STDOUT) + frame(STDERR))
        conn.close()

    def close(self) -> None:
        try:
            self.listener.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.listener.close()
        for conn in self.held:
            conn.close()
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass
