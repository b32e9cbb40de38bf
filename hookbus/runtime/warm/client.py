# The warm server's client: what an installed hook runs when the server path is enabled.
#
# ``'<python>' -I -S -c LAUNCHER '<hookbus>' --host H --project P --event E --timeout T`` (the
# launcher imports this file from ``<hookbus>/runtime/warm``:
# :data:`hookbus.hosts.shared.manifest.CLIENT_LAUNCHER`)
#
# A host starts a fresh process per hook call, so this file is the whole warm path: it
# imports nothing of hookbus and only builtin modules (``_socket`` not ``socket``, whose
# enum costs ~9 ms; ``_json``'s scanner and string encoder, not ``json``, which pulls in
# ``re``; ``_signal``, not ``signal``; ``posix``, not ``os``, which ``-S`` leaves unloaded),
# and is one file so the interpreter opens nothing else. It
#
# 1. reads the payload within a bound of size and time (as :mod:`hookbus.runtime.intake`);
# 2. consults the subscription index as ``hookbus run`` does (:func:`consult`; the project,
#    which decides the configuration, found as the command's ``--project`` says): an event
#    nobody wants is answered with the host's no-opinion here, with no server; where this
#    process cannot restate hookbus's rule exactly, it leaves that to whoever answers;
# 3. finds the server's socket (:func:`socket_dir`: the rule ``hookbus serve`` uses),
#    checks that no other user can change any part of the path to it (:func:`dir_problem`,
#    the server's own check) and, once connected, that this user listens (:func:`peer_uid`),
#    then sends a request of wire protocol v1 (:func:`request`: the call, its working
#    folder and this process's whole environment) and writes back the reply's stdout,
#    stderr and exit code;
# 4. when no server answers (no socket, a stale one, a refused connection, no room to
#    connect within :data:`CONNECT_WAIT`, a refusal: another version, busy; a path or a
#    listener that is not this user's alone), runs the full cold path in this same
#    process (:func:`cold`: ``hookbus run`` given the payload already read), then, for a
#    missing or dead server, starts one for the next call (:func:`start_server`: one
#    start at a time, an ``O_EXCL`` lock);
# 5. when the server took the request but does not answer by the deadline (or says the
#    call's worker ended unanswered), answers what the index it read owes: the refusal of
#    a fail-closed handler that may want the call, even one enabled since the install,
#    else exit 1 with no output (the installed command's shell fallback answers); with no
#    index it could read, the cold path while time is left for it (:data:`COLD_MINIMUM`),
#    else exit 1. A server that dies mid-reply is answered by the cold path while time is
#    left for it, else the same way. ``--unanswered``: a shim's server took the call and
#    gave no answer; the same, with no server asked.
#
# Nothing is written before the whole reply is in hand, so the host never gets half a reply
# followed by another. A signal (the host's SIGTERM, a Ctrl-C to the process group) before
# the reply ends the process with exit 1 and no output, the shell fallback's cue; signals
# wait while the reply is written.
#
# This file's own size is a cost too: every warm call reads, unmarshals and runs all of it
# (about 8 us a kilobyte of bytecode in a fresh process). So it documents itself in
# comments, which compile to nothing, not docstrings, and what only a call without a
# server needs is in hookbus.runtime.warm.fallback, imported on that path.

import _json
import _signal  # type: ignore[import-not-found]  # (no stubs: ``signal`` without enum)
import posix
import sys
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    import _socket
    from collections.abc import Callable

#: The wire protocol (see docs/client.md); a server of another version refuses us.
PROTO = 1
#: hookbus's version, which this file cannot import: a test holds it equal to
#: ``hookbus.__version__``.
VERSION = "0.1.0"
#: A frame longer than this is refused (the protocol's limit).
MAX_FRAME = 4 << 20
#: Payloads larger than this are not read further (``runtime.intake.MAX_INPUT``).
MAX_INPUT = 1 << 20
#: A server with no room to take the connection by then is not waited for.
CONNECT_WAIT = 0.2
#: The reply is due this long before the host would kill the hook (``runtime.hook``'s
#: LAST_RESORT_MARGIN): the shell fallback still has time to answer.
MARGIN = 0.25
#: When the command names no timeout (manifests always name one).
DEFAULT_TIMEOUT = 60.0
#: A server that died mid-reply is replaced by the cold path only with this much time
#: left: less cannot import hookbus, and its answer would be the shell's fallback anyway.
COLD_MINIMUM = 0.5
#: The variables that decide which configuration and state a call uses (``hookbus.local.discover``,
#: ``hookbus.local.state``): a server serves those it started with, and no other
#: (:func:`identity`).
IDENTITY_ENV = ("HOME", "HOOKBUS_CONFIG", "HOOKBUS_STATE_DIR", "XDG_CONFIG_HOME", "XDG_STATE_HOME")
SIGNALS = (_signal.SIGINT, _signal.SIGTERM, _signal.SIGHUP)
#: hookbus's package folder, two above this file's (``hookbus/runtime/warm/client.py``;
#: ``__file__`` is absolute: the command names it so).
_PACKAGE = __file__.rpartition("/")[0].rpartition("/")[0].rpartition("/")[0]
#: The interpreter that runs ``hookbus run`` here, whose index is read (an index is
#: compiled per interpreter): this one, but in Hermes's plugin, which loads this file into
#: Hermes's own interpreter and sets hookbus's.
PYTHON = sys.executable
_S_IFMT, _S_IFDIR = 0o170000, 0o040000


def getenv(name: str) -> str | None:
    value = posix.environ.get(name.encode())
    return None if value is None else value.decode("utf-8", "surrogateescape")


def _join(*parts: str) -> str:
    path = parts[0]
    for part in parts[1:]:
        path = part if part.startswith("/") else f"{path.rstrip('/')}/{part}"
    return path


def _absolute(path: str) -> str:
    # ``os.path.abspath(os.path.expanduser(path))``, restated (``os`` is not loaded).
    if path == "~" or path.startswith("~/"):
        path = (getenv("HOME") or _home()) + path[1:]
    if not path.startswith("/"):
        path = _join(working_folder(), path)
    parts: list[str] = []
    for part in path.split("/"):
        if part == "..":
            if parts:
                parts.pop()
        elif part and part != ".":
            parts.append(part)
    return "/" + "/".join(parts)


def _home() -> str:
    # The user's home folder when ``HOME`` is unset, as ``os.path.expanduser`` finds it.
    import pwd

    try:
        return pwd.getpwuid(posix.getuid()).pw_dir
    except KeyError:
        return "/"


def working_folder() -> str:
    # The working folder, or ``$PWD`` when it was deleted (``hookbus.local.discover``'s rule).
    try:
        return posix.getcwd()
    except OSError:
        return getenv("PWD") or "/"


class Options:
    __slots__ = ("env", "event", "host", "project", "project_word", "timeout", "unanswered")

    def __init__(self) -> None:
        self.host = ""
        self.event: str | None = None
        self.timeout: float | None = None
        #: What ``--env`` named (older commands; and plugins installed by earlier
        #: versions set it): unused, as the whole environment is sent (:func:`header`).
        self.env: list[str] = []
        #: ``--unanswered``: the caller (a shim in the host's process) handed this call to
        #: the server, which took it and gave no answer; no server is asked again.
        self.unanswered = False
        #: ``--project``: the host's project variables and payload paths
        #: (:func:`project_word`). None: a command an earlier hookbus installed names
        #: none; this process cannot tell its project, so it reads no index (:func:`consult`).
        self.project: tuple[list[str], list[list[str]]] | None = None
        #: ``--project`` as written, which must be the index's word for the host: a word
        #: of another version's rule (or an edited one) could find another project.
        self.project_word: str | None = None


def parse(argv: list[str]) -> Options | None:
    # The options, or None for anything unexpected (the cold path then reports it).
    opts = Options()
    args = iter(argv)
    for arg in args:
        if arg == "--unanswered":
            opts.unanswered = True
            continue
        value = next(args, "")
        if arg == "--host":
            opts.host = value
        elif arg == "--event":
            opts.event = value
        elif arg == "--timeout":  # the last one counts: a shim gives a late call what is left
            try:
                opts.timeout = float(value)
            except ValueError:
                return None
            if not 0 < opts.timeout <= 86_400:
                return None
        elif arg == "--env":
            opts.env = [name for name in value.split(",") if name]
        elif arg == "--project":
            opts.project, opts.project_word = project_word(value), value
        else:
            return None
    return opts if opts.host else None


def project_word(word: str) -> tuple[list[str], list[list[str]]] | None:
    # ``--project``'s word (``HostFacts.project_word``: ``VAR,VAR:key.key,key``) read back:
    # the variables and the paths; None when it is not one.
    names, colon, paths = word.partition(":")
    if not colon:
        return None
    return ([n for n in names.split(",") if n],
            [p.split(".") for p in paths.split(",") if p])  # fmt: skip


def project_dir(
    project: tuple[list[str], list[list[str]]],
    get: "Callable[[str], str | None]",
    payload: dict[str, object],
) -> str | None:
    # ``HostFacts.project_dir`` restated (a test holds them equal): the first of the
    # variables ``get`` gives, then of the payload's paths (a string, or a list whose
    # first item is one), that holds a non-empty path.
    names, paths = project
    for name in names:
        value = get(name)
        if value:
            return value
    for path in paths:
        found = _find(payload, path)
        if isinstance(found, list) and found:
            found = found[0]
        if isinstance(found, str) and found:
            return found
    return None


# -- the payload -----------------------------------------------------------------------


class _Context:
    # What ``_json.make_scanner`` reads from a decoder (``json.JSONDecoder``'s fields).

    def __init__(self) -> None:
        self.strict = True
        self.object_hook = None
        self.object_pairs_hook = None
        self.parse_float = float
        self.parse_int = int
        self.parse_constant = float
        self.memo: dict[str, str] = {}


_scan = _json.make_scanner(_Context())  # type: ignore[arg-type]


#: The whitespace JSON allows around a value (``str.strip()``'s would also take Unicode's,
#: which ``json.loads`` refuses: a payload ``hookbus run`` cannot read must not be one
#: this process reads and answers).
_WHITESPACE = " \t\n\r"


def loads(data: bytes) -> object:
    # JSON ``data`` decoded; ValueError when it is not one whole JSON value.
    text = data.decode("utf-8").strip(_WHITESPACE)
    try:
        value, end = _scan(text, 0)
    except StopIteration:
        raise ValueError("not JSON") from None
    except SystemError:
        # A syntax error past the first character: _json raises it as json.decoder's
        # JSONDecodeError, which it only looks up in sys.modules (CPython's
        # raise_errmsg), and this process never imports json.decoder.
        raise ValueError("not JSON") from None
    if end != len(text):
        raise ValueError("extra data after the JSON value")
    return value


class _Waited(Exception):
    # The time given to one read of stdin ran out (:func:`_read`).
    pass


#: Whether :func:`_read` is inside the region that catches :class:`_Waited`. An alarm's
#: handler runs when the interpreter next looks (after the call that was interrupted, or
#: any later one): under load a timer armed for a millisecond fires before the read has
#: begun, and a handler left pending runs after the read has returned. Raised there, it
#: would end the process with no answer; so it raises only while this says a ``try`` is
#: there to catch it, and is ignored everywhere else.
_timing = False


def _waited(signum: int, frame: object) -> None:
    if _timing:
        raise _Waited


#: How long a chunk that ends an object waits for more bytes before it is taken whole,
#: on a stdin that is neither a pipe nor a file (:func:`_waiting`).
PENDING_WAIT = 0.001


def _read(seconds: float) -> bytes | None:
    # One read of stdin that gives up after ``seconds`` (None), timed by SIGALRM rather
    # than ``select``: that is one more shared library to load on every call, 0.2-0.3 ms.
    # (An alarm landing just as the read returns loses that chunk to a ``timeout``: the
    # end the read would have come to a moment later anyway.) ``BlockingIOError`` from a
    # stdin the host made non-blocking.
    global _timing
    try:
        try:
            _timing = True  # before the timer: its alarm can only land inside this try
            _signal.setitimer(_signal.ITIMER_REAL, max(seconds, 1e-6))
            return posix.read(0, 1 << 16)
        finally:
            _timing = False  # an alarm raised before this line is caught below
            _signal.setitimer(_signal.ITIMER_REAL, 0)
    except _Waited:
        return None


#: ``st_mode``'s file type bits, and those of a pipe and of a regular file.
_TYPE, _FIFO, _FILE = 0o170000, 0o010000, 0o100000


def _waiting() -> bytes | None:
    # The bytes stdin holds now, b"" at its end, None when none are waiting yet: read
    # without a timer, as an alarm landing just as a read returns loses what it read
    # (under load, a 1 ms timer did: the payload's last chunk, and a whole payload was
    # then answered as unreadable). A pipe is read through a non-blocking description of
    # its own (the one stdin shares with the shell keeps its flags); a file never makes a
    # read wait; anything else (a socket, a terminal) gets the timed read.
    kind = posix.fstat(0).st_mode & _TYPE
    if kind == _FILE:
        return posix.read(0, 1 << 16)
    if kind == _FIFO:
        try:
            fd = posix.open("/proc/self/fd/0", posix.O_RDONLY | posix.O_NONBLOCK | posix.O_CLOEXEC)
        except OSError:  # no /proc
            return _read(PENDING_WAIT)
        try:
            return posix.read(fd, 1 << 16)
        except BlockingIOError:
            return None
        finally:
            posix.close(fd)
    return _read(PENDING_WAIT)


#: The payload :func:`read_payload` parsed to know it whole, and what it parsed to.
_parsed: tuple[bytes, object] = (b"", None)


def read_payload(deadline: float) -> tuple[bytes, str]:
    # stdin as :mod:`hookbus.runtime.intake` reads it, and how the read ended: at end of
    # input, at one whole object once no more bytes are waiting (a host that keeps stdin
    # open), at the size limit, or at ``deadline``.
    chunks: list[bytes] = []
    size = 0
    ahead: bytes | None = None  # what came while looking for more after a whole object
    before = _signal.signal(_signal.SIGALRM, _waited)
    try:
        while True:
            if ahead is not None:
                chunk, ahead = ahead, None
            else:
                left = deadline - time.monotonic()
                if left <= 0:
                    return b"".join(chunks), "timeout"
                try:
                    got = _read(left)
                except BlockingIOError:
                    time.sleep(min(left, 0.001))  # a non-blocking stdin, empty for now
                    continue
                except (OSError, ValueError):
                    return b"".join(chunks), "eof"
                if got is None:
                    return b"".join(chunks), "timeout"
                chunk = got
            if not chunk:
                return b"".join(chunks), "eof"
            chunks.append(chunk)
            size += len(chunk)
            if size > MAX_INPUT:
                return b"".join(chunks), "too-large"
            if not chunk.rstrip().endswith(b"}"):
                continue
            try:
                ahead = _waiting()
            except BlockingIOError:
                ahead = None
            except (OSError, ValueError):
                ahead = b""
            if ahead is None:  # no more bytes waiting: the payload if it is one object
                data = b"".join(chunks)
                try:
                    payload = loads(data)
                except (ValueError, RecursionError):
                    continue
                if isinstance(payload, dict):
                    global _parsed
                    _parsed = (data, payload)  # :func:`consult` parses it no more
                    return data, "complete"
    finally:
        _signal.setitimer(_signal.ITIMER_REAL, 0)
        # As it was (a host may have left SIGALRM ignored); None: not set from Python.
        _signal.signal(_signal.SIGALRM, _signal.SIG_DFL if before is None else before)


# -- the socket ------------------------------------------------------------------------


def state_root() -> str:
    # ``hookbus.local.state.root_path()``, restated: this file imports nothing of hookbus.
    explicit = getenv("HOOKBUS_STATE_DIR")
    if explicit:
        return _absolute(explicit)
    base = getenv("XDG_STATE_HOME") or "~/.local/state"
    return _join(_absolute(base), "hookbus")


def socket_dir() -> str:
    # Where the server's socket is: ``$XDG_RUNTIME_DIR/hookbus`` when that variable
    # names an absolute folder of this user's, else ``<state root>/run``.
    runtime = getenv("XDG_RUNTIME_DIR") or ""
    if runtime.startswith("/"):
        try:
            st = posix.stat(runtime)
        except OSError:
            st = None
        if st is not None and st.st_mode & _S_IFMT == _S_IFDIR and st.st_uid == posix.geteuid():
            return _join(runtime, "hookbus")
    return _join(state_root(), "run")


def identity(get: "Callable[[str], str | None]") -> str:
    # The digest of the :data:`IDENTITY_ENV` variables ``get`` gives (unset is not empty):
    # in the names of the server's files (:func:`server_file`), so that a call made with
    # another configuration or state (an agent's own ``HOOKBUS_CONFIG``) reaches another
    # server, never this user's. A digest can be forged: the server also refuses a call
    # whose variables are not its own (``hookbus.runtime.warm.server``), so a collision only
    # sends a call to the cold path.
    text = "".join(
        f"{name}\0" if value is None else f"{name}={value}\0"
        for name in IDENTITY_ENV
        for value in (get(name),)
    )
    return digest(text.encode("utf-8", "surrogateescape"))


def server_file(kind: str, get: "Callable[[str], str | None] | None" = None) -> str:
    # The name of the server's ``sock``, ``pid`` or ``lock`` (the start lock, which the
    # server removes once it listens) file for this process's identity (or ``get``'s).
    return f"server-{identity(get or getenv)}.{kind}"


_S_IFLNK, _S_ISVTX = 0o120000, 0o1000
#: Symbolic links followed on a path before it is refused (the kernel's MAXSYMLINKS).
MAX_LINKS = 40


def dir_problem(path: str, private: int = 1) -> str | None:
    # Why the folder ``path`` (absolute) must not be used, or None: nobody but this user
    # and root can have made it what it is, or it is absent. The last ``private``
    # components (the socket's folder; the state root and its ``index``) are real folders
    # of this user's that nobody else may write, as ``hookbus serve`` makes them; every
    # folder above is root's or this user's and writable by nobody else, except a root
    # sticky folder (``/tmp``) whose next component is this user's (there only its owner
    # or root may rename it); a symbolic link above is root's or this user's, and the
    # path it names is checked the same way. So no other user can swap any part of the
    # path (a folder others may write anywhere up the path lets them rename what is below
    # it, and put their own server where this one's socket was). ``hookbus serve`` binds
    # only in a folder passing this check (``hookbus.runtime.warm.wire.check_dir``).
    me = posix.geteuid()
    parts = [p for p in path.split("/") if p and p != "."]
    head, tail = parts[: len(parts) - private], parts[len(parts) - private :]
    todo = head[::-1]  # what is left to walk, last first (a link's target is pushed)
    real: list[str] = []  # the real folders walked so far, below /
    links = 0
    at = "/"
    try:
        st = posix.lstat(at)
        while True:
            if st.st_uid not in (0, me):
                return f"{at} is owned by uid {st.st_uid}"
            open_to_others = bool(st.st_mode & 0o022)
            if open_to_others and not (st.st_mode & _S_ISVTX and st.st_uid == 0):
                return f"{at} is writable by group or others"
            if not todo:
                break
            name = todo.pop()
            if name == "..":
                real = real[:-1]
                at = "/" + "/".join(real)
                st = posix.lstat(at)
                continue
            at = "/" + "/".join((*real, name))
            st = posix.lstat(at)
            if open_to_others and st.st_uid != me:  # in a sticky folder: this user's only
                return f"{at} is owned by uid {st.st_uid}, in a folder others may write"
            kind = st.st_mode & _S_IFMT
            if kind == _S_IFLNK:
                links += 1
                if links > MAX_LINKS or st.st_uid not in (0, me):
                    return f"{at} is a symbolic link of uid {st.st_uid}"
                target = posix.readlink(at)
                todo += [p for p in target.split("/") if p and p != "."][::-1]
                if target.startswith("/"):
                    real = []
                at = "/" + "/".join(real)
                st = posix.lstat(at)
                continue
            if kind != _S_IFDIR:
                return f"{at} is not a folder"
            real.append(name)
        for name in tail:
            at = "/" + "/".join((*real, name))
            st = posix.lstat(at)
            if st.st_mode & _S_IFMT != _S_IFDIR:
                return f"{at} is not a folder"
            if st.st_uid != me:
                return f"{at} is owned by uid {st.st_uid}"
            if st.st_mode & 0o022:
                return f"{at} is writable by group or others"
            real.append(name)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"{at} cannot be read: {exc.strerror}"
    return None


def peer_uid(sock: "_socket.socket") -> tuple[int, int]:
    # The (pid, uid) of the process at the other end of a connected Unix socket, as the
    # kernel recorded them (``SO_PEERCRED``: a ``struct ucred`` of three native ints, pid,
    # uid, gid), read without ``struct``: one shared library less. The server reads its
    # clients' with it too.
    import _socket

    creds = sock.getsockopt(_socket.SOL_SOCKET, _socket.SO_PEERCRED, 12)
    return (int.from_bytes(creds[:4], sys.byteorder, signed=True),
            int.from_bytes(creds[4:8], sys.byteorder))  # fmt: skip


def _frame(data: bytes) -> bytes:
    return len(data).to_bytes(4, "big") + data


def _str(text: str) -> str:
    return _json.encode_basestring_ascii(text)


def header(opts: Options, environ: dict[bytes, bytes]) -> bytes:
    # The request's first frame (JSON): who calls, and this process's whole environment,
    # which the server's worker makes the call's, exactly (docs/server.md): a handler sees
    # what it would see in ``hookbus run``, never the server's nor another caller's. A
    # variable that is not UTF-8 is left out: JSON cannot carry it, and the server would
    # refuse the whole request.
    pairs = []
    for name, value in environ.items():
        try:
            pairs.append(f"{_str(name.decode())}: {_str(value.decode())}")
        except UnicodeDecodeError:
            continue
    event = "null" if opts.event is None else _str(opts.event)
    timeout = "null" if opts.timeout is None else repr(opts.timeout)
    return (
        f'{{"proto": {PROTO}, "version": {_str(VERSION)}, "op": "run", '
        f'"host": {_str(opts.host)}, "event": {event}, "timeout": {timeout}, '
        f'"cwd": {_str(working_folder())}, "env": {{{", ".join(pairs)}}}}}'
    ).encode()


#: What a server that took the call and gave no answer comes to: it said the call's worker
#: ended unanswered, or the deadline came first. Either way the call's handlers ran (or
#: run still), and the answer is the one owed without them (:func:`main`).
TOOK_IT = ("unanswered", "late")


class Reply:
    # What asking the server came to: ``kind`` is ``answered`` (``exit``, ``stdout`` and
    # ``stderr`` hold the reply), ``absent`` (no server to answer: start one), ``refused``
    # (a live server said no: ``reason``), ``late`` (it took the request and did not answer
    # in time), ``unanswered`` (it said the call's worker ended without an answer: the call
    # ran, and must not run again) or ``broken`` (it went away mid-reply).

    __slots__ = ("exit", "kind", "reason", "stderr", "stdout")

    def __init__(self, kind: str, reason: str = "") -> None:
        self.kind = kind
        self.reason = reason
        self.exit = 1
        self.stdout = b""
        self.stderr = b""


class _Late(Exception):
    # The deadline passed while the server still owed a frame.
    pass


class _Frames:
    # A reply's frames as they arrive on ``sock``: the server writes a reply at once, so
    # one read usually holds every frame (not two reads per frame).

    __slots__ = ("buf", "sock")

    def __init__(self, sock: "_socket.socket") -> None:
        self.sock = sock
        self.buf = bytearray()

    def next(self, deadline: float) -> bytes | None:
        # One frame; None at end of stream; _Late at the deadline.
        if not self._fill(4, deadline):
            return None
        length = int.from_bytes(self.buf[:4], "big")
        if length > MAX_FRAME:
            raise OSError("frame too large")
        if not self._fill(4 + length, deadline):
            return None
        frame = bytes(self.buf[4 : 4 + length])
        del self.buf[: 4 + length]
        return frame

    def _fill(self, n: int, deadline: float) -> bool:
        while len(self.buf) < n:
            left = deadline - time.monotonic()
            if left <= 0:
                raise _Late
            self.sock.settimeout(left)
            try:
                chunk = self.sock.recv(1 << 16)
            except TimeoutError:
                raise _Late from None
            if not chunk:
                return False
            self.buf += chunk
        return True


#: sockaddr_un holds 108 bytes: a longer path is reached through its folder's
#: descriptor, as the server binds it (``hookbus.runtime.warm.wire.ADDRESS_MAX``).
ADDRESS_MAX = 100


def request(path: str, head: bytes, payload: bytes, deadline: float) -> Reply:
    # Ask the server at ``path`` to run the call; see :class:`Reply`.
    import _socket  # here: a call the index answers alone never loads it

    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    folder = -1
    try:
        sock.settimeout(CONNECT_WAIT)
        try:
            address = path
            if len(path.encode()) > ADDRESS_MAX:
                head_, _, name = path.rpartition("/")
                folder = posix.open(head_, posix.O_PATH | posix.O_DIRECTORY | posix.O_CLOEXEC)
                address = f"/proc/self/fd/{folder}/{name}"
            sock.connect(address)
        except (FileNotFoundError, ConnectionRefusedError):
            return Reply("absent")  # no socket, or one nobody listens on (stale)
        except OSError as exc:  # no room within CONNECT_WAIT, not a socket, ...
            return Reply("refused", f"cannot connect: {exc!r}")
        try:
            _, uid = peer_uid(sock)
        except OSError as exc:
            return Reply("refused", f"cannot tell who listens: {exc!r}")
        if uid != posix.geteuid():  # before a byte is sent: the payload is the user's
            return Reply("refused", f"it is another user's: uid {uid} listens on it")
        return _exchange(sock, head, payload, deadline)
    finally:
        sock.close()
        if folder >= 0:
            posix.close(folder)


def _exchange(sock: "_socket.socket", head: bytes, payload: bytes, deadline: float) -> Reply:
    try:
        sock.settimeout(max(0.001, deadline - time.monotonic()))
        sock.sendall(_frame(head) + _frame(payload))
        frames = _Frames(sock)
        first = frames.next(deadline)
        if first is None:
            return Reply("broken", "the server closed the connection")
        status = loads(first)
        if not isinstance(status, dict):
            return Reply("broken", "the server's status is not an object")
        if status.get("ok") is not True:
            if status.get("refused") == "unanswered":
                return Reply("unanswered", str(status.get("message") or "its worker ended"))
            return Reply("refused", str(status.get("refused")))
        code = status.get("exit")
        out = frames.next(deadline)
        err = frames.next(deadline) if out is not None else None
    except _Late:
        return Reply("late")
    except (OSError, ValueError, RecursionError) as exc:
        # A server killed mid-request resets the connection; junk is no reply either.
        return Reply("broken", repr(exc))
    if out is None or err is None:
        return Reply("broken", "the reply ended early")
    if not isinstance(code, int) or isinstance(code, bool) or not 0 <= code <= 255:
        # An exit status is a byte: 256 would reach the host as 0, 10**30 as a traceback.
        return Reply("broken", f"the reply's exit code {str(code)[:40]} is no exit status")
    reply = Reply("answered")
    reply.exit, reply.stdout, reply.stderr = code, out, err
    return reply


# -- the subscription index -----------------------------------------------------------
#
# The index hookbus compiles (hookbus.runtime.index) is plain JSON: this process reads it
# as ``hookbus run`` does, to answer an event nobody wants without a server, and to send
# the server the variables the handlers declare now (not when the hook was installed).
# Every rule is restated from hookbus, and where one cannot be restated exactly (a
# file hookbus trusts only through the user's private group, a symbolic link, another
# host's dialect), the index is not consulted: the server, or the cold path, decides.


INDEX_FORMAT = 9  # hookbus.runtime.index.FORMAT (a test holds them equal)


class Gate:
    # What the index says of this call: ``nobody`` (``reply`` is the host's no-opinion)
    # or someone may want it (``refusal``: the answer owed to a fail-closed handler that
    # may want it, None when none may; ``env``: the variables the handlers declare, read
    # by plugins installed by earlier versions only).

    __slots__ = ("env", "nobody", "refusal", "reply")

    def __init__(
        self,
        env: list[str],
        reply: tuple[bytes, bytes, int] | None = None,
        refusal: tuple[bytes, bytes, int] | None = None,
    ) -> None:
        self.env = env
        self.nobody = reply is not None
        self.reply = reply or (b"", b"", 0)
        self.refusal = refusal


def _find(payload: object, path: list[str]) -> object:
    for key in path:
        if not isinstance(payload, dict):
            return None
        payload = payload.get(key)
    return payload


def _first(payload: dict[str, object], paths: list[list[str]]) -> tuple[bool, object]:
    for path in paths:
        value = _find(payload, path)
        if value is not None:
            return True, value
    return False, None


def _stat(path: str) -> list[object]:
    # ``hookbus.runtime.index.stat``: ``[path, mtime_ns, size]``, None for a missing file.
    try:
        st = posix.stat(path)
    except OSError:
        return [path, None, None]
    return [path, st.st_mtime_ns, st.st_size]


_S_IFREG = 0o100000


def _config_file(path: str) -> str:
    # ``absent`` (hookbus looks further), ``trusted`` (only this user or root could have
    # written it and its folder: ``hookbus.local.trust``'s rule), or ``undecided`` (anything else,
    # which hookbus may ignore with a diagnostic or trust by the user's private group).
    try:
        st = posix.lstat(path)
    except FileNotFoundError:
        return "absent"
    except OSError:
        return "undecided"
    kind = st.st_mode & _S_IFMT
    if kind != _S_IFREG:
        return "absent" if kind != 0o120000 else "undecided"  # a link: hookbus follows it
    try:
        folder = posix.stat(path.rpartition("/")[0] or "/")
    except OSError:
        return "undecided"
    owners = (0, posix.geteuid())
    for seen in (st, folder):
        if seen.st_uid not in owners or seen.st_mode & 0o022:
            return "undecided"
    return "trusted"


def _removed(path: str) -> bool:
    # Whether the user's configuration ``path`` is gone by the user's own doing, as
    # ``hookbus.local.discover._users_file`` judges it: no entry at all (a folder, a FIFO or
    # a link in its place is kept in effect, not read), and its nearest existing folder
    # is one only this user or root could have removed it from (writable by nobody
    # else, or sticky and theirs). Stricter than hookbus on a group's write (its user's
    # private group): then hookbus decides.
    try:
        posix.lstat(path)
        return False
    except FileNotFoundError:
        pass
    except OSError:
        return False
    folder = path.rpartition("/")[0] or "/"
    while True:
        try:
            st = posix.stat(folder)
        except FileNotFoundError:
            if folder == "/":
                return True
            folder = folder.rpartition("/")[0] or "/"
            continue
        except OSError:
            return False
        if st.st_uid not in (0, posix.geteuid()):
            return False
        return not st.st_mode & 0o022 or bool(st.st_mode & 0o1000)


def _user_home() -> str:
    # ``os.path.expanduser("~")``: ``$HOME`` whenever it is set, without a trailing
    # slash (``/`` when empty), else the password database's.
    home = getenv("HOME")
    return (home if home is not None else _home()).rstrip("/") or "/"


def _exact(path: str) -> bool:
    # Whether :func:`_absolute` gives ``os.path.abspath``'s answer for ``path`` (it keeps
    # a leading ``//``, and ``expanduser`` knows ``~user``).
    return not (path.startswith("//") and not path.startswith("///")) and not (
        path.startswith("~") and path != "~" and not path.startswith("~/")
    )


def config_files(project: str | None) -> list[str] | None:
    # ``hookbus.local.discover.config_paths(project)`` when this process can tell it exactly,
    # else None.
    explicit = getenv("HOOKBUS_CONFIG")
    if explicit:
        if not _exact(explicit):
            return None
        path = _absolute(explicit)
        return [path] if _config_file(path) == "trusted" else None
    files = []
    home = _user_home()
    user = _join(user_folder(), "config.toml")
    found = _config_file(user)
    if found == "absent" and not _removed(user):
        return None  # hookbus keeps it in effect (``hookbus.local.discover._users_file``)
    if found == "undecided":
        return None
    if found == "trusted":
        files.append(user)
    start = project or working_folder()
    if start.startswith("~") or not _exact(start) or not _exact(_join(working_folder(), start)):
        return None  # abspath does not expand ~; and a leading // it keeps
    here = _absolute(start)
    while True:  # hookbus.local.discover.project_candidates
        candidate = _join(here, ".hookbus.toml")
        found = _config_file(candidate)
        if found == "undecided":
            return None
        if found == "trusted":
            if candidate not in files:
                files.append(candidate)
            return files
        parent = here.rpartition("/")[0] or "/"
        if here in (parent, home) or _stat(_join(here, ".git"))[1] is not None:
            return files
        here = parent


def user_folder() -> str:
    # ``hookbus.local.discover.user_folder``: the user's configuration folder.
    return _join(getenv("XDG_CONFIG_HOME") or _join(_user_home(), ".config"), "hookbus")


def index_name(files: list[str]) -> str:
    # ``hookbus.runtime.index.index_name``: the :func:`digest` of the files, the
    # interpreter and the user's folder (its trust store).
    text = "\0".join([*files, PYTHON, user_folder()])
    return f"{digest(text.encode('utf-8', 'surrogateescape'))}.json"


#: The largest prime below 2**64: what :func:`digest` takes the bytes modulo.
_PRIME = (1 << 64) - 59


def digest(data: bytes) -> str:
    # 16 hex digits naming ``data`` in a file name: the bytes read as one big-endian
    # integer, modulo :data:`_PRIME` (one operation in C, with no module to load:
    # ``zlib`` and ``binascii`` are shared libraries, not built in). Not a defence:
    # whatever such a name names is checked on reading (the index's files, the
    # server's identity). ``hookbus.runtime.index`` restates it: a test holds them equal.
    return f"{int.from_bytes(data, 'big') % _PRIME:016x}"


def read_index(files: list[str]) -> dict[str, object] | None:
    # The index compiled for ``files`` when it is fresh (``hookbus.runtime.index.read``
    # and ``is_fresh``), else None.
    folder = _join(state_root(), "index")
    if dir_problem(folder, private=2) is not None:  # the root and its index folder
        return None
    flags = posix.O_RDONLY | posix.O_NOFOLLOW | posix.O_NONBLOCK  # a FIFO must not hang us
    try:
        fd = posix.open(_join(folder, index_name(files)), flags)
    except OSError:
        return None
    try:
        st = posix.fstat(fd)  # hookbus.local.state's check of every file it reads
        if st.st_mode & _S_IFMT != _S_IFREG or st.st_uid != posix.geteuid() or st.st_mode & 0o022:
            return None
        chunks = []
        while chunk := posix.read(fd, 1 << 20):
            chunks.append(chunk)
    except OSError:
        return None
    finally:
        posix.close(fd)
    try:
        data = loads(b"".join(chunks))
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or data.get("format") != INDEX_FORMAT:
        return None
    if data.get("hookbus") != VERSION or data.get("python") != PYTHON:
        return None
    if data.get("configs") != [_stat(p) for p in files]:
        return None
    if not data.get("complete") and time.time() >= float(data.get("retry_at", 0)):
        return None
    watch = data.get("watch")
    if not isinstance(watch, list) or not all(
        isinstance(w, list) and w and _stat(str(w[0])) == w for w in watch
    ):
        return None
    return data


def _wanted(data: dict, host: str, native: str, tool: object) -> bool:  # type: ignore[type-arg]
    # ``hookbus.runtime.index.Lookup.wanted`` is not empty, or a handler's declaration
    # is unknown (it may want any event).
    if any(h.get("subscription") is None for h in data["handlers"]):
        return True
    route = data["routes"].get(host, {}).get(native)
    if route is None or not route["handlers"]:
        return False
    tools = route["tools"]
    if tools is None or not isinstance(tool, str):
        return True
    if tool in tools["names"] or tool.startswith(tuple(tools["prefixes"])):
        return True
    unknown = tool not in tools["known"] and not tool.startswith(tuple(tools["known_prefixes"]))
    return bool(tools["unknown"] and unknown)


def own_dialect(payload: dict, facts: dict) -> bool:  # type: ignore[type-arg]
    # True when ``hookbus.runtime.peek.dialect`` surely reads ``payload`` as the host's
    # own (False: it may be another host's): one naming an event of the host's own is,
    # but for a decisive dialect's keys (whatever events that dialect is limited to:
    # False only sends the call on, where hookbus decides); any other, with no dialect's
    # key nor variable.
    # (An index of before has no "events": every key counts.)
    located, native = _first(payload, facts["event_paths"])
    if located and isinstance(native, str) and native in facts.get("events", ()):
        return not any(k in payload for k in facts["decisive_keys"])
    return not any(k in payload for k in facts["dialect_keys"]) and not any(
        getenv(v) is not None for v in facts["dialect_env"]
    )


def consult(opts: Options, data: bytes, end: str) -> Gate | None:
    # What the index says of this call, or None where this process cannot tell what
    # ``hookbus run`` would: the server (or the cold path) decides.
    if end not in ("eof", "complete"):
        return None  # unread, too large, late: the cold path's diagnostics say so
    try:
        payload = _parsed[1] if _parsed[0] is data else loads(data)
    except (ValueError, RecursionError):
        return None
    if not isinstance(payload, dict):
        return None
    if opts.project is None:
        return None  # a command that names no project's whereabouts: hookbus finds it
    files = config_files(project_dir(opts.project, getenv, payload))
    found = read_index(files) if files else None
    facts = found["clients"].get(opts.host) if found else None  # type: ignore[attr-defined]
    if found is None or not isinstance(facts, dict) or facts["payload_env"]:
        return None
    if facts["project"] != opts.project_word:
        return None  # the command's rule is not this hookbus's: hookbus finds the project
    if not own_dialect(payload, facts):
        return None  # maybe another host's payload: hookbus tells whose
    located, native = _first(payload, facts["event_paths"])
    native = native if located else opts.event
    if not isinstance(native, str) or not native:
        return None
    _, tool = _first(payload, facts["tool_paths"])
    env = sorted({*facts["env"], *opts.project[0]})
    if _wanted(found, opts.host, native, tool if isinstance(tool, str) else None):
        owed = found["refusals"].get(opts.host, {}).get(native)  # type: ignore[attr-defined]
        if owed is None:
            return Gate(env)
        return Gate(env, refusal=(owed["stdout"].encode(), owed["stderr"].encode(),
                                  owed["exit_code"]))  # fmt: skip
    quiet = facts["no_opinion"].get(native) or facts["no_opinion"][""]
    return Gate(env, (quiet["stdout"].encode(), quiet["stderr"].encode(), quiet["exit_code"]))


# -- answering -------------------------------------------------------------------------


def write(stdout: bytes, stderr: bytes) -> None:
    # Write the reply unbuffered, signals held back so it is never cut short.
    blocked = _signal.pthread_sigmask(_signal.SIG_BLOCK, SIGNALS)
    try:
        for fd, data in ((1, stdout), (2, stderr)):
            view = memoryview(data)
            while view:
                try:
                    view = view[posix.write(fd, view) :]
                except OSError:  # the host stopped reading: nothing more to do
                    break
    finally:
        _signal.pthread_sigmask(_signal.SIG_SETMASK, blocked)


def _unanswered(signum: int, frame: object) -> None:
    # A signal before the reply: exit 1, no output (the shell fallback answers).
    posix._exit(1)


def _importable() -> None:
    # Make hookbus importable: ``-S`` left off site-packages (msgspec, the handlers'
    # packages), ``-I`` the package's own folder when it is not installed there.
    if "site" not in sys.modules:  # -S: not run yet
        import site

        site.main()
    parent = _PACKAGE.rpartition("/")[0]
    if parent not in sys.path:
        sys.path.insert(0, parent)


def cold(  # noqa: PLR0917
    opts: Options | None,
    argv: list[str],
    data: bytes,
    end: str,
    started: float,
    why: tuple[str, str] | None = None,
) -> int:
    # The full in-process cold path (``hookbus run``) for the same call, given the
    # payload already read (:func:`hookbus.runtime.warm.fallback.cold`): the call as
    # ``opts`` names it, or ``argv`` as given when they could not be read (the cold path
    # says what is wrong with them).
    _importable()
    from hookbus.runtime.warm import fallback

    call = argv if opts is None else fallback.Call(opts.host, opts.event, opts.timeout)
    return fallback.cold(call, data, end, started, why)


def start_server(folder: str) -> None:
    # Start a server for the next call (:func:`hookbus.runtime.warm.fallback.start_server`)
    # in the socket's ``folder``, made private as ``hookbus.local.state`` makes its root, unless
    # that folder is not this user's alone.
    for path in (state_root(), folder):
        try:
            posix.mkdir(path, 0o700)
        except FileExistsError:
            pass
        except OSError:
            return  # the next call tries again; this one is answered already
    if dir_problem(folder) is not None:
        return
    _importable()
    from hookbus.runtime.warm import fallback

    fallback.start_server(_join(folder, server_file("lock")), _PACKAGE)


def main(argv: list[str]) -> int:
    # Answer one hook call (the reply is written); the process's exit code.
    started = time.monotonic()
    for sig in SIGNALS:
        _signal.signal(sig, _unanswered)
    opts = parse(argv)
    if opts is None or posix.isatty(0):
        # Arguments of another version, or a person at a terminal: the cold path says so.
        return cold(None, argv, b"", "unread", started)
    deadline = started + max(0.05, (opts.timeout or DEFAULT_TIMEOUT) - MARGIN)
    # The read gets most of the time, as in ``hookbus run``: what follows must still
    # answer when a payload never arrives whole.
    data, end = read_payload(deadline - min(1.0, (deadline - started) / 4))
    try:
        gate = consult(opts, data, end)
    except (LookupError, TypeError, AttributeError, ValueError, OSError):
        gate = None  # an index of an unexpected shape: not an answer
    if gate is not None and gate.nobody:
        stdout, stderr, code = gate.reply
        write(stdout, stderr)
        return code
    folder = socket_dir()
    path = _join(folder, server_file("sock"))
    if opts.unanswered:
        reply = Reply("unanswered", "the server the caller asked took the call, no answer")
    else:
        problem = dir_problem(folder)
        if problem is not None:  # the server refuses such a folder too: none can be there
            return cold(opts, argv, data, end, started, (path, f"its path: {problem}"))
        reply = request(path, header(opts, posix.environ), data, deadline)
    if reply.kind == "answered":
        write(reply.stdout, reply.stderr)
        return reply.exit
    if reply.kind in TOOK_IT and gate is not None:
        # The server took the call (its handlers ran, or run still): not again. The
        # fresh index says whether a fail-closed handler may want it, even one enabled
        # since the install: its refusal, else the installed fallback (exit 1).
        if gate.refusal is None:
            return 1
        write(gate.refusal[0], gate.refusal[1])
        return gate.refusal[2]
    if reply.kind in (*TOOK_IT, "broken") and deadline - time.monotonic() < COLD_MINIMUM:
        return 1  # the deadline: the installed command's fallback answers in time
    # Taken and not answered, with no index this process can read: a handler made
    # fail-closed since the install may want the call, and only hookbus can tell; the
    # cold path decides.
    why = None if reply.kind == "absent" else (path, f"{reply.kind}: {reply.reason}")
    code = cold(opts, argv, data, end, started, why)
    if reply.kind in ("absent", "broken"):
        start_server(folder)
    return code


def run() -> None:
    # The command's entry: answer, then exit at once (nothing is left to flush).
    try:
        code = main(sys.argv[1:])
    except Exception:
        # A bug of ours: exit 1 with nothing written, and the installed command answers.
        code = 1
    posix._exit(code)


if __name__ == "__main__":
    run()
