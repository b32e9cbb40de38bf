"""Whether a payload's own host runs hookbus for this event from its own hook file, so
that a command of another host's install that got the payload stands aside.

Copilot CLI runs the hooks of ``.claude/settings.json`` as well as its own
``.github/hooks/*.json`` (a real 1.0.102 run): with both ``hookbus install --host claude``
and ``--host copilot`` in a project, each event reached hookbus twice, once per file
(camelCase then PascalCase), and every handler ran twice. The Copilot install is the
host's own, so it is the one that answers; the Claude command, recognising Copilot's
payload (:func:`hookbus.runtime.peek.dialect`), answers Copilot's no-opinion without
looking further. It stands aside only when it is sure the Copilot command runs for the
same event: ``hookbus.json`` in a folder Copilot reads holds hookbus's command for the
event's camelCase name, whose matcher (if any) takes the tool, and whose checks (the
``if [ -x PYTHON ] && [ -f HOOKBUS ]`` or ``command -v hookbus`` before ``then``) pass
now, so that Copilot will run hookbus and not the command's fallback. Where it cannot be
sure (no such file, another event, a tool name Claude and Copilot spell differently, an
interpreter gone), it handles the event itself: handled twice is a nuisance, never
handled a hole in a guard.

VS Code's agent hooks read both of those files as well (``.claude/settings.json``, and
``.github/hooks/*.json`` with Copilot's camelCase events renamed PascalCase), giving each
its own payload. Its install is ``hookbus-vscode.json`` in the same folders, read by
VS Code (and by Copilot CLI, whose payload then reaches the VS Code command). The rule
is the same: a command of another host's install that gets a VS Code payload stands
aside when that file holds hookbus's VS Code command for the event and its checks pass.
VS Code ignores matchers, so there is no tool to compare there.

Standard library only: this runs on the cold path of every Claude command Copilot runs.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil

from hookbus.discover import project_candidates
from hookbus.hosts import COPILOT_EVENTS, HostFacts

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping

#: The file ``hookbus install --host copilot`` writes, in each folder Copilot reads hooks from.
COPILOT_FILE = "hookbus.json"
#: The file ``hookbus install --host vscode`` writes, in the same folders.
VSCODE_FILE = "hookbus-vscode.json"
#: The keys of a VS Code entry that replace its ``command`` on some system.
_VSCODE_OVERRIDES = ("linux", "osx", "windows")
#: camelCase names of the PascalCase events (Copilot's two name lists).
_CAMEL = {pascal: camel for camel, pascal in COPILOT_EVENTS.items()}
#: Bigger than any hooks file hookbus writes: anything larger is not ours to trust.
_MAX_BYTES = 1 << 20


def copilot_home(environ: Mapping[str, str]) -> str:
    """``$COPILOT_HOME``, else ``~/.copilot`` (Copilot's user folder)."""
    return environ.get("COPILOT_HOME") or os.path.join(os.path.expanduser("~"), ".copilot")


def vscode_home() -> str:
    """``~/.copilot``: VS Code's user hooks folder is ``~/.copilot/hooks`` (its hooks docs)."""
    return os.path.join(os.path.expanduser("~"), ".copilot")


def copilot_files(
    project: str | None, environ: Mapping[str, str], name: str = COPILOT_FILE
) -> Iterator[str]:
    """Where a Copilot install of hookbus may be: ``.github/hooks/hookbus.json`` in the
    project folder or a parent (as far as ``.hookbus.toml`` is looked for, since install
    writes beside it), then the user's ``$COPILOT_HOME/hooks/hookbus.json``. With
    ``name`` :data:`VSCODE_FILE`, where a VS Code install may be (the user's under
    :func:`vscode_home`)."""
    if project:
        for candidate in project_candidates(project):
            yield os.path.join(os.path.dirname(candidate), ".github", "hooks", name)
    home = vscode_home() if name == VSCODE_FILE else copilot_home(environ)
    yield os.path.join(home, "hooks", name)


def copilot_handles(
    native: str, tool: str | None, project: str | None, environ: Mapping[str, str]
) -> str | None:
    """The Copilot ``hookbus.json`` whose command runs for ``native`` (either spelling)
    and ``tool``, or None."""
    camel = _CAMEL.get(native, native)
    for path in copilot_files(project, environ):
        entries = _entries(path, camel)
        if any(_runs(entry, camel, tool) for entry in entries):
            return path
    return None


def vscode_handles(native: str, project: str | None, environ: Mapping[str, str]) -> str | None:
    """The VS Code ``hookbus-vscode.json`` whose command runs for ``native``, or None."""
    for path in copilot_files(project, environ, VSCODE_FILE):
        if any(_runs(entry, native, None, host="vscode") for entry in _entries(path, native)):
            return path
    return None


def _entries(path: str, event: str) -> list[object]:
    try:
        with open(path, "rb") as f:
            data = f.read(_MAX_BYTES + 1)
        document = json.loads(data) if len(data) <= _MAX_BYTES else None
    except (OSError, ValueError, RecursionError):
        return []
    hooks = document.get("hooks") if isinstance(document, dict) else None
    found = hooks.get(event) if isinstance(hooks, dict) else None
    return found if isinstance(found, list) else []


def _runs(entry: object, event: str, tool: str | None, *, host: str = "copilot") -> bool:
    """True when ``entry`` is hookbus's command of ``host`` (Copilot's ``bash``, VS
    Code's ``command`` with no override for a system) for ``event``, and for Copilot its
    matcher takes ``tool`` (ignoring case: Claude's ``Bash`` is Copilot's ``bash``)."""
    if not isinstance(entry, dict) or entry.get("type", "command") != "command":
        return False
    vscode = host == "vscode"
    command = entry.get("command" if vscode else "bash")
    if not isinstance(command, str) or f"run --host {host}" not in command:
        return False
    if f"--event {event} " not in f"{command} " or not _checks_pass(command):
        return False
    if vscode:  # VS Code ignores matchers: the entry runs for every tool
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
    :func:`hookbus.manifests.base.shell_command`) pass now: the command will run hookbus,
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
    if payload_host.name == "copilot":
        return copilot_handles(native, tool, project, environ)
    if payload_host.name == "vscode":
        return vscode_handles(native, project, environ)
    return None
