"""What a person sees first: the version, the hook's usage, and a hook run by hand on a
terminal (none of which a host ever triggers)."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import hookbus


def hookbus_cli(*args: str, **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hookbus", *args], capture_output=True,
                          text=True, timeout=60, check=False, **kwargs)  # type: ignore[call-overload, no-any-return]  # fmt: skip


def test_version_names_the_package_and_its_interpreter() -> None:
    for flag in ("--version", "-V"):
        proc = hookbus_cli(flag)
        assert proc.returncode == 0
        assert proc.stdout.startswith(f"hookbus {hookbus.__version__} (")
        assert sys.executable in proc.stdout


def test_run_help_prints_its_usage_and_how_to_try_an_event() -> None:
    for flag in ("--help", "-h"):
        proc = hookbus_cli("run", flag)
        assert proc.returncode == 0
        assert proc.stdout.startswith("usage: hookbus run --host NAME")
        assert "hookbus try" in proc.stdout


def test_run_on_a_terminal_explains_itself_instead_of_waiting(tmp_path: Path) -> None:
    """Stdin a terminal: the hint on stderr at once, and the host's no-opinion on stdout
    (the empty payload is bad input like any other)."""
    leader, follower = pty.openpty()
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "hookbus", "run", "--host", "claude", "--event", "Stop"],
            stdin=follower, capture_output=True, text=True, timeout=60, check=False,
            cwd=tmp_path,
        )  # fmt: skip
    finally:
        os.close(follower)
        os.close(leader)
    assert "hookbus run is the hook entrypoint" in proc.stderr
    assert "hookbus try --host NAME --event NATIVE" in proc.stderr
    assert proc.returncode == 0
    assert json.loads(proc.stdout or "{}") == {}


def test_a_piped_payload_gets_no_hint(tmp_path: Path) -> None:
    proc = hookbus_cli("run", "--host", "claude", "--event", "Stop", input="{}", cwd=tmp_path)
    assert "entrypoint" not in proc.stderr
