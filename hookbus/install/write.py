"""Install and uninstall, carried out: hookbus's entries merged into a host's settings
files keeping everything of the user's, its own files written, and both taken out again.

Each yields one result per file (and per step after the files) as it goes, so a caller
says each as it happens: a failure part way (a read-only folder) leaves what was done
before it said. Install backs up a file of the user's before hookbus first touches it;
uninstall gives that file back byte for byte when nothing else changed since, else takes
only hookbus's entries out of it; a file and the folders install made are removed
(:mod:`hookbus.hosts.shared.folders`).
"""

from __future__ import annotations

import copy
import os
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Literal

import msgspec

if TYPE_CHECKING:
    from hookbus.hosts.shared.manifest import CommandForm, Document, Manifest, Plan, Scope
    from hookbus.hosts.shared.npm import Prefetch
    from hookbus.hosts.shared.variants import Found


class DocumentInstalled(msgspec.Struct, frozen=True, kw_only=True):
    """What install did to one settings file: ``unwanted`` (no entries, no file: none
    made), ``up-to-date``, ``dry-run`` (``text`` is what it would write) or ``installed``
    (``backup``: the user's file as it was). An installed file ``shared`` with the
    project says whether git ``tracked`` it; a local one, whether git would add it
    (``unignored``)."""

    path: str
    outcome: Literal["unwanted", "up-to-date", "dry-run", "installed"]
    text: str = ""
    backup: str | None = None
    shared: bool = False
    tracked: bool | None = None
    unignored: bool = False


class OwnedInstalled(msgspec.Struct, frozen=True, kw_only=True):
    """The files hookbus owns, written or removed, one line each; ``unwanted``: the
    configuration wants no event of the host at all."""

    lines: list[str]
    unwanted: bool


class HookCodeInProject(msgspec.Struct, frozen=True, kw_only=True):
    """The interpreter or hookbus the command runs lie in the ``project`` install is run
    in (``places``): an agent working there could edit the hook's own code."""

    places: list[str]
    project: str


class Note(msgspec.Struct, frozen=True, kw_only=True):
    """Something the user must know or do (the plan's notes)."""

    text: str


class Prefetched(msgspec.Struct, frozen=True, kw_only=True):
    """A package the host would install with npm before loading its plugin: installed
    (``done``), failed (``said`` why), or, in a dry run, not tried (``done`` None)."""

    item: Prefetch
    done: bool | None
    said: str = ""


Installed = DocumentInstalled | OwnedInstalled | HookCodeInProject | Note | Prefetched


def install(  # noqa: PLR0917
    manifest: Manifest,
    plan: Plan,
    host: str,
    scope: Scope,
    form: CommandForm,
    python: str,
    *,
    dry_run: bool = False,
) -> Iterator[Installed]:
    """Carry out ``plan``: the settings files merged, the owned files written, the hook
    files recorded for the host's own install to stand aside for, the client's bytecode
    cached, the npm packages the host would fetch fetched; what each step did."""
    from hookbus.install.plan import compiled_index, config_files

    for document in plan.documents:
        yield _document(manifest, document, scope, dry_run=dry_run)
    if plan.owned or manifest.owned_paths(scope):
        from hookbus.hosts.shared import owned

        lines = owned.install(plan.owned, manifest.owned_paths(scope), dry_run=dry_run)
        yield OwnedInstalled(lines=lines, unwanted=not plan.owned and
                             not any(d.entries for d in plan.documents))  # fmt: skip
    if not dry_run and record_hook_files(
        host, scope, [d.path for d in plan.documents] + [o.path for o in plan.owned]
    ):
        # The index watches the trust store it was compiled with: compiled again now,
        # so that the first hook does not find it stale.
        compiled_index(config_files(scope, manifest))
    if form == "server" and not dry_run:
        cache_client(python)
    if form in ("absolute", "server"):
        found = hook_code_in_project(python)
        if found is not None:
            yield found
    for note in plan.notes:
        yield Note(text=note)
    for item in plan.prefetch:
        if dry_run:
            yield Prefetched(item=item, done=None)
            continue
        from hookbus.hosts.shared import npm

        done, said = npm.install(item)
        yield Prefetched(item=item, done=done, said=said)


def _document(manifest: Manifest, document: Document, scope: Scope, *,
              dry_run: bool) -> DocumentInstalled:  # fmt: skip
    """Merge ``document``'s entries into its file (see :class:`DocumentInstalled`)."""
    from hookbus.hosts.shared import documents
    from hookbus.hosts.shared.manifest import write_atomically
    from hookbus.install import git

    path = document.path
    text, current = documents.read(path, document.format)
    manifest.check(path, current)
    if not document.entries and text is None:
        # An empty settings file is not free: Claude Code reads it on every start.
        return DocumentInstalled(path=path, outcome="unwanted")
    wanted = manifest.merge(copy.deepcopy(current), document.entries)
    if wanted == current and text is not None:
        return DocumentInstalled(path=path, outcome="up-to-date")
    new = documents.dump(wanted, document.format, original=text)
    if dry_run:
        return DocumentInstalled(path=path, outcome="dry-run", text=new)
    # A file with nothing of hookbus's in it is the user's own: kept as the backup.
    # One holding hookbus's entries already (a reinstall) is not, whoever made it.
    backup = write_atomically(path, new, backup=text is not None and
                              not holds_ours(manifest, current))  # fmt: skip
    shared = bool(manifest.scopes[scope])
    return DocumentInstalled(
        path=path, outcome="installed", backup=backup, shared=shared,
        tracked=git.tracks(path) if shared else None,
        unignored=scope == "local" and git.unignored(path),
    )  # fmt: skip


def record_hook_files(host: str, scope: Scope, paths: list[str], *, forget: bool = False) -> bool:
    """Record (or, uninstalling, ``forget``) in the trust store the bytes of the hooks
    files of ``host`` in a project: a Claude command run by that host stands aside for
    them only as install wrote them (:mod:`hookbus.hosts.shared.native_install`). Whether
    the store may have changed."""
    from hookbus.hosts.shared.native_install import STANDS_ASIDE_FOR
    from hookbus.local import project_trust

    if host not in STANDS_ASIDE_FOR or scope == "user":
        return False
    for path in paths:
        if forget or not os.path.isfile(path):
            project_trust.forget_hook_file(path)
        else:
            project_trust.record_hook_file(path)
    return bool(paths)


def cache_client(python: str) -> None:
    """Import the client once as the command will, so its bytecode is cached before the
    first hook (a package folder the hook cannot write to would compile it every call)."""
    import subprocess

    from hookbus.hosts.shared.manifest import client_folder, hookbus_file

    folder = client_folder(os.path.dirname(hookbus_file(python)))
    code = "import sys; sys.path.insert(0, sys.argv[1]); import client"
    subprocess.run([python, "-I", "-S", "-c", code, folder], capture_output=True, timeout=30,
                   check=False)  # fmt: skip


def hook_code_in_project(python: str) -> HookCodeInProject | None:
    """Where the interpreter or hookbus the command runs lie in the project install is
    run in. Not a refusal: the hooks still run, and an install in a project's venv is a
    choice of the user's; it is said loudly, and doctor reports it until fixed."""
    from hookbus.hosts.shared.manifest import hookbus_file
    from hookbus.local import project_trust
    from hookbus.local.discover import working_folder

    project = project_trust.project_folder(working_folder())
    package = os.path.dirname(hookbus_file(python))
    places = project_trust.hook_code_in_project(python, package, project)
    return HookCodeInProject(places=list(places), project=project) if places else None


class DocumentRemoved(msgspec.Struct, frozen=True, kw_only=True):
    """What uninstall did to one settings file: ``none`` (no entries of hookbus's),
    ``restored`` (the user's original, byte for byte), ``created`` (the file install
    made, removed, and the folders it made: ``pruned``) or ``removed`` (hookbus's entries
    taken out; ``backup``: the user's file as it was before install)."""

    path: str
    outcome: Literal["none", "restored", "created", "removed"]
    backup: str | None = None
    pruned: list[str] = msgspec.field(default_factory=list)


class OwnedRemoved(msgspec.Struct, frozen=True, kw_only=True):
    """The files hookbus owns in ``folder``, removed (one line each; none: none found)."""

    folder: str
    lines: list[str]


class VariantLeft(msgspec.Struct, frozen=True, kw_only=True):
    """Another way of installing the host (Claude's plugin) still installed in another
    scope: the host goes on running its hooks."""

    found: Found


Removed = DocumentRemoved | OwnedRemoved | VariantLeft


def uninstall(manifest: Manifest, scope: Scope, host: str) -> Iterator[Removed]:
    """Take hookbus's entries and files out of ``scope`` (no handler is imported: it is
    the way out of a handler module that hangs or ends its importer)."""
    plan = manifest.plan(None, python=sys.executable, scope=scope)
    for document in plan.documents:
        yield _removed(manifest, document, scope)
    candidates = manifest.owned_paths(scope)
    record_hook_files(host, scope, [d.path for d in plan.documents] + list(candidates),
                      forget=True)  # fmt: skip
    if candidates:
        from hookbus.hosts.shared import owned

        lines = owned.remove(candidates, scope, manifest.owned_top(scope))
        yield OwnedRemoved(folder=os.path.dirname(candidates[0]), lines=lines)


def uninstall_other_variants(host: str, scope: Scope) -> Iterator[Removed]:
    """After a plain uninstall, the host's plugin (Claude's) is removed from ``scope``
    too; one installed in another scope is said (:class:`VariantLeft`)."""
    from hookbus.hosts.shared.variants import installed

    for found in installed(host, besides="default"):
        if found.scope == scope:
            yield from uninstall(found.variant.manifest, scope, host)
        else:
            yield VariantLeft(found=found)


def _removed(manifest: Manifest, document: Document, scope: Scope) -> DocumentRemoved:
    """Take hookbus's entries out of ``document``'s file (see :class:`DocumentRemoved`)."""
    from hookbus.hosts.shared import confine, documents, folders
    from hookbus.hosts.shared.manifest import backup_path, write_atomically

    path = document.path
    text, current = documents.read(path, document.format)
    manifest.check(path, current)
    wanted = manifest.without_ours(copy.deepcopy(current))
    if text is None or wanted == current:
        return DocumentRemoved(path=path, outcome="none")
    backup = backup_path(path)
    original = _original(manifest, backup, document.format)
    if original is not None and _unchanged_since(manifest, original, wanted, document.format):
        # Nothing else changed since install: the user's own bytes, exactly.
        write_atomically(path, original)
        os.unlink(backup)
        return DocumentRemoved(path=path, outcome="restored")
    if original is None and not wanted:
        # Through a link of the user's own (user scope: checks.link_out refused the
        # project's leading out), the file install created is the link's target.
        os.unlink(os.path.realpath(path))
        made = os.path.dirname(os.path.realpath(path))
        pruned = folders.prune(made, within=confine.bound(scope, made))
        return DocumentRemoved(path=path, outcome="created", pruned=pruned)
    write_atomically(path, documents.dump(wanted, document.format, original=text))
    return DocumentRemoved(path=path, outcome="removed", backup=backup if original else None)


def holds_ours(manifest: Manifest, document: dict[str, Any]) -> bool:
    """Whether ``document`` has anything of hookbus's in it: what its drift from a
    configuration that wants nothing finds (an empty container of the user's is not)."""
    return bool(manifest.drift(document, {}))


def _unchanged_since(manifest: Manifest, original: bytes, wanted: dict[str, Any], fmt: Any) -> bool:
    """True when ``wanted`` (the file now, without hookbus's entries) is the backup's
    ``original`` without them: nothing of the user's changed since install. Compared the
    same way on both sides (an empty ``"hooks": {}`` of the user's is kept by neither),
    and as JSON values (``1`` is not ``true``)."""
    from hookbus.hosts.shared import documents

    before = documents.CODECS[fmt].load(original.decode("utf-8"))
    return documents.same(manifest.without_ours(copy.deepcopy(before)), wanted)


def _original(manifest: Manifest, path: str, fmt: Any) -> bytes | None:
    """The backup install made of the user's file at ``path``, when it exists, can be read
    and holds nothing of hookbus's. One that does (an earlier version backed up its own
    file on a changed reinstall) is no original of the user's: it is removed, and
    uninstall takes hookbus's entries out of the file as it is."""
    from hookbus.hosts.shared import documents

    try:
        with open(path, "rb") as f:
            data = f.read()
        document = documents.CODECS[fmt].load(data.decode("utf-8"))
    except (OSError, ValueError):  # UnicodeDecodeError is a ValueError
        return None
    if holds_ours(manifest, document):
        os.unlink(path)
        return None
    return data
