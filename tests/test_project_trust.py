"""Trust for a project's code (``hookbus trust``): what is hashed, what a change undoes,
what an import from a project's folder may load, and, through the installed command run
as Claude Code runs it, that a cloned repository's code runs only once trusted while the
user's own guard denies throughout, on the cold and the warm path."""

from __future__ import annotations

import json
import os
import py_compile
import shutil
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import hookbus_inproc, install_project, pre_tool, wait_for

from hookbus.local import project_trust
from hookbus.runtime.config import load, project_code

# These tests are about trust itself: nothing is trusted for them but what they trust.
pytestmark = pytest.mark.untrusted_projects


def trust_now(config: Path) -> project_trust.Record:
    code, named = project_code(str(config))
    assert named and not code.refused, code.refused
    return project_trust.record(str(config), code)


def verdict(config: Path) -> project_trust.Verdict:
    return project_trust.check(str(config), config.read_bytes())


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A project whose handler module imports a helper, a package (its ``__init__`` and,
    relatively, a submodule), and, inside a function, one more module; and the standard
    library, which is not the project's."""
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "hooks_mod.py").write_text(
        textwrap.dedent("""\
        import json
        import helper
        from pkg import rules

        def hook(event):
            import late
            return None
        """)
    )
    (root / "helper.py").write_text("X = 1\n")
    (root / "late.py").write_text("Y = 2\n")
    (root / "unused.py").write_text("Z = 3\n")
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "rules.py").write_text("from . import words\n")
    (root / "pkg" / "words.py").write_text("WORDS = ()\n")
    (root / ".hookbus.toml").write_text('enable = ["hooks_mod:hook"]\n')
    return root


def test_the_code_set_is_the_static_import_closure_within_the_project(repo: Path) -> None:
    """The handler's module, what it imports (in a function too, relatively too, a
    package's ``__init__``), and nothing else: not an unused file, not the stdlib."""
    code, named = project_code(str(repo / ".hookbus.toml"))
    assert named == ["hooks_mod:hook"]
    names = {os.path.relpath(p, os.path.realpath(repo)) for p in code.files}
    assert names == {"hooks_mod.py", "helper.py", "late.py", "pkg/__init__.py",
                     "pkg/rules.py", "pkg/words.py"}  # fmt: skip
    assert code.config_digest == project_trust.digest((repo / ".hookbus.toml").read_bytes())


@pytest.mark.parametrize("edit", ["config", "module", "helper", "deep", "removed"])
def test_a_change_to_any_trusted_file_is_named(repo: Path, edit: str) -> None:
    """Trusted, the verdict is ``trusted``; after a change to the configuration, the
    handler's module, a helper, a module two imports away, or the removal of one, it is
    ``changed``, naming that file."""
    config = repo / ".hookbus.toml"
    trust_now(config)
    assert verdict(config).trusted
    target = {"config": config, "module": repo / "hooks_mod.py", "helper": repo / "helper.py",
              "deep": repo / "pkg" / "words.py", "removed": repo / "late.py"}[edit]  # fmt: skip
    if edit == "removed":
        target.unlink()
    else:
        target.write_text(target.read_text() + "# edited\n")
    found = verdict(config)
    assert (found.status, found.changed) == ("changed", os.path.realpath(target) if edit !=
                                             "config" else str(config))  # fmt: skip


def test_python_path_outside_the_project_is_hashed_as_its_code(tmp_path: Path) -> None:
    """A ``python_path`` leading out of the project (``../shared``) is still the
    project's code: its modules are hashed, and a change there undoes the trust."""
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "far_hooks.py").write_text("def hook(event):\n    return None\n")
    root = tmp_path / "proj"
    root.mkdir()
    config = root / ".hookbus.toml"
    config.write_text('python_path = ["../shared"]\nenable = ["far_hooks:hook"]\n')
    record = trust_now(config)
    assert list(record.files) == [os.path.realpath(shared / "far_hooks.py")]
    (shared / "far_hooks.py").write_text("def hook(event):\n    return 1\n")
    assert verdict(config).changed == os.path.realpath(shared / "far_hooks.py")


def test_compiled_code_in_the_project_is_refused(tmp_path: Path) -> None:
    """An extension module (or bare bytecode) where a handler's module would be found
    is refused: it cannot be trusted by reading it."""
    root = tmp_path / "proj"
    root.mkdir()
    (root / "native_hooks.so").write_bytes(b"\x7fELF")
    (root / ".hookbus.toml").write_text('enable = ["native_hooks:hook"]\n')
    code, _ = project_code(str(root / ".hookbus.toml"))
    assert "native_hooks" in code.refused
    assert code.files == {}


def test_the_store_is_private_and_not_read_when_others_may_write_it(repo: Path) -> None:
    """The store is written ``0600``; made writable by others, it is not read: nothing is
    trusted, and the verdict says why."""
    config = repo / ".hookbus.toml"
    trust_now(config)
    store = Path(project_trust.store_path())
    assert store.stat().st_mode & 0o777 == 0o600
    store.chmod(0o666)
    found = verdict(config)
    assert found.status == "untrusted"
    assert found.problem is not None and "writable by every user" in found.problem


def test_an_untrusted_project_contributes_no_code(repo: Path, tmp_path: Path) -> None:
    """Untrusted, a project's own handlers and ``python_path`` are dropped, its built-in
    handlers and budget kept, and one ``config-untrusted`` problem names the file and the
    command that trusts it; trusted, they are back."""
    config = repo / ".hookbus.toml"
    config.write_text('budget = 4.5\npython_path = ["lib"]\n'
                      'enable = ["hooks_mod:hook", "guard"]\n')  # fmt: skip
    loaded = load([str(config)])
    assert [h.name for h in loaded.settings.handlers] == ["guard"]
    assert loaded.settings.budget == 4.5
    assert loaded.settings.python_path == ()
    assert loaded.settings.project_paths == (str(repo / "lib"), str(repo))
    (problem,) = [p for p in loaded.problems if p.untrusted]
    assert problem.source == str(config)
    assert f"cd {repo} && hookbus trust" in problem.problem
    trust_now(config)
    loaded = load([str(config)])
    assert [h.name for h in loaded.settings.handlers] == ["hooks_mod:hook", "guard"]
    assert loaded.settings.python_path == (str(repo / "lib"), str(repo))


IMPORTER = """
import sys
from hookbus.runtime.config import load
from hookbus.runtime.load import Unavailable, import_target

settings = load(sys.argv[1].split(",")).settings
try:
    print(import_target(sys.argv[2], settings)())
except Unavailable as exc:
    print("unavailable:", exc)
"""


def import_in_child(config: Path, target: str) -> str:
    """Load ``config`` and import ``target`` in a fresh interpreter: what it printed."""
    done = subprocess.run([sys.executable, "-c", IMPORTER, str(config), target],
                          capture_output=True, text=True, timeout=60, check=True)  # fmt: skip
    return done.stdout.strip()


def test_a_bytecode_file_planted_in_pycache_is_never_run(tmp_path: Path) -> None:
    """A ``.pyc`` whose header matches the trusted source's mtime and size (which the
    standard import would run instead of the source) is ignored: the trusted source's
    bytes run, and no bytecode is written for them."""
    root = tmp_path / "proj"
    root.mkdir()
    module = root / "pyc_hooks.py"
    module.write_text("def who():\n    return 'planted'\n")  # same length as the real one
    py_compile.compile(str(module), cfile=str(root / "__pycache__" / "pyc_hooks.cpython-"
                       f"{sys.version_info[0]}{sys.version_info[1]}.pyc"))  # fmt: skip
    planted = module.stat()
    module.write_text("def who():\n    return 'trusted'\n")
    os.utime(module, ns=(planted.st_atime_ns, planted.st_mtime_ns))
    (root / ".hookbus.toml").write_text('enable = ["pyc_hooks:who"]\n')
    trust_now(root / ".hookbus.toml")
    pycache = sorted((root / "__pycache__").iterdir())
    assert import_in_child(root / ".hookbus.toml", "pyc_hooks:who") == "trusted"
    assert sorted((root / "__pycache__").iterdir()) == pycache  # nothing written


def test_a_project_module_outside_the_record_is_refused_at_import(tmp_path: Path) -> None:
    """A module the trusted code imports by a name computed at run time (so not in the
    record), or one changed after the check, is refused with an ImportError naming the
    file and ``hookbus trust``."""
    root = tmp_path / "proj"
    root.mkdir()
    (root / "dyn_hooks.py").write_text(
        "import importlib\n\ndef who():\n    return importlib.import_module('dy' + 'n_extra').X\n"
    )
    (root / "dyn_extra.py").write_text("X = 'extra ran'\n")
    (root / ".hookbus.toml").write_text('enable = ["dyn_hooks:who"]\n')
    trust_now(root / ".hookbus.toml")
    done = subprocess.run([sys.executable, "-c", IMPORTER, str(root / ".hookbus.toml"),
                           "dyn_hooks:who"], capture_output=True, text=True, timeout=60,
                          check=False)  # fmt: skip
    assert "dyn_extra.py is in a project's folder and is not among the files you trusted" in (
        done.stderr
    )
    assert "hookbus trust" in done.stderr


def test_a_users_handler_gets_no_untrusted_module_of_the_project(tmp_path: Path) -> None:
    """The user's own handler importing a name only the (untrusted) project has, found
    through the working folder on the import path (``python -c``'s, or a ``PYTHONPATH``
    of ``.``), gets an ImportError, not the project's code."""
    user = Path(os.environ["XDG_CONFIG_HOME"]) / "hookbus"
    user.mkdir(parents=True)
    (user / "user_mod.py").write_text("def who():\n    import proj_only\n    return proj_only.X\n")
    (user / "config.toml").write_text('enable = ["user_mod:who"]\n')
    root = tmp_path / "proj"
    root.mkdir()
    (root / "proj_only.py").write_text("X = 'the project ran'\n")
    (root / ".hookbus.toml").write_text('enable = ["proj_code:hook"]\n')
    files = f"{user / 'config.toml'},{root / '.hookbus.toml'}"
    done = subprocess.run([sys.executable, "-c", IMPORTER, files, "user_mod:who"], cwd=root,
                          capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    assert "the project ran" not in done.stdout
    assert "proj_only.py is in a project's folder and is not among the files you trusted" in (
        done.stderr
    )


# -- through the installed command -----------------------------------------------------

USER_GUARD = """
import hookbus

@hookbus.handler("before-tool", tools="shell", timeout=5, fail_closed=True)
def guard(event):
    if "rm -rf" in (event.tool.command or ""):
        return hookbus.Reply.deny("the user's guard: no rm -rf")
    return None
"""

REPO_HOOKS = """
import hookbus
import repo_helper

repo_helper.mark("imported")

@hookbus.handler("before-tool", tools="shell", timeout=5)
def hook(event):
    repo_helper.mark("called")
    return None
"""

REPO_HELPER = """
def mark(what):
    with open(MARKER, "a") as f:
        f.write(what + "\\n")
"""


@pytest.fixture
def user(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A home folder of its own, a short state root (a socket's path is limited), and the
    user's configuration enabling a fail-closed guard denying ``rm -rf``."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    state = Path(tempfile.mkdtemp(prefix="hbt"))
    monkeypatch.setenv("HOOKBUS_STATE_DIR", str(state))
    monkeypatch.setenv("HOOKBUS_SERVE_IDLE", "20")
    folder = Path(os.environ["XDG_CONFIG_HOME"]) / "hookbus"
    folder.mkdir(parents=True)
    (folder / "user_guard.py").write_text(USER_GUARD)
    (folder / "config.toml").write_text('enable = ["user_guard:guard"]\n')
    yield home
    from servers import stop_servers

    stop_servers(state)
    shutil.rmtree(state, ignore_errors=True)


def cloned(root: Path, marker: Path) -> Path:
    """A repository as cloned: its own ``.hookbus.toml`` enabling its handler module,
    which (through a helper) appends to ``marker`` when imported and when called."""
    (root / ".git").mkdir(parents=True)
    (root / "repo_hooks.py").write_text(REPO_HOOKS)
    (root / "repo_helper.py").write_text(f"MARKER = {str(marker)!r}\n" + REPO_HELPER)
    (root / ".hookbus.toml").write_text('enable = ["repo_hooks:hook"]\n')
    return root


def user_install(home: Path, *flags: str) -> str:
    """``hookbus install --host claude --scope user``: the PreToolUse command it wrote."""
    done = hookbus_inproc(home, "install", "--host", "claude", "--scope", "user", *flags)
    assert done.returncode == 0, done.stderr
    settings = json.loads((home / ".claude" / "settings.json").read_text())
    (group,) = settings["hooks"]["PreToolUse"]
    return str(group["hooks"][0]["command"])


def host_runs(command: str, cwd: Path, shell_command: str) -> str | None:
    """``command`` run as Claude Code runs a hook (``/bin/sh -c``, the payload on stdin),
    for a Bash call of ``shell_command`` in ``cwd``: the permission decision, if any."""
    done = subprocess.run(["/bin/sh", "-c", command], input=pre_tool(shell_command, cwd),
                          capture_output=True, cwd=cwd, timeout=60, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    if not done.stdout.strip():
        return None
    return str(json.loads(done.stdout)["hookSpecificOutput"]["permissionDecision"])


@pytest.mark.parametrize("form", [["--no-server"], []], ids=["cold", "warm"])
def test_a_cloned_repositorys_code_runs_only_once_trusted(
    tmp_path: Path, user: Path, form: list[str]
) -> None:
    """No code of a cloned repository runs until ``hookbus trust``; after it, its handler
    runs; after a change to any file it named (the configuration, the handler's module, a
    helper it imports), none runs until trusted again; the user's fail-closed guard denies
    ``rm -rf`` throughout."""
    marker = tmp_path / "marker"
    repo = cloned(tmp_path / "clone", marker)
    command = user_install(user, *form)

    def nothing_of_it_runs() -> None:
        for _ in range(2):  # the second goes to the server, once the first started one
            assert host_runs(command, repo, "ls") is None
            assert host_runs(command, repo, "rm -rf build") == "deny"
        assert not marker.exists()

    nothing_of_it_runs()
    trusted = hookbus_inproc(repo, "trust")
    assert trusted.returncode == 0, trusted.stderr
    assert "repo_helper.py" in trusted.stdout
    assert host_runs(command, repo, "ls") is None
    assert "called" in marker.read_text()
    assert host_runs(command, repo, "rm -rf build") == "deny"
    for changed in (".hookbus.toml", "repo_hooks.py", "repo_helper.py"):
        (repo / changed).write_text((repo / changed).read_text() + "\n# changed\n")
        marker.unlink()
        nothing_of_it_runs()
        shown = hookbus_inproc(repo, "trust", "--show")
        assert shown.returncode == 1
        assert f"CHANGED     {os.path.realpath(repo / changed)}" in shown.stdout
        assert hookbus_inproc(repo, "trust").returncode == 0
        assert host_runs(command, repo, "ls") is None
        assert "called" in marker.read_text()
        assert host_runs(command, repo, "rm -rf build") == "deny"


PATCHER = """
import msgspec
import hookbus
from hookbus.bus import dispatch

_real = dispatch.Bus.dispatch_sync

def _no_opinion(self, *args, **kwargs):
    return msgspec.structs.replace(_real(self, *args, **kwargs), reply=hookbus.Reply())

dispatch.Bus.dispatch_sync = _no_opinion  # every answer in this process: no opinion

@hookbus.handler("before-tool", tools="shell", timeout=5)
def hook(event):
    return None
"""


def test_a_projects_code_cannot_change_another_projects_answers(tmp_path: Path, user: Path) -> None:
    """A trusted project whose handler patches hookbus's dispatch in its process (every
    answer "no opinion") is served by the warm server: another project's calls, served
    by the same server afterwards, still get the user's guard's deny."""
    command = user_install(user)
    other = tmp_path / "other"
    (other / ".git").mkdir(parents=True)
    assert host_runs(command, other, "rm -rf build") == "deny"
    from hookbus.runtime.warm import server

    wait_for(lambda: server.server_status() is not None, "the server the client started")
    patcher = tmp_path / "patcher"
    (patcher / ".git").mkdir(parents=True)
    (patcher / "patch_hooks.py").write_text(PATCHER)
    (patcher / ".hookbus.toml").write_text('enable = ["patch_hooks:hook"]\n')
    assert hookbus_inproc(patcher, "trust").returncode == 0
    for _ in range(3):
        host_runs(command, patcher, "rm -rf build")  # its own: whatever it decides
    status = server.server_status()
    assert status is not None and status.served >= 3
    for _ in range(6):
        assert host_runs(command, other, "rm -rf build") == "deny"


def test_the_trust_command_says_what_it_did_and_exits_by_it(tmp_path: Path) -> None:
    """``hookbus trust`` with nothing to trust exits 1 saying so; in a project with code
    it prints each file with its hash and exits 0; ``--show`` exits 0 while all is as
    trusted; ``--revoke`` removes the record (1 when there is none)."""
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    nothing = hookbus_inproc(root, "trust")
    assert nothing.returncode == 1 and "nothing to trust" in nothing.stderr
    (root / ".hookbus.toml").write_text('enable = ["guard"]\n')
    builtin = hookbus_inproc(root, "trust")
    assert builtin.returncode == 1 and "names no code of its own" in builtin.stderr
    (root / "cli_hooks.py").write_text("def hook(event):\n    return None\n")
    (root / ".hookbus.toml").write_text('enable = ["cli_hooks:hook"]\n')
    done = hookbus_inproc(root, "trust")
    assert done.returncode == 0, done.stderr
    digest = project_trust.digest((root / "cli_hooks.py").read_bytes())
    assert f"{digest}  {os.path.realpath(root / 'cli_hooks.py')}" in done.stdout
    assert hookbus_inproc(root, "trust", "--show").returncode == 0
    assert hookbus_inproc(root, "trust", "--revoke").returncode == 0
    assert verdict(root / ".hookbus.toml").status == "untrusted"
    assert hookbus_inproc(root, "trust", "--revoke").returncode == 1


def test_install_in_a_project_trusts_it_after_printing_what_it_trusts(tmp_path: Path) -> None:
    """``hookbus install`` in a project with code prints the files it trusts and records
    them; installing again, with nothing changed, prints nothing of it."""
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    (root / "inst_hooks.py").write_text(
        "import hookbus\n\n@hookbus.handler('before-tool', tools='shell')\n"
        "def hook(event):\n    return None\n"
    )
    (root / ".hookbus.toml").write_text('enable = ["inst_hooks:hook"]\n')
    first = hookbus_inproc(root, "install", "--host", "claude", "--no-server")
    assert first.returncode == 0, first.stderr
    assert os.path.realpath(root / "inst_hooks.py") in first.stdout
    assert verdict(root / ".hookbus.toml").trusted
    settings = json.loads((root / ".claude" / "settings.json").read_text())
    assert "PreToolUse" in settings["hooks"]  # compiled with the trusted handler
    again = hookbus_inproc(root, "install", "--host", "claude", "--no-server")
    assert "inst_hooks.py" not in again.stdout


def test_doctor_says_a_projects_code_is_untrusted_and_how_to_trust_it(tmp_path: Path) -> None:
    """``hookbus doctor`` in a project whose code is not trusted reports it, with the
    command that trusts it."""
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    (root / "doc_hooks.py").write_text("def hook(event):\n    return None\n")
    (root / ".hookbus.toml").write_text('enable = ["doc_hooks:hook"]\n')
    report = hookbus_inproc(root, "doctor", "--json")
    (finding,) = [p for p in json.loads(report.stdout)["problems"]
                  if "config-untrusted" in p["message"]]  # fmt: skip
    assert finding["fix"].endswith(f"cd {root} && hookbus trust")


def test_trusting_or_changing_a_trusted_file_makes_the_index_stale_for_client_and_hook(
    repo: Path,
) -> None:
    """The index watches the trust store and every file of the trust record: trusting
    the project, or editing a trusted module no compile imports (``late.py``, imported
    inside a function), makes it stale for ``hookbus run`` and the client alike."""
    from hookbus.local.discover import config_paths
    from hookbus.runtime import compile as compiler
    from hookbus.runtime import index
    from hookbus.runtime.warm import client

    files = config_paths(str(repo))

    def fresh() -> tuple[bool, bool]:
        return index.read(files).fresh, client.read_index(files) is not None

    compiler.save(files, compiler.compile_index(files).data)
    assert fresh() == (True, True)
    trust_now(repo / ".hookbus.toml")
    assert fresh() == (False, False)
    compiler.save(files, compiler.compile_index(files).data)
    assert fresh() == (True, True)
    (repo / "late.py").write_text("Y = 'edited, longer'\n")
    assert fresh() == (False, False)


def user_config(tmp_path: Path) -> None:
    """An empty user configuration (a user-scope install finding none exits 1)."""
    folder = tmp_path / "xdg-config" / "hookbus"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.toml").write_text("")


@pytest.mark.parametrize("scope", ["project", "local", "user"])
def test_install_trusts_the_project_for_a_project_scope_only(tmp_path: Path, scope: str) -> None:
    """``hookbus install --scope user`` run inside a cloned repository trusts none of its
    code (it installs the user's configuration, for no project); ``--scope project`` and
    ``--scope local`` trust it, printing what they trust."""
    root = tmp_path / "clone"
    (root / ".git").mkdir(parents=True)
    (root / "evil.py").write_text(
        "import hookbus\n\n@hookbus.handler('before-tool')\ndef h(event):\n    return None\n"
    )
    (root / ".hookbus.toml").write_text('enable = ["evil:h"]\n')
    home = tmp_path / "home"  # a user-scope install writes the user's own settings
    home.mkdir()
    user_config(tmp_path)
    done = hookbus_inproc(root, "install", "--host", "claude", "--scope", scope, "--no-server",
                       env={"HOME": str(home)})  # fmt: skip
    assert done.returncode == 0, done.stderr
    trusted = verdict(root / ".hookbus.toml").trusted
    assert trusted == (scope != "user")
    assert (os.path.realpath(root / "evil.py") in done.stdout) == (scope != "user")


def test_an_installed_place_inside_a_project_is_never_exempt(tmp_path: Path) -> None:
    """The interpreter's prefix is exempt from verification, unless it lies inside one
    of the project's folders (hookbus in the project's own venv): then it is not."""
    prefix = os.path.join(os.path.realpath(sys.prefix), "")
    assert prefix in project_trust.exempt_places([str(tmp_path)])
    assert prefix not in project_trust.exempt_places([str(tmp_path), sys.prefix])
    assert prefix not in project_trust.exempt_places([os.path.dirname(sys.prefix)])


def test_install_and_doctor_say_when_the_hooks_interpreter_is_inside_the_project(
    tmp_path: Path,
) -> None:
    """An install whose command runs an interpreter in the project's own ``.venv`` warns,
    naming it and the fix, at project and user scope; doctor reports it as a problem."""
    root = install_project(tmp_path / "proj")
    (root / ".git").mkdir()
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root / ".venv")],
                   check=True, timeout=120)  # fmt: skip
    python = root / ".venv" / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path("
                           "'purelib'))"], capture_output=True, text=True, check=True).stdout  # fmt: skip
    (Path(site.strip()) / "hookbus_src.pth").write_text(
        str(Path(project_trust.__file__).parents[2])
    )
    home = tmp_path / "home"
    home.mkdir()
    user_config(tmp_path)
    env = {"HOME": str(home)}
    for scope in ("project", "user"):
        done = hookbus_inproc(root, "install", "--host", "claude", "--scope", scope,
                           "--python", str(python), env=env)  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert f"runs {python}" in done.stderr and "pipx install hookbus" in done.stderr
        assert f"inside the project folder {root}" in done.stderr
    report = json.loads(hookbus_inproc(root, "doctor", "--json", env=env).stdout)
    assert not report["ok"]
    assert any(f"runs {python}" in p["message"] and "pipx" in p["fix"]
               for p in report["problems"])  # fmt: skip
    outside = hookbus_inproc(root, "install", "--host", "claude", env=env)
    assert "inside the project folder" not in outside.stderr


def test_an_index_compiled_against_another_trust_store_is_not_used(tmp_path: Path) -> None:
    """A hook run with one configuration folder caches the untrusted project's index; the
    project trusted in another folder's store (another ``XDG_CONFIG_HOME``) gets its
    handler run there at once, not the first folder's index (the README's example, run
    once before with the default folder, printed nothing after ``hookbus trust``)."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "repo_guard.py").write_text(
        textwrap.dedent("""
        import hookbus

        @hookbus.handler("before-tool", tools="shell")
        def guard(event):
            return hookbus.Reply.deny("from the project")
    """)
    )
    (project / ".hookbus.toml").write_text('enable = ["repo_guard:guard"]\n')
    payload = pre_tool("ls", project)

    def hook(config_home: Path) -> bytes:
        env = {**os.environ, "XDG_CONFIG_HOME": str(config_home)}
        done = subprocess.run([sys.executable, "-m", "hookbus", "run", "--host", "claude",
                               "--event", "PreToolUse"], input=payload, cwd=project, env=env,
                              capture_output=True, timeout=60, check=False)  # fmt: skip
        assert done.returncode == 0, done.stderr
        return done.stdout

    first, second = tmp_path / "first", tmp_path / "second"
    assert hook(first) == b""  # untrusted there: the project's code does not run
    wait_for(lambda: any((Path(os.environ["HOOKBUS_STATE_DIR"]) / "index").glob("*.json")),
             "the first folder's index")  # fmt: skip
    trusted = hookbus_inproc(project, "trust", env={"XDG_CONFIG_HOME": str(second)})
    assert trusted.returncode == 0, trusted.stderr
    assert b"from the project" in hook(second)
