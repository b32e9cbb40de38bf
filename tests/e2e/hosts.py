"""Pinned real host programs for the end-to-end suite, cached outside the clone.

Each pinned version is installed once, from its registry, into the user's cache folder
(``$HOOKBUS_HOST_CACHE``, else ``$XDG_CACHE_HOME/hookbus/hosts``, else
``~/.cache/hookbus/hosts``) as ``<package>-<version>/``, and reused from there by every
run and every clone. Pre-install from a shell (CI does this before the tests)::

    python tests/e2e/hosts.py install claude              # every pinned version
    python tests/e2e/hosts.py install claude@2.1.197 ...  # one version; several names

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
    """One host program from the npm registry, and the versions of it the suite pins."""

    dirname: str
    package: str
    #: The version every end-to-end test of the host runs.
    version: str
    binary: str
    #: Older versions a smoke test still runs (``claude_version`` parametrised).
    also: tuple[str, ...] = ()

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
    # A Node bundle (Node 20 or later) of the Cline CLI on ``@cline/sdk``.
    "cline": HostSpec("cline", "cline", "3.0.65", "cline"),
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
    def label(self) -> str:
        return f"{self.spec.package}@{self.version}"

    @property
    def prefix(self) -> Path:
        return cache_root() / f"{self.spec.dirname}-{self.version}"

    def executable(self, prefix: Path | None = None) -> Path:
        return (prefix or self.prefix) / "node_modules" / ".bin" / self.spec.binary


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


def _version_of(executable: Path) -> str | None:
    """What ``executable --version`` prints, or None when it does not run."""
    if not executable.exists():
        return None
    try:
        done = subprocess.run(
            [str(executable), "--version"],
            capture_output=True,
            text=True,
            timeout=PROBE_TIMEOUT,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def _check_runs(pin: Pin, prefix: Path) -> None:
    """Raise :class:`HostUnavailable` unless the program in ``prefix`` is ``pin``'s."""
    executable = pin.executable(prefix)
    version = _version_of(executable)
    if version is None:
        raise HostUnavailable(f"{executable} was installed but does not run")
    if pin.version not in version.split():
        raise HostUnavailable(f"{executable} is {version!r}, not {pin.version}")


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


def _install(pin: Pin) -> None:
    """Install ``pin`` into a partial folder, check it, mark it complete, rename it in."""
    root = pin.prefix.parent
    for stale in root.glob(f"{pin.prefix.name}.partial-*"):  # runs killed half-way
        shutil.rmtree(stale, ignore_errors=True)
    partial = Path(tempfile.mkdtemp(prefix=f"{pin.prefix.name}.partial-", dir=root))
    try:
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
    opts = parser.parse_args(argv)
    if opts.command == "where":
        print(cache_root())
        return 0
    status = 0
    for host, version in dict.fromkeys(pair for pairs in opts.hosts for pair in pairs):
        try:
            print(f"{host}@{version}: {ensure(host, version)}")
        except HostUnavailable as exc:
            print(f"{host}@{version}: NOT AVAILABLE: {exc}", file=sys.stderr)
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
