"""``hookbus try``: one event by hand, through the real hook, explained.

1. The payload: the driver's sample of the event (:meth:`hookbus.bus.host.Driver.sample`:
   the fields the host really sends, from the working folder, in a new session), or the
   bytes of ``--payload FILE`` as they are.
2. The subscription index, read as the hook reads it, and compiled now (in a child, as
   ``install`` does) when it is missing or stale: the hook then runs as an installed one
   does, and ``try`` can say who wants the event.
3. The hook itself, as a subprocess, exactly as the host starts it: the command's argv
   in the form installed for the host (:func:`hookbus.install.plan.form_in_effect`): the
   warm server's client (:func:`hookbus.hosts.shared.manifest.client_argv`), which asks the
   server, or ``hookbus run`` (:func:`hookbus.hosts.shared.manifest.hook_argv`), with the
   ``--timeout`` the host's manifest writes for the event; the payload on stdin, the
   working folder, the environment with the project variable the host sets
   (``CLAUDE_PROJECT_DIR``) when it is not set, and ``HOOKBUS_TRACE`` naming a file in a
   fresh private folder: the worker writes there what it did, and from which process
   (:class:`hookbus.runtime.worker.Trace`), on either path.
4. The report: the payload (and, for ``--event`` naming a portable kind, the host's
   event it sent), the decoded event, each handler's outcome and time (a failure by
   where it happened, :func:`hookbus.cli.render.failure`; a handler that did not load,
   stood in for or left out, with why), the merged reply, the exact bytes and exit code
   the host gets, and who answered: the handlers' ``dispatch``, the ``worker`` without
   one (nobody wants the event exactly, or the payload is unreadable), the ``cold-path``
   (no handler wants it: answered at once, no worker), or the ``watchdog`` (the worker
   gave no reply in time, or crashed); and on which path: the warm server, the cold path
   the client ran (no server answered), or ``hookbus run``'s.

``try`` exits 0 when the hook ran, whatever it answered, and 1 on a usage problem.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any, NamedTuple

import msgspec

from hookbus.bus.errors import HookbusError

if TYPE_CHECKING:
    from hookbus.bus.subscriptions import IndexData
    from hookbus.hosts.shared.facts import HostFacts
    from hookbus.runtime.index import Lookup
    from hookbus.runtime.worker import Trace


def add_arguments(commands: Any) -> None:
    from hookbus.hosts import HOSTS

    sub: argparse.ArgumentParser = commands.add_parser(
        "try",
        help="send one event by hand through the real hook, and explain the answer",
        description="Build a realistic payload of one native event (or send a file's), run "
        "it through the real hook command in this folder, and show the decoded event, each "
        "handler's outcome, the merged reply and the exact bytes and exit code the host gets.",
    )
    sub.add_argument("--host", required=True, choices=sorted(HOSTS))
    sub.add_argument("--event", required=True, metavar="NATIVE",
                     help="the host's own event name (PreToolUse, Stop ...), or a portable "
                     "kind (before-tool, stop ...): the host's event of that kind")  # fmt: skip
    sub.add_argument("--tool", help="the tool of a tool event (default: a harmless shell call)")
    sub.add_argument("--input", metavar="JSON", help="the tool's input, a JSON object")
    sub.add_argument("--payload", metavar="FILE",
                     help="send this file's bytes as they are ('-': stdin) instead")  # fmt: skip
    sub.add_argument("--json", action="store_true", help="print one JSON object")
    sub.set_defaults(main=main)


class UsageProblem(HookbusError, ValueError):
    """What is wrong with the command line, said to the person who typed it."""


class Report(msgspec.Struct, frozen=True, kw_only=True):
    """What ``try`` found (``--json`` prints it): the payload sent, the event as decoded,
    each handler's outcome, the merged reply, and the exact answer the host gets. Bytes
    are text when they are UTF-8, else base64 (and the ``*_base64`` flag says so)."""

    host: str
    native: str
    #: How ``--event`` was read when it named a portable kind, not a native event
    #: (``before-tool is PreToolUse on claude``).
    event_note: str | None = None
    tool: str | None
    payload: str
    payload_base64: bool = False
    #: The event as decoded (without ``raw``); None when the payload cannot be decoded.
    event: dict[str, Any] | None
    decoded_by: str
    #: Whether the host's settings, as install writes them, start a hook for this event.
    registered: bool | None
    index: str
    command: list[str]
    wanted: list[str]
    loaded: list[str]
    stand_ins: list[str]
    #: What the hook told of each wanted handler that is not loaded, by name (why, where,
    #: the fix: :class:`hookbus.runtime.index.Unloaded`): a stand-in's, a left-out one's.
    unavailable: dict[str, str] = {}
    outcomes: list[dict[str, Any]]
    reply: dict[str, Any] | None
    dropped: list[dict[str, Any]]
    diagnostics: list[dict[str, Any]]
    stdout: str
    stdout_base64: bool = False
    stderr: str
    stderr_base64: bool = False
    exit_code: int | None
    seconds: float
    #: ``dispatch``, ``worker``, ``cold-path``, ``watchdog`` or ``nobody``, and why.
    answered_by: str
    why: str
    #: When the hook found no configuration: the files it looked for, in order, with
    #: what was there, then ``fix: ...`` (:func:`hookbus.cli.unconfigured.searched`).
    searched: list[str] = []
    #: The path that answered: ``warm-server``, ``client-cold`` (the client ran the cold
    #: path: no server answered), ``client`` (the client alone, from the index: nobody
    #: wants the event) or ``cold`` (``hookbus run``).
    path: str = "cold"

    def data(self, name: str) -> bytes:
        """The bytes of ``payload``, ``stdout`` or ``stderr``."""
        text: str = getattr(self, name)
        if getattr(self, f"{name}_base64"):
            import base64

            return base64.b64decode(text)
        return text.encode("utf-8")


class Ran(NamedTuple):
    """The hook command as run: its argv, exact output, exit code (None: still running
    when ``try`` gave up on it), wall time and pid."""

    argv: list[str]
    stdout: bytes
    stderr: bytes
    exit_code: int | None
    seconds: float
    pid: int


def main(opts: argparse.Namespace) -> int:
    try:
        report = run(opts)
    except UsageProblem as exc:
        print(f"hookbus try: {exc}", file=sys.stderr)
        return 1
    if opts.json:
        import json

        plain = msgspec.to_builtins(report)
        sys.stdout.write(json.dumps(plain, indent=2, ensure_ascii=False) + "\n")
    else:
        from hookbus.cli.trial.text import human

        sys.stdout.write("".join(line + "\n" for line in human(report)))
    return 0


# -- running -----------------------------------------------------------------------------


def run(opts: argparse.Namespace) -> Report:
    """Build the payload, run the hook, and report (the ``--json`` object)."""
    import os
    import shutil
    import tempfile

    from hookbus import hosts
    from hookbus.local.discover import config_paths
    from hookbus.runtime.peek import peek

    driver = hosts.driver(opts.host)
    host = driver.facts  # the host whose command runs (its payload may be a dialect)
    event_note = None
    if opts.event not in driver.events:
        opts.event, event_note = _native(driver, opts.event)
    cwd = os.getcwd()
    data = _payload(opts, driver, cwd)
    env = dict(os.environ)
    if host.project_env and not any(env.get(name) for name in host.project_env):
        env[host.project_env[0]] = cwd  # the host names the project it runs in
    # What the hook will see: the dialect, event and tool names of the payload.
    facts, native, payload, tool = host, opts.event, None, None
    try:
        peeked = peek(data, host, opts.event)
        facts, native, payload, tool = peeked.facts, peeked.native, peeked.payload, peeked.tool
    except ValueError:
        pass  # unreadable: the hook says so, and so does the report
    files = config_paths(facts.project_dir(env, payload))
    lookup, compiled = _index(files)
    timeout, registered = _command_timeout(host, opts.event, lookup.data)
    warm = _form(host, lookup.data) == "server"
    private = tempfile.mkdtemp(prefix="hookbus-try-")
    try:
        env["HOOKBUS_TRACE"] = trace_path = os.path.join(private, "trace.json")
        ran = _hook(host, opts.event, data, timeout=timeout, env=env, cwd=cwd, warm=warm)
        trace, trace_problem = _read_trace(trace_path)
    finally:
        shutil.rmtree(private, ignore_errors=True)
    answered_by, why = _answered_by(ran, trace, trace_problem, lookup=lookup, files=files,
                                    where=(facts, native, tool), timeout=timeout)  # fmt: skip
    path = "cold"
    if warm:
        path = "client" if trace is None else "client-cold" if trace.parent == ran.pid else (
            "warm-server")  # fmt: skip
    event: dict[str, Any] | None = None
    if trace is not None and trace.event is not None:
        event, decoded_by = trace.event, "the hook"
    else:
        event, decoded_by = _decode_here(hosts.driver(facts.name), data, native)
    return msgspec.convert({
        "host": facts.name, "native": native, "event_note": event_note, "tool": tool,
        **_text("payload", data),
        "event": event, "decoded_by": decoded_by, "registered": registered, "index": compiled,
        "command": ran.argv,
        "wanted": trace.wanted if trace else [],
        "loaded": trace.loaded if trace else [],
        "stand_ins": trace.stand_ins if trace else [],
        "unavailable": trace.unavailable if trace else {},
        "outcomes": _builtins(trace.outcomes) if trace else [],
        "reply": _builtins(trace.reply) if trace else None,
        "dropped": _builtins(trace.dropped) if trace else [],
        "diagnostics": trace.diagnostics if trace else [],
        **_text("stdout", ran.stdout), **_text("stderr", ran.stderr),
        "exit_code": ran.exit_code, "seconds": ran.seconds,
        "answered_by": answered_by, "why": why, "path": path,
        "searched": [] if files else _searched(facts.name),
    }, Report)  # fmt: skip


def _searched(host: str) -> list[str]:
    """Where the hook looked for a configuration here (the user's and the project's, as
    an installed hook reads them), and the fix."""
    from hookbus.cli.unconfigured import searched

    return searched("local", (), f"hookbus install --host {host}")


def _native(driver: Any, asked: str) -> tuple[str, str]:
    """The host's native event for ``--event`` naming a portable kind instead (the first
    event the manifest registers for it), and a note saying so; :class:`UsageProblem`
    naming the host's events and kinds when it is neither."""
    from hookbus.bus.events import KINDS

    kinds = [k for k in sorted(KINDS) if k != "other" and driver.natives(k)]
    if asked not in kinds:
        none = f"; no {driver.name} event is of portable kind {asked}" if asked in KINDS else ""
        raise UsageProblem(f"{driver.name} has no event {asked!r}{none}; give one of its "
                           f"events: {', '.join(driver.events)}; or a portable kind: "
                           f"{', '.join(kinds)}")  # fmt: skip
    first, *others = driver.natives(asked)
    note = f"{asked} is {first} on {driver.name}"
    if asked == "after-edit" and first in driver.natives("after-tool"):
        note += ", of an edit tool (--tool names it)"  # derived by the driver: Bash is none
    if others:
        note += f"; {', '.join(others)} too: --event {others[0]} sends that one"
    return first, note


def _payload(opts: argparse.Namespace, driver: Any, cwd: str) -> bytes:
    """The bytes to send: ``--payload``'s as they are, or the driver's sample."""
    if opts.payload is not None:
        if opts.tool is not None or opts.input is not None:
            raise UsageProblem("--payload is sent as it is: --tool and --input cannot change it")
        try:
            if opts.payload == "-":
                return sys.stdin.buffer.read()
            with open(opts.payload, "rb") as f:
                return f.read()
        except OSError as exc:
            problem = f"--payload {opts.payload}: cannot read it ({exc.strerror})"
            raise UsageProblem(problem) from None
    tool_input = None
    if opts.input is not None:
        import json

        try:
            tool_input = json.loads(opts.input)
        except ValueError as exc:
            raise UsageProblem(f"--input is not JSON ({exc}); give a JSON object, like "
                               """--input '{"command": "ls"}'""") from None  # fmt: skip
        if not isinstance(tool_input, dict):
            got = f"{type(tool_input).__name__} {opts.input[:60]}"
            raise UsageProblem(f"--input must be a JSON object, like "
                               f"""--input '{{"command": "ls"}}', not {got}""")  # fmt: skip
    import uuid

    from hookbus.bus.errors import SampleError

    try:
        sample: bytes = driver.sample(opts.event, tool=opts.tool, tool_input=tool_input,
                                      cwd=cwd, session_id=str(uuid.uuid4()))  # fmt: skip
    except SampleError as exc:
        raise UsageProblem(str(exc)) from None
    return sample


def _index(files: list[str]) -> tuple[Lookup, str]:
    """The index the hook will read, compiled first when it is not fresh; and what was done."""
    from hookbus.runtime import index
    from hookbus.runtime.compile import compile_in_child

    lookup = index.read(files)
    if not files:
        return lookup, "no configuration file: no handler is enabled"
    if lookup.fresh:
        return lookup, "fresh"
    problem = lookup.problem or lookup.freshness
    if compile_in_child(files) is None:
        return lookup, f"{problem}; compiling it failed (the hook will try again)"
    return index.read(files), f"compiled now ({problem})"


def _command_timeout(
    facts: HostFacts, native: str, data: IndexData | None
) -> tuple[float | None, bool | None]:
    """The ``--timeout`` of ``native``'s hook command as the host's manifest writes it,
    and whether the manifest registers the event at all (None: the host has no manifest).
    Read from the manifest's own plan, so that it is what ``install`` would write."""
    import shlex

    from hookbus import hosts
    from hookbus.hosts.shared.manifest import hook_argv

    try:
        manifest = hosts.manifest(facts.name)
    except KeyError:
        return None, None
    plan = manifest.plan(data, python=sys.executable, scope="project")
    argv = hook_argv(sys.executable, facts.name, native, None)
    texts = [*_strings([d.entries for d in plan.documents]),
             *(t for f in plan.owned for t in _owned_texts(f.text))]  # fmt: skip
    for text in texts:
        lexer = shlex.shlex(text, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        try:
            tokens = list(lexer)
        except ValueError:
            continue
        for at in range(len(tokens) - len(argv) + 1):
            if tokens[at : at + len(argv)] == argv:
                rest = tokens[at + len(argv) : at + len(argv) + 2]
                return (float(rest[1]) if rest[:1] == ["--timeout"] else None), True
    return None, False


def _form(facts: HostFacts, data: IndexData | None) -> str:
    """The form of the command the host runs (``server``: the warm server's client)."""
    from hookbus import hosts
    from hookbus.install.plan import form_in_effect

    try:
        manifest = hosts.manifest(facts.name)
    except KeyError:
        return "absolute"
    return form_in_effect(manifest, data)


def _owned_texts(text: str) -> list[str]:
    """An owned file's strings: a script is one, a JSON file (Kiro's hook file) holds its
    commands in strings of its own; a file in another language (Pi's extension) writes
    each command on a line of its own."""
    import json

    try:
        return _strings(json.loads(text))
    except ValueError:
        return [text, *text.splitlines()]


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, list | tuple):
        return [s for item in value for s in _strings(item)]
    return []


def _hook(
    facts: HostFacts, native: str, data: bytes, *, timeout: float | None, env: dict[str, str],
    cwd: str, warm: bool,
) -> Ran:  # fmt: skip
    """Run the hook command as the host does (``warm``: the client's); its exact output
    and how long it took."""
    import subprocess
    import time

    from hookbus.hosts.shared.manifest import client_argv, hook_argv

    command = client_argv if warm else hook_argv
    argv = command(sys.executable, facts.name, native, timeout)
    stdin = data
    if facts.payload_env is not None:  # this host passes the payload in a variable
        env[facts.payload_env], stdin = data.decode("utf-8", "replace"), b""
    # The hook answers within its timeout whatever happens (its last resort fires first):
    # a hook still running well after it is one the host would have killed.
    limit = (timeout or facts.timeout_for(native)) + 10
    started = time.perf_counter()
    with subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, cwd=cwd, env=env) as proc:  # fmt: skip
        try:
            stdout, stderr = proc.communicate(stdin, timeout=limit)
        except subprocess.TimeoutExpired:
            proc.kill()
            stdout, stderr = proc.communicate()
            return Ran(argv, stdout, stderr, None, time.perf_counter() - started, proc.pid)
    return Ran(argv, stdout, stderr, proc.returncode, time.perf_counter() - started, proc.pid)


def _read_trace(path: str) -> tuple[Trace | None, str | None]:
    import msgspec

    from hookbus.runtime.worker import Trace

    try:
        with open(path, "rb") as f:
            raw = f.read()
    except FileNotFoundError:
        return None, None
    except OSError as exc:
        return None, f"cannot read the worker's trace: {exc}"
    try:
        return msgspec.json.decode(raw, type=Trace), None
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        return None, f"the worker's trace is incomplete ({exc}): it was killed while writing"


def _answered_by(
    ran: Ran,
    trace: Trace | None,
    trace_problem: str | None,
    *,
    lookup: Lookup,
    files: list[str],
    where: tuple[HostFacts, str, str | None],
    timeout: float | None,
) -> tuple[str, str]:
    """Who gave the host its answer, and why, in one sentence."""
    facts, native, tool = where
    if ran.exit_code is None:
        return "nobody", (f"the hook was still running after {ran.seconds:.0f} s; the host "
                          "would have killed it and gone on without an answer")  # fmt: skip
    if trace is not None:
        if (trace.stdout, trace.stderr, trace.exit_code) != (ran.stdout, ran.stderr, ran.exit_code):
            return "watchdog", ("the worker's reply came too late: the watchdog answered its "
                                "fallback")  # fmt: skip
        if trace.event is None:
            return "worker", ("the payload could not be decoded: the worker answered the host's "
                              "no-opinion, or the refusal a fail-closed handler owes")  # fmt: skip
        if trace.reply is None:
            return "worker", (f"no handler's declaration wants this {native} exactly: the "
                              "worker answered no opinion without running any")  # fmt: skip
        count = len(trace.outcomes)
        return "dispatch", (f"{count} handler{'s' * (count != 1)} ran; the host gets their "
                            "merged reply")  # fmt: skip
    if trace_problem is not None:
        return "watchdog", trace_problem
    what = f"{native} of {tool}" if tool else native
    if not files:
        return "cold-path", ("no configuration file is found here, so no handler is enabled: "
                             "the hook answered at once, no opinion")  # fmt: skip
    if lookup.nobody(facts.name, native, tool):  # the cold path's own gate
        return "cold-path", (f"no handler wants {what}: the hook answered at once, "
                             "without starting a worker")  # fmt: skip
    from hookbus.bus.budgets import budget
    from hookbus.runtime.watchdog import configured_budget

    limit = budget(configured_budget(files), timeout or facts.timeout_for(native))
    if ran.seconds >= limit:
        return "watchdog", (f"the worker gave no reply within the {limit:g} s budget: the "
                            "watchdog killed it and answered its fallback")  # fmt: skip
    return "watchdog", ("the worker ended without a reply (it crashed; the diagnostics log "
                        "says how): the watchdog answered its fallback")  # fmt: skip


def _decode_here(driver: Any, data: bytes, native: str) -> tuple[dict[str, Any] | None, str]:
    """The event as the driver decodes it in this process, when the hook did not decode it."""
    import msgspec

    from hookbus.bus.errors import DecodeError

    try:
        event = driver.decode(data, native)
    except DecodeError as exc:
        return None, f"nobody: {exc}"
    found: dict[str, Any] = msgspec.json.decode(msgspec.json.encode(event))
    found.pop("raw", None)
    return found, "try (the hook did not decode it)"


def _builtins(value: object) -> Any:
    import msgspec

    return msgspec.json.decode(msgspec.json.encode(value))


def _text(name: str, data: bytes) -> dict[str, Any]:
    """``data`` as a JSON string: its text when it is UTF-8, else base64 (and said so)."""
    try:
        return {name: data.decode("utf-8")}
    except UnicodeDecodeError:
        import base64

        return {name: base64.b64encode(data).decode(), f"{name}_base64": True}
