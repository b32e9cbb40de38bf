"""The npm package a plugin host installs into its config folders, installed ahead by
``hookbus install``.

OpenCode 1.18.33 (and Kilo, its descendant) starts a background ``npm install
@opencode-ai/plugin@<its version>`` in every config folder once any plugin is configured,
and waits for it before it loads plugins (``Npm.install`` in the binary). It skips the
install only where the folder has a ``node_modules/`` and a ``package-lock.json`` whose
root lists every dependency of the folder's ``package.json`` and the package. Online that
is a few seconds at the first start; offline it stalls every start about 70 s. Adding
hookbus's plugin is what makes OpenCode start waiting, so install does that step itself,
at install time, where the user sees it: the same command, the same files, the version
the host's own program names (``opencode --version``), within :data:`TIMEOUT`. When npm
cannot (offline with an empty npm cache, no npm), install says exactly what to run.

The files npm writes (``package.json``, ``package-lock.json``, ``node_modules/``) are the
host's, as they would be after its own install: uninstall leaves them.

``HOOKBUS_NPM`` names the npm program (default: ``npm`` on PATH); empty, install leaves
the step to the host and only prints the note.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess

import msgspec

#: Seconds npm may take per folder (a slow registry; offline, the cache answers at once).
TIMEOUT = 120.0
#: Seconds the host's program may take to say its version.
VERSION_TIMEOUT = 10.0
_VERSION = re.compile(r"\b(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?)\b")


class Prefetch(msgspec.Struct, frozen=True, kw_only=True):
    """``package`` into ``folder``, as ``host``'s program (``program`` on PATH) would."""

    host: str
    folder: str
    package: str
    program: str


def satisfied(folder: str, package: str) -> bool:
    """True when the host would skip its install in ``folder`` (its own check)."""
    if not os.path.isdir(os.path.join(folder, "node_modules")):
        return False
    packages = _json(folder, "package-lock.json").get("packages")
    root = packages.get("") if isinstance(packages, dict) else None
    wanted = {package, *_dependencies(_json(folder, "package.json"))}
    return wanted <= _dependencies(root if isinstance(root, dict) else {})


def host_version(program: str) -> str | None:
    """The version ``program --version`` prints, or None (not on PATH, no answer)."""
    found = shutil.which(program)
    if found is None:
        return None
    try:
        done = subprocess.run([found, "--version"], capture_output=True, text=True,
                              timeout=VERSION_TIMEOUT, check=False)  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return None
    match = _VERSION.search(done.stdout + done.stderr)
    return match.group(1) if match else None


def command(item: Prefetch, npm: str, version: str | None) -> list[str]:
    spec = f"{item.package}@{version}" if version else item.package
    return [npm, "install", "--prefix", item.folder, "--no-audit", "--no-fund",
            "--prefer-offline", "--fetch-retries=0", spec]  # fmt: skip


def install(item: Prefetch) -> tuple[bool, str]:
    """Run the host's install step in ``item.folder``: (done, what to tell the user)."""
    version = host_version(item.program)
    configured = os.environ.get("HOOKBUS_NPM")
    npm = shutil.which(configured or "npm") if configured != "" else None
    argv = command(item, npm or "npm", version)
    manual = shlex.join(argv)
    waits = (f"{item.host} waits for {item.package} in {item.folder} before it loads any "
             "plugin: offline, ~70 s at every start until it is there")  # fmt: skip
    if npm is None:
        why = "HOOKBUS_NPM is empty" if configured == "" else "no npm on PATH"
        return False, f"{waits}; {why}, so run: {manual}"
    os.makedirs(item.folder, exist_ok=True)
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT,
                              stdin=subprocess.DEVNULL, check=False)  # fmt: skip
    except subprocess.TimeoutExpired:
        return False, f"{waits}; npm took over {TIMEOUT:g} s, run it once online: {manual}"
    except OSError as exc:
        return False, f"{waits}; npm did not start ({exc.strerror}), run: {manual}"
    if done.returncode != 0 or not satisfied(item.folder, item.package):
        last = (done.stderr.strip().splitlines() or ["no output"])[-1][:200]
        return False, f"{waits}; npm failed ({last}), run it once online: {manual}"
    return True, f"{item.folder}: installed {item.package} with npm, as {item.host} would at start"


def _json(folder: str, name: str) -> dict[str, object]:
    try:
        with open(os.path.join(folder, name), encoding="utf-8") as file:
            found = json.load(file)
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def _dependencies(manifest: dict[str, object]) -> set[str]:
    """Every package a ``package.json`` (or a lock's root entry) depends on, of any kind."""
    names: set[str] = set()
    for key in ("dependencies", "devDependencies", "peerDependencies", "optionalDependencies"):
        value = manifest.get(key)
        names.update(value if isinstance(value, dict) else ())
    return names
