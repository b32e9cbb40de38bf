"""Whether the user trusts a project's code: the record ``hookbus trust`` keeps, by hash.

Two rules decide what code hookbus runs as this user, and they answer different threats:

- :mod:`hookbus.local.trust` (the file-permission rule): a configuration or handler file
  *another user* could have written is never read. It says nothing about files of this
  user's own, which an agent working in a project writes, and a cloned repository brings.
- this module (trust for project code): a project's ``.hookbus.toml`` runs no code of
  its own (a non-built-in handler, a ``python_path``, the modules of its folder) until
  the user has run ``hookbus trust`` there, and then only the exact bytes trusted: any
  change to the configuration or to a file it would run needs trust again. That is the
  hosts' own stance (Claude Code's workspace trust, Codex's hooks trusted by hash), which
  hookbus would otherwise walk around.

The store is ``$XDG_CONFIG_HOME/hookbus/trusted.json``, with the user's configuration and
not in the state folder (which holds only what hookbus can recompute): one record per
project configuration file (by its real path) with the sha256 of its bytes and of every
project file it would run, and when it was trusted. It is written atomically, ``0600``,
and read only when :func:`hookbus.local.trust.file_problem` finds nothing wrong with it.

*What a project would run* (:func:`code_set`): the modules its ``enable`` targets name,
found only in the project's path entries (its folder and its ``python_path``), and,
transitively, every module those files import statically (read with :mod:`ast`: nothing
is executed to find them) that is found there too; a package's ``__init__.py`` counts. A
module in a project path that is not Python source (an extension module, bytecode alone)
is never trusted: hookbus would have to run bytes nobody can read.

The store also keeps the sha256 of each host hooks file ``hookbus install`` wrote in a
project (``.github/hooks/hookbus.json``, ``.cursor/hooks.json``...): a file there decides
whether a Claude command stands aside for that host's own install
(:mod:`hookbus.hosts.shared.native_install`), and only the bytes this user's install wrote may.

Installed code is not the project's: a file under the interpreter's prefixes, under
hookbus's own folder or under the user's configuration folder is never recorded and never
checked (:func:`exempt_places`), even when a project's path holds it; unless that place
lies inside the project's folders (hookbus in the project's own ``.venv``), where an
agent can write it.

Standard library only (it is read while the configuration is loaded).
"""

from __future__ import annotations

import json
import os
import sys
import time

from hookbus.local.trust import file_problem

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

STORE_NAME = "trusted.json"
FORMAT = 1
#: The command that trusts a project, run in its folder: what every refusal names.
COMMAND = "hookbus trust"


def store_path() -> str:
    """``$XDG_CONFIG_HOME/hookbus/trusted.json``: beside the user's own configuration."""
    from hookbus.local.discover import user_folder

    return os.path.join(user_folder(), STORE_NAME)


def fix_for(config: str) -> str:
    """The exact command that trusts the project of ``config``."""
    import shlex

    return f"cd {shlex.quote(os.path.dirname(os.path.abspath(config)))} && {COMMAND}"


def digest(data: bytes) -> str:
    import hashlib  # not at import: a hook that hashes nothing does not load OpenSSL

    return hashlib.sha256(data).hexdigest()


def file_digest(path: str) -> str | None:
    """The sha256 of the file at ``path`` now; None when it cannot be read."""
    try:
        with open(path, "rb") as f:
            return digest(f.read())
    except OSError:
        return None


# -- the store -------------------------------------------------------------------------


class Record:
    """One project's trust: its configuration's hash and its code files' hashes (by real
    path), and when it was trusted."""

    __slots__ = ("config", "files", "trusted_at")

    def __init__(self, config: str, files: dict[str, str], trusted_at: str = "") -> None:
        self.config = config
        self.files = files
        self.trusted_at = trusted_at

    @classmethod
    def of(cls, raw: object) -> Record | None:
        if not isinstance(raw, dict):
            return None
        config, files = raw.get("config"), raw.get("files")
        if not isinstance(config, str) or not isinstance(files, dict):
            return None
        if not all(isinstance(k, str) and isinstance(v, str) for k, v in files.items()):
            return None
        return cls(config, files, str(raw.get("trusted_at", "")))

    def to_json(self) -> dict[str, object]:
        return {"config": self.config, "files": self.files, "trusted_at": self.trusted_at}


class Store:
    """The records of the trust store, by the real path of each project configuration
    file, and the hash of each hooks file install wrote in a project (by its path as
    written, links not resolved);
    ``problem`` says why the file was not read (then there are no records)."""

    __slots__ = ("hook_files", "problem", "records")

    def __init__(self, records: dict[str, object], problem: str | None = None,
                 hook_files: dict[str, str] | None = None) -> None:  # fmt: skip
        self.records = records
        self.problem = problem
        self.hook_files = hook_files or {}

    def record(self, config: str) -> Record | None:
        return Record.of(self.records.get(os.path.realpath(config)))


def read_store() -> Store:
    """The trust store as it is now (empty when there is none, or it cannot be trusted
    or read: nothing is trusted then, and ``problem`` says why)."""
    path = store_path()
    if not os.path.lexists(path):
        return Store({})
    problem = file_problem(path)
    if problem is not None:
        return Store({}, f"{path} {problem}: it is not read")
    try:
        with open(path, "rb") as f:
            data = json.loads(f.read())
    except (OSError, ValueError, RecursionError) as exc:
        return Store({}, f"{path} cannot be read: {exc}")
    projects = data.get("projects") if isinstance(data, dict) else None
    if not isinstance(projects, dict) or data.get("format") != FORMAT:
        return Store({}, f"{path} is not a hookbus trust store of format {FORMAT}")
    hooks = data.get("hook_files")
    hook_files = {k: v for k, v in hooks.items() if isinstance(k, str) and isinstance(v, str)} \
        if isinstance(hooks, dict) else {}  # fmt: skip
    return Store({k: v for k, v in projects.items() if isinstance(k, str)}, None, hook_files)


def _write_store(store: Store) -> None:
    """Write the store atomically (a new ``0600`` file renamed over the old one)."""
    path = store_path()
    folder = os.path.dirname(path)
    os.makedirs(folder, mode=0o700, exist_ok=True)
    data = json.dumps({"format": FORMAT, "projects": store.records,
                       "hook_files": store.hook_files}, indent=1, sort_keys=True)  # fmt: skip
    tmp = os.path.join(folder, f".{STORE_NAME}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        with open(fd, "w", encoding="utf-8") as f:
            f.write(data + "\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def _to_change() -> Store:
    """The store, to change and write back; PermissionError when it cannot be read or
    trusted (its other records would be lost, or another user's carried over)."""
    store = read_store()
    if store.problem is not None:
        raise PermissionError(f"{store.problem}; fix or remove it, then try again")
    return store


def record(config: str, code: CodeSet) -> Record:
    """Trust ``code`` (:func:`code_set` of ``config``): write its record."""
    store = _to_change()
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    found = Record(code.config_digest, dict(code.files), stamp)
    store.records[os.path.realpath(config)] = found.to_json()
    _write_store(store)
    return found


def revoke(config: str) -> bool:
    """Remove the record of ``config``; False when there was none."""
    store = _to_change()
    if store.records.pop(os.path.realpath(config), None) is None:
        return False
    _write_store(store)
    return True


def record_hook_file(path: str) -> None:
    """Remember the bytes of the hooks file install just wrote at ``path`` (in a project),
    by that path as it is (absolute, links not resolved): the file counts only where the
    host reads it, not at another path that links to it."""
    found = file_digest(path)
    store = _to_change()
    key = os.path.abspath(path)
    if found is None or store.hook_files.get(key) == found:
        return
    store.hook_files[key] = found
    _write_store(store)


def forget_hook_file(path: str) -> None:
    """Forget the hooks file at ``path`` (uninstall changed or removed it)."""
    store = read_store()
    if store.problem is None and store.hook_files.pop(os.path.abspath(path), "") != "":
        _write_store(store)


def hook_file_is_ours(path: str, data: bytes) -> bool:
    """Whether ``data``, read from the project hooks file at ``path`` (the path as found,
    not its real path), is exactly what this user's ``hookbus install`` wrote there."""
    return read_store().hook_files.get(os.path.abspath(path)) == digest(data)


# -- what a project would run ----------------------------------------------------------


def exempt_places(projects: Iterable[str]) -> tuple[str, ...]:
    """Where installed code, and the user's own, lives: the interpreter's prefixes,
    hookbus's own folder and the user's configuration folder (each ending in ``/``). A
    file there is never a project's, even when a project's path holds it; but a place
    that lies inside one of the ``projects``' folders (hookbus in the project's own
    ``.venv``) is the project's, which an agent there can write: never exempt."""
    import hookbus

    places = {sys.prefix, sys.base_prefix, sys.exec_prefix,
              os.path.dirname(os.path.abspath(hookbus.__file__ or "")),
              os.path.dirname(store_path())}  # fmt: skip
    projects = list(projects)
    return tuple(os.path.join(os.path.realpath(p), "") for p in places
                 if p and not inside(p, projects))  # fmt: skip


def inside(path: str, projects: Iterable[str]) -> bool:
    """Whether ``path`` lies in (or is) one of the ``projects``' folders, as named or as
    its real path, either taken as named or as real paths too."""
    within = folders(projects)
    return any(os.path.join(f(path), "").startswith(within)
               for f in (os.path.abspath, os.path.realpath))  # fmt: skip


def project_folder(start: str) -> str:
    """The project folder around ``start``: the repository root (a folder with ``.git``)
    where ``.hookbus.toml`` is looked for, else the nearest ``.hookbus.toml``'s folder,
    else ``start``."""
    from hookbus.local.discover import project_candidates

    found = None
    for candidate in project_candidates(start):
        folder = os.path.dirname(candidate)
        if os.path.exists(os.path.join(folder, ".git")):
            return folder
        if found is None and os.path.isfile(candidate):
            found = folder
    return found or os.path.abspath(start)


def hook_code_in_project(python: str, package: str, project: str) -> list[str]:
    """Which of the interpreter ``python`` and hookbus's package folder ``package`` (its
    ``client.py`` with it) a hook command runs lie in the ``project`` folder, where an
    agent working there can edit the hook's own code."""
    return [p for p in (python, package) if p and inside(p, [project])]


def hook_code_warning(places: Sequence[str], project: str) -> str:
    """What install and doctor say of :func:`hook_code_in_project`'s ``places``."""
    return (f"the hook command runs {' and '.join(places)} (hookbus, its client.py), inside "
            f"the project folder {project}: an agent that can write the project can edit "
            "the hook's own code and switch every guard off")  # fmt: skip


#: The fix :func:`hook_code_warning` names.
HOOK_CODE_FIX = ("install hookbus outside the project (for example 'pipx install hookbus') "
                 "and run 'hookbus install' with that one")  # fmt: skip


def folders(entries: Iterable[str]) -> tuple[str, ...]:
    """``entries`` as prefixes to test a path against: each as given (absolute) and as
    its real path, ending in ``/``."""
    found = {os.path.join(f(e), "") for e in entries for f in (os.path.abspath, os.path.realpath)}
    return tuple(sorted(found))


class CodeSet:
    """What a project would run: the sha256 of its configuration and of each project code
    file (by real path), and what is refused (a module -> why)."""

    __slots__ = ("config_digest", "files", "refused")

    def __init__(self, config_digest: str) -> None:
        self.config_digest = config_digest
        self.files: dict[str, str] = {}
        self.refused: dict[str, str] = {}


def _compiled_suffixes() -> tuple[str, ...]:
    from importlib.machinery import BYTECODE_SUFFIXES, EXTENSION_SUFFIXES

    return (*EXTENSION_SUFFIXES, *BYTECODE_SUFFIXES)


class _Finder:
    """Finds modules by name in the project's path entries only, as the import system
    would there (a package, then compiled code, then source, in each folder in turn),
    without importing anything."""

    def __init__(self, entries: Sequence[str]) -> None:
        self.entries = [e for e in entries if os.path.isdir(e)]
        self.compiled = _compiled_suffixes()

    def find(self, name: str) -> tuple[list[tuple[str, str, bool]], str | None]:
        """The files importing ``name`` would run from the entries (each ``(module name,
        path, is a package)``, packages first), and why one is refused (else None). An
        empty list: not found there (installed, or the standard library)."""
        found: list[tuple[str, str, bool]] = []
        search = self.entries
        parts = name.split(".")
        for depth, part in enumerate(parts, 1):
            dotted = ".".join(parts[:depth])
            portions: list[str] = []
            hit: tuple[str, bool] | None = None
            for folder in search:
                base = os.path.join(folder, part)
                if os.path.isfile(os.path.join(base, "__init__.py")):
                    hit = (os.path.join(base, "__init__.py"), True)
                    break
                compiled = [base + s for s in self.compiled if os.path.isfile(base + s)]
                if compiled:
                    return found, f"{compiled[0]} is compiled code, not Python source"
                if os.path.isfile(base + ".py"):
                    hit = (base + ".py", False)
                    break
                if os.path.isdir(base):
                    portions.append(base)
            if hit is not None:
                found.append((dotted, hit[0], hit[1]))
                if not hit[1]:
                    return found, None  # a module: nothing below it
                search = [os.path.dirname(hit[0])]
            elif portions:
                search = portions  # a namespace package: no file of its own
            else:
                return found, None
        return found, None


#: Names never found in a project's path: the standard library and hookbus come first on
#: the import path (a project's entries are appended after them).
_NEVER_PROJECT = frozenset({*sys.stdlib_module_names, "hookbus"})


def code_set(
    config: str, config_data: bytes, targets: Sequence[str], entries: Sequence[str]
) -> CodeSet:
    """What ``config`` (whose bytes are ``config_data``) would run: the modules of
    ``targets`` (``module:function``) found in ``entries`` (the project's path entries),
    and every module they import statically that is found there too."""
    code = CodeSet(digest(config_data))
    finder = _Finder(entries)
    exempt = exempt_places([os.path.dirname(os.path.abspath(config)), *entries])
    queue = [t.partition(":")[0] for t in targets]
    seen: set[str] = set()
    while queue:
        name = queue.pop()
        if name in seen or not name or name.split(".")[0] in _NEVER_PROJECT:
            continue
        seen.add(name)
        files, refused = finder.find(name)
        if refused is not None:
            code.refused[name] = refused
        for module, path, package in files:
            real = os.path.realpath(path)
            if real in code.files or real.startswith(exempt):
                continue
            try:
                with open(real, "rb") as f:
                    data = f.read()
            except OSError as exc:
                code.refused[module] = f"{path} cannot be read ({exc.strerror or exc})"
                continue
            code.files[real] = digest(data)
            queue += _imports(data, module, package)
    return code


def _imports(data: bytes, module: str, package: bool) -> list[str]:
    """The modules the source ``data`` of ``module`` imports statically, anywhere in it
    (a function's own imports too), as absolute names; a name imported *from* a module
    is tried as a submodule as well."""
    import ast

    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError, RecursionError):
        return []  # it will not import either
    names: list[str] = []
    here = module if package else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                names += [".".join(parts[:i]) for i in range(1, len(parts) + 1)]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parents = here.split(".") if here else []
                if node.level - 1 > len(parents):
                    continue
                anchor = ".".join(parents[: len(parents) - (node.level - 1)])
                base = f"{anchor}.{base}".strip(".") if base else anchor
            if not base:
                continue
            parts = base.split(".")
            names += [".".join(parts[:i]) for i in range(1, len(parts) + 1)]
            names += [f"{base}.{alias.name}" for alias in node.names if alias.name != "*"]
    return names


# -- at load ---------------------------------------------------------------------------


class Verdict:
    """Whether a project's code may run: ``trusted`` (``record`` is its record),
    ``untrusted`` (no record) or ``changed`` (``changed`` names the file that is no
    longer as trusted); ``problem`` says why the store itself was not read."""

    __slots__ = ("changed", "problem", "record", "status")

    def __init__(self, status: str, *, changed: str | None = None,
                 record: Record | None = None, problem: str | None = None) -> None:  # fmt: skip
        self.status = status
        self.changed = changed
        self.record = record
        self.problem = problem

    @property
    def trusted(self) -> bool:
        return self.status == "trusted"


def check(config: str, config_data: bytes, store: Store | None = None) -> Verdict:
    """The verdict on the project configuration ``config`` read as ``config_data``."""
    store = read_store() if store is None else store
    found = store.record(config)
    if found is None:
        return Verdict("untrusted", problem=store.problem)
    if digest(config_data) != found.config:
        return Verdict("changed", changed=config, record=found)
    for path, expected in sorted(found.files.items()):
        if file_digest(path) != expected:
            return Verdict("changed", changed=path, record=found)
    return Verdict("trusted", record=found)
