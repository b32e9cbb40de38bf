"""hookbus's Hermes Agent plugin: each hook call handed to hookbus, each reply handed back.

Hermes 0.19.0 (``hermes_cli/plugins.py``) calls a plugin's callbacks with keyword
arguments only, one after another on the agent's own thread, with no timeout: a callback
that hangs hangs the agent, and one that raises is logged and skipped. So each callback
here accepts ``**kwargs``, catches every error, and never waits more than :data:`BOUND`
seconds, whatever a handler does: the handlers run in another process (a subprocess, or
inproc's forked worker), so one sleeping or spinning in C with the GIL held costs the
agent the bound at most. Nothing here enters an event loop or touches ``sys.path``.

One file, two ways in:

- **The directory plugin** (the default). ``hookbus install --host hermes`` writes this
  file as ``~/.hermes/plugins/hookbus/__init__.py`` with :data:`BAKED` filled in: every
  event, each with the command that runs the hookbus that installed it by absolute path
  (``python -P .../hookbus/__main__.py run --host hermes --event E --timeout 8``; hookbus
  answers within 8 s), and, per configuration an install saw, the events (and tools) it
  wants with the answer owed when that command cannot answer (Hermes's no-opinion, or
  the block a fail-closed handler owes). Hermes reads plugins
  from the user's home only, so this one plugin serves every session, whatever folder
  it runs in: each call carries the session's working folder (``cwd``), and hookbus
  applies the configuration in effect there, as for every host (the user's, and the
  project's ``.hookbus.toml``, whose own code runs once trusted). Before anything
  starts, the plugin asks the index compiled for that configuration (the client's
  ``consult``, with the client's own functions, loaded from its file): an event or tool
  nobody wants there starts nothing. It needs only the standard library: Hermes and
  hookbus usually live in environments of their own (``pipx``, ``uv tool``).
  With the server path (install's default), :data:`BAKED` has ``server`` and each
  event's command is the warm server's client: a call goes first to a running
  ``hookbus serve`` over its socket (:func:`warm`), and the command runs only when no
  server answers (it then runs the cold path and starts a server for the next call, as
  an installed command hook does).
- **The entry point** ``hermes_agent.plugins`` = ``hookbus`` (this module, :data:`BAKED`
  None), found when hookbus is installed into Hermes's own environment: every event goes
  to :func:`hookbus.runtime.inproc.dispatch` (reached by name: :data:`ENTRY`), which
  forks a worker rather than starting an interpreter. Both are named ``hookbus``; Hermes
  keeps one plugin per name, the later source winning (entry points come after user
  plugins), so the two never both run.

The envelope handed over is the one Hermes writes to its shell hooks
(``agent/shell_hooks.py`` ``_serialize_payload``), so ``hookbus run --host hermes`` reads
plugin and shell-hook calls alike; the reply is the directive Hermes reads from a plugin
(see :mod:`hookbus.hosts.hermes.driver`). When hookbus cannot answer (gone, crashed, silent
past the bound, unreadable) the callback returns what is owed (:func:`unanswered`) and
leaves one diagnostic: a ``hookbus:`` line on stderr and a ``hook-unavailable`` line in hookbus's
``diagnostics.jsonl``.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

#: Written by ``hookbus install --host hermes`` into the copy it installs (see the module
#: docstring): ``{"bound": seconds, "python": hookbus's interpreter, "client": its
#: client.py, "project": where Hermes names the project (the client's ``--project``),
#: "events": {native: {"argv": [...]}}, "wanted": {project folder ("": none):
#: {native: {"fallback": its answer, "tools": regex or None}}}}``, and with the server
#: form ``"server": {"timeout": seconds}``. None here: the entry point, dispatching
#: in-process.
BAKED: dict[str, Any] | None = None

#: The native events hookbus handles (``hookbus.hosts.hermes.driver.ALL_EVENTS``).
EVENTS = (
    "on_session_start", "pre_llm_call", "pre_tool_call", "post_tool_call", "subagent_start",
    "subagent_stop", "post_llm_call", "pre_verify", "on_session_end",
)  # fmt: skip
#: Seconds a callback may take at most (hookbus itself answers within 8).
BOUND = 10.0
#: What hookbus answers within (``HostFacts.default_timeout`` of ``hermes``).
ANSWER_WITHIN = 8.0
#: The keyword arguments the envelope lifts out of ``extra`` (shell_hooks.py).
TOP_LEVEL = frozenset({"tool_name", "args", "session_id", "parent_session_id"})

Directive = dict[str, Any]


def register(ctx: Any) -> None:
    """Hermes's entry: a callback for each event (the directory plugin: each it bakes)."""
    events = BAKED["events"] if BAKED is not None else {native: {} for native in EVENTS}
    for native in EVENTS:
        if native in events:
            ctx.register_hook(native, _callback(native, events[native]))


def _callback(native: str, baked: dict[str, Any]) -> Callable[..., Directive | None]:
    def callback(**kwargs: Any) -> Directive | None:
        try:
            return handle(native, kwargs, baked)
        except Exception as exc:  # never the host's problem, and never a guard lost
            return failed(native, kwargs, baked, exc)

    callback.__name__ = callback.__qualname__ = f"hookbus_{native}"
    return callback


def failed(
    native: str, kwargs: dict[str, Any], baked: dict[str, Any], exc: Exception
) -> Directive | None:
    """What a call is owed when this plugin's own code failed on it (arguments it cannot
    serialize, nested past the stack, a baked entry of the wrong shape...), said once
    (an agent's arguments must never buy a call less than hookbus would refuse it): the
    refusal the index in effect in the call's folder holds for it, read from the call's
    event, tool and folder alone (what the index decides by, and what serializes
    whatever the call holds); with no index to read (not compiled since the
    configuration changed), what hookbus answers a call of that event it cannot read
    (the refusal of a fail-closed handler that may want the event, whatever the tool);
    hookbus unable to say even that, the baked answer (:func:`refusal`)."""
    why = f"the {native} callback failed ({_brief(exc)})"
    try:
        if BAKED is None:
            answer = _in_process(native, b"")
        else:
            gate = consulted(native, envelope(native, kwargs, bare=True), BAKED)
            answer = refusal(native, kwargs, gate) or b""
            if gate is None:  # hookbus, handed nothing it can read, compiles and says
                with contextlib.suppress(Exception):
                    answer = ask(native, b"", baked["argv"], None, BAKED)
        return directive(native, say(native, why, answer))  # a failure is said, owed or not
    except Exception:
        pass
    try:  # that failed too: the baked answer, unsaid
        return directive(native, (owed(native, kwargs.get("tool_name")) or "").encode())
    except Exception:
        return None


def _brief(exc: Exception) -> str:
    """``exc`` in a few hundred characters (its message may hold the whole payload)."""
    try:
        text = repr(exc)
    except Exception:
        text = type(exc).__name__
    return text if len(text) <= 300 else f"{text[:300]}..."


def envelope(native: str, kwargs: dict[str, Any], *, bare: bool = False) -> bytes:
    """The JSON Hermes writes to a shell hook for this call (``_serialize_payload``),
    ASCII with escapes: a lone surrogate (a model may write ``\\udcff`` in a tool call's
    JSON, a folder's name may not be UTF-8) is spelled as JSON spells it, never an
    encoding error. ``bare``: only the event, the tool's name and the folder, which
    serialize whatever the call holds (:func:`failed`)."""
    try:
        cwd = os.getcwd()
    except OSError:
        cwd = ""
    args = kwargs.get("args")
    tool = kwargs.get("tool_name")
    payload: dict[str, Any] = {
        "hook_event_name": native,
        "tool_name": tool,
        "tool_input": args if isinstance(args, dict) else None,
        "session_id": kwargs.get("session_id") or kwargs.get("parent_session_id") or "",
        "cwd": cwd,
        "extra": {k: v for k, v in kwargs.items() if k not in TOP_LEVEL},
    }
    if bare:
        # A tool's name that is no string: none, which every tool pattern may want.
        payload.update(tool_name=tool if type(tool) is str else None, tool_input=None,
                       session_id="", extra={})  # fmt: skip
    return json.dumps(payload, default=str).encode()


def handle(native: str, kwargs: dict[str, Any], baked: dict[str, Any]) -> Directive | None:
    """hookbus's directive for one call. The directory plugin first asks the index of
    the configuration in effect in the call's working folder (the client's
    ``consult``): nobody wants the call, and nothing runs. When hookbus cannot answer,
    what is owed (:func:`unanswered`)."""
    data = envelope(native, kwargs)
    if BAKED is None:
        return directive(native, _in_process(native, data))
    gate = consulted(native, data, BAKED)
    if gate is not None and gate.nobody:
        return directive(native, bytes(gate.reply[0]))
    try:
        stdout = ask(native, data, baked["argv"], gate, BAKED)
    except Unanswered as failed:
        stdout = unanswered(native, kwargs, gate, str(failed))
    return directive(native, stdout)


def unanswered(native: str, kwargs: dict[str, Any], gate: Any, why: str) -> bytes:
    """What a call hookbus gave no answer is owed (:func:`refusal`), said once
    (:func:`_diagnose`). A call no install wanted, without an index, gets no opinion,
    unsaid: hookbus gone, every event would say it again."""
    answer = refusal(native, kwargs, gate)
    return b"" if answer is None else say(native, why, answer)


def refusal(native: str, kwargs: dict[str, Any], gate: Any) -> bytes | None:
    """What a call hookbus cannot answer is owed: with the index of the call's
    configuration (``gate``), the refusal it holds for a fail-closed handler that may
    want the call (even one enabled since the install), else no opinion; without one
    (hookbus gone, or its index not readable here), the baked answer of the
    configurations installs saw (:func:`owed`), None when none of them wanted it."""
    if gate is not None:
        return bytes(gate.refusal[0]) if gate.refusal is not None else b""
    baked = owed(native, kwargs.get("tool_name"))
    return None if baked is None else baked.encode()


def say(native: str, why: str, answer: bytes) -> bytes:
    """``answer``, given for ``why`` and said so (:func:`_diagnose`)."""
    said = "blocked the call (a fail-closed handler wants it)" if answer.strip() else (
        "answered no opinion")  # fmt: skip
    _diagnose(native, f"{why}; {said}")
    return answer


def owed(native: str, tool: object) -> str | None:
    """The baked answer owed to ``native`` (with ``tool``) when hookbus cannot say: the
    first refusal of a fail-closed handler that any install's configuration (each
    project's, by its folder) has wanting the call, else no opinion; None when none
    wants it. Every project's counts, whatever the working folder: without hookbus
    nothing can tell which configuration applies, and a guard must not be lost for it."""
    found = None
    for wanted in (BAKED or {}).get("wanted", {}).values():
        entry = wanted.get(native)
        if entry is None:
            continue
        tools = entry.get("tools")
        if tools is not None and native.endswith("_tool_call"):
            import re  # already loaded by Hermes; only when hookbus cannot answer

            if not re.fullmatch(tools, str(tool or "")):
                continue
        if entry["fallback"]:
            return str(entry["fallback"])
        found = ""
    return found


class Unanswered(Exception):
    """hookbus gave no usable answer; the message says why."""


class Taken(Exception):
    """The warm server took the call and gave no answer, and no index says what is owed."""


def ask(native: str, data: bytes, argv: list[str], gate: Any, plugin: dict[str, Any]) -> bytes:
    """hookbus's stdout for one call: the warm server's when the server path is on and a
    server answers, else the event's command's (``argv``); all within the plugin's
    bound."""
    bound = float(plugin.get("bound", BOUND))
    server = plugin.get("server")
    if server is not None:
        started = time.monotonic()
        try:
            answered = warm(native, data, gate, plugin, bound)
        except Taken as taken:
            left = bound - (time.monotonic() - started)
            if left <= 0:
                raise Unanswered(str(taken)) from None
            # No index to say what is owed: the client's command says it (``--unanswered``:
            # the cold path while time is left, else its fallback), in the time left.
            argv = [*argv, "--unanswered", "--timeout", f"{left:g}"]
            answered = None
        if answered is not None:
            return answered
        bound -= time.monotonic() - started
    return spawn(argv, data, bound)


#: hookbus's client module, loaded from its file once (see :func:`client`): the index
#: in every form, the warm server with the server form.
_CLIENT: list[Any] = []


def client(plugin: dict[str, Any]) -> Any:
    """``hookbus/runtime/warm/client.py`` of the hookbus that installed this plugin, loaded under a
    private name (never ``sys.modules``: it would shadow nothing, and nothing else needs
    it): its rules (the configuration in effect in a folder, the index it consults, the
    socket's folder, the request) are then the installed command's, not a copy. It
    imports builtin modules only. It reads the environment through ``posix.environ``, the
    process's environment at its start; Hermes may have changed it since (a spawned
    command inherits the change), so it is given the live one; and the index it reads is
    the one hookbus's interpreter compiles, not Hermes's."""
    if not _CLIENT:
        import importlib.util

        spec = importlib.util.spec_from_file_location("_hookbus_client", plugin["client"])
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot load {plugin['client']}")
        module: Any = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        module.getenv = os.environ.get
        module.PYTHON = plugin["python"]
        _CLIENT.append(module)
    return _CLIENT[0]


def options(found: Any, native: str, timeout: float, plugin: dict[str, Any]) -> Any:
    """The client's options for one call of ``native``: the project's whereabouts as
    installed (``"project"``, as the client's ``--project``; a plugin an earlier hookbus
    installed has none, and its calls then read no index: hookbus finds the project)."""
    opts = found.Options()
    opts.host, opts.event, opts.timeout = "hermes", native, timeout
    if "project" in plugin:
        opts.project = found.project_word(plugin["project"])
        opts.project_word = plugin["project"]
    return opts


def consulted(native: str, data: bytes, plugin: dict[str, Any]) -> Any:
    """What the index of the configuration in effect for the call (the envelope's
    ``cwd``: the user's, and the project's ``.hookbus.toml`` there) says of it, as the
    client reads it (``Gate``); None when no index tells (not compiled yet, stale, a
    configuration the client leaves to hookbus, hookbus's file gone): hookbus decides."""
    try:
        found = client(plugin)
        gate = found.consult(options(found, native, ANSWER_WITHIN, plugin), data, "eof")
        if gate is None and found.config_files(json.loads(data)["cwd"] or None) == []:
            # No configuration at all in effect there (a folder of no project, and no
            # configuration of the user's): nothing to ask, as ``hookbus run`` finds.
            # Every Hermes event's no-opinion is nothing printed.
            return found.Gate([], (b"", b"", 0))
        return gate
    except Exception:  # gone, broken, an index of an unexpected shape: not an answer
        return None


def warm(native: str, data: bytes, gate: Any, plugin: dict[str, Any], bound: float) -> bytes | None:
    """The warm server's stdout for one call, as the client asks it (docs/client.md);
    None when no server answers (absent, stale, refused, cut short: the command then
    runs). When it took the call and gave no answer (it said so, or the client's deadline
    came: the call's timeout less the client's margin, within ``bound`` s): Unanswered
    when the index (``gate``) says what is owed, as the client answers; Taken when there
    is none to tell."""
    began = time.monotonic()
    try:
        found = client(plugin)
    except Exception:  # hookbus's file gone or broken: the command's fallback says so
        return None
    opts = options(found, native, float(plugin["server"]["timeout"]), plugin)
    wait = min(bound, max(0.05, opts.timeout - found.MARGIN))
    folder = found.socket_dir()
    if found.dir_problem(folder) is not None:
        return None  # never connected to; the command's client says why
    head = found.header(opts, os.environb)  # Hermes's whole environment, live
    reply = found.request(found._join(folder, found.server_file("sock")), head, data, began + wait)
    if reply.kind in found.TOOK_IT:
        why = reply.reason or f"no answer from the warm server within {wait:g} s"
        raise Taken(why) if gate is None else Unanswered(why)
    if reply.kind != "answered":
        return None
    if reply.exit != 0:
        last = reply.stderr.decode(errors="replace").strip().splitlines()[-1:] or [""]
        raise Unanswered(f"hookbus exited {reply.exit} {last[0][:200]}".rstrip())
    return checked(bytes(reply.stdout))


def checked(stdout: bytes) -> bytes:
    """``stdout`` when it is empty or JSON, else Unanswered."""
    if stdout.strip():
        try:
            json.loads(stdout)
        except ValueError:
            raise Unanswered(f"unreadable answer {stdout[:80]!r}") from None
    return stdout


def spawn(argv: list[str], data: bytes, bound: float) -> bytes:
    """``argv`` run without a shell, ``data`` on stdin: its stdout, within ``bound``
    seconds. The child leads a process group of its own, killed whole on the bound (a
    warm server's client can replace this function later)."""
    try:
        child = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, start_new_session=True)  # fmt: skip
    except OSError as exc:
        raise Unanswered(f"cannot run {argv[0]}: {exc.strerror or exc}") from None
    try:
        stdout, stderr = child.communicate(data, timeout=bound)
    except subprocess.TimeoutExpired:
        _kill(child)
        raise Unanswered(f"no answer within {bound:g} s; stopped it") from None
    except BaseException:
        _kill(child)
        raise
    if child.returncode != 0:
        last = stderr.decode(errors="replace").strip().splitlines()[-1:] or [""]
        raise Unanswered(f"{argv[0]} exited {child.returncode} {last[0][:200]}".rstrip())
    return checked(stdout)


def _kill(child: subprocess.Popen[bytes]) -> None:
    import signal

    with contextlib.suppress(OSError):
        os.killpg(child.pid, signal.SIGKILL)
    child.communicate()


#: The entry point's way into hookbus, named, not imported: this file is no module of
#: hookbus's floors but a caller of its runtime, loaded by Hermes into Hermes's own
#: process (and installed as text, with :data:`BAKED`, as the directory plugin, which
#: reaches the client by its path instead). The host's folder lies below the runtime and
#: imports it nowhere (the layers contract holds that); the entry point, like a host's
#: command, calls in from outside.
ENTRY = "hookbus.runtime.inproc"


def _in_process(native: str, data: bytes) -> bytes:
    """The entry point's dispatch: hookbus's in-process entry (:data:`ENTRY`) imported
    here, handlers in a forked worker, for the configuration in effect in the working
    folder. The folder is named here: the envelope's ``cwd`` of a folder whose name is
    not UTF-8 reaches hookbus's decoder with its bad characters replaced, a folder that
    does not exist."""
    import importlib

    inproc = importlib.import_module(ENTRY)
    try:
        project: str | None = os.getcwd()
    except OSError:
        project = None  # deleted: hookbus's own rule ($PWD)
    found = inproc.dispatch("hermes", data, native=native, project=project, timeout=ANSWER_WITHIN)
    stdout: bytes = found.output.stdout
    return stdout


def directive(native: str, stdout: bytes) -> Directive | None:
    """hookbus's reply as the value a Hermes callback returns. A rewrite's block carries
    ``args``: a modify where the running Hermes has one, else the block."""
    if not stdout.strip():
        return None
    reply = json.loads(stdout)
    if not isinstance(reply, dict) or not reply:
        return None
    args = reply.pop("args", None)
    if isinstance(args, dict) and native == "pre_tool_call" and has_modify():
        return {"action": "modify", "args": args}
    return reply


def has_modify() -> bool:
    """Whether the running Hermes applies ``{"action": "modify"}`` (repo main does, 0.19.0
    does not): read from its own ``pre_tool_call`` directive code, never guessed."""
    try:
        import inspect

        from hermes_cli import plugins  # type: ignore[import-not-found]

        source = inspect.getsource(plugins._get_pre_tool_call_directive_details)
    except Exception:
        return False
    return '"modify"' in source


def _diagnose(native: str, message: str) -> None:
    """One ``hookbus:`` line on stderr and one ``hook-unavailable`` line in hookbus's log
    (``docs/diagnostics.md``); a failure to write either is swallowed."""
    with contextlib.suppress(Exception):
        # The process's own stderr: ``hermes -z`` points sys.stderr at /dev/null meanwhile.
        stream = sys.__stderr__ or sys.stderr
        stream.write(f"hookbus: hermes {native}: {message}\n")
        stream.flush()
    try:
        folder = os.environ.get("HOOKBUS_STATE_DIR")
        if folder:
            folder = os.path.abspath(os.path.expanduser(folder))
        else:
            base = os.environ.get("XDG_STATE_HOME") or os.path.join(
                os.path.expanduser("~"), ".local", "state"
            )
            folder = os.path.join(os.path.abspath(base), "hookbus")
        os.makedirs(folder, mode=0o700, exist_ok=True)
        data = line("hook-unavailable", message, host="hermes", native=native)
        fd = os.open(os.path.join(folder, "diagnostics.jsonl"),
                     os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)  # fmt: skip
        try:
            os.write(fd, data)
        finally:
            os.close(fd)
    except Exception:
        pass


def line(code: str, message: str, **fields: str) -> bytes:
    """One diagnostic as :func:`hookbus.local.diagnostics.line` writes it (stdlib only here)."""
    now = time.time()
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now))
    millis = int(now * 1000) % 1000
    record = {"event": code, "level": "warning", "timestamp": f"{stamp}.{millis:03d}Z",
              "message": message, "pid": os.getpid(), **fields}  # fmt: skip
    return (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8", "replace")
