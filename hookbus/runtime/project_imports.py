"""Imports from a project's folders: only the bytes the user trusted, never bytecode.

The configuration decides *whether* a project's code may run (:mod:`hookbus.local.project_trust`);
this decides *what* runs when a module is imported in a process that loads handlers (the
hook's worker, the warm server's workers, the in-process entry, the index's compile). A
meta path finder, ahead of the standard path finder, looks at where each module would be
found; a module found in one of the project's folders (:attr:`Settings.project_paths`,
trusted or not, so that a user's handler importing a name only the project has gets
nothing untrusted either) is loaded only

- from Python source whose sha256 is in the project's trust record, read once, checked,
  and compiled from those very bytes (a file swapped after the check is not what runs);
- never from ``__pycache__`` (an agent can plant a ``.pyc`` whose header matches the
  source's mtime and size), and nothing is written there;
- never as an extension module or bare bytecode (bytes nobody can review).

Anything else found there raises ImportError naming the file and ``hookbus trust``.
Modules found elsewhere (the standard library, installed packages, the user's own
configuration folder) are the standard finder's answer, unchanged.

:func:`ran` says whether this process executed a project module: the warm server's
worker that did ends after its call (no project's code runs in a process that will serve
another project).
"""

from __future__ import annotations

import os
import sys
from importlib.machinery import ModuleSpec, PathFinder, SourceFileLoader

from hookbus.local import project_trust

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from types import CodeType

    from hookbus.runtime.config import Settings


class _Verified(SourceFileLoader):
    """Loads one project module from the bytes whose hash the trust record holds."""

    def __init__(self, fullname: str, path: str, real: str, expected: str, fix: str) -> None:
        super().__init__(fullname, path)
        self.real = real
        self.expected = expected
        self.fix = fix

    def get_code(self, fullname: str) -> CodeType:
        with open(self.real, "rb") as f:
            data = f.read()
        if project_trust.digest(data) != self.expected:
            raise ImportError(f"{self.path} changed since the project was trusted: not "
                              f"imported; to review and trust it again: {self.fix}",
                              name=fullname, path=self.path)  # fmt: skip
        _finder.ran = True
        return compile(data, self.path, "exec", dont_inherit=True)


class ProjectFinder:
    """The meta path finder of :mod:`hookbus.runtime.project_imports` (one per process)."""

    def __init__(self) -> None:
        #: The project's folders (:func:`hookbus.local.project_trust.folders`), where installed
        #: code is (:func:`hookbus.local.project_trust.exempt_places`), and the files of its
        #: trust record (real path -> sha256).
        self.paths: tuple[str, ...] = ()
        self.exempt: tuple[str, ...] = ()
        self.allowed: dict[str, str] = {}
        self.fix = project_trust.COMMAND
        self.ran = False

    def find_spec(
        self, name: str, path: Sequence[str] | None = None, target: object = None
    ) -> ModuleSpec | None:
        spec = PathFinder.find_spec(name, path)
        if spec is None or not self.paths or spec.origin is None or not spec.has_location:
            return spec  # not found, or nothing guarded, or a namespace package (no code)
        found = os.path.abspath(spec.origin)
        if found.startswith(self.exempt) and not found.startswith(self.paths):
            return spec  # the standard library, an installed package: no link to resolve
        real = os.path.realpath(found)
        if not (real.startswith(self.paths) or found.startswith(self.paths)) or real.startswith(
            self.exempt
        ):
            return spec
        if type(spec.loader) is not SourceFileLoader:
            raise ImportError(f"{spec.origin} is in a project's folder and is not Python "
                              "source (compiled or packed code): hookbus does not import it",
                              name=name, path=spec.origin)  # fmt: skip
        expected = self.allowed.get(real)
        if expected is None:
            raise ImportError(f"{spec.origin} is in a project's folder and is not among the "
                              f"files you trusted there: not imported; to review and trust "
                              f"it: {self.fix}", name=name, path=spec.origin)  # fmt: skip
        spec.loader = _Verified(name, spec.origin, real, expected, self.fix)
        spec.cached = None  # never __pycache__, either way
        return spec


_finder = ProjectFinder()


def guard(settings: Settings) -> None:
    """Guard this process's imports from ``settings``'s project folders (none: stop
    guarding), with the project's trust record as it is now."""
    paths = settings.project_paths
    if not paths and _finder not in sys.meta_path:
        return
    allowed: dict[str, str] = {}
    if settings.project is not None:
        found = project_trust.read_store().record(settings.project)
        allowed = dict(found.files) if found is not None else {}
        _finder.fix = project_trust.fix_for(settings.project)
    _finder.paths, _finder.allowed = project_trust.folders(paths), allowed
    _finder.exempt = project_trust.exempt_places(paths)
    if _finder not in sys.meta_path:
        # Before the standard path finder, after the built-in and frozen ones: a project
        # cannot shadow those anyway (they are not found by path).
        at = next((i for i, f in enumerate(sys.meta_path) if f is PathFinder), 0)
        sys.meta_path.insert(at, _finder)


def ran() -> bool:
    """Whether this process has executed a module from a project's folder."""
    return _finder.ran
