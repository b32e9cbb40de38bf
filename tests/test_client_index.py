"""The client reads the subscription index as ``hookbus run`` does: an event nobody wants
is answered by the client alone (no server asked, none started), a wanted one goes to
the server with the variables the handlers declare now; wherever the client cannot
restate hookbus's rule exactly, it asks the server and lets hookbus decide."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import test_client
from fake_server import STDOUT
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import GOLDEN, compile_now, examples, guarded_project, pre_tool
from test_client import client_imports, run_client, serve

from hookbus import hosts
from hookbus.local import discover
from hookbus.runtime import index
from hookbus.runtime.warm import client, wire

CURSOR_GOLDEN = GOLDEN.parent / "cursor"
#: The client tests' short state root, with no runtime folder (a fixture).
state = test_client.state
#: The stand-in server of the client's tests, as a context manager.
stand_in = contextlib.contextmanager(serve)

ENV_HANDLER = """
import hookbus

@hookbus.handler("before-tool", tools="shell", env=("GUARD_MODE",))
def moded(event, ctx):
    return None
"""


@pytest.fixture
def project(tmp_path: Path, state: Path) -> Path:
    """A project whose fail-closed guard wants Bash only, its index compiled."""
    root = guarded_project(tmp_path / "project")
    compile_now(root)
    return root


def read_call(cwd: Path) -> bytes:
    """A Claude Code PreToolUse of Read: no handler of the project wants it."""
    data = json.loads((GOLDEN / "PreToolUse.Read.json").read_text())
    data["cwd"] = str(cwd)
    return json.dumps(data).encode()


def cold(cwd: Path, payload: bytes, host: str, event: str) -> subprocess.CompletedProcess[bytes]:
    argv = [sys.executable, "-m", "hookbus", "run", "--host", host, "--event", event]
    return subprocess.run(argv, input=payload, capture_output=True, cwd=cwd, timeout=60,
                          check=False)  # fmt: skip


def no_server_was_asked_nor_started(state: Path) -> bool:
    return not (state / "run").exists()


# -- what the client restates -----------------------------------------------------------


#: Spaces JSON allows, and some it does not that ``str.strip()`` takes.
SPACES = st.sampled_from([" ", "\t", "\n", "\r", "\u00a0", "\x1c", "\x85", "\u2028", "\u3000"])


@settings(max_examples=examples(300))
@given(before=st.lists(SPACES, max_size=3), after=st.lists(SPACES, max_size=3),
       value=st.dictionaries(st.text(max_size=5), st.integers() | st.text(max_size=5), max_size=3))  # fmt: skip
def test_the_client_reads_what_json_reads(before: list[str], after: list[str],
                                          value: dict[str, object]) -> None:  # fmt: skip
    """A payload the client reads is one ``json.loads`` (the peek of ``hookbus run``) reads,
    to the same value: whitespace JSON does not allow makes both refuse it."""
    data = ("".join(before) + json.dumps(value, ensure_ascii=False) + "".join(after)).encode()
    try:
        expected: object = json.loads(data)
    except ValueError:
        with pytest.raises(ValueError, match=r"not JSON|extra data"):
            client.loads(data)
    else:
        assert client.loads(data) == expected


def test_the_clients_tables_are_hookbus_own() -> None:
    """The index format and its file name are the ones hookbus uses (the client cannot
    import them)."""
    assert client.INDEX_FORMAT == index.FORMAT
    import random

    draw = random.Random(12)
    lists = [[], ["/a/.hookbus.toml"], ["/u/config.toml", "/p/\udcff/.hookbus.toml"]]
    lists += [["".join(chr(draw.randrange(1, 0x3000)) for _ in range(draw.randrange(60)))
               for _ in range(draw.randrange(3))] for _ in range(200)]  # fmt: skip
    for files in lists:
        assert client.index_name(files) == index.index_name(files)


def _layout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str) -> Path | None:
    """Configuration files laid out as ``case`` says; the project folder to look from
    (None: the working folder, ``tmp_path/home/repo/sub``)."""
    home = tmp_path / "home"
    repo = home / "repo"
    sub = repo / "sub"
    sub.mkdir(parents=True)
    (repo / ".git").mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.delenv("HOOKBUS_CONFIG", raising=False)
    monkeypatch.chdir(sub)
    user = home / ".config" / "hookbus" / "config.toml"
    if case in ("user", "user+project"):
        user.parent.mkdir(parents=True)
        user.write_text("")
    if case in ("project", "user+project", "group-writable", "world-writable"):
        (repo / ".hookbus.toml").write_text("")
    if case == "above-the-repository":
        (home / ".hookbus.toml").write_text("")  # .git stops the search below it
    if case == "nearest":
        (repo / ".hookbus.toml").write_text("")
        (sub / ".hookbus.toml").write_text("")
    if case == "folder-named-like-it":
        (sub / ".hookbus.toml").mkdir()
        (repo / ".hookbus.toml").write_text("")
    if case == "group-writable":
        (repo / ".hookbus.toml").chmod(0o664)
    if case == "world-writable":
        (repo / ".hookbus.toml").chmod(0o666)
    if case == "link":
        (tmp_path / "real.toml").write_text("")
        (repo / ".hookbus.toml").symlink_to(tmp_path / "real.toml")
    if case == "explicit":
        (tmp_path / "only.toml").write_text("")
        monkeypatch.setenv("HOOKBUS_CONFIG", str(tmp_path / "x" / ".." / "only.toml"))
    if case == "explicit-missing":
        monkeypatch.setenv("HOOKBUS_CONFIG", str(tmp_path / "none.toml"))
    if case == "project-variable":
        other = tmp_path / "elsewhere"
        other.mkdir()
        (other / ".hookbus.toml").write_text("")
        return other
    return None


@pytest.mark.parametrize(
    ("case", "decided"),
    [
        ("none", True), ("user", True), ("project", True), ("user+project", True),
        ("above-the-repository", True), ("nearest", True), ("folder-named-like-it", True),
        ("explicit", True), ("project-variable", True),
        # hookbus may trust (its private group), follow or ignore these with a diagnostic:
        ("group-writable", False), ("world-writable", False), ("link", False),
        ("explicit-missing", False),
    ],
)  # fmt: skip
def test_configuration_files_are_discovers_or_undecided(
    case: str, decided: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where the client decides which configuration files are in effect, they are exactly
    ``hookbus.local.discover.config_paths``'s; where it cannot tell, it says so (None)."""
    project = _layout(tmp_path, monkeypatch, case)
    where = str(project) if project else None
    found = client.config_files(where)
    if decided:
        assert found == discover.config_paths(where)
    else:
        assert found is None


# -- through the real client -------------------------------------------------------------


def test_an_event_nobody_wants_is_answered_without_a_server(project: Path, state: Path) -> None:
    """Read, which only a Bash guard is installed for: the client answers the host's
    no-opinion itself, byte for byte what ``hookbus run`` answers, and neither asks nor
    starts a server."""
    payload = read_call(project)
    answered = run_client(project, payload)
    assert (answered.returncode, answered.stdout, answered.stderr) == (0, b"", b"")
    assert no_server_was_asked_nor_started(state)
    expected = cold(project, payload, "claude", "PreToolUse")
    assert (answered.returncode, answered.stdout, answered.stderr) == (
        expected.returncode, expected.stdout, expected.stderr)  # fmt: skip
    assert not (state / "diagnostics.jsonl").exists()


def test_an_event_nobody_wants_loads_no_socket_module(project: Path, state: Path) -> None:
    """Answered from the index alone, the client loads ``_json`` and nothing else beyond
    what ``python -I -S -c pass`` loads: not ``_socket`` (a shared library: about a
    millisecond of every such call) nor ``select``."""
    answered, imported = client_imports(read_call(project), project)
    assert (answered.returncode, answered.stdout) == (0, b"")
    assert imported == {"_json"}
    assert no_server_was_asked_nor_started(state)


def test_a_hosts_own_no_opinion_is_answered(project: Path, state: Path) -> None:
    """Cursor's no-opinion is ``{}`` (a permission hook must print JSON): the client
    answers it for an event nobody wants, as ``hookbus run`` does."""
    data = json.loads((CURSOR_GOLDEN / "beforeReadFile.json").read_text())
    data["workspace_roots"] = [str(project)]  # where Cursor's hooks find the project
    payload = json.dumps(data).encode()
    argv = [sys.executable, "-I", "-S", str(client.__file__), "--host", "cursor", "--project",
            "CURSOR_PROJECT_DIR:workspace_roots,cwd", "--event", "beforeReadFile", "--timeout", "10"]  # fmt: skip
    answered = subprocess.run(argv, input=payload, capture_output=True, cwd=project,
                              timeout=60, check=False)  # fmt: skip
    expected = cold(project, payload, "cursor", "beforeReadFile")
    assert expected.stdout.strip() == b"{}"
    assert (answered.returncode, answered.stdout, answered.stderr) == (
        expected.returncode, expected.stdout, expected.stderr)  # fmt: skip
    assert no_server_was_asked_nor_started(state)


def test_a_wanted_event_carries_the_whole_environment(
    tmp_path: Path, state: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A handler declaring ``GUARD_MODE`` after the hook was installed: the request sends
    it, as it sends every variable of the hook's (one an older command named with
    ``--env``, the host's project variable), whatever the index declares."""
    root = tmp_path / "moded"
    root.mkdir()
    (root / "moded.py").write_text(ENV_HANDLER)
    (root / ".hookbus.toml").write_text('enable = ["moded:moded"]\n')
    compile_now(root)
    with stand_in(state) as server:
        env = {"GUARD_MODE": "strict", "OLD_NAME": "x", "CLAUDE_PROJECT_DIR": str(root)}
        answered = run_client(root, pre_tool("ls", root), "--env", "CLAUDE_PROJECT_DIR,OLD_NAME",
                              env=env)  # fmt: skip
    assert answered.stdout == STDOUT
    ((head, _),) = server.requests
    sent = head["env"]
    assert isinstance(sent, dict)
    assert (sent["GUARD_MODE"], sent["CLAUDE_PROJECT_DIR"]) == ("strict", str(root))
    assert sent["OLD_NAME"] == "x"


@pytest.mark.parametrize(
    "case", ["stale", "group-writable", "dialect", "unknown-host", "not-json-whitespace"]
)
def test_where_the_client_cannot_tell_the_server_decides(
    case: str, project: Path, state: Path
) -> None:
    """An index older than the configuration, a configuration hookbus may trust by the
    user's private group, a payload that may be another host's dialect (Cursor's key in a
    Claude payload), a host the index does not know, a payload padded with a space JSON
    does not allow (which ``hookbus run`` cannot read, so owes any fail-closed handler of
    the event its refusal): the event nobody would want still goes to the server, which
    decides as ``hookbus run`` does."""
    payload = read_call(project)
    host = "claude"
    if case == "stale":
        config = project / ".hookbus.toml"
        config.write_text(config.read_text() + "# edited\n")
    if case == "group-writable":
        (project / ".hookbus.toml").chmod(0o664)
    if case == "dialect":
        payload = json.dumps({**json.loads(payload), "cursor_version": "2.0"}).encode()
    if case == "unknown-host":
        host = "no-such-host"
    if case == "not-json-whitespace":
        payload = "\u00a0".encode() + payload  # Unicode's no-break space, not JSON's
    argv = [sys.executable, "-I", "-S", str(client.__file__), "--host", host, *test_client.PROJECT,
            "--event", "PreToolUse", "--timeout", "10"]  # fmt: skip
    with stand_in(state) as server:
        answered = subprocess.run(argv, input=payload, capture_output=True, cwd=project,
                                  timeout=60, check=False)  # fmt: skip
    assert answered.stdout == STDOUT
    assert len(server.requests) == 1


def test_the_guard_is_still_asked_for_what_it_wants(project: Path, state: Path) -> None:
    """The index routes Bash to the fail-closed guard: with no server, the cold path
    answers its deny (the client never answers a wanted event itself)."""
    answered = run_client(project, pre_tool("rm -rf /", project))
    assert answered.returncode == 0
    assert json.loads(answered.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert (state / "run" / wire.start_lock()).exists()  # and a server start was attempted


@pytest.mark.parametrize("home", ["with-slash", "empty"])
def test_the_home_folder_is_expandusers(
    home: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``$HOME`` with a trailing slash, or empty, stops the search where hookbus's does."""
    _layout(tmp_path, monkeypatch, "user+project")
    monkeypatch.setenv("HOME", str(tmp_path / "home") + "/" if home == "with-slash" else "")
    monkeypatch.delenv("XDG_CONFIG_HOME")
    assert client.config_files(None) == discover.config_paths(None)


@pytest.mark.parametrize("project", ["~/repo", "//net/repo", "~other/repo"])
def test_a_project_path_abspath_reads_otherwise_is_undecided(
    project: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``os.path.abspath`` keeps a leading ``//`` and does not expand ``~``: the client
    leaves such a folder to hookbus (so does ``HOOKBUS_CONFIG=~other/...``)."""
    _layout(tmp_path, monkeypatch, "project")
    assert client.config_files(project) is None
    monkeypatch.setenv("HOOKBUS_CONFIG", "~other/config.toml")
    assert client.config_files(None) is None


LEVELS = ("a", "b", "c", "d")
#: What may sit at one level of the folder chain: nothing, a trusted configuration file,
#: a folder named like one, one writable by its group or by all, a link to one; with or
#: without ``.git``; the home folder at one level or none.
PLACED = st.sampled_from(["", "file", "folder", "group", "world", "link"])


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    placed=st.lists(PLACED, min_size=4, max_size=4),
    git=st.lists(st.booleans(), min_size=4, max_size=4),
    home=st.integers(min_value=-1, max_value=3),
    user=PLACED,
)
def test_any_layout_is_discovers_or_undecided(
    placed: list[str], git: list[bool], home: int, user: str
) -> None:
    """Over random layouts of ``/tmp/x/a/b/c/d`` (configuration files of every kind at
    each level, ``.git`` folders, the home folder anywhere): the client's configuration
    files are ``discover.config_paths``'s whenever it decides, and it decides whenever
    no file it meets needs hookbus's judgement."""
    import tempfile

    with tempfile.TemporaryDirectory() as top, pytest.MonkeyPatch.context() as mp:
        base = Path(top)
        folders = [base.joinpath(*LEVELS[: i + 1]) for i in range(4)]
        folders[-1].mkdir(parents=True)
        (base / "target.toml").write_text("")
        for folder, what, has_git in zip(folders, placed, git, strict=True):
            _place(folder / ".hookbus.toml", what, base)
            if has_git:
                (folder / ".git").mkdir()
        config_home = base / "xdg"
        (config_home / "hookbus").mkdir(parents=True)
        _place(config_home / "hookbus" / "config.toml", user, base)
        mp.setenv("XDG_CONFIG_HOME", str(config_home))
        mp.setenv("HOME", str(folders[home]) if home >= 0 else "/nonexistent-home")
        mp.delenv("HOOKBUS_CONFIG", raising=False)
        mp.chdir(folders[-1])
        found = client.config_files(None)
        expected = discover.config_paths(None)
        if found is not None:
            assert found == expected
        # A folder in place of the user's file is kept in effect by hookbus, unread (its
        # last good handlers stay): the client leaves that to hookbus too.
        met_undecided = user in ("folder", "group", "world", "link") or any(
            what in ("group", "world", "link") for what in placed
        )
        if not met_undecided:
            assert found == expected


def _place(path: Path, what: str, base: Path) -> None:
    if what in ("file", "group", "world"):
        path.write_text("")
        path.chmod({"file": 0o644, "group": 0o664, "world": 0o666}[what])
    elif what == "folder":
        path.mkdir()
    elif what == "link":
        path.symlink_to(base / "target.toml")


# -- where the project is ------------------------------------------------------------------

#: Every project variable and payload key of every host, and values a host (or a hostile
#: payload) may put there: relative paths, empty strings, lists, non-strings.
PROJECT_NAMES = sorted({n for f in hosts.HOSTS.values() for n in f.project_env} | {"OTHER"})
PROJECT_KEYS = sorted({p[0] for f in hosts.HOSTS.values() for p in f.project_paths} | {"other"})
PATHS = st.sampled_from(["", "/abs", "rel/dir", ".", "~/x", "//net", "/a b:c,d.e"])
VALUES = st.recursive(
    st.one_of(PATHS, st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False)),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(PROJECT_KEYS), inner, max_size=2),
    max_leaves=6,
)  # fmt: skip


@settings(max_examples=examples(400), deadline=None)
@given(
    host=st.sampled_from(hosts.NAMES),
    environ=st.dictionaries(st.sampled_from(PROJECT_NAMES), PATHS, max_size=3),
    payload=st.dictionaries(st.sampled_from(PROJECT_KEYS), VALUES, max_size=4),
)
def test_the_clients_project_is_hookbus_own(
    host: str, environ: dict[str, str], payload: dict[str, object]
) -> None:
    """Given the word its host's installed command carries, the client finds the project
    folder ``HostFacts.project_dir`` finds, for every host, whatever the variables and
    the payload hold (the project decides the configuration, so its guards)."""
    facts = hosts.facts(host)
    word = client.project_word(facts.project_word)
    assert word == (list(facts.project_env), [list(path) for path in facts.project_paths])
    assert client.project_dir(word, environ.get, payload) == facts.project_dir(environ, payload)


def test_tricky_payloads_find_the_same_project() -> None:
    """A relative path, an empty string or list, a non-string and a list's first item:
    the client reads each as hookbus does."""
    cases: list[tuple[str, dict[str, str], dict[str, object]]] = [
        ("cursor", {"CURSOR_PROJECT_DIR": ""}, {"workspace_roots": [], "cwd": "rel"}),
        ("cursor", {}, {"workspace_roots": [7, "/ws"], "cwd": "/c"}),
        ("cursor", {}, {"workspace_roots": ["", "/ws"], "cwd": "/c"}),
        ("copilot", {"COPILOT_PROJECT_DIR": "", "CLAUDE_PROJECT_DIR": "rel"}, {"cwd": "/c"}),
        ("grok", {}, {"workspaceRoot": {"cwd": "/x"}, "cwd": ["/first", "/second"]}),
        ("windsurf", {"CLAUDE_PROJECT_DIR": "/c"}, {"cwd": "/c"}),
        ("cline", {}, {"workspaceRoots": "/single"}),
    ]
    for host, environ, payload in cases:
        facts = hosts.facts(host)
        word = client.project_word(facts.project_word)
        assert word is not None
        expected = facts.project_dir(environ, payload)
        assert client.project_dir(word, environ.get, payload) == expected, (host, payload)


BYE = """
import hookbus

@hookbus.handler("session-end")
def bye(event):
    return None
"""


@pytest.mark.parametrize("word", [(), ("--project", ":cwd")], ids=["none", "not-the-facts"])
def test_a_command_naming_no_project_leaves_the_project_to_hookbus(
    tmp_path: Path, state: Path, project: Path, word: tuple[str, ...]
) -> None:
    """A command installed before ``--project`` existed, or one whose word is not this
    hookbus's rule for the host (installed by another version, or edited): the client
    cannot tell where the host names its project, so it answers nothing from an index and
    guesses no project. Its working
    folder is another project whose index wants no Bash, while ``CLAUDE_PROJECT_DIR``
    names the guarded one: the cold path answers the guard's deny, as ``hookbus run``
    does; and a call nobody would want goes to the server, which decides."""
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / ".git").mkdir(parents=True)
    (elsewhere / "bye.py").write_text(BYE)
    (elsewhere / ".hookbus.toml").write_text('enable = ["bye:bye"]\n')
    compile_now(elsewhere)
    env = {**os.environ, "CLAUDE_PROJECT_DIR": str(project)}
    old = [sys.executable, "-I", "-S", str(client.__file__), "--host", "claude", *word,
           "--event", "PreToolUse", "--timeout", "10"]  # fmt: skip
    with stand_in(state) as server:
        asked = subprocess.run(old, input=read_call(project), capture_output=True,
                               cwd=project, timeout=60, check=False)  # fmt: skip
    assert asked.stdout == STDOUT
    assert len(server.requests) == 1
    payload = pre_tool("rm -rf /", elsewhere)
    answered = subprocess.run(old, input=payload, capture_output=True, cwd=elsewhere, env=env,
                              timeout=60, check=False)  # fmt: skip
    expected = subprocess.run([sys.executable, "-m", "hookbus", "run", "--host", "claude",
                               "--event", "PreToolUse"], input=payload, capture_output=True,
                              cwd=elsewhere, env=env, timeout=60, check=False)  # fmt: skip
    assert json.loads(expected.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert (answered.returncode, answered.stdout) == (expected.returncode, expected.stdout)
