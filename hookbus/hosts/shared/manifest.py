"""What every host's manifest shares: the plan it returns, the hook command (with a shell
fallback that answers in the host's dialect when Python itself cannot), and the safe
handling of the user's own settings files.

A manifest module (``hookbus/hosts/<host>/manifest.py``) ends with ``manifest = ...``, an
object with the :class:`Manifest` surface: given the compiled subscription index it
*plans* (documents to merge, files hookbus owns outright, notes to print), and it can
find, remove and compare its own entries in a document. The CLI carries a plan out with
the shared code here: every foreign entry and key is kept, writes are atomic with one
backup, a symlinked settings file stays a link (its target is replaced), and a file
that cannot be parsed is refused, never overwritten.

Never imported on a hook's path.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shlex
from collections.abc import Mapping
from typing import Any, Literal, Protocol

import msgspec

from hookbus.bus.output import HookOutput
from hookbus.hosts.shared.documents import Format
from hookbus.hosts.shared.facts import HostFacts
from hookbus.hosts.shared.npm import Prefetch
from hookbus.local.interpreter import FLAGS, IMPORT_ENV, python_argv

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hookbus.bus.subscriptions import IndexData

#: Where a host's settings live: the project's committed file, the project's local one
#: (uncommitted, where the host has it), the user's own.
Scope = Literal["project", "local", "user"]
SCOPES: tuple[Scope, ...] = ("project", "local", "user")
#: How the installed command finds hookbus (see :func:`hook_command`); ``server`` is the
#: absolute form through the warm server's client, install's default where the host's
#: manifest says so (:attr:`Manifest.server_default`).
CommandForm = Literal["absolute", "path", "module", "server"]
COMMAND_FORMS: tuple[CommandForm, ...] = ("absolute", "path", "module")
#: The forms that name one machine's interpreter and package by path.
ABSOLUTE_FORMS: tuple[CommandForm, ...] = ("absolute", "server")


class Document(msgspec.Struct, frozen=True, kw_only=True):
    """A settings file of the user's that hookbus merges its entries into."""

    path: str
    format: Format = "json"
    #: hookbus's entries for it, in the shape the manifest's ``merge`` understands.
    entries: dict[str, Any]


#: The line that makes a file hookbus's own: install replaces, and uninstall removes, only
#: a file whose text holds it (the user's own hook file of the same name is theirs).
OWNED_MARK = "hookbus-owned-file"


class OwnedFile(msgspec.Struct, frozen=True, kw_only=True):
    """A file hookbus writes whole and removes on uninstall (a plugin, a hook script); its
    ``text`` holds :data:`OWNED_MARK`."""

    path: str
    text: str
    executable: bool = False


def owned_text(path: str) -> str | None:
    """The text of ``path`` when it is a file hookbus wrote (holds :data:`OWNED_MARK`),
    else None (missing, unreadable, or the user's)."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read(1 << 20)
    except (OSError, UnicodeDecodeError):
        return None
    return text if OWNED_MARK in text else None


class Plan(msgspec.Struct, frozen=True, kw_only=True):
    """What installing hookbus into one host means."""

    documents: tuple[Document, ...] = ()
    owned: tuple[OwnedFile, ...] = ()
    #: Things the user must know or do (Codex: trust the new hooks in ``/hooks``).
    notes: tuple[str, ...] = ()
    #: Packages the host would install with npm before it loads the plugin, installed
    #: ahead (OpenCode, Kilo: :mod:`hookbus.hosts.shared.npm`).
    prefetch: tuple[Prefetch, ...] = ()


class Manifest(Protocol):
    facts: HostFacts
    #: The scopes this host has, each with whether its file is shared (committed with the
    #: project, so that one machine's interpreter path must not be baked into it).
    scopes: Mapping[Scope, bool]
    #: Whether install writes the ``server`` form (the warm server's client) when no flag
    #: asks and nothing is installed: True where the hooks are shell commands. The
    #: in-process shims (OpenCode, Kilo, Pi, Hermes) ask the server only with
    #: ``--server``; by default they spawn ``hookbus run`` by path.
    server_default: bool
    #: Whether its one install, in the user's home, serves every project by each call's
    #: working folder (Hermes), so that install follows the configuration in effect where
    #: it is run (:func:`hookbus.install.plan.config_files`).
    every_project: bool

    def plan(
        self,
        index: IndexData | None,
        *,
        python: str,
        scope: Scope,
        form: CommandForm = "absolute",
        project_dir: str | None = None,
    ) -> Plan: ...

    def commands(self, document: dict[str, Any]) -> dict[str, list[str]]:
        """hookbus's installed commands in ``document``, by native event."""
        ...

    def check(self, path: str, document: dict[str, Any]) -> None:
        """HostConfigError when ``document`` (parsed) has a shape hookbus must not edit."""
        ...

    def merge(self, document: dict[str, Any], entries: Mapping[str, Any]) -> dict[str, Any]:
        """``document`` with ``entries`` in place of any earlier entries of hookbus's (it
        may edit ``document`` in place: round-trip TOML and YAML keep their comments so)."""
        ...

    def without_ours(self, document: dict[str, Any]) -> dict[str, Any]: ...

    def drift(self, document: dict[str, Any], entries: Mapping[str, Any]) -> list[str]: ...

    def owned_paths(self, scope: Scope, project_dir: str | None = None) -> tuple[str, ...]:
        """Every path an :class:`OwnedFile` of this host may have in ``scope`` (uninstall
        removes those that are hookbus's; install removes those no longer planned)."""
        ...

    def owned_top(self, scope: Scope, project_dir: str | None = None) -> str | None:
        """The highest folder uninstall may remove once removing hookbus's files left it
        empty (None: the files' folder and its parent)."""
        ...


# -- the hook command ------------------------------------------------------------------


def hook_argv(python: str, host: str, native: str, timeout: float | None) -> list[str]:
    """``python -E -P <hookbus>/__main__.py run --host HOST --event NATIVE [--timeout S]``.

    -E -P (:data:`hookbus.local.interpreter.FLAGS`): the hook runs in the agent's working
    folder, whose files (a json.py, a token.py) must not shadow the standard library or
    hookbus itself, whatever ``PYTHONPATH`` holds. The package's ``__main__.py`` by path
    rather than ``-m hookbus``: runpy's machinery costs every call ~1.5 ms.
    """
    main = os.path.join(os.path.dirname(hookbus_file(python)), "__main__.py")
    argv = python_argv(python, main, "run", "--host", host, "--event", native)
    if timeout is not None:
        argv += ["--timeout", f"{timeout:g}"]
    return argv


#: Where :func:`hook_argv` names hookbus's ``__main__.py``.
MAIN_AT = 1 + len(FLAGS)


#: Where the warm server's client lies in the package: the folder the launcher puts first
#: on the import path (its other modules the client never imports).
CLIENT_FOLDER = ("runtime", "warm")

#: The server form's program (``-c``): :mod:`hookbus.runtime.warm.client` imported from
#: its folder (the word after it), so that its bytecode is cached (run as a script, a file
#: is compiled on every call: 4 ms, a third of the interpreter's own start), then that
#: folder is taken off the path again.
CLIENT_LAUNCHER = (
    "import sys;a=sys.argv;p=sys.path;p.insert(0,a.pop(1));import client;del p[0];client.run()"
)


def client_folder(package: str) -> str:
    """The client's folder in the hookbus package folder ``package``."""
    return os.path.join(package, *CLIENT_FOLDER)


def client_file(package: str) -> str:
    """The client's file in the hookbus package folder ``package``."""
    return os.path.join(client_folder(package), "client.py")


def package_of_client(folder: str) -> str:
    """The hookbus package folder of the client's ``folder`` a command names (before 0.3
    the client lay in the package's own folder, which commands then named)."""
    suffix = os.path.join("", *CLIENT_FOLDER)
    return folder.removesuffix(suffix) if folder.endswith(suffix) else folder


def client_argv(python: str, host: str, native: str, timeout: float | None) -> list[str]:
    """``python -I -S -c CLIENT_LAUNCHER <client folder> --host HOST --project WORD --event
    NATIVE --timeout S``: the warm server's client (docs/client.md), which sends the server
    its whole environment (earlier versions named the variables to send with ``--env``,
    which the client still reads, and ignores). ``--project``: where the host names its
    project (:attr:`~hookbus.hosts.shared.facts.HostFacts.project_word`), which decides
    the configuration whose index the client reads; the client keeps no table of hosts.
    Always a timeout (the host's default when none is set): the client's deadline is its
    own."""
    from hookbus.hosts import facts

    found = facts(host)
    folder = client_folder(os.path.dirname(hookbus_file(python)))
    seconds = timeout if timeout is not None else found.timeout_for(native)
    return [python, "-I", "-S", "-c", CLIENT_LAUNCHER, folder, "--host", host,
            "--project", found.project_word, "--event", native,
            "--timeout", f"{seconds:g}"]  # fmt: skip


#: Why a hook's fallback refuses: what the host reads when hookbus itself cannot answer.
UNANSWERED_GUARD = "hookbus could not run, and a fail-closed handler wants this event"


class Answers(Protocol):
    """The two answers of a driver an installed hook may give by itself."""

    def no_opinion(self, native: str | None) -> HookOutput: ...

    def refusal(self, native: str | None, reason: str) -> HookOutput: ...


def fallback(driver: Answers, native: str, *, guarded: bool) -> HookOutput:
    """What an installed hook answers itself when hookbus cannot (its interpreter or
    package gone, a shim's wait expired): the refusal when ``guarded`` (a fail-closed
    handler wants ``native``), else the host's no-opinion. A guard is never lost with the
    interpreter, and a missing install is never read by the host as a deny."""
    if guarded:
        return driver.refusal(native, UNANSWERED_GUARD)
    return driver.no_opinion(native)


def hook_command(  # noqa: PLR0917
    form: CommandForm,
    python: str,
    host: str,
    native: str,
    timeout: float | None,
    fallback: HookOutput,
) -> str:
    """The shell command a host runs for ``native``, in one of three forms:

    - ``absolute`` (the default): this interpreter and hookbus's ``__main__.py`` by path.
      The fastest (no PATH search, no version-manager shim, no console-script wrapper),
      but the file then names one machine's interpreter;
    - ``path``: the ``hookbus`` command found on PATH (``pipx``/``uv tool`` installs);
    - ``module``: ``python3`` found on PATH, importing hookbus;
    - ``server``: as ``absolute``, through the warm server's client (:func:`client_argv`);
      with no server it runs the same cold path itself.

    Each answers ``fallback`` (the host's no-opinion, or the refusal a fail-closed handler
    owes) itself when what it runs is gone, so a missing install is never a silent pass
    nor a crash the host reads as a deny.
    """
    args = ["run", "--host", host, "--event", native]
    if timeout is not None:
        args += ["--timeout", f"{timeout:g}"]
    if form == "absolute":
        argv = hook_argv(python, host, native, timeout)
        return shell_command(argv, fallback, requires=(argv[MAIN_AT],))
    if form == "server":
        argv = client_argv(python, host, native, timeout)
        return shell_command(argv, fallback, requires=(os.path.join(argv[5], "client.py"),))
    if form == "path":
        # A console script's ``#!`` line takes no -E: the shell unsets what -E ignores.
        return shell_command(["hookbus", *args], fallback, on_path=True, unset=IMPORT_ENV)
    return shell_command(["python3", "-E", "-c", MODULE_LAUNCHER, *args], fallback, on_path=True)


def console_argv(*args: str) -> list[str]:
    """The ``hookbus`` console script found on PATH, run with ``args`` by a shim that
    spawns it without a shell: through ``sh -c`` after all, which unsets what the
    script's ``#!`` line cannot be told to ignore (:data:`~hookbus.local.interpreter.IMPORT_ENV`)
    and then becomes the script (``exec``: no process more)."""
    return ["/bin/sh", "-c", f'unset {" ".join(IMPORT_ENV)}; exec hookbus "$@"', "hookbus", *args]


#: The ``module`` form's program, run with ``-E`` (``PYTHONPATH`` may name the working
#: folder: :mod:`hookbus.local.interpreter`). ``-c`` puts the working folder first on the import
#: path: it is taken off before anything is imported (``-P`` would do it, but a Python
#: older than 3.11 exits 2 on it, a block for Claude). An interpreter too old, or one
#: that cannot import hookbus (not installed, half removed), exits 1 in a line: the
#: command's fallback answers then.
MODULE_LAUNCHER = (
    "import sys\n"
    "if sys.path and sys.path[0] == '': del sys.path[0]\n"
    "try:\n"
    " assert sys.version_info >= (3, 11), 'Python 3.11 or later is needed'\n"
    " from hookbus.cli import main\n"
    "except Exception as e:\n"
    " sys.exit(f'hookbus: cannot run in {sys.executable}: {e!r}')\n"
    "main()"
)


def interpreter_of(command: str) -> tuple[str, str | None] | None:
    """What a hookbus command runs: (the program, hookbus's ``__main__.py`` or None for
    the ``path`` and ``module`` forms); None when ``command`` is not one of ours."""
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    if "then" not in words:
        return None
    rest = words[words.index("then") + 1 :]
    if rest[:1] == ["exec"]:  # as versions before 0.2 wrote it
        rest = rest[1:]
    if rest[:1] == ["unset"]:  # the ``path`` form's ``unset NAMES;``
        rest = rest[next((i + 1 for i, w in enumerate(rest) if w.endswith(";")), len(rest)) :]
    if not rest:
        return None
    program, flags = rest[0], 1
    while flags < len(rest) and rest[flags] in ("-E", "-P"):  # older installs: -P alone
        flags += 1
    if 1 < flags < len(rest) and rest[flags].endswith("__main__.py"):
        return program, rest[flags]
    if len(rest) > 5 and rest[1:5] == ["-I", "-S", "-c", CLIENT_LAUNCHER]:
        return rest[0], os.path.join(
            package_of_client(rest[5]), "__main__.py"
        )  # the client's package
    return rest[0], None


def form_of(command: str) -> CommandForm | None:
    """The form of a hookbus command, or of a file hookbus wrote holding one (a hook
    script, a plugin's ``hooks.json``: its quoting keeps these words whole); None when
    it holds none."""
    if CLIENT_LAUNCHER in command:
        return "server"
    if "__main__.py run --host " in command:
        return "absolute"
    if "from hookbus.cli import main" in command:
        return "module"
    if "hookbus run --host " in command:
        return "path"
    return None


def shell_command(
    argv: list[str],
    fallback: HookOutput,
    requires: tuple[str, ...] = (),
    *,
    on_path: bool = False,
    unset: tuple[str, ...] = (),
) -> str:
    """``argv`` as a shell command that answers ``fallback`` itself when the hook cannot
    run: the program (``argv[0]``) or a file it ``requires`` (hookbus's own package in
    that interpreter) is gone, or it failed before answering, as a Python that cannot
    import hookbus does (a half-removed install, a broken console script): exit 1, or 126
    and above from the shell (cannot execute, not found, killed). The variables ``unset``
    are taken out of the hook's environment first (a builtin too).

    The fallback is the host's no-opinion, or the refusal when a fail-closed handler
    wants the event: a guard is not lost with the interpreter. ``hookbus run`` itself
    never exits 1 (a host it does not know aside, which no installed command names), so
    its own answers pass through unchanged. The checks are shell builtins; the shell
    waits for the hook (a fork more than an ``exec``, which could not answer a failure).
    """
    if on_path:  # found on PATH: ``command -v`` is a builtin, like ``[``
        checks = f"command -v {shlex.quote(argv[0])} >/dev/null 2>&1"
    else:
        checks = " && ".join(f"[ {flag} {shlex.quote(path)} ]" for flag, path in (
            ("-x", argv[0]), *(("-f", p) for p in requires)))  # fmt: skip
    command = " ".join(shlex.quote(a) for a in argv)
    if unset:
        command = f"unset {' '.join(unset)}; {command}"
    parts = []
    if fallback.stdout:
        text = fallback.stdout.decode()
        newline = "\\n" if text.endswith("\n") else ""
        parts.append(f"printf '%s{newline}' {shlex.quote(text.removesuffix(chr(10)))}")
    if fallback.stderr:
        parts.append(f"printf '%s' {shlex.quote(fallback.stderr.decode())} >&2")
    parts.append(f"exit {fallback.exit_code}")
    passed = "s=$?; [ $s -ne 1 ] && [ $s -lt 126 ] && exit $s"
    return f"if {checks}; then {command}; {passed}; fi; {'; '.join(parts)}"


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
        python_argv(python, "-c", "import hookbus; print(hookbus.__file__)"),
        capture_output=True, text=True, timeout=30, check=False,
    )  # fmt: skip
    return probe.stdout.strip()


def is_hookbus_command(command: object, host: str) -> bool:
    """True for a hook command hookbus wrote for ``host`` (any interpreter, any event,
    ``-m hookbus`` as earlier versions wrote it, or the package's ``__main__.py``)."""
    if not isinstance(command, str):
        return False
    return (
        f"hookbus run --host {host}" in command
        or f"hookbus/__main__.py run --host {host}" in command
        or (f"run --host {host} " in command and "from hookbus.cli import main" in command)
        or (f" --host {host} " in command and CLIENT_LAUNCHER in command)
    )


# -- the user's documents (read and dumped by hookbus.hosts.shared.documents) --------------


BACKUP_SUFFIX = ".hookbus-backup"


def backup_path(path: str) -> str:
    """Where the user's file as it was before hookbus first changed it is kept."""
    return os.path.realpath(path) + BACKUP_SUFFIX


def write_atomically(
    path: str, data: str | bytes, *, mode: int | None = None, backup: bool = False
) -> str | None:
    """Replace ``path`` with ``data`` in one rename; the backup's path when this write made
    one. A symlinked settings file (dotfiles) keeps its link: its target is what is
    replaced. The new text goes to a fresh temporary file first, never one a name planted
    in the folder points to. Folders made for ``path`` are recorded as hookbus's
    (:mod:`hookbus.hosts.shared.folders`): uninstall removes them once empty, and only them.

    ``backup``: the file as it is now is the user's own, nothing of hookbus's in it. It
    is then kept as the backup, in place of an older one (from before an uninstall that
    kept the user's later edits), as private as the file (a settings file can hold an
    API key). The caller passes False for a file that holds hookbus's entries already: a
    reinstall must keep the backup of the user's file as it was before hookbus first
    touched it, or have none when hookbus created the file (uninstall would otherwise
    give back hookbus's own file as "your original").
    """
    from hookbus.hosts.shared import folders

    path = os.path.realpath(path)
    folder = os.path.dirname(path)
    folders.make(folder)
    made = None
    current = os.stat(path).st_mode & 0o777 if os.path.exists(path) else None
    if backup and current is not None:
        made = backup_path(path)
        with open(path, "rb") as f:
            _replace(made, f.read(), current)
    raw = data.encode() if isinstance(data, str) else data
    _replace(path, raw, mode if mode is not None else current if current is not None else 0o644)
    return made


def _replace(path: str, raw: bytes, mode: int) -> None:
    """Put ``raw`` at ``path`` with ``mode`` (the umask neither widens nor narrows it) in
    one rename of a fresh temporary file: a link planted at ``path`` is replaced, never
    followed."""
    import tempfile

    folder = os.path.dirname(path)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{os.path.basename(path)}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(raw)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
