"""Pinned real host programs for the end-to-end suite, installed into a git-ignored cache.

A host is installed once, from its registry, into ``.cache/hosts/<package>-<version>/`` of
the repository and reused from there. Pre-install from a shell (CI does this before the
tests)::

    python tests/e2e/hosts.py install claude
"""

from __future__ import annotations

import argparse
import fcntl
import shutil
import subprocess
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CACHE = REPO / ".cache" / "hosts"
INSTALL_TIMEOUT = 900.0
PROBE_TIMEOUT = 60.0


class HostUnavailable(Exception):
    """The host program cannot be installed or does not run; the message says why."""


@dataclass(frozen=True)
class HostSpec:
    """One pinned host program from the npm registry."""

    dirname: str
    package: str
    version: str
    binary: str

    @property
    def prefix(self) -> Path:
        return CACHE / f"{self.dirname}-{self.version}"

    @property
    def executable(self) -> Path:
        return self.prefix / "node_modules" / ".bin" / self.binary


HOSTS: dict[str, HostSpec] = {
    # 2.1.197 is the version proven to run offline against the fake model here; its
    # postinstall links the platform's native binary, so nothing is fetched at run time.
    "claude": HostSpec("claude-code", "@anthropic-ai/claude-code", "2.1.197", "claude"),
    # A Node bundle (Node 20 or later); its optional native modules (node-pty, keytar) are
    # not needed headless.
    "gemini": HostSpec("gemini-cli", "@google/gemini-cli", "0.61.0", "gemini"),
}


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


def _npm_install(spec: HostSpec) -> None:
    npm = shutil.which("npm")
    if npm is None:
        raise HostUnavailable("npm is not on PATH")
    spec.prefix.mkdir(parents=True, exist_ok=True)
    argv = [npm, "install", "--prefix", str(spec.prefix), "--no-audit", "--no-fund",
            "--save-exact", f"{spec.package}@{spec.version}"]  # fmt: skip
    print(f"installing {spec.package}@{spec.version} into {spec.prefix}", file=sys.stderr)
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


@cache
def ensure(host: str) -> Path:
    """The path of ``host``'s pinned program, installing it first when it is missing.

    Raises :class:`HostUnavailable` saying why when it cannot be installed or run.
    """
    spec = HOSTS.get(host)
    if spec is None:
        raise HostUnavailable(f"unknown host {host!r}; known: {', '.join(sorted(HOSTS))}")
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / ".lock", "w") as lock:  # one installer at a time
        fcntl.flock(lock, fcntl.LOCK_EX)
        version = _version_of(spec.executable)
        if version is None:
            _npm_install(spec)
            version = _version_of(spec.executable)
    if version is None:
        raise HostUnavailable(f"{spec.executable} was installed but does not run")
    if spec.version not in version:
        raise HostUnavailable(f"{spec.executable} is {version!r}, not {spec.version}")
    return spec.executable


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Install the pinned host programs.")
    commands = parser.add_subparsers(dest="command", required=True)
    install = commands.add_parser("install", help="install (or reuse) a host's program")
    install.add_argument("hosts", nargs="+", choices=sorted(HOSTS))
    opts = parser.parse_args(argv)
    status = 0
    for host in opts.hosts:
        try:
            print(f"{host}: {ensure(host)}")
        except HostUnavailable as exc:
            print(f"{host}: NOT AVAILABLE: {exc}", file=sys.stderr)
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
