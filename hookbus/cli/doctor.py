"""``hookbus doctor``: what is installed where, and what would make a hook misbehave.

It gathers facts first (one :class:`Report`, which ``--json`` prints as it is) and
renders them after, so the text and the JSON cannot disagree. Each finding is a
*problem* (a hook would misbehave: exit 1) or a *note* (worth knowing: exit 0), and
each problem says how to fix it. The choices:

- the last diagnostics are read before anything else: doctor compiles the index as
  install does, and what that compile logs must not pass for what the hooks last said;
- doctor's own diagnostics (discovery is asked once per scope, and says ``config-ignored``
  each time) are deferred, logged once each at the end, and only when the state root is
  usable: they repeat the report, and a refused root would send them to stderr;
- the interpreter is checked as the installed command runs it: the program it names
  must be executable and import hookbus as ``__main__.py`` does (its own install first,
  else the package beside the command's ``__main__.py``);
- drift is judged against what install would write, in the form installed, for the
  interpreter the command names when that one works. When it does not (it cannot even
  say where its hookbus is), the entries are planned for this interpreter and the paths
  put back to the installed ones: the missing interpreter is reported once, as itself,
  and drift still shows every other difference.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import TextIO, TypedDict

    from hookbus.cli.render import Style
    from hookbus.manifests.base import CommandForm, Manifest, Scope
    from hookbus.runtime.index import IndexData

    class Finding(TypedDict):
        area: str  # the host's name, "configuration", "handlers" or "state"
        subject: str  # the file, handler or folder it is about
        message: str
        fix: str | None

    class InterpreterData(TypedDict):
        program: str  # as the command names it ("hookbus", "python3": on PATH)
        main: str | None  # hookbus's __main__.py the command runs (absolute form)
        found: str | None  # where the program is (on this PATH for the PATH forms)
        ok: bool
        hookbus: str | None  # the version of the hookbus it imports
        problem: str | None

    class InstallData(TypedDict):
        scope: str
        file: str
        installed: bool  # False: no hookbus entries in it (or no file)
        form: str | None
        events: list[str]  # the native events with hookbus entries
        entries: int
        interpreters: list[InterpreterData]
        drift: list[str]  # differences from the configuration
        error: str | None  # why the file cannot be read

    class HostData(TypedDict):
        host: str
        installs: list[InstallData]

    class IgnoredData(TypedDict):
        path: str
        why: str

    class ConfigurationData(TypedDict):
        in_effect: list[str]
        ignored: list[IgnoredData]

    class HandlerFact(TypedDict):
        name: str
        target: str
        kinds: list[str] | None  # None: its declaration is unknown (never loaded)
        fail_closed: bool
        loads: bool
        unavailable: str | None

    class StateData(TypedDict):
        path: str
        exists: bool
        mode: str | None  # "0700"
        owner: int | None
        ok: bool
        problem: str | None

    class DiagnosticData(TypedDict):
        time: str | None
        code: str | None
        level: str | None
        message: str

    class DiagnosticsData(TypedDict):
        file: str
        last: list[DiagnosticData]  # oldest first
        problem: str | None

    class Report(TypedDict):
        ok: bool
        problems: list[Finding]
        notes: list[Finding]
        hosts: list[HostData]
        configuration: ConfigurationData
        handlers: list[HandlerFact]
        state: StateData
        diagnostics: DiagnosticsData


#: How many of the log's last lines doctor shows (``hookbus log`` shows the rest).
LAST_DIAGNOSTICS = 5
#: Run with ``-P``, as the absolute command runs, importing hookbus as its ``__main__.py``
#: does (:mod:`hookbus.__main__`); its argument is that ``__main__.py``.
PROBE = (
    "import os, sys\n"
    "try:\n import hookbus.runtime.hook\n"
    "except ImportError:\n"
    " sys.path.append(os.path.dirname(os.path.dirname(os.path.abspath(sys.argv[1]))))\n"
    " import hookbus.runtime.hook\n"
    "import hookbus; print(hookbus.__version__)"
)


def add_arguments(commands: Any) -> None:
    from hookbus.hosts import HOSTS

    sub: argparse.ArgumentParser = commands.add_parser(
        "doctor", help="check the installation, configuration and state folder"
    )
    sub.add_argument("--host", help="only this host",
                     choices=sorted(h for h, facts in HOSTS.items() if facts.manifest))  # fmt: skip
    sub.add_argument("--json", action="store_true", help="one JSON document, for tools")
    sub.set_defaults(main=main)


def main(opts: argparse.Namespace) -> int:
    from hookbus import diagnostics

    diagnostics.defer()
    try:
        report = examine(opts.host)
    finally:
        _log_once(diagnostics.take())
    if opts.json:
        import json

        sys.stdout.write(json.dumps(report, indent=2) + "\n")
    else:
        write(report, sys.stdout)
    return 0 if report["ok"] else 1


class Findings:
    """The problems (exit 1) and notes found so far."""

    def __init__(self) -> None:
        self.problems: list[Finding] = []
        self.notes: list[Finding] = []

    def problem(self, area: str, subject: str, message: str, fix: str | None) -> None:
        self.problems.append({"area": area, "subject": subject, "message": message, "fix": fix})

    def note(self, area: str, subject: str, message: str, fix: str | None = None) -> None:
        self.notes.append({"area": area, "subject": subject, "message": message, "fix": fix})


def examine(host: str | None = None) -> Report:
    """Every fact doctor reports, for ``host`` (default: every host with a manifest)."""
    from hookbus.hosts import HOSTS

    found = Findings()
    state = _state(found)
    last = _last_diagnostics()
    configuration = _configuration(found)
    indexes: dict[tuple[str, ...], IndexData | None] = {}
    handlers = _handlers(_index(configuration["in_effect"], indexes, found), found)
    hosts = [_host(name, indexes, found) for name, facts in HOSTS.items()
             if facts.manifest and host in (None, name)]  # fmt: skip
    return {
        "ok": not found.problems,
        "problems": found.problems,
        "notes": found.notes,
        "hosts": hosts,
        "configuration": configuration,
        "handlers": handlers,
        "state": state,
        "diagnostics": last,
    }


# -- the state root and the diagnostics ------------------------------------------------


def _state(found: Findings) -> StateData:
    """The state root as :func:`hookbus.state.root` checks it (never creating it)."""
    from hookbus import state

    path = state.root_path()
    data: StateData = {"path": path, "exists": False, "mode": None, "owner": None,
                       "ok": True, "problem": None}  # fmt: skip
    try:
        st = os.lstat(path)
        data.update({"exists": True, "mode": f"{st.st_mode & 0o7777:04o}", "owner": st.st_uid})
        state.root()
    except FileNotFoundError:
        return data  # the first hook (or this doctor's compile) creates it 0700
    except state.StateRefused as exc:
        data["problem"] = exc.reason
    except OSError as exc:
        data["problem"] = f"cannot be checked ({exc.strerror or exc})"
    if data["problem"] is None:
        return data
    why = data["problem"]
    if why.startswith("is writable by"):
        fix = f"chmod 700 {path}"
    elif why.startswith("is owned by"):
        fix = f"chown {os.geteuid()} {path} && chmod 700 {path}, or remove it"
    else:
        fix = f"remove {path} (hookbus creates it again, 0700)"
    data["ok"] = False
    found.problem("state", path, f"the state folder {why}: hooks refuse it, so they cache "
                  "no index (every call compiles its own) and log no diagnostics", fix)  # fmt: skip
    return data


def _last_diagnostics() -> DiagnosticsData:
    """The log's last lines, oldest first; a line that is not JSON is shown as it is."""
    import json

    from hookbus import diagnostics, state

    data: DiagnosticsData = {"file": state.path(diagnostics.LOG_NAME), "last": [],
                             "problem": None}  # fmt: skip
    try:
        raw = state.read(diagnostics.LOG_NAME)
    except FileNotFoundError:
        return data
    except OSError as exc:
        data["problem"] = f"cannot be read: {exc}"
        return data
    lines = [line for line in raw.decode("utf-8", "replace").splitlines() if line.strip()]
    for text in lines[-LAST_DIAGNOSTICS:]:
        try:
            record = json.loads(text)
        except ValueError:
            record = None
        if not isinstance(record, dict):
            record = {"message": text}
        fields = [v if isinstance(v := record.get(k), str) else None
                  for k in ("timestamp", "event", "level")]  # fmt: skip
        data["last"].append({"time": fields[0], "code": fields[1], "level": fields[2],
                             "message": str(record.get("message", ""))})  # fmt: skip
    return data


def _log_once(data: bytes) -> None:
    """Log doctor's own diagnostics once each, when the log can take them (see the
    module docstring); lines differing only in their time are one."""
    import json

    from hookbus import diagnostics

    unique: dict[str, bytes] = {}
    for line in data.splitlines(keepends=True):
        record = json.loads(line)
        record.pop("timestamp", None)
        unique.setdefault(json.dumps(record, sort_keys=True), line)
    if unique and diagnostics.usable() is None:
        diagnostics.write(b"".join(unique.values()))


# -- configuration and handlers --------------------------------------------------------


def _configuration(found: Findings) -> ConfigurationData:
    """The files in effect here, and every file discovery passed over, with why."""
    from hookbus import discover
    from hookbus.trust import file_problem

    in_effect = discover.config_paths()
    explicit = os.environ.get("HOOKBUS_CONFIG")
    explicit = os.path.abspath(os.path.expanduser(explicit)) if explicit else None
    if explicit and not os.path.lexists(explicit):
        found.problem("configuration", explicit, "HOOKBUS_CONFIG names it, but it does not "
                      "exist: no handler is enabled", "unset HOOKBUS_CONFIG, or create "
                      "the file")  # fmt: skip
    ignored: list[IgnoredData] = []
    candidates = [explicit] if explicit else []
    for path in dict.fromkeys([*candidates, discover.user_config_path(), *_project_files()]):
        if path in in_effect or not os.path.lexists(path):
            continue
        untrusted = file_problem(path)
        if untrusted is not None:
            why = f"{untrusted}: its handlers would run as you, so it is not read"
            found.problem("configuration", path, f"ignored: {why}",
                          f"chown/chmod {path} (or its folder), or remove it")  # fmt: skip
        else:
            why = f"HOOKBUS_CONFIG names {explicit} instead" if explicit else (
                "a nearer .hookbus.toml is in effect")  # fmt: skip
            found.note("configuration", path, f"not read: {why}")
        ignored.append({"path": path, "why": why})
    return {"in_effect": in_effect, "ignored": ignored}


def _project_files() -> list[str]:
    """Every ``.hookbus.toml`` at or above the working folder, nearest first, as far up as
    :func:`hookbus.discover.find_project_config` looks (it takes the first it trusts)."""
    from hookbus.discover import PROJECT_FILE

    try:
        here = os.getcwd()
    except OSError:
        here = os.environ.get("PWD") or "/"
    home = os.path.expanduser("~")
    files = []
    while True:
        if os.path.lexists(candidate := os.path.join(here, PROJECT_FILE)):
            files.append(candidate)
        parent = os.path.dirname(here)
        if here in (parent, home) or os.path.exists(os.path.join(here, ".git")):
            return files
        here = parent


def _index(
    files: list[str], cache: dict[tuple[str, ...], IndexData | None], found: Findings
) -> IndexData | None:
    """The compiled index of ``files`` (once per set of files), its configuration
    problems reported (a handler that does not load is :func:`_handlers`'s)."""
    from hookbus.cli.install import compiled_index
    from hookbus.errors import HostConfigError

    key = tuple(files)
    if key in cache:
        return cache[key]
    try:
        index = cache[key] = compiled_index(files)
    except HostConfigError as exc:
        cache[key] = None
        found.problem("configuration", ", ".join(files), str(exc), "fix the handler module "
                      "'hookbus log' names, or take it out of enable")  # fmt: skip
        return None
    seen = {(f["subject"], f["message"]) for f in (*found.problems, *found.notes)}
    for problem in index["problems"] if index else []:
        subject = problem["subject"] or ", ".join(files)
        message = f"{problem['code']}: {problem['message']}"
        if problem["code"] == "handler-unavailable" or (subject, message) in seen:
            continue
        if problem["invalid"]:
            found.problem("configuration", subject, message, f"edit {subject}")
        else:
            found.note("configuration", subject, message)
    return index


def _handlers(index: IndexData | None, found: Findings) -> list[HandlerFact]:
    from hookbus.runtime.index import fail_closed

    facts: list[HandlerFact] = []
    for handler in index["handlers"] if index else []:
        sub, why, name = handler["subscription"], handler["unavailable"], handler["name"]
        facts.append({
            "name": name, "target": handler["target"],
            "kinds": list(sub.get("kinds", [])) if sub is not None else None,
            "fail_closed": bool(fail_closed([handler])), "loads": why is None,
            "unavailable": why,
        })  # fmt: skip
        if why is None:
            continue
        if why.endswith("so it is kept as it was"):  # hookbus.runtime.compile's words
            found.note("handlers", name, f"{why}: hooks use its last good declaration")
            continue  # the unreadable file is the problem, reported as such
        module = handler["target"].partition(":")[0]
        if not facts[-1]["fail_closed"]:
            then = "hooks run without it"
        elif sub is not None:
            then = "fail-closed: hooks deny every event it wants until it loads"
        else:  # hookbus.runtime.load.stand_in
            then = "unknown declaration, so it counts as fail-closed: hooks deny all they can"
        found.problem("handlers", name, f"does not load: {why} ({then})",
                      f"make {module} load, or take {name} out of enable")  # fmt: skip
    return facts


# -- hosts -----------------------------------------------------------------------------


def _host(host: str, indexes: dict[tuple[str, ...], IndexData | None], found: Findings) -> HostData:
    from hookbus.cli.install import config_files
    from hookbus.manifests.base import load

    manifest = load(host)
    installs: list[InstallData] = []
    for scope in manifest.scopes:
        files = config_files(scope)
        index = _index(files, indexes, found)
        compiled = not files or index is not None
        installs += _installs(host, manifest, scope, index if compiled else None, found,
                              check_drift=compiled)  # fmt: skip
    if not any(i["installed"] for i in installs):
        index = indexes.get(tuple(config_files("project")))
        if wanted := list(index["routes"].get(host, {}) if index else ()):
            why = f"not installed: enabled handlers want {', '.join(wanted)}, and no hook runs"
            found.note(host, host, why, f"run: hookbus install --host {host}")
    return {"host": host, "installs": installs}


def _installs(
    host: str,
    manifest: Manifest,
    scope: Scope,
    index: IndexData | None,
    found: Findings,
    *,
    check_drift: bool,
) -> list[InstallData]:
    """What is installed in each settings file of ``scope``, checked."""
    from hookbus.cli.install import installed_form
    from hookbus.errors import HostConfigError
    from hookbus.manifests import documents
    from hookbus.manifests.base import interpreter_of

    installs: list[InstallData] = []
    for document in manifest.plan(index, python=sys.executable, scope=scope).documents:
        path = document.path
        data: InstallData = {"scope": scope, "file": path, "installed": False, "form": None,
                             "events": [], "entries": 0, "interpreters": [], "drift": [],
                             "error": None}  # fmt: skip
        installs.append(data)
        try:
            text, current = documents.read(path, document.format)
            manifest.check(path, current)
        except HostConfigError as exc:
            data["error"] = why = str(exc).removeprefix(f"{path}: ")
            found.problem(host, path, why, f"fix or move {path}")
            continue
        commands = manifest.commands(current) if text is not None else {}
        if not commands:
            continue
        form = installed_form(manifest, current) or "absolute"
        data.update({"installed": True, "form": form, "events": list(commands),
                     "entries": sum(map(len, commands.values()))})  # fmt: skip
        fix = _install_command(host, scope, form)
        for program, main in {run: None for cmds in commands.values() for c in cmds
                              if (run := interpreter_of(c)) is not None}:  # fmt: skip
            checked = _interpreter(program, main)
            data["interpreters"].append(checked)
            if not checked["ok"]:
                found.problem(host, path, f"{checked['problem']}: the hook then answers only "
                              f"the command's fallback: {_fallbacks(host, commands, program)}",
                              _interpreter_fix(host, scope, form))  # fmt: skip
        if check_drift:
            wanted = _expected(manifest, index, scope, form, path, data["interpreters"])
            data["drift"] = manifest.drift(current, wanted)
        if data["drift"]:
            n = len(data["drift"])
            found.problem(host, path, f"the installed entries differ from the configuration "
                          f"({n} difference{'s' if n != 1 else ''}: {data['drift'][0]}"
                          f"{'; ...' if n > 1 else ''})", fix)  # fmt: skip
        if manifest.scopes[scope] and form == "absolute":
            found.note(host, path, "committed with the project, and its commands name this "
                       "machine's interpreter: elsewhere they answer their fallback",
                       "install with --scope local (this machine only), or --command path "
                       "or module (any machine with hookbus)")  # fmt: skip
    return installs


def _install_command(host: str, scope: str, form: str) -> str:
    flags = f" --scope {scope}" if scope != "project" else ""
    flags += f" --command {form}" if form != "absolute" else ""
    return f"run: hookbus install --host {host}{flags}"


def _interpreter_fix(host: str, scope: str, form: str) -> str:
    absolute = _install_command(host, scope, "absolute")
    if form == "absolute":
        return (f"{absolute} (it writes {sys.executable}), or install with --python naming "
                "one with hookbus")  # fmt: skip
    what = "the hookbus command" if form == "path" else "hookbus for python3"
    return (f"install {what} on the PATH the host runs hooks with, or this interpreter "
            f"by path: {absolute.removeprefix('run: ')}")  # fmt: skip


def _interpreter(program: str, main: str | None) -> InterpreterData:
    """Whether the command's program runs hookbus: the absolute form's interpreter and
    ``__main__.py`` must exist and the interpreter import hookbus (:data:`PROBE`);
    ``hookbus`` and ``python3`` are looked for on this PATH."""
    import shutil
    import subprocess

    data: InterpreterData = {"program": program, "main": main, "found": None, "ok": False,
                             "hookbus": None, "problem": None}  # fmt: skip
    if main is not None:
        if not (os.path.isfile(program) and os.access(program, os.X_OK)):
            data["problem"] = f"the interpreter {program} in the command is missing"
            return data
        if not os.path.isfile(main):
            data["problem"] = f"{main}, which the command runs, is missing"
            return data
        data["found"] = program
        argv = [program, "-P", "-c", PROBE, main]
    else:
        data["found"] = shutil.which(program)
        if data["found"] is None:
            data["problem"] = f"{program} is not on this PATH"
            return data
        if program == "hookbus":  # a console script: being found is all the command asks
            data["ok"] = True
            return data
        argv = [data["found"], "-P", "-c", "import hookbus; print(hookbus.__version__)"]
    try:
        probe = subprocess.run(argv, capture_output=True, timeout=30, check=False, text=True,
                               errors="replace", stdin=subprocess.DEVNULL)  # fmt: skip
    except (OSError, subprocess.SubprocessError) as exc:
        data["problem"] = f"{program} in the command cannot be run ({exc})"
        return data
    if probe.returncode != 0:
        last = (probe.stderr.strip().splitlines() or ["no message"])[-1]
        data["problem"] = f"{program} in the command cannot import hookbus ({last})"
        return data
    data.update({"ok": True, "hookbus": probe.stdout.strip() or None})
    return data


def _fallbacks(host: str, commands: dict[str, list[str]], program: str) -> str:
    """What the commands naming ``program`` answer without it: the host's no-opinion, or
    a refusal where a fail-closed handler wants the event (see ``hook_command``)."""
    from hookbus.hosts import facts
    from hookbus.manifests.base import interpreter_of, shell_command

    answers: dict[str, list[str]] = {}
    for native, cmds in commands.items():
        for command in cmds:
            if (interpreter_of(command) or ("",))[0] != program:
                continue
            no_opinion = shell_command(["-"], facts(host).no_opinion_for(native))
            own = command.partition("; fi;")[2] == no_opinion.partition("; fi;")[2]
            answers.setdefault("no opinion" if own else "a refusal (deny)", []).append(native)
    return "; ".join(f"{what} for {', '.join(dict.fromkeys(events))}"
                     for what, events in answers.items())  # fmt: skip


def _expected(  # noqa: PLR0917
    manifest: Manifest,
    index: IndexData | None,
    scope: Scope,
    form: CommandForm,
    path: str,
    interpreters: list[InterpreterData],
) -> dict[str, Any]:
    """The entries install would write into ``path`` (see the module docstring)."""
    import shlex

    from hookbus.manifests.base import hook_argv, hookbus_file

    python, renames = sys.executable, []
    absolute = [i for i in interpreters if i["main"] is not None]
    if form == "absolute" and absolute:
        named = next((i for i in absolute if i["ok"]), absolute[0])
        if named["ok"] and hookbus_file(named["program"]):
            python = named["program"]
        else:  # planned for this interpreter, then named as the command names it
            here = hook_argv(sys.executable, manifest.facts.name, "-", None)[2]
            pairs = ((sys.executable, named["program"]), (here, named["main"] or ""))
            renames = [(f" {shlex.quote(a)} ", f" {shlex.quote(b)} ") for a, b in pairs]
    plan = manifest.plan(index, python=python, scope=scope, form=form)
    (document,) = [d for d in plan.documents if d.path == path]

    def renamed(text: str) -> str:
        for old, new in renames:
            text = text.replace(old, new)
        return text

    return _strings(document.entries, renamed)  # type: ignore[return-value]


def _strings(value: object, change: Callable[[str], str]) -> object:
    """``value`` (plain JSON data) with ``change`` applied to every string in it."""
    if isinstance(value, str):
        return change(value)
    if isinstance(value, dict):
        return {k: _strings(v, change) for k, v in value.items()}
    if isinstance(value, list):
        return [_strings(v, change) for v in value]
    return value


# -- output ----------------------------------------------------------------------------


def write(report: Report, stream: TextIO) -> None:
    """``report`` for people on ``stream`` (coloured only on a terminal)."""
    from hookbus.cli.render import Style

    stream.write("".join(line + "\n" for line in render(report, Style(stream))))


def render(report: Report, style: Style) -> list[str]:
    """The report as lines: a compact table per section, then the problems and notes.
    Every text is made :func:`~hookbus.cli.render.printable` first: paths, handler
    errors and logged messages can hold escape sequences that would rewrite the screen."""
    from hookbus.cli.render import printable, section

    report = _strings(report, printable)  # type: ignore[assignment]
    ok = style("ok", "green")

    def bad(word: str, why: str | None = None) -> str:
        return style(word, "red", "bold") + (f" {why}" if why else "")

    lines: list[str] = []
    for host in report["hosts"]:
        rows = [[style(h, "dim") for h in ("scope", "file", "form", "entries", "interpreter")]]
        for item in host["installs"]:
            if not item["installed"]:
                what = "unreadable" if item["error"] else "not installed"
                rows.append([item["scope"], item["file"], "-", style(what, "dim"), ""])
                continue
            rows.append([item["scope"], item["file"], item["form"] or "-",
                         f"{item['entries']} ({', '.join(item['events'])})",
                         ", ".join(f"{_status(i, ok, bad)} {i['found'] or i['program']}"
                                   + (f" (hookbus {i['hookbus']})" if i["hookbus"] else "")
                                   for i in item["interpreters"])])  # fmt: skip
        lines += section(style(host["host"], "bold"), rows)
        drift = [
            [style("drift", "red"), i["scope"], d] for i in host["installs"] for d in i["drift"]
        ]
        lines += section(None, drift) if drift else []
    configuration = report["configuration"]
    rows = [[style("in effect", "green"), path] for path in configuration["in_effect"]]
    rows += [[style("ignored", "yellow"), f"{i['path']}: {i['why']}"]
             for i in configuration["ignored"]]  # fmt: skip
    lines += section(style("configuration", "bold"), rows or [[style("no file", "dim")]])
    rows = [[style(h, "dim") for h in ("handler", "kinds", "fail-closed", "loads")]]
    for handler in report["handlers"]:
        kinds = ", ".join(handler["kinds"]) if handler["kinds"] is not None else "unknown"
        rows.append([handler["name"], kinds, "yes" if handler["fail_closed"] else "no",
                     ok if handler["loads"] else bad("no:", handler["unavailable"])])  # fmt: skip
    lines += section(style("handlers", "bold"), rows if len(rows) > 1 else [[style("none", "dim")]])
    state = report["state"]
    status = (ok if state["ok"] else bad("refused:", state["problem"])) if state["exists"] else (
        style("not created yet", "dim"))  # fmt: skip
    lines += section(style("state root", "bold"), [[state["path"], state["mode"] or "", status]])
    diagnostics = report["diagnostics"]
    rows = [[d["time"] or "?", style(d["code"] or "?", "yellow"), d["message"]]
            for d in diagnostics["last"]]  # fmt: skip
    rows += [[style(diagnostics["problem"], "red")]] if diagnostics["problem"] else []
    title = f"last diagnostics ({diagnostics['file']}; 'hookbus log' for more)"
    lines += section(style(title, "bold"), rows or [[style("none", "dim")]])
    for kind, findings, colour in (("problem", report["problems"], "red"),
                                   ("note", report["notes"], "yellow")):  # fmt: skip
        for f in findings:
            lines.append(f"{style(kind, colour, 'bold')}: {f['subject']}: {f['message']}")
            lines += [f"  fix: {f['fix']}"] if f["fix"] else []
    count = len(report["problems"])
    lines.append(style("ok: nothing would make a hook misbehave", "green") if not count else
                 style(f"{count} problem{'s' if count != 1 else ''}", "red", "bold"))  # fmt: skip
    return lines


def _status(interpreter: InterpreterData, ok: str, bad: Callable[[str], str]) -> str:
    if interpreter["ok"]:
        return ok
    return bad("missing" if interpreter["found"] is None else "broken")
