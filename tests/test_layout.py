"""The package's layout (issue 27): one folder per host beside ``hosts/shared/``, a top
level of entry points and folders, a dispatcher that loads no host and no handler, and
host folders that never import one another: read from the files themselves, so that
each fails naming what broke it, whatever import-linter's contracts say."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

import hookbus
from hookbus.hosts import NAMES, driver
from hookbus.hosts.shared.driver import BaseDriver

PACKAGE = Path(hookbus.__file__).parent
HOSTS = PACKAGE / "hosts"
#: What every host's folder holds (samples.py too, where its driver names samples).
HOST_FILES = ("__init__.py", "facts.py", "driver.py", "manifest.py")
#: A string that is a module path of a host folder: an import by name
#: (``importlib.import_module``, a driver's ``samples``).
MODULE_PATH = re.compile(r"hookbus\.hosts\.(\w+)(?:\.\w+)*")


def folders(parent: Path) -> set[str]:
    return {p.name for p in parent.iterdir() if p.is_dir() and p.name != "__pycache__"}


def test_hosts_holds_one_folder_per_host_and_the_shared_one() -> None:
    """``hookbus/hosts/`` holds exactly a folder per registered host (21) and ``shared/``."""
    assert len(NAMES) == 21
    assert folders(HOSTS) == {*NAMES, "shared"}
    assert (HOSTS / "shared" / "__init__.py").is_file()


@pytest.mark.parametrize("host", NAMES)
def test_a_host_folder_holds_its_facts_driver_samples_and_manifest(host: str) -> None:
    """Each host's folder has its package file, facts, driver and manifest, and the
    samples its driver names are its own module there."""
    folder = HOSTS / host
    assert [f for f in HOST_FILES if not (folder / f).is_file()] == []
    found = driver(host)
    assert isinstance(found, BaseDriver)
    samples = found.samples
    if samples is not None:
        assert samples == f"hookbus.hosts.{host}.samples"
        assert (folder / "samples.py").is_file()


def test_the_package_top_level_holds_entry_points_and_folders_only() -> None:
    """``hookbus/`` holds ``__init__.py``, ``__main__.py``, ``py.typed`` and folders,
    each a package: no module sits beside the floors."""
    files = {p.name for p in PACKAGE.iterdir() if p.is_file()}
    assert files == {"__init__.py", "__main__.py", "py.typed"}
    assert [f for f in folders(PACKAGE) if not (PACKAGE / f / "__init__.py").is_file()] == []


def test_the_dispatcher_loads_no_host_and_no_handler() -> None:
    """``import hookbus.bus.dispatch`` in a fresh interpreter loads no module of
    ``hookbus.hosts`` (not even the registry) and none of ``hookbus.handlers``."""
    probe = "import sys, hookbus.bus.dispatch; print('\\n'.join(sorted(sys.modules)))"
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=60, check=True)  # fmt: skip
    modules = proc.stdout.split()
    assert "hookbus.bus.dispatch" in modules
    above = ("hookbus.hosts", "hookbus.handlers")
    assert [m for m in modules if m in above or m.startswith(tuple(f"{a}." for a in above))] == []


def imported(tree: ast.Module, module: str) -> list[tuple[int, str]]:
    """Each module ``tree`` (the source of ``module``) imports or names by its path in a
    string, with its line: ``import``, ``from ... import`` (relative ones resolved, each
    imported name as a possible submodule), and a string that is a module path."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = module.split(".")[: -node.level]
                base = ".".join([*parent, base] if base else parent)
            found += [(node.lineno, f"{base}.{alias.name}") for alias in node.names]
        elif isinstance(node, ast.Constant) and MODULE_PATH.fullmatch(str(node.value)):
            found.append((node.lineno, str(node.value)))
    return found


def foreign(folder: str) -> list[str]:
    """``file:line: module`` for each host folder other than ``folder`` that a module of
    ``hookbus/hosts/<folder>/`` imports or names."""
    found = []
    for path in sorted((HOSTS / folder).rglob("*.py")):
        relative = path.relative_to(PACKAGE.parent)
        # A package's ``__init__`` keeps its name: relative imports start from the package.
        module = ".".join(relative.with_suffix("").parts)
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for line, name in imported(tree, module):
            match = MODULE_PATH.fullmatch(name)
            if match and match[1] in NAMES and match[1] != folder:
                found.append(f"{relative}:{line}: {name}")
    return found


@pytest.mark.parametrize("folder", [*NAMES, "shared"])
def test_no_host_folder_imports_another(folder: str) -> None:
    """No module of a host's folder imports, or names by its module path, another host's
    folder, and ``shared/`` none at all: what two hosts share lives in ``shared/``, and a
    host's part another needs at run time is asked of the registry by name."""
    found = foreign(folder)
    assert not found, "\n".join(found)
