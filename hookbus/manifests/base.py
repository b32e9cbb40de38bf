"""What every host's manifest shares: the plan it returns, the hook command (with a shell
fallback that answers in the host's dialect when Python itself cannot), and the safe
handling of the user's own settings files.

A manifest module (``hookbus/manifests/<host>.py``) ends with ``manifest = ...``, an
object with the :class:`Manifest` surface: given the compiled subscription index it
*plans* (documents to merge, files hookbus owns outright, notes to print), and it can
find, remove and compare its own entries in a document. The CLI carries a plan out with
the shared code here: every foreign entry and key is kept, writes are atomic with one
backup, a symlinked settings file stays a link (its target is replaced), and a file
that cannot be parsed is refused, never overwritten.

Never imported on a hook's path.
"""

from __future__ import annotations

import functools
import os
import shlex
from collections.abc import Mapping
from typing import Any, Literal, Protocol

import msgspec

from hookbus.hosts import HostFacts
from hookbus.manifests.documents import Format
from hookbus.output import HookOutput

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hookbus.runtime.index import IndexData

Scope = Literal["project", "user"]


class Document(msgspec.Struct, frozen=True, kw_only=True):
    """A settings file of the user's that hookbus merges its entries into."""

    path: str
    format: Format = "json"
    #: hookbus's entries for it, in the shape the manifest's ``merge`` understands.
    entries: dict[str, Any]


class OwnedFile(msgspec.Struct, frozen=True, kw_only=True):
    """A file hookbus writes whole and removes on uninstall (a plugin, a hook script)."""

    path: str
    text: str
    executable: bool = False


class Plan(msgspec.Struct, frozen=True, kw_only=True):
    """What installing hookbus into one host means."""

    documents: tuple[Document, ...] = ()
    owned: tuple[OwnedFile, ...] = ()
    #: Things the user must know or do (Codex: trust the new hooks in ``/hooks``).
    notes: tuple[str, ...] = ()


class Manifest(Protocol):
    facts: HostFacts

    def plan(self, index: IndexData | None, *, python: str, scope: Scope) -> Plan: ...

    def check(self, path: str, document: dict[str, Any]) -> None:
        """HostConfigError when ``document`` (parsed) has a shape hookbus must not edit."""
        ...

    def merge(self, document: dict[str, Any], entries: Mapping[str, Any]) -> dict[str, Any]:
        """``document`` with ``entries`` in place of any earlier entries of hookbus's (it
        may edit ``document`` in place: round-trip TOML and YAML keep their comments so)."""
        ...

    def without_ours(self, document: dict[str, Any]) -> dict[str, Any]: ...

    def drift(self, document: dict[str, Any], entries: Mapping[str, Any]) -> list[str]: ...


def load(host: str) -> Manifest:
    """The manifest of ``host``; KeyError when it has none."""
    import importlib

    from hookbus.hosts import facts

    module = facts(host).manifest
    if module is None:
        raise KeyError(f"hookbus cannot install into {host} yet")
    return importlib.import_module(module).manifest  # type: ignore[no-any-return]


# -- the hook command ------------------------------------------------------------------


def hook_argv(python: str, host: str, native: str, timeout: float | None) -> list[str]:
    """``python -P <hookbus>/__main__.py run --host HOST --event NATIVE [--timeout S]``.

    -P: the hook runs in the agent's working folder, whose files (a json.py, a token.py)
    must not shadow the standard library or hookbus itself. The package's ``__main__.py``
    by path rather than ``-m hookbus``: runpy's machinery costs every call ~1.5 ms.
    """
    main = os.path.join(os.path.dirname(hookbus_file(python)), "__main__.py")
    argv = [python, "-P", main, "run", "--host", host, "--event", native]
    if timeout is not None:
        argv += ["--timeout", f"{timeout:g}"]
    return argv


def shell_command(argv: list[str], fallback: HookOutput, requires: tuple[str, ...] = ()) -> str:
    """``argv`` as a shell command that answers ``fallback`` itself when the hook cannot
    start: the interpreter (``argv[0]``) or a file it ``requires`` (hookbus's own package
    in that interpreter) is gone.

    The fallback is the host's no-opinion, or the refusal when a fail-closed handler
    wants the event: a guard is not lost with the interpreter. The checks are shell
    builtins and the hook is ``exec``-ed, so the shell forks nothing and costs nothing
    measurable; a fallback after the hook (``cmd || fallback``) would keep the shell
    waiting on every call.
    """
    checks = " && ".join(f"[ {flag} {shlex.quote(path)} ]" for flag, path in (
        ("-x", argv[0]), *(("-f", p) for p in requires)))  # fmt: skip
    command = " ".join(shlex.quote(a) for a in argv)
    parts = []
    if fallback.stdout:
        text = fallback.stdout.decode()
        newline = "\\n" if text.endswith("\n") else ""
        parts.append(f"printf '%s{newline}' {shlex.quote(text.removesuffix(chr(10)))}")
    if fallback.stderr:
        parts.append(f"printf '%s' {shlex.quote(fallback.stderr.decode())} >&2")
    parts.append(f"exit {fallback.exit_code}")
    return f"if {checks}; then exec {command}; fi; {'; '.join(parts)}"


@functools.cache
def hookbus_file(python: str) -> str:
    """The file of hookbus's package as ``python`` imports it (the command's fallback
    answers when it is gone)."""
    import sys

    if python == sys.executable:
        import hookbus

        return hookbus.__file__ or ""
    import subprocess

    probe = subprocess.run(
        [python, "-P", "-c", "import hookbus; print(hookbus.__file__)"],
        capture_output=True, text=True, timeout=30, check=False,
    )  # fmt: skip
    return probe.stdout.strip()


def is_hookbus_command(command: object, host: str) -> bool:
    """True for a hook command hookbus wrote for ``host`` (any interpreter, any event,
    ``-m hookbus`` as earlier versions wrote it, or the package's ``__main__.py``)."""
    if not isinstance(command, str):
        return False
    return f"hookbus run --host {host}" in command or (
        f"hookbus/__main__.py run --host {host}" in command
    )


# -- the user's documents (read and dumped by hookbus.manifests.documents) --------------


def write_atomically(path: str, text: str, *, mode: int | None = None) -> str | None:
    """Replace ``path`` with ``text`` in one rename, keeping a backup; the backup's path.
    A symlinked settings file (dotfiles) keeps its link: its target is what is replaced."""
    path = os.path.realpath(path)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    backup = None
    if os.path.exists(path):
        backup = f"{path}.hookbus-backup"
        with open(path, "rb") as src, open(backup, "wb") as dst:
            dst.write(src.read())
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    if mode is not None:
        os.chmod(tmp, mode)
    elif os.path.exists(path):
        os.chmod(tmp, os.stat(path).st_mode & 0o777)
    os.replace(tmp, path)
    return backup
