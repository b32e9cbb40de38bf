"""``hookbus install --host hermes``: hookbus's directory plugin in ``$HERMES_HOME/plugins``
listed in ``config.yaml``'s ``plugins.enabled`` (the default), or shell hooks in its
``hooks:`` (``--via hooks``), merged keeping the user's comments, plugins and hooks; and
uninstall giving the user's files back."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML
from support import GUARD, SHELL_AND_LIFECYCLE, hookbus_inproc

import hookbus
from hookbus.hosts.hermes.driver import ALL_EVENTS
from hookbus.hosts.shared.manifest import client_file

#: A user's own config.yaml: comments, a plugin and a shell hook of theirs.
THEIRS = """\
# my Hermes settings
model:
  default: big-model   # the good one
plugins:
  enabled: [mine]   # my plugin
hooks:
  pre_tool_call:
    - command: "python3 /opt/log.py"   # my logger
"""


@pytest.fixture
def home(tmp_path: Path, isolated_environment: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A Hermes home with the user's config.yaml, and a hookbus configuration enabling a
    fail-closed shell guard and a session handler (``HOOKBUS_CONFIG``: Hermes has user
    settings only)."""
    project = tmp_path / "proj"
    project.mkdir()
    (project / "hooks_mod.py").write_text(SHELL_AND_LIFECYCLE)
    config = project / ".hookbus.toml"
    config.write_text('python_path = ["."]\nenable = ["hooks_mod:shell", "hooks_mod:lifecycle"]\n')
    monkeypatch.setenv("HOOKBUS_CONFIG", str(config))
    hermes = tmp_path / "hermes-home"
    hermes.mkdir()
    (hermes / "config.yaml").write_text(THEIRS)
    monkeypatch.setenv("HERMES_HOME", str(hermes))
    monkeypatch.chdir(project)
    return hermes


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hookbus", *args], capture_output=True,
                          text=True, timeout=120, check=False, env={**os.environ})  # fmt: skip


def config(home: Path) -> dict[str, Any]:
    data: dict[str, Any] = YAML(typ="safe").load((home / "config.yaml").read_text())
    return data


def baked(home: Path) -> dict[str, Any]:
    """The BAKED literal of the installed plugin."""
    tree = ast.parse((home / "plugins" / "hookbus" / "__init__.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.AnnAssign) and getattr(node.target, "id", "") == "BAKED":
            assert node.value is not None
            found: dict[str, Any] = ast.literal_eval(node.value)
            return found
    raise AssertionError("no BAKED in the installed plugin")


def test_install_writes_the_plugin_and_enables_it_keeping_the_users_settings(home: Path) -> None:
    """The plugin's two files, marked as hookbus's; ``hookbus`` after the user's plugin
    in ``plugins.enabled``; every comment and hook of the user's still there."""
    done = cli("install", "--host", "hermes")
    assert done.returncode == 0, done.stderr
    text = (home / "config.yaml").read_text()
    for kept in ("# my Hermes settings", "# the good one", "# my plugin", "# my logger"):
        assert kept in text
    data = config(home)
    assert data["plugins"]["enabled"] == ["mine", "hookbus"]
    assert data["hooks"] == {"pre_tool_call": [{"command": "python3 /opt/log.py"}]}
    folder = home / "plugins" / "hookbus"
    assert "hookbus-owned-file" in (folder / "plugin.yaml").read_text()
    assert "name: hookbus" in (folder / "plugin.yaml").read_text()
    assert (folder / "__init__.py").read_text().startswith("# hookbus-owned-file")
    assert "note: the hookbus plugin serves every Hermes session" in done.stdout
    assert "Hermes loads it when it next starts" in done.stdout


def test_the_plugin_bakes_every_event_its_command_and_what_the_guard_is_owed(
    home: Path,
) -> None:
    """Every event, in Hermes's order, each with the absolute hook command (the plugin
    asks each call's own configuration who wants it); the events the configuration
    wants, with what they are owed when hookbus cannot answer: the fail-closed guard's
    block on its shell and github tools, no opinion for the others."""
    assert cli("install", "--host", "hermes", "--no-server").returncode == 0
    found = baked(home)
    assert found["bound"] == 10.0
    assert found["python"] == sys.executable
    assert found["client"] == client_file(str(Path(hookbus.__file__).parent))
    events = found["events"]
    assert tuple(events) == ALL_EVENTS
    argv = events["pre_tool_call"]["argv"]
    assert argv[:3] == [sys.executable, "-E", "-P"] and argv[3].endswith("__main__.py")
    assert argv[4:] == ["run", "--host", "hermes", "--event", "pre_tool_call", "--timeout", "8"]
    [wanted] = found["wanted"].values()  # HOOKBUS_CONFIG: no project's, every folder's
    assert list(found["wanted"]) == [""]
    assert list(wanted) == ["pre_llm_call", "pre_tool_call", "pre_verify"]
    assert wanted["pre_tool_call"]["fallback"].startswith('{"action":"block","message":"hookbus')
    assert wanted["pre_tool_call"]["tools"] == "execute_code|process|terminal|mcp_github_.*"
    assert wanted["pre_llm_call"] == {"fallback": "", "tools": None}


def test_install_twice_is_the_same_bytes_and_uninstall_gives_everything_back(home: Path) -> None:
    """A second install changes nothing; uninstall restores config.yaml byte for byte
    and removes the plugin folder and the plugins folder install made."""
    assert cli("install", "--host", "hermes").returncode == 0
    files = {p: p.read_bytes() for p in home.rglob("*") if p.is_file()}
    again = cli("install", "--host", "hermes")
    assert again.returncode == 0 and "written" not in again.stdout
    assert {p: p.read_bytes() for p in home.rglob("*") if p.is_file()} == files
    done = cli("uninstall", "--host", "hermes")
    assert done.returncode == 0, done.stderr
    assert (home / "config.yaml").read_text() == THEIRS
    assert sorted(p.name for p in home.iterdir()) == ["config.yaml"]


def test_uninstall_keeps_what_the_user_changed_since(home: Path) -> None:
    """An edit of the user's after install survives uninstall; only hookbus's plugin name
    leaves ``plugins.enabled``."""
    assert cli("install", "--host", "hermes").returncode == 0
    path = home / "config.yaml"
    path.write_text(path.read_text() + "agent:\n  max_turns: 7   # mine too\n")
    assert cli("uninstall", "--host", "hermes").returncode == 0
    text = path.read_text()
    assert "max_turns: 7   # mine too" in text and "# my plugin" in text
    assert config(home)["plugins"]["enabled"] == ["mine"]


def test_via_hooks_writes_shell_hooks_with_the_consent_note(home: Path) -> None:
    """``--via hooks``: one entry per wanted event after the user's own, the tool events
    with an anchored-by-fullmatch matcher, 10 s; no plugin; the consent and fail-open notes."""
    done = cli("install", "--host", "hermes", "--via", "hooks")
    assert done.returncode == 0, done.stderr
    hooks = config(home)["hooks"]
    assert list(hooks) == ["pre_tool_call", "pre_llm_call", "pre_verify"]
    mine, ours = hooks["pre_tool_call"]
    assert mine == {"command": "python3 /opt/log.py"}
    assert ours["matcher"] == "execute_code|process|terminal|mcp_github_.*"
    assert ours["timeout"] == 10
    assert ours["command"].startswith("/bin/sh -c ")
    assert "run --host hermes --event pre_tool_call --timeout 8" in ours["command"]
    assert "hookbus" not in config(home)["plugins"]["enabled"]
    assert not (home / "plugins" / "hookbus").exists()
    assert "--accept-hooks" in done.stdout and "hooks_auto_accept" in done.stdout
    # Installing again without --via keeps the shell hooks; verify agrees.
    assert cli("install", "--host", "hermes").returncode == 0
    assert not (home / "plugins" / "hookbus").exists()
    assert cli("verify", "--host", "hermes").returncode == 0
    assert cli("uninstall", "--host", "hermes").returncode == 0
    assert (home / "config.yaml").read_text() == THEIRS


def test_a_shell_hook_command_is_run_by_hermes_without_a_shell(home: Path) -> None:
    """The installed command, split as Hermes splits it (``shlex.split``) and run with
    the envelope Hermes sends, blocks a destructive command in Hermes's words."""
    import json
    import shlex

    assert cli("install", "--host", "hermes", "--via", "hooks").returncode == 0
    command = config(home)["hooks"]["pre_tool_call"][1]["command"]
    envelope = {"hook_event_name": "pre_tool_call", "tool_name": "terminal",
                "tool_input": {"command": "rm -rf /"}, "session_id": "s", "cwd": os.getcwd(),
                "extra": {"task_id": "t"}}  # fmt: skip
    done = subprocess.run(shlex.split(command), input=json.dumps(envelope), text=True,
                          capture_output=True, timeout=60, check=False)  # fmt: skip
    assert (done.returncode, json.loads(done.stdout)) == (
        0, {"action": "block", "message": "not that"})  # fmt: skip


def test_a_shell_hook_whose_hookbus_is_gone_keeps_the_guards_block(
    home: Path, tmp_path: Path
) -> None:
    """Hermes would run the tool on a command that fails; the installed command answers
    the block a fail-closed handler owes itself, when hookbus's package is gone."""
    import json
    import shlex

    assert cli("install", "--host", "hermes", "--via", "hooks").returncode == 0
    command = config(home)["hooks"]["pre_tool_call"][1]["command"]
    main = next(w for w in shlex.split(shlex.split(command)[2]) if w.endswith("__main__.py"))
    gone = command.replace(main, str(tmp_path / "gone" / "__main__.py"))
    done = subprocess.run(shlex.split(gone), input="{}", text=True, capture_output=True,
                          timeout=60, check=False)  # fmt: skip
    reply = json.loads(done.stdout)
    assert reply["action"] == "block" and "fail-closed" in reply["message"]


def test_verify_reports_drift_and_a_users_plugin_named_hookbus_is_refused(home: Path) -> None:
    """An edited plugin file is drift; a folder of the user's own at hookbus's place is
    refused, nothing written."""
    assert cli("install", "--host", "hermes").returncode == 0
    init = home / "plugins" / "hookbus" / "__init__.py"
    init.write_text(init.read_text() + "# edited\n")
    done = cli("verify", "--host", "hermes")
    assert done.returncode == 1 and "differs from the configuration" in done.stdout
    assert cli("uninstall", "--host", "hermes").returncode == 0
    init.parent.mkdir(parents=True)
    init.write_text("# someone else's plugin\n")
    refused = cli("install", "--host", "hermes")
    assert refused.returncode == 1 and "not written by hookbus" in refused.stderr
    assert init.read_text() == "# someone else's plugin\n"


@pytest.mark.parametrize(
    "bad", ["plugins: [a, b]\n", "plugins:\n  enabled: mine\n", "hooks:\n  pre_tool_call: x\n"]
)
def test_a_config_of_a_shape_hookbus_must_not_edit_is_refused(home: Path, bad: str) -> None:
    """``plugins`` not a mapping, ``plugins.enabled`` not a list, a hook not a list:
    refused, the file untouched."""
    (home / "config.yaml").write_text(bad)
    done = cli("install", "--host", "hermes")
    assert done.returncode == 1 and "nothing changed" in done.stderr
    assert (home / "config.yaml").read_text() == bad


def test_via_is_for_hermes_only(home: Path) -> None:
    """``--via`` with another host is a usage error naming the flag."""
    done = cli("manifest", "--host", "claude", "--via", "hooks")
    assert done.returncode == 1 and "--via is for --host hermes only" in done.stderr


def test_the_plugin_knows_the_drivers_events() -> None:
    """The stdlib-only plugin's event list is the driver's."""
    from hookbus.hosts.hermes import plugin as hermes_plugin

    assert hermes_plugin.EVENTS == ALL_EVENTS


def test_hookbus_try_finds_the_plugins_command(home: Path) -> None:
    """``hookbus try`` sees the event registered (the plugin names its commands in
    plugin.yaml) and runs it with the plugin's --timeout."""
    assert cli("install", "--host", "hermes").returncode == 0
    yaml = (home / "plugins" / "hookbus" / "plugin.yaml").read_text()
    assert YAML(typ="safe").load(yaml)["commands"]["pre_tool_call"].endswith("--timeout 8")
    done = cli("try", "--host", "hermes", "--event", "pre_tool_call", "--tool", "terminal")
    assert done.returncode == 0, done.stderr
    assert "not registered" not in done.stdout
    assert "--event pre_tool_call --timeout 8" in done.stdout


def test_without_a_config_yaml_install_makes_one_and_uninstall_removes_it(home: Path) -> None:
    """No config.yaml yet: install writes one enabling the plugin; uninstall removes both
    and the folders install made, leaving the Hermes home as it was."""
    (home / "config.yaml").unlink()
    assert cli("install", "--host", "hermes").returncode == 0
    assert config(home) == {"plugins": {"enabled": ["hookbus"]}}
    done = cli("uninstall", "--host", "hermes")
    assert done.returncode == 0, done.stderr
    assert list(home.iterdir()) == []


def test_hermes_asks_the_server_unless_told_not_to(home: Path) -> None:
    """Install's default: the plugin asks the warm server; ``--no-server`` bakes
    ``hookbus run`` by path for every way in (plugin and shell hooks), which a plain
    reinstall keeps; ``--server`` brings the server back (the shell hooks stay
    ``hookbus run`` in every form)."""
    assert cli("install", "--host", "hermes", "--via", "both").returncode == 0
    assert "server" in baked(home)
    assert cli("install", "--host", "hermes", "--no-server").returncode == 0
    assert cli("install", "--host", "hermes").returncode == 0
    assert "server" not in baked(home)
    for event in baked(home)["events"].values():
        assert event["argv"][3].endswith("__main__.py") and event["argv"][4] == "run"
    assert cli("install", "--host", "hermes", "--server").returncode == 0
    assert cli("install", "--host", "hermes").returncode == 0
    assert "server" in baked(home)
    ours = [e["command"] for es in config(home)["hooks"].values() for e in es
            if "--host hermes" in e["command"]]  # fmt: skip
    assert ours and all("run --host hermes" in c and "import client" not in c for c in ours)


# -- a project's own configuration, in every Hermes session started there ---------------

#: Loads the installed plugin as Hermes does (in a Python of its own, in the folder
#: Hermes was started in) and calls its ``pre_tool_call`` once per terminal command:
#: prints the directive each returned.
DRIVER = """
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("hookbus_plugin", sys.argv[1])
plugin = importlib.util.module_from_spec(spec)
spec.loader.exec_module(plugin)
hooks = {}
class Ctx:
    def register_hook(self, name, fn):
        hooks[name] = fn
plugin.register(Ctx())
print(json.dumps([hooks["pre_tool_call"](tool_name="terminal", args={"command": c},
                  session_id="s", task_id="t") for c in sys.argv[2:]]))
"""


def hermes_session(folder: Path, home: Path, *commands: str) -> list[Any]:
    """The installed plugin's directive for each terminal command of a session started
    in ``folder``."""
    import json

    plugin = home / "plugins" / "hookbus" / "__init__.py"
    done = subprocess.run([sys.executable, "-I", "-c", DRIVER, str(plugin), *commands],
                          cwd=folder, capture_output=True, text=True, timeout=120,
                          check=False, env={**os.environ})  # fmt: skip
    assert done.returncode == 0, done.stderr
    found: list[Any] = json.loads(done.stdout)
    return found


@pytest.fixture
def user_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A Hermes home of the user's, and no hookbus configuration but the projects'."""
    hermes = tmp_path / "hermes-home"
    hermes.mkdir()
    (hermes / "config.yaml").write_text(THEIRS)
    monkeypatch.setenv("HERMES_HOME", str(hermes))
    return hermes


@pytest.mark.untrusted_projects
def test_install_in_a_project_makes_its_trusted_handlers_apply_to_hermes_there(
    user_home: Path, tmp_path: Path
) -> None:
    """In a project whose trusted ``.hookbus.toml`` enables a guard of its own, install
    writes the plugin and says it serves every session by its folder; a Hermes session
    started there is refused ``rm -rf`` by the project's guard, one started elsewhere is
    not; an install run where no configuration is found says so and keeps the plugin and
    the guard's fallback."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "guard.py").write_text(GUARD.replace("PRELUDE", ""))
    (project / ".hookbus.toml").write_text('enable = ["guard:guard"]\n')
    assert hookbus_inproc(project, "trust").returncode == 0
    done = hookbus_inproc(project, "install", "--host", "hermes")
    assert done.returncode == 0, done.stderr
    plugin = user_home / "plugins" / "hookbus" / "__init__.py"
    assert f"{plugin}: written" in done.stdout
    assert "serves every Hermes session, whatever folder it runs in" in done.stdout
    assert "hookbus" in config(user_home)["plugins"]["enabled"]
    deny = {"action": "block", "message": "no rm -rf"}
    assert hermes_session(project, user_home, "rm -rf build", "ls") == [deny, None]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert hermes_session(elsewhere, user_home, "rm -rf build") == [None]
    before = plugin.read_bytes()
    again = hookbus_inproc(elsewhere, "install", "--host", "hermes")
    assert again.returncode == 1, again.stderr  # no configuration there: a mistake, said
    assert "no configuration found" in again.stderr
    assert plugin.read_bytes() == before
    assert list(baked(user_home)["wanted"]) == [str(project)]
    assert hermes_session(project, user_home, "rm -rf build") == [deny]
    assert hookbus_inproc(project, "verify", "--host", "hermes").returncode == 0


@pytest.mark.untrusted_projects
def test_an_untrusted_project_runs_no_code_of_its_own_in_hermes(
    user_home: Path, tmp_path: Path
) -> None:
    """A cloned project's handler that is not trusted never runs in Hermes's session
    there; install says so and names the command that trusts it, trusting nothing."""
    trusted = tmp_path / "trusted"
    trusted.mkdir()
    (trusted / "guard.py").write_text(GUARD.replace("PRELUDE", ""))
    (trusted / ".hookbus.toml").write_text('enable = ["guard:guard"]\n')
    assert hookbus_inproc(trusted, "trust").returncode == 0
    assert hookbus_inproc(trusted, "install", "--host", "hermes").returncode == 0
    clone = tmp_path / "clone"
    clone.mkdir()
    (clone / "guard.py").write_text(GUARD.replace("PRELUDE", ""))
    (clone / ".hookbus.toml").write_text('enable = ["guard:guard"]\n')
    done = hookbus_inproc(clone, "install", "--host", "hermes")
    assert done.returncode == 0, done.stderr
    assert "config-untrusted" in done.stderr
    fix = f"cd {clone} && hookbus trust && hookbus install --host hermes"
    assert f"note: {clone / '.hookbus.toml'}: none of its own handlers run in Hermes" in done.stdout
    assert fix in done.stdout
    assert hermes_session(clone, user_home, "rm -rf build") == [None]
    assert "clone" not in (tmp_path / "xdg-config" / "hookbus" / "trusted.json").read_text()


def test_the_plugin_reads_the_index_of_the_interpreter_a_wrapper_runs(
    home: Path, tmp_path: Path
) -> None:
    """Installed with ``--python`` naming a wrapper that execs another interpreter (as
    pyenv's shim does), the plugin reads the index of that interpreter, which the hook
    calls compile: the one it names is the interpreter's own ``sys.executable``."""
    wrapper = tmp_path / "bin" / "python3"
    wrapper.parent.mkdir()
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    wrapper.chmod(0o755)
    assert cli("install", "--host", "hermes", "--python", str(wrapper)).returncode == 0
    found = baked(home)
    assert found["events"]["pre_tool_call"]["argv"][0] == str(wrapper)
    assert found["python"] == sys.executable
