"""Hostile hook payloads for the fuzz tests: each host's real payloads (its driver's samples
and its goldens), mutated as an agent that writes tool arguments could mutate them, each
with the answer it is owed when a fail-closed guard wants its event.

A case is made from ``(seed, number)`` alone (:func:`case`), so a failure is replayed by
its seed and number, and 25 000 payloads, some over 1 MiB, are never held at once.

The mutations, and what they leave of the payload:

- readable (the driver decodes it as before): ``valid``; ``decoy``, event and tool names
  of other events planted inside the tool's arguments at random depths, and as text in
  its strings; ``unknown-keys``, keys the host does not send added at the top;
  ``huge-string``, a string of 64-700 KiB in the arguments (the whole under 1 MiB);
- unreadable (hookbus must answer from ``--event`` alone): ``deep``, decoys in arguments
  nested past the JSON parser's depth limit; ``oversize``, over 1 MiB; ``truncated``;
- either: ``wrong-type``, a top-level field given a value of another type (the event's
  name too), and ``invalid-utf8`` in the tool's arguments: the driver may read it (a field
  it skips) or not, so either answer it owes is right.

What is owed: a readable payload gets exactly its handler's reply as the driver encodes
it (the guard's deny, the stop guard's request to keep working) or, when no guard wants
it, the host's no-opinion; an unreadable one whose event a fail-closed guard wants gets
the host's refusal, whatever its reason says. A readable payload that an added key makes
another host's (Copilot's ``timestamp``, ``sessionId``) may also get the no-opinion: that
host's own install, which the bench has, answers it (a documented stand-aside).
"""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from hookbus import hosts
from hookbus.bus.host import Driver
from hookbus.bus.output import HookOutput
from hookbus.bus.replies import Reply
from hookbus.hosts import HOSTS as HOSTS_FACTS
from hookbus.runtime.peek import dialect

HOSTS = ("claude", "codex", "gemini", "cursor", "copilot", "cline")
GOLDEN = Path(__file__).parent / "golden"
#: The user's guards (the test writes them): the replies they give.
SHELL_DENY = Reply.deny("fuzz: no shell")
KEEP_WORKING = Reply.continue_working("fuzz: keep going")
GUARDS = """
import hookbus


@hookbus.handler("before-tool", tools="shell", timeout=10, fail_closed=True)
def no_shell(event):
    return hookbus.Reply.deny("fuzz: no shell")


@hookbus.handler("stop", timeout=10, fail_closed=True)
def no_stop(event):
    return hookbus.Reply.continue_working("fuzz: keep going")
"""
#: Keys that name an event or a tool in some host's dialect.
DECOY_KEYS = ("hook_event_name", "hookName", "hookEventName", "event", "eventName",
              "hook_event", "type", "tool_name", "toolName", "tool")  # fmt: skip
DECOY_TOOLS = ("Read", "read_file", "view", "Glob", "apply_patch", "list_files", "WebFetch")
#: Unknown top-level keys: some name what another host sends.
UNKNOWN_KEYS = ("timestamp", "sessionId", "x_fuzz", "x_meta", "x_request")
MUTATIONS = (("valid", 8), ("decoy", 25), ("unknown-keys", 8), ("huge-string", 4),
             ("deep", 17), ("oversize", 2), ("invalid-utf8", 10), ("truncated", 14),
             ("wrong-type", 12))  # fmt: skip
READABLE = frozenset({"valid", "decoy", "unknown-keys", "huge-string"})
UNREADABLE = frozenset({"deep", "oversize", "truncated"})
#: Past msgspec's depth limit (1 000) and Python's json's recursion limit.
DEEP = (1_001, 4_000)
MIB = 1 << 20
#: A reason in a template: any JSON string's content matches it.
SENTINEL = "R3ASON-SENTINEL"
_HOLE = "\u0000HOLE\u0000"


@dataclass(frozen=True)
class Base:
    """A real payload of ``host`` for ``native``, and the reply the guards give it."""

    host: str
    native: str
    data: dict[str, Any]
    #: What the user's guards answer when it is read (None: no guard wants it).
    reply: Reply | None
    #: The keys to the tool's arguments (a dict, or a JSON text of one); None: the
    #: payload has none, and decoys go under a key of their own.
    args: tuple[str, ...] | None


@dataclass(frozen=True)
class Case:
    """One payload and its mutation (:func:`wrong_answer` says what it is owed)."""

    number: int
    base: Base
    mutation: str
    payload: bytes


class Bench:
    """A user-scope install of every host, the guards in the user's configuration, and
    the environment and folder the hooks run in."""

    def __init__(self, root: Path, state: Path) -> None:
        self.project = root / "project"
        (self.project / ".git").mkdir(parents=True)
        user = root / "config" / "hookbus"
        user.mkdir(parents=True)
        (user / "fuzzguard.py").write_text(GUARDS)
        (user / "config.toml").write_text(
            # A budget no call on a loaded machine runs out of (the host's timeout is less).
            f'budget = 30\npython_path = ["{user}"]\n'
            'enable = ["fuzzguard:no_shell", "fuzzguard:no_stop"]\n'
        )
        self.home = root / "home"
        self.home.mkdir()
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("HOOKBUS_", "PYTHON", "XDG_", "CLAUDE_"))}  # fmt: skip
        # A log that is never rotated: every diagnostic of the run is read at its end.
        self.env = {**env, "HOME": str(self.home), "XDG_CONFIG_HOME": str(root / "config"),
                    "HOOKBUS_STATE_DIR": str(state), "HOOKBUS_LOG_MAX_BYTES": str(1 << 30)}  # fmt: skip
        self.state = state

    def hookbus(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "hookbus", *args], cwd=self.project,
                              env=self.env, capture_output=True, text=True, timeout=120,
                              check=False)  # fmt: skip

    def install(self, *flags: str, hosts: tuple[str, ...] = HOSTS) -> dict[tuple[str, str], str]:
        """``hookbus install --scope user`` for ``hosts``: the commands by (host, native)."""
        commands: dict[tuple[str, str], str] = {}
        for host in hosts:
            done = self.hookbus("install", "--host", host, "--scope", "user", *flags)
            assert done.returncode == 0, done.stderr
            for text in _strings(self.home):
                # The client's command names its project's whereabouts between the two.
                found = re.search(rf"--host {host} (?:--project \S+ )?--event (\S+)", text)
                if found:
                    commands[host, found[1]] = text
        return commands

    def run(self, command: str, payload: bytes) -> HookOutput:
        """``command`` as the hosts run a hook: ``/bin/sh -c``, the payload on stdin."""
        done = subprocess.run(["/bin/sh", "-c", command], input=payload, capture_output=True,
                              cwd=self.project, env=self.env, timeout=60, check=False)  # fmt: skip
        return HookOutput(done.stdout, done.stderr, done.returncode)


def _strings(home: Path) -> Iterator[str]:
    """Every string of the hosts' files under ``home`` (a hook script's whole text)."""
    for path in home.rglob("*"):
        if not path.is_file():
            continue
        text = path.read_text()
        try:
            data = json.loads(text)
        except ValueError:
            yield text
            continue
        stack = [data]
        while stack:
            node = stack.pop()
            if isinstance(node, str):
                yield node
            elif isinstance(node, dict | list):
                stack.extend(node.values() if isinstance(node, dict) else node)


def guarded(driver: Driver) -> tuple[frozenset[str], frozenset[str]]:
    """The natives of ``driver`` the guards subscribe to: before-tool, stop."""
    return (frozenset(driver.natives("before-tool", driver.events)),
            frozenset(driver.natives("stop", driver.events)))  # fmt: skip


def bases(host: str, natives: set[str], cwd: str) -> list[Base]:
    """The driver's samples of ``natives`` (with a shell tool and with others) and the
    goldens of those natives, each with the reply the guards give it."""
    driver = hosts.driver(host)
    before, stop = guarded(driver)
    found: list[tuple[str, bytes]] = []
    shell = driver.tool_route(("shell",))
    others = [n for kind in ("read", "edit", "web") if (r := driver.tool_route((kind,)))
              for n in r.names[:2]]  # fmt: skip
    for native in sorted(natives):
        tools: list[str | None] = [None]
        if native in before:
            tools = [*(shell.names if shell else ()), *others]
        for tool in tools:
            kw: dict[str, Any] = {} if tool is None else {"tool": tool}
            try:
                found.append((native, driver.sample(native, cwd=cwd, session_id="fuzz-s", **kw)))
            except ValueError:  # a tool this event cannot carry
                continue
    for path in sorted((GOLDEN / host).rglob("*.json")):
        if path.name.endswith(".expected.json"):
            continue
        native = json.loads(path.with_name(path.stem + ".expected.json").read_text())["native"]
        if native in natives:
            found.append((native, path.read_bytes()))
    out = []
    for native, raw in found:
        event = driver.decode(raw, native if driver.facts.event_required else None)
        data = json.loads(raw)
        if not isinstance(data, dict):
            continue
        tool = getattr(event, "tool", None)
        reply = None
        if native in before and tool is not None and tool.kind == "shell":
            reply = SHELL_DENY
        elif native in stop and not getattr(event, "stop_hook_active", False):
            reply = KEEP_WORKING
        args = _path_to(data, tool.input) if tool is not None else None
        out.append(Base(host, native, data, reply, args))
    return out


def _path_to(data: dict[str, Any], wanted: object) -> tuple[str, ...] | None:
    """The keys to the dict of ``data`` equal to ``wanted`` (or a JSON text of it)."""
    for key, found in data.items():
        value = found
        if isinstance(found, str) and found[:1] == "{":
            try:
                value = json.loads(found)
            except ValueError:
                continue
        if value == wanted and isinstance(value, dict):
            return (key,)
        if isinstance(value, dict) and (below := _path_to(value, wanted)) is not None:
            return (key, *below)
    return None


def _containers(node: Any, depth: int = 0) -> list[Any]:
    """Every dict and list below the top (a tool's arguments, its result, ...)."""
    found = [node] if depth and isinstance(node, dict | list) else []
    children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else ()
    for child in children:
        found += _containers(child, depth + 1)
    return found


def _decoy(rng: random.Random, base: Base) -> dict[str, Any]:
    events = [e for e in hosts.driver(base.host).events if e != base.native]
    key = rng.choice(DECOY_KEYS)
    value = rng.choice(DECOY_TOOLS) if "tool" in key else rng.choice(events)
    return {key: value}


def _nest(rng: random.Random, inner: Any, depth: int) -> Any:
    for _ in range(depth):
        inner = [inner] if rng.random() < 0.5 else {rng.choice(("a", "args", "x")): inner}
    return inner


def _plant(rng: random.Random, base: Base, data: dict[str, Any], value: Any, *,
           into_text: bool = True) -> None:  # fmt: skip
    """``value`` into a random dict or list of the tool's arguments (or under a key of its
    own); arguments that are a JSON text (Copilot's ``toolArgs`` in older builds) are
    planted into and dumped again, unless ``into_text`` is false (the planted value is a
    hole for bytes of its own)."""
    if base.args is None:
        data.setdefault("x_fuzz_args", {})
        holder, key = data, "x_fuzz_args"
    else:
        holder = data
        for key in base.args[:-1]:
            holder = holder[key]
        key = base.args[-1]
    args = holder[key]
    if isinstance(args, str):
        if not into_text:
            holder[key] = json.loads(args)
        else:
            inner = json.loads(args)
            _plant_in(rng, inner, value)
            holder[key] = json.dumps(inner)
            return
    _plant_in(rng, holder[key], value)


def _plant_in(rng: random.Random, args: Any, value: Any) -> None:
    spot = rng.choice([args, *_containers(args)])
    if isinstance(spot, list):
        spot.insert(rng.randrange(len(spot) + 1), value)
    else:
        spot[f"k{rng.randrange(1000)}"] = value


def _decoys(rng: random.Random, base: Base, data: dict[str, Any]) -> None:
    for _ in range(rng.randint(1, 4)):
        _plant(rng, base, data, _nest(rng, _decoy(rng, base), rng.randint(0, 40)))
    # As text too: a byte search of the payload finds these as well.
    text = json.dumps(_decoy(rng, base))[1:-1]
    _plant(rng, base, data, f'echo "{text}"' if rng.random() < 0.5 else text)


def case(seed: int, number: int, pool: list[Base]) -> Case:
    """Case ``number`` of the run seeded ``seed``."""
    rng = random.Random(f"{seed}/{number}")
    base = rng.choice(pool)
    names, weights = zip(*MUTATIONS, strict=True)
    mutation = rng.choices(names, weights)[0]
    data = json.loads(json.dumps(base.data))
    if mutation != "valid":
        _decoys(rng, base, data)
    hole: bytes | None = None
    if mutation == "unknown-keys":
        for key in rng.sample(UNKNOWN_KEYS, rng.randint(1, 3)):
            # The keys other hosts send get a string, as they send it.
            value = rng.choice(["fuzz", 17, {"n": [1]}, None]) if key.startswith("x") else "fuzz-s"
            data.setdefault(key, value)
    elif mutation == "huge-string":
        _plant(rng, base, data, "A" * rng.randint(64 << 10, 700 << 10))
    elif mutation == "deep":
        n = rng.randint(*DEEP)
        decoy = json.dumps(_decoy(rng, base)).encode()
        hole = decoy[:-1] + b', "x": ' + b"[" * n + decoy + b"]" * n + b"}"
    elif mutation == "oversize":
        hole = b'"' + b"A" * rng.randint(MIB, MIB + (256 << 10)) + b'"'
    elif mutation == "invalid-utf8":
        hole = b'"bad ' + rng.choice([b"\xff\xfe", b"\xc3\x28", b"\xed\xa0\x80", b"\x80"]) + b'"'
    elif mutation == "wrong-type":
        key = rng.choice(list(data))
        # Not a string: one would rename the event or the tool, not mistype it.
        data[key] = rng.choice([5, -1, 1e308, True, None, [], {}, [data[key]]])
    if hole is not None:
        _plant(rng, base, data, _HOLE, into_text=False)
    payload = json.dumps(data).encode()
    if hole is not None:
        payload = payload.replace(json.dumps(_HOLE).encode(), hole, 1)
    if mutation == "truncated":
        payload = payload[: rng.randint(max(1, len(payload) // 2), len(payload) - 1)]
    return Case(number, base, mutation, payload)


def _template(output: HookOutput) -> re.Pattern[bytes]:
    """``output`` as a pattern in which the reason is any JSON string's content."""
    any_reason = rb'(?:[^"\\]|\\.)*'
    parts = [re.escape(p) for p in (output.stdout + b"\0" + output.stderr).split(
        SENTINEL.encode())]  # fmt: skip
    return re.compile(any_reason.join(parts) + b"\0" + str(output.exit_code).encode(), re.S)


def _as_matched(output: HookOutput) -> bytes:
    return output.stdout + b"\0" + output.stderr + b"\0" + str(output.exit_code).encode()


def _stands_aside(c: Case) -> bool:
    """Whether the payload reads as another host's (a key it carries: Copilot's
    ``timestamp``), whose own install the bench has too: that install answers the event,
    and this host's command its no-opinion (:mod:`hookbus.hosts.shared.native_install`, logged
    ``stood-aside``)."""
    own = HOSTS_FACTS[c.base.host]
    read_as = dialect(own, json.loads(c.payload))
    return read_as is not own and read_as.name in HOSTS


@dataclass(frozen=True)
class Owed:
    """What a payload of one host, event and guards' reply is owed: read, unread."""

    #: Read: the guards' reply as the driver encodes it, or the no-opinion.
    read: HookOutput
    no_opinion: HookOutput
    #: Read with a mistyped loop guard: the stop guard's answer too.
    kept: HookOutput | None
    #: Whether a fail-closed guard wants the event (an unread payload is refused).
    guarded: bool
    refusal: re.Pattern[bytes]
    shown_refusal: HookOutput


@cache
def owed(host: str, native: str, reply: Reply | None) -> Owed:
    """:class:`Owed` of ``host``'s ``native`` whose guards reply ``reply``, made once (the
    fuzz test asks it of every one of its calls)."""
    driver = hosts.driver(host)
    before, stop = guarded(driver)
    no_opinion = driver.no_opinion(native)
    read = driver.encode(native, reply).output if reply else no_opinion
    kept = driver.encode(native, KEEP_WORKING).output if native in stop else None
    return Owed(read, no_opinion, None if kept == read else kept, native in before | stop,
                _template(driver.refusal(native, SENTINEL)), driver.refusal(native, "..."))  # fmt: skip


def wrong_answer(c: Case, got: HookOutput) -> str | None:
    """Why ``got`` is not what ``c`` is owed (None: it is)."""
    o = owed(c.base.host, c.base.native, c.base.reply)
    if c.mutation in READABLE:
        if got == o.no_opinion and _stands_aside(c):
            return None
        return None if got == o.read else f"owed {o.read}"
    refused = o.refusal.fullmatch(_as_matched(got)) is not None
    if c.mutation in UNREADABLE:
        if o.guarded:
            return None if refused else f"owed the refusal {o.shown_refusal}"
        return None if got == o.no_opinion else f"owed {o.no_opinion}"
    # wrong-type, invalid-utf8: read (the handler's answer) or not (the refusal); a
    # mistyped loop guard (Cursor's ``loop_count``) may also make a stop the stop guard
    # stood aside from one it answers.
    read = [o.read] if o.kept is None else [o.read, o.kept]
    if got in read or refused:
        return None
    return f"owed {' or '.join(map(str, read))} or the refusal"
