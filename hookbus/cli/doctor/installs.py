"""The checks of ``hookbus doctor`` for each host: where hookbus is installed, whether
the installed commands' interpreters run it, and drift from the configuration."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

from hookbus.cli.doctor.local import compiled
from hookbus.cli.doctor.report import strings
from hookbus.local.interpreter import python_argv

if TYPE_CHECKING:
    from hookbus.bus.subscriptions import IndexData
    from hookbus.cli.doctor.report import Findings, HostData, InstallData, InterpreterData
    from hookbus.hosts.shared.manifest import CommandForm, Manifest, Scope
    from hookbus.hosts.shared.variants import Variant

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


def host_installs(
    host: str, indexes: dict[tuple[str, ...], IndexData | None], found: Findings
) -> HostData:
    """Every file of every way hookbus installs into ``host`` (its settings, Claude's
    plugin: :mod:`hookbus.hosts.shared.variants`) in each scope, checked (a note when none
    has hookbus)."""
    from hookbus.hosts.shared.variants import variants
    from hookbus.install.plan import config_files

    installs: list[InstallData] = []
    for variant in variants(host):
        for scope in variant.manifest.scopes:
            files = config_files(scope, variant.manifest)
            index = compiled(files, indexes, found)
            ready = not files or index is not None
            installs += _installs(variant, scope, index if ready else None, found,
                                  check_drift=ready)  # fmt: skip
    _twice(host, installs, found)
    _unregistered(host, installs, indexes, found)
    return {"host": host, "installs": installs}


def _twice(host: str, installs: list[InstallData], found: Findings) -> None:
    """A problem for each plugin installed beside the host's settings entries: the host
    runs both, so every handler runs twice."""
    from hookbus.hosts.shared.variants import Found, variants

    settings = [i["file"] for i in installs if i["installed"] and i["variant"] == "default"]
    for item in installs:
        if not settings or not item["installed"] or item["variant"] == "default":
            continue
        (variant,) = [v for v in variants(host) if v.name == item["variant"]]
        uninstall = Found(variant, item["scope"], [item["file"]]).command("uninstall")
        found.problem(host, item["file"], f"hookbus's {variant.name} is installed, and so "
                      f"are its entries in {', '.join(settings)}: {host} runs both, so every "
                      "handler runs twice for every event", f"run: {uninstall} (keeps the "
                      "settings entries)")  # fmt: skip


def _unregistered(
    host: str,
    installs: list[InstallData],
    indexes: dict[tuple[str, ...], IndexData | None],
    found: Findings,
) -> None:
    """The events the configuration in effect here wants that no scope registers: their
    handlers never run (a note when hookbus is installed nowhere for the host, a problem
    when it is installed, but not for them: a guard of the user's enabled after a
    project-only install, say)."""
    from hookbus import hosts
    from hookbus.install.plan import config_files
    from hookbus.local.discover import config_paths

    index = indexes.get(tuple(config_paths()))
    routes = index["routes"].get(host, {}) if index else {}
    registered = {event for i in installs for event in i["events"]}
    # What an installed scope's own configuration wants but it lacks is its drift,
    # reported as such: only what no installed scope would register is left.
    manifest = hosts.manifest(host)
    for item in installs:
        files = config_files(item["scope"], manifest)
        scoped = indexes.get(tuple(files)) if item["installed"] else None
        registered |= set(scoped["routes"].get(host, {})) if scoped else set()
    missing = [native for native in routes if native not in registered]
    if not missing or index is None:
        return
    if not any(i["installed"] for i in installs):
        why = f"not installed: enabled handlers want {', '.join(missing)}, and no hook runs"
        found.note(host, host, why, f"run: hookbus install --host {host}")
        return
    names = sorted({index["handlers"][i]["name"] for n in missing for i in routes[n]["handlers"]})
    found.problem(host, host, f"{', '.join(missing)} registered in no scope: "
                  f"{', '.join(names)} never run there", f"run: hookbus install --host {host} "
                  "--scope user (for handlers of your user configuration), or --scope "
                  "project (for the project's)")  # fmt: skip


def _installs(
    variant: Variant,
    scope: Scope,
    index: IndexData | None,
    found: Findings,
    *,
    check_drift: bool,
) -> list[InstallData]:
    """What ``variant`` installed in each file of ``scope``, checked."""
    from hookbus.bus.errors import HostConfigError
    from hookbus.hosts.shared import documents
    from hookbus.hosts.shared.manifest import interpreter_of
    from hookbus.install.plan import installed_form

    manifest = variant.manifest
    host = manifest.facts.name
    installs: list[InstallData] = _owned_installs(variant, scope, index, found,
                                                  check_drift=check_drift)  # fmt: skip
    for document in manifest.plan(index, python=sys.executable, scope=scope).documents:
        path = document.path
        data: InstallData = {"scope": scope, "variant": variant.name, "file": path,
                             "installed": False, "form": None, "events": [], "entries": 0,
                             "interpreters": [], "drift": [], "error": None}  # fmt: skip
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
        fix = _install_command(variant, scope, form)
        for program, main in {run: None for cmds in commands.values() for c in cmds
                              if (run := interpreter_of(c)) is not None}:  # fmt: skip
            checked = _interpreter(program, main)
            data["interpreters"].append(checked)
            if not checked["ok"]:
                found.problem(host, path, f"{checked['problem']}: the hook then answers only "
                              f"the command's fallback: {_fallbacks(host, commands, program)}",
                              _interpreter_fix(variant, scope, form))  # fmt: skip
            _code_in_project(host, path, program, main, found)
        if check_drift:
            wanted = _expected(manifest, index, scope, form, path, data["interpreters"])
            data["drift"] = manifest.drift(current, wanted)
        if data["drift"]:
            _drifted(host, path, "entries", data["drift"], index=index, fix=fix, found=found)
        if manifest.scopes[scope] and form in ("absolute", "server"):
            local = (
                "install with --scope local (this machine only), or "
                if "local" in manifest.scopes
                else "install with "
            )  # Codex has no local scope
            from hookbus.install import git

            found.note(host, path, f"{git.shared_file(git.tracks(path))}, and its commands name "
                       "this machine's interpreter: elsewhere they answer their fallback",
                       f"{local}--command path or module (any machine with hookbus)")  # fmt: skip
    return installs


def _code_in_project(host: str, path: str, program: str, main: str | None,
                     found: Findings) -> None:  # fmt: skip
    """A problem when the interpreter or hookbus an installed command runs lie in the
    project doctor runs in (an agent there could edit the hook's own code)."""
    if main is None:
        return  # 'hookbus' or 'python3' on PATH: no path in the command to judge
    from hookbus.local import project_trust
    from hookbus.local.discover import working_folder

    project = project_trust.project_folder(working_folder())
    places = project_trust.hook_code_in_project(program, os.path.dirname(main), project)
    if places:
        found.problem(host, path, project_trust.hook_code_warning(places, project),
                      project_trust.HOOK_CODE_FIX)  # fmt: skip


def _owned_installs(
    variant: Variant,
    scope: Scope,
    index: IndexData | None,
    found: Findings,
    *,
    check_drift: bool,
) -> list[InstallData]:
    """The files hookbus owns in ``scope`` (Cline's hook scripts, a plugin, a shim), as
    one install, with drift."""
    import os

    from hookbus.hosts.shared import owned
    from hookbus.hosts.shared.manifest import owned_text
    from hookbus.install.plan import owned_form

    manifest = variant.manifest
    host = manifest.facts.name
    candidates = manifest.owned_paths(scope)
    if not candidates:
        return []
    folder = os.path.commonpath([os.path.dirname(p) for p in candidates])
    present = [p for p in candidates if owned_text(p) is not None]
    # Compared with the form they were written in: a reinstall keeps it.
    form = owned_form(manifest, scope)
    data: InstallData = {"scope": scope, "variant": variant.name, "file": folder,
                         "installed": bool(present), "form": form,
                         "events": [os.path.basename(p) for p in present],
                         "entries": len(present), "interpreters": [], "drift": [],
                         "error": None}  # fmt: skip
    if present and check_drift:
        plan = manifest.plan(index, python=sys.executable, scope=scope,
                             form=form or "absolute")  # fmt: skip
        data["drift"] = owned.drift(plan.owned, candidates)
    if data["drift"]:
        fix = _install_command(variant, scope, form or "absolute")
        _drifted(host, folder, "hook files", data["drift"], index=index, fix=fix, found=found)
    return [data]


def _drifted(host: str, where: str, what: str, drift: list[str], *, index: IndexData | None,
             fix: str, found: Findings) -> None:  # fmt: skip
    """The problem of installed ``what`` that differ from the configuration, the missing
    events said in one line (as ``verify`` says them); while the configuration itself has
    a problem, its fix comes first: install would refuse, and the difference may be that
    problem's (a handler that did not load may want every event)."""
    from hookbus.install.plan import invalid as planned_invalid
    from hookbus.install.verify import drift_fix, grouped

    lines = grouped(drift)
    invalid = planned_invalid(index)
    n = len(drift)
    found.problem(host, where, f"the installed {what} differ from the configuration "
                  f"({n} difference{'s' if n != 1 else ''}: {lines[0]}"
                  f"{'; ...' if len(lines) > 1 else ''})",
                  drift_fix(invalid, fix.removeprefix("run: ")))  # fmt: skip


def _install_command(variant: Variant, scope: Scope, form: CommandForm) -> str:
    from hookbus.install.plan import install_command

    manifest = variant.manifest
    return f"run: {install_command(manifest.facts.name, scope, form, manifest, variant.flag)}"


def _interpreter_fix(variant: Variant, scope: Scope, form: CommandForm) -> str:
    absolute = _install_command(variant, scope, "absolute" if form != "server" else form)
    if form in ("absolute", "server"):
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
        argv = python_argv(program, "-c", PROBE, main)
    else:
        data["found"] = shutil.which(program)
        if data["found"] is None:
            data["problem"] = f"{program} is not on this PATH"
            return data
        if program == "hookbus":  # a console script: being found is all the command asks
            data["ok"] = True
            return data
        argv = python_argv(data["found"], "-c", "import hookbus; print(hookbus.__version__)")
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
    from hookbus.hosts.shared.manifest import interpreter_of, shell_command

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

    from hookbus.hosts.shared.manifest import client_file, client_folder, hookbus_file

    python, renames = sys.executable, []
    absolute = [i for i in interpreters if i["main"] is not None]
    if form in ("absolute", "server") and absolute:
        named = next((i for i in absolute if i["ok"]), absolute[0])
        if named["ok"] and hookbus_file(named["program"]):
            python = named["program"]
        else:  # planned for this interpreter, then named as the command names it
            here = os.path.join(os.path.dirname(hookbus_file(sys.executable)), "__main__.py")
            pairs = [(sys.executable, named["program"]), (here, named["main"] or "")]
            if form == "server":  # the client's command names its folder in the package
                ours, theirs = os.path.dirname(here), os.path.dirname(named["main"] or "")
                pairs += [(client_file(ours), client_file(theirs)),
                          (client_folder(ours), client_folder(theirs))]  # fmt: skip
            renames = [(f" {shlex.quote(a)} ", f" {shlex.quote(b)} ") for a, b in pairs]
    plan = manifest.plan(index, python=python, scope=scope, form=form)
    (document,) = [d for d in plan.documents if d.path == path]

    def renamed(text: str) -> str:
        for old, new in renames:
            text = text.replace(old, new)
        return text

    return strings(document.entries, renamed)  # type: ignore[return-value]
