"""The host installer's cache, against a fake ``npm`` on PATH (no registry, no host)."""

from __future__ import annotations

import fcntl
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from . import hosts

HOSTS_PY = Path(hosts.__file__)

#: ``npm install --prefix PREFIX ... PACKAGE@VERSION``: logs what it installs, then installs
#: a ``claude`` that prints VERSION, or fails or installs a wrong version as FAKE_NPM_MODE
#: says. ``fake-node`` is a runtime (``.bin/node``, which answers ``--version`` with
#: vVERSION and runs a script with sh); ``fake-needy`` a host whose ``cli.js`` is not
#: executable, so it prints its VERSION only when that runtime runs it.
FAKE_NPM = """#!/bin/sh
for last; do :; done
echo "$last" >> "$FAKE_NPM_CALLS"
[ -n "$FAKE_NPM_SLEEP" ] && sleep "$FAKE_NPM_SLEEP"
prefix=$3
version=${last##*@}
[ "$FAKE_NPM_MODE" = wrong ] && version=0.0.1
mkdir -p "$prefix/node_modules/.bin"
case "$last" in
fake-node@*)
    printf '#!/bin/sh\\n[ "$1" = --version ] && exec echo v%s\\nexec /bin/sh "$@"\\n' \\
        "$version" > "$prefix/node_modules/.bin/node"
    chmod +x "$prefix/node_modules/.bin/node"
    exit 0;;
fake-needy@*)
    mkdir -p "$prefix/node_modules/fake-needy"
    printf 'echo "%s (needy)"\\n' "$version" > "$prefix/node_modules/fake-needy/cli.js"
    exit 0;;
esac
printf '#!/bin/sh\\necho "%s (Claude Code)"\\n' "$version" > "$prefix/node_modules/.bin/claude"
chmod +x "$prefix/node_modules/.bin/claude"
[ "$FAKE_NPM_MODE" = fail ] && { echo "npm error 404 Not Found - GET $last" >&2; exit 1; }
exit 0
"""


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """An empty host cache, and the fake npm first on PATH."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "npm").write_text(FAKE_NPM)
    (bin_dir / "npm").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_NPM_CALLS", str(tmp_path / "npm-calls"))
    monkeypatch.setenv("HOOKBUS_HOST_CACHE", str(tmp_path / "hosts"))
    hosts.ensure.cache_clear()
    yield tmp_path / "hosts"
    hosts.ensure.cache_clear()


def npm_calls(cache: Path) -> int:
    calls = cache.parent / "npm-calls"
    return len(calls.read_text().splitlines()) if calls.exists() else 0


def test_the_cache_folder_follows_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """HOOKBUS_HOST_CACHE wins, then an absolute XDG_CACHE_HOME, then ~/.cache."""
    monkeypatch.setenv("HOME", "/home/someone")
    monkeypatch.setenv("HOOKBUS_HOST_CACHE", "/srv/hosts")
    monkeypatch.setenv("XDG_CACHE_HOME", "/xdg")
    assert hosts.cache_root() == Path("/srv/hosts")
    monkeypatch.delenv("HOOKBUS_HOST_CACHE")
    assert hosts.cache_root() == Path("/xdg/hookbus/hosts")
    monkeypatch.setenv("XDG_CACHE_HOME", "relative")  # the XDG spec says to ignore it
    assert hosts.cache_root() == Path("/home/someone/.cache/hookbus/hosts")


def test_a_host_is_installed_once_then_reused(cache: Path) -> None:
    """The first ensure installs into the cache and marks it complete; later ones reuse it."""
    executable = hosts.ensure("claude")
    version = hosts.HOSTS["claude"].version
    assert executable == cache / f"claude-code-{version}" / "node_modules" / ".bin" / "claude"
    assert (cache / f"claude-code-{version}" / hosts.COMPLETE).is_file()
    hosts.ensure.cache_clear()  # as a new run would
    assert hosts.ensure("claude") == executable
    assert npm_calls(cache) == 1
    assert [p.name for p in cache.iterdir() if ".partial-" in p.name] == []


def test_a_half_finished_install_is_never_taken_for_a_good_one(cache: Path) -> None:
    """A folder without its completion mark, and a partial folder of a killed run, are
    replaced by a fresh install."""
    version = hosts.HOSTS["claude"].version
    final = cache / f"claude-code-{version}"
    (final / "node_modules" / ".bin").mkdir(parents=True)
    (final / "node_modules" / ".bin" / "claude").write_text("#!/bin/sh\necho half\n")
    killed = cache / f"claude-code-{version}.partial-x1y2"
    killed.mkdir()

    hosts.ensure("claude")
    assert npm_calls(cache) == 1
    assert (final / hosts.COMPLETE).is_file()
    assert "half" not in (final / "node_modules" / ".bin" / "claude").read_text()
    assert not killed.exists()


def test_an_install_that_fails_says_why_and_leaves_nothing(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A failing npm, or a program that is not the pinned version, raises HostUnavailable
    with the reason, and no folder is left that a later run could reuse."""
    monkeypatch.setenv("FAKE_NPM_MODE", "fail")
    with pytest.raises(hosts.HostUnavailable, match="404 Not Found"):
        hosts.ensure("claude")
    monkeypatch.setenv("FAKE_NPM_MODE", "wrong")
    with pytest.raises(hosts.HostUnavailable, match=re.escape("'0.0.1 (Claude Code)', not")):
        hosts.ensure("claude")
    assert [p for p in cache.iterdir() if p.is_dir()] == []


def test_two_runs_at_once_install_once(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two installers started together: one installs while the other waits, then reuses."""
    monkeypatch.setenv("FAKE_NPM_SLEEP", "1")
    argv = [sys.executable, str(HOSTS_PY), "install", "claude@" + hosts.HOSTS["claude"].version]
    runs = [subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for _ in range(2)]  # fmt: skip
    done = [run.communicate(timeout=30) for run in runs]
    assert [run.returncode for run in runs] == [0, 0], done
    assert npm_calls(cache) == 1
    assert sum("waiting for another install" in err for _, err in done) == 1


def test_the_command_line_takes_several_names() -> None:
    """``install claude`` means every pinned version; ``claude@V`` one; duplicates once."""
    spec = hosts.HOSTS["claude"]
    assert hosts.parse_name("claude") == [("claude", v) for v in spec.versions]
    assert hosts.parse_name(f"claude@{spec.version}") == [("claude", spec.version)]
    with pytest.raises(hosts.HostUnavailable, match="not pinned"):
        hosts.pin("claude", "0.0.1")


def test_a_host_that_needs_a_runtime_gets_it_installed_and_runs_under_it(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A host naming a runtime installs it first, into its own cached folder; the
    ``--version`` probe and :func:`hosts.command` run the host's entry under it, and a
    later run reuses both."""
    monkeypatch.setitem(hosts.HOSTS, "rt", hosts.HostSpec("rt", "fake-node", "22.1.0", "node"))
    needy = hosts.HostSpec("needy", "fake-needy", "1.0.0", "fake-needy/cli.js", runtime="rt")
    monkeypatch.setitem(hosts.HOSTS, "needy", needy)

    entry = hosts.ensure("needy")  # cli.js is not executable: only the runtime runs it
    assert entry == cache / "needy-1.0.0" / "node_modules" / "fake-needy" / "cli.js"
    node = cache / "rt-22.1.0" / "node_modules" / ".bin" / "node"
    assert hosts.command("needy") == [str(node), str(entry)]
    assert (cache / "rt-22.1.0" / hosts.COMPLETE).is_file()
    assert (cache / "needy-1.0.0" / hosts.COMPLETE).is_file()
    hosts.ensure.cache_clear()  # as a new run would
    assert hosts.command("needy") == [str(node), str(entry)]
    calls = (cache.parent / "npm-calls").read_text().split()
    assert calls == ["fake-node@22.1.0", "fake-needy@1.0.0"]


#: ``python3 -m venv PREFIX``: a venv whose ``bin/python`` records ``-m pip install
#: PACKAGE==VERSION`` (beside itself, so it survives the folder's rename) and answers
#: ``-P -m MODULE --version`` with that version.
FAKE_PYTHON = """#!/bin/sh
echo "$*" >> "$FAKE_NPM_CALLS"
mkdir -p "$3/bin"
cat > "$3/bin/python" <<'END'
#!/bin/sh
here=$(dirname "$0")
case "$*" in
*"-m pip install"*) for last; do :; done; echo "$last" > "$here/installed"; exit 0;;
*"--version"*) v=$(cat "$here/installed"); echo "Fake Agent v${v##*==} (build 7)"; exit 0;;
esac
exit 1
END
chmod +x "$3/bin/python"
"""


def test_a_pypi_host_is_installed_into_a_venv_that_survives_its_rename(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A PyPI host gets a venv of its own in the partial folder, pip-installs its pinned
    version there, and runs as ``bin/python -P -m MODULE`` once renamed into place; a
    later run reuses it."""
    (cache.parent / "bin" / "python3").write_text(FAKE_PYTHON)
    (cache.parent / "bin" / "python3").chmod(0o755)
    spec = hosts.HostSpec("fake-agent", "fake-agent", "1.2.3", "fake_cli", registry="pypi")
    monkeypatch.setitem(hosts.HOSTS, "fake-agent", spec)
    python = cache / "fake-agent-1.2.3" / "bin" / "python"
    assert hosts.ensure("fake-agent") == python
    assert hosts.command("fake-agent") == [str(python), "-P", "-m", "fake_cli"]
    assert (python.parent / "installed").read_text() == "fake-agent==1.2.3\n"
    assert (cache / "fake-agent-1.2.3" / hosts.COMPLETE).is_file()
    hosts.ensure.cache_clear()  # as a new run would
    assert hosts.ensure("fake-agent") == python
    assert npm_calls(cache) == 1  # the venv was made once
    assert [p.name for p in cache.iterdir() if ".partial-" in p.name] == []


def test_prune_removes_only_the_versions_no_longer_pinned(cache: Path) -> None:
    """``hosts.py prune`` removes an install of a version no longer pinned and a killed
    run's partial folder, and keeps the pinned install, a folder it did not make, and an
    install another run holds the lock of."""
    kept = hosts.ensure("claude").parents[2]
    old = cache / "claude-code-0.0.9"
    (old / "node_modules").mkdir(parents=True)
    (old / hosts.COMPLETE).write_text("{}\n")
    (old / "node_modules" / "big").write_bytes(b"x" * 4096)
    killed = cache / f"{kept.name}.partial-k1"
    killed.mkdir()
    mine = cache / "notes"
    mine.mkdir()
    busy = cache / "codex-0.0.1"
    busy.mkdir()
    (busy / hosts.COMPLETE).write_text("{}\n")
    with open(cache / "codex-0.0.1.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another run installing it
        done = subprocess.run([sys.executable, str(HOSTS_PY), "prune"], capture_output=True,
                              text=True, timeout=30, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert not old.exists() and not killed.exists()
    assert (kept / hosts.COMPLETE).is_file() and mine.is_dir() and busy.is_dir()
    assert f"removed {old} (0 MB)" in done.stdout
    assert f"{busy}: skipped, another run is installing it" in done.stderr


def test_every_program_a_fixture_runs_is_installed_before_the_tests_and_by_ci() -> None:
    """The pre-install at collection covers each fixture's programs (Hermes's
    ``hermes_argv``, OpenCode's plugin package), every pinned host program has a fixture,
    and .ci/run installs them all ahead."""
    from types import SimpleNamespace

    from .conftest import FIXTURE_PROGRAMS, programs_wanted

    items: list[Any] = [
        SimpleNamespace(fixturenames=["hermes", "hermes_argv", "workspace"]),
        SimpleNamespace(fixturenames=["opencode", "opencode_executable"]),
        SimpleNamespace(fixturenames=["claude_executable"],
                        callspec=SimpleNamespace(params={"claude_version": "2.1.197"})),
    ]  # fmt: skip
    assert programs_wanted(items) == [
        ("hermes", hosts.HOSTS["hermes"].version),
        ("opencode", hosts.HOSTS["opencode"].version),
        ("opencode-plugin", hosts.HOSTS["opencode-plugin"].version),
        ("claude", "2.1.197"),
    ]
    sources = "".join(p.read_text() for p in HOSTS_PY.parent.glob("*.py"))
    for fixture in FIXTURE_PROGRAMS:
        assert f"def {fixture}(" in sources, f"no fixture {fixture} in tests/e2e"
    runtimes = {spec.runtime for spec in hosts.HOSTS.values() if spec.runtime}
    needed = {host for programs in FIXTURE_PROGRAMS.values() for host in programs}
    assert needed == hosts.HOSTS.keys() - runtimes
    ci = (HOSTS_PY.parents[2] / ".ci" / "run").read_text()
    installed = re.search(r"tests/e2e/hosts\.py install ([^\n]*)", ci)
    assert installed is not None, ".ci/run installs no host"
    assert needed <= set(installed.group(1).split())
