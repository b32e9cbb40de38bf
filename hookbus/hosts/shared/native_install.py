"""Whether a payload's own host runs hookbus for this event from its own hook file, so
that a command of another host's install that got the payload stands aside.

Copilot CLI runs the hooks of ``.claude/settings.json`` as well as its own
``.github/hooks/*.json`` (a real 1.0.102 run), and Cursor runs them beside its
``.cursor/hooks.json`` (cursor.com/docs/hooks, "third-party hooks", on by default): with
``hookbus install --host claude`` and the host's own install in one project, each event
reached hookbus twice, once per file, and every handler ran twice. The host's own
install is the one that answers; the Claude command, recognising the host's payload
(:func:`hookbus.runtime.peek.dialect`), answers that host's no-opinion without looking
further. It stands aside only when it is sure the host's command runs for the same
event: the host's hooks file (:data:`INSTALLS`) in a folder the host reads holds
hookbus's command for the event's name in that host (``PreToolUse`` is Copilot's and
Cursor's ``preToolUse``), whose matcher (if any) takes the tool, and whose checks (the
``if [ -x PYTHON ] && [ -f HOOKBUS ]`` or ``command -v hookbus`` before ``then``) pass
now, so that the host will run hookbus and not the command's fallback. Where it cannot
be sure (no such file, another event, a tool name spelled differently, an interpreter
gone), it handles the event itself: handled twice is a nuisance, never handled a hole in
a guard.

Grok Build does the same with ``~/.claude/settings.json`` and the project's
``.claude/settings.json`` (``xai-org/grok-build@19d42e3``, user guide "Hook Locations"),
giving them its own camelCase payload. The same rule holds, with Grok's files: the
user's ``$GROK_HOME/hooks/hookbus.json`` (``~/.grok``), which Grok always runs, and the
workspace's ``.grok/hooks/hookbus.json``, which Grok runs only in a trusted folder. That
trust is not hookbus's to read, so the project file counts only when the Claude command
that is running can only have come from the project's own Claude settings (no user-scope
Claude settings hold hookbus for the event): Grok ran it, so the folder is trusted, and
the two project files sit behind the same gate.

VS Code's agent hooks read both of those files as well (``.claude/settings.json``, and
``.github/hooks/*.json`` with Copilot's camelCase events renamed PascalCase), giving each
its own payload. Its install is ``hookbus-vscode.json`` in the same folders, read by
VS Code (and by Copilot CLI, whose payload then reaches the VS Code command). The rule
is the same: a command of another host's install that gets a VS Code payload stands
aside when that file holds hookbus's VS Code command for the event and its checks pass.
VS Code ignores matchers, so there is no tool to compare there.

None of this may be forged by files an agent writes in the project: a hooks file in the
project (the Copilot, Cursor, VS Code and Grok ones there) counts only when its bytes are
exactly those this user's ``hookbus install`` wrote, which install records in the trust
store (:func:`hookbus.local.project_trust.hook_file_is_ours`); an agent's hand-written
``.github/hooks/hookbus.json`` with a do-nothing command would otherwise switch the guard
off. Every file is parsed strictly (no ``NaN`` or ``Infinity``, which JavaScript's
``JSON.parse`` refuses, so the host would not run such a file).

Standard library only: this runs on the cold path of every Claude command another host runs.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil

from hookbus.hosts.shared.facts import HostFacts
from hookbus.hosts.shared.names import COPILOT_EVENTS, CURSOR_EVENTS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping

#: The file ``hookbus install --host copilot`` writes, in each folder Copilot reads hooks from.
COPILOT_FILE = "hookbus.json"
#: The file ``hookbus install --host grok`` writes, in the folders Grok reads hooks from.
GROK_FILE = "hookbus.json"
#: The file ``hookbus install --host vscode`` writes, in the folders Copilot's is in.
VSCODE_FILE = "hookbus-vscode.json"
#: The keys of a VS Code entry that replace its ``command`` on some system.
_VSCODE_OVERRIDES = ("linux", "osx", "windows")
#: Bigger than any hooks file hookbus writes: anything larger is not ours to trust.
_MAX_BYTES = 1 << 20


def copilot_home(environ: Mapping[str, str]) -> str:
    """``$COPILOT_HOME``, else ``~/.copilot`` (Copilot's user folder)."""
    return environ.get("COPILOT_HOME") or os.path.join(os.path.expanduser("~"), ".copilot")


#: Where a host's hooks file may be, and the project folder it lies in (where it counts
#: only as this user's install wrote it, reached with no symbolic link), or None.
Place = tuple[str, str | None]


def _in_project(project: str | None, *parts: str) -> Iterator[Place]:
    """``parts`` in the project folder itself: the one place the host reads them for this
    workspace (Cursor reads ``<root>/.cursor/hooks.json``, Copilot and VS Code the
    workspace's ``.github/hooks``, Grok its ``.grok/hooks``; none reads a parent
    folder's). A parent's file, such as the one of the repository a subfolder opened as
    the workspace lies in, may not run. The project must be named plainly (absolute, no
    ``.`` or ``..``): the file is then matched by the path the host opens."""
    if project and os.path.isabs(project) and os.path.normpath(project) == project:
        yield os.path.join(project, *parts), project


def copilot_files(project: str | None, environ: Mapping[str, str]) -> Iterator[Place]:
    """Where a Copilot install of hookbus may be: ``.github/hooks/hookbus.json`` in the
    project, then the user's ``$COPILOT_HOME/hooks/hookbus.json``."""
    yield from _in_project(project, ".github", "hooks", COPILOT_FILE)
    yield os.path.join(copilot_home(environ), "hooks", COPILOT_FILE), None


def vscode_home() -> str:
    """``~/.copilot``: VS Code's user hooks folder is ``~/.copilot/hooks`` (its hooks docs)."""
    return os.path.join(os.path.expanduser("~"), ".copilot")


def vscode_files(project: str | None, environ: Mapping[str, str]) -> Iterator[Place]:
    """Where a VS Code install of hookbus may be: ``.github/hooks/hookbus-vscode.json`` in
    the project, then the user's ``~/.copilot/hooks/hookbus-vscode.json``."""
    yield from _in_project(project, ".github", "hooks", VSCODE_FILE)
    yield os.path.join(vscode_home(), "hooks", VSCODE_FILE), None


def cursor_files(project: str | None, environ: Mapping[str, str]) -> Iterator[Place]:
    """Where a Cursor install of hookbus may be: the project's ``.cursor/hooks.json``,
    then the user's ``~/.cursor/hooks.json``."""
    yield from _in_project(project, ".cursor", "hooks.json")
    yield os.path.join(os.path.expanduser("~"), ".cursor", "hooks.json"), None


class OwnInstall:
    """Where a host's own install of hookbus is, and how its entries read."""

    __slots__ = ("command_key", "events", "files", "host", "matchers")

    def __init__(
        self, host: str, files: Callable[[str | None, Mapping[str, str]], Iterator[Place]],
        command_key: str, events: Mapping[str, str], *, matchers: bool = True,
    ) -> None:  # fmt: skip
        self.host = host
        self.files = files
        #: The entry's key holding the shell command.
        self.command_key = command_key
        #: Claude's event names -> the host's.
        self.events = events
        #: The host reads an entry's matcher (VS Code runs every entry for every tool).
        self.matchers = matchers


#: The hosts that run ``.claude/settings.json`` hooks and have an install of their own.
INSTALLS: dict[str, OwnInstall] = {
    "copilot": OwnInstall("copilot", copilot_files, "bash",
                          {pascal: camel for camel, pascal in COPILOT_EVENTS.items()}),
    "cursor": OwnInstall("cursor", cursor_files, "command", CURSOR_EVENTS),
    # VS Code's events are Claude's PascalCase names.
    "vscode": OwnInstall("vscode", vscode_files, "command", {}, matchers=False),
}  # fmt: skip
#: The hosts whose own install a command of another stands aside for: the hooks files
#: ``hookbus install`` writes for them in a project are recorded in the trust store.
STANDS_ASIDE_FOR = frozenset({*INSTALLS, "grok"})


def handled_by(
    install: OwnInstall, native: str, tool: str | None, project: str | None,
    environ: Mapping[str, str],
) -> str | None:  # fmt: skip
    """The host's hooks file whose hookbus command runs for ``native`` (either
    spelling) and ``tool``, or None."""
    event = install.events.get(native, native)
    for path, folder in install.files(project, environ):
        entries = _entries(path, event, project=folder)
        if any(_runs(install, entry, event, tool) for entry in entries):
            return path
    return None


def vscode_handles(native: str, project: str | None, environ: Mapping[str, str]) -> str | None:
    """The VS Code ``hookbus-vscode.json`` whose command runs for ``native``, or None."""
    return handled_by(INSTALLS["vscode"], native, None, project, environ)


def copilot_handles(
    native: str, tool: str | None, project: str | None, environ: Mapping[str, str]
) -> str | None:
    """The Copilot ``hookbus.json`` whose command runs for ``native`` and ``tool``, or None."""
    return handled_by(INSTALLS["copilot"], native, tool, project, environ)


def grok_home(environ: Mapping[str, str]) -> str:
    """``$GROK_HOME``, else ``~/.grok`` (Grok's user folder, ``xai-grok-home``)."""
    return environ.get("GROK_HOME") or os.path.join(os.path.expanduser("~"), ".grok")


def grok_handles(
    native: str, tool: str | None, project: str | None, environ: Mapping[str, str]
) -> str | None:
    """The Grok ``hookbus.json`` whose command surely runs for ``native`` (Grok's
    snake_case name) and ``tool``, or None (see the module docstring)."""
    home = grok_home(environ)
    if _grok_disabled(os.path.join(home, "disabled-hooks")):
        return None
    paths: list[Place] = [(os.path.join(home, "hooks", GROK_FILE), None)]
    pascal = "".join(word.capitalize() for word in native.split("_"))
    if project and not _claude_user_install(pascal):
        paths += _in_project(project, ".grok", "hooks", GROK_FILE)
    for path, folder in paths:
        for group in _entries(path, native, project=folder):
            if not isinstance(group, dict) or not _grok_matches(group.get("matcher"), tool):
                continue
            if any(_grok_runs(h, native) for h in _inner(group)):
                return path
    return None


def _grok_disabled(path: str) -> bool:
    """True when Grok's list of hooks disabled in its ``/hooks`` tab (one name a line,
    ``xai-grok-hooks/src/trust.rs``) names one of a ``hookbus.json`` (``hookbus:<event>
    [group].hooks[n]``, ``config.rs``): which one is not worth being sure of."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.read(_MAX_BYTES).splitlines()
    except OSError:
        return False
    stem = GROK_FILE.removesuffix(".json") + ":"
    return any(stem in line and not line.lstrip().startswith("#") for line in lines)


def _claude_user_install(event: str) -> bool:
    """True when the user's Claude settings hold a hookbus command for ``event``."""
    folder = os.path.join(os.path.expanduser("~"), ".claude")
    for name in ("settings.json", "settings.local.json"):
        for group in _entries(os.path.join(folder, name), event):
            for entry in _inner(group):
                command = entry.get("command") if isinstance(entry, dict) else None
                if isinstance(command, str) and is_hookbus(command, "claude"):
                    return True
    return False


#: The words of the warm server's client command (install's default form) that import it:
#: :data:`hookbus.hosts.shared.manifest.CLIENT_LAUNCHER` holds them (a test says so), and that
#: module is too heavy for this path.
CLIENT_IMPORT = ";import client;"


def is_hookbus(command: str, host: str) -> bool:
    """True when ``command`` runs hookbus for ``host``: ``hookbus run --host HOST`` (the
    cold forms) or the warm server's client with ``--host HOST``."""
    return f"run --host {host} " in f"{command} " or (
        CLIENT_IMPORT in command and f" --host {host} " in command
    )


def _inner(group: object) -> list[object]:
    """The handlers of a matcher group of the grouped shape (Claude's, Grok's)."""
    inner = group.get("hooks") if isinstance(group, dict) else None
    return inner if isinstance(inner, list) else []


def _grok_matches(matcher: object, tool: str | None) -> bool:
    """True when a Grok matcher surely takes ``tool`` (``matcher.rs``): empty or ``*``
    takes all; letters, digits, ``_`` and ``|`` are exact names; else an unanchored
    regex. A matcher on an event without a tool tests another field: not sure."""
    if matcher in (None, "", "*"):
        return True
    if not isinstance(matcher, str) or tool is None:
        return False
    if re.fullmatch(r"[A-Za-z0-9_|]+", matcher):
        return tool in matcher.split("|")
    try:
        return re.search(matcher, tool) is not None
    except re.error:
        return False  # Grok's own answer to a bad regex: it matches nothing


def _grok_runs(entry: object, native: str) -> bool:
    if not isinstance(entry, dict) or entry.get("type", "command") != "command":
        return False
    command = entry.get("command")
    if not isinstance(command, str) or not is_hookbus(command, "grok"):
        return False
    return f"--event {native} " in f"{command} " and _checks_pass(command)


def _not_json(constant: str) -> object:
    raise ValueError(f"{constant} is not JSON")


def _read_below(project: str, path: str) -> bytes:
    """The bytes of ``path`` (in ``project``), opened one folder at a time from the
    project folder with no symbolic link followed, at the project folder or below it: a
    project whose ``.cursor`` links to another project's recorded file reads that file
    under a path install never recorded, and the host may not run it (OSError then)."""
    parts = os.path.relpath(path, project).split(os.sep)
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(project, flags | os.O_DIRECTORY)
    try:
        for part in parts[:-1]:
            below = os.open(part, flags | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = below
        below = os.open(parts[-1], flags, dir_fd=fd)
    finally:
        os.close(fd)
    with open(below, "rb") as f:
        return f.read(_MAX_BYTES + 1)


def _entries(path: str, event: str, *, project: str | None = None) -> list[object]:
    """The entries of ``event`` in the hooks file at ``path``; none when it cannot be
    read, is not strict JSON, or (in a ``project``) was reached through a symbolic link
    or is not as this user's install wrote it at that very path."""
    try:
        if project is None:
            with open(path, "rb") as f:
                data = f.read(_MAX_BYTES + 1)
        else:
            data = _read_below(project, path)
        if len(data) > _MAX_BYTES:
            return []
        if project is not None:
            from hookbus.local.project_trust import hook_file_is_ours

            if not hook_file_is_ours(path, data):
                return []
        document = json.loads(data, parse_constant=_not_json)
    except (OSError, ValueError, RecursionError):
        return []
    hooks = document.get("hooks") if isinstance(document, dict) else None
    found = hooks.get(event) if isinstance(hooks, dict) else None
    return found if isinstance(found, list) else []


def _runs(install: OwnInstall, entry: object, event: str, tool: str | None) -> bool:
    """True when ``entry`` is hookbus's command of the host for ``event`` and its matcher
    takes ``tool`` (ignoring case: Claude's ``Bash`` is Copilot's ``bash``)."""
    if not isinstance(entry, dict) or entry.get("type", "command") != "command":
        return False
    command = entry.get(install.command_key)
    if not isinstance(command, str) or not is_hookbus(command, install.host):
        return False
    if f"--event {event} " not in f"{command} " or not _checks_pass(command):
        return False
    if not install.matchers:  # the entry runs for every tool, unless a system's replaces it
        return not any(k in entry for k in _VSCODE_OVERRIDES)
    matcher = entry.get("matcher")
    if matcher is None or tool is None:
        return matcher is None
    try:
        return isinstance(matcher, str) and re.fullmatch(matcher, tool, re.IGNORECASE) is not None
    except re.error:
        return False


def _checks_pass(command: str) -> bool:
    """True when the shell checks of an installed command (``if CHECKS; then``, see
    :func:`hookbus.hosts.shared.manifest.shell_command`) pass now: the command will run hookbus,
    not its fallback. A command of another shape is not one we can vouch for."""
    head, then, _ = command.partition("; then ")
    if not then or not head.startswith("if "):
        return False
    try:
        words = shlex.split(head.removeprefix("if "))
    except ValueError:
        return False
    checks: list[list[str]] = [[]]
    for word in words:
        if word == "&&":
            checks.append([])
        else:
            checks[-1].append(word)
    return all(_check(check) for check in checks)


def _check(words: list[str]) -> bool:
    match words:
        case ["[", "-x", path, "]"]:
            return os.path.isfile(path) and os.access(path, os.X_OK)
        case ["[", "-f", path, "]"]:
            return os.path.isfile(path)
        case ["command", "-v", name, ">/dev/null", "2>&1"]:
            return shutil.which(name) is not None
    return False


def stands_aside(
    command: HostFacts, payload_host: HostFacts, *, native: str, tool: str | None,
    payload: Mapping[str, object], environ: Mapping[str, str],
) -> str | None:  # fmt: skip
    """The hook file of ``payload_host``'s own install that handles this event, when a
    command of ``command``'s install got the payload (see the module docstring)."""
    if payload_host is command:
        return None
    project = payload_host.project_dir(environ, payload)
    if payload_host.name == "grok":  # grouped entries, its own matcher rule and trust
        return grok_handles(native, tool, project, environ)
    install = INSTALLS.get(payload_host.name)
    return handled_by(install, native, tool, project, environ) if install else None
