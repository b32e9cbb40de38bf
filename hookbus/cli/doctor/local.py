"""The checks of ``hookbus doctor`` that concern this machine, not a host: the state
root, the last diagnostics, the configuration files and the handlers they enable."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hookbus.bus.subscriptions import IndexData
    from hookbus.cli.doctor.report import (
        ConfigurationData,
        DiagnosticsData,
        Findings,
        HandlerFact,
        IgnoredData,
        ServerData,
        StateData,
    )

#: How many of the log's last lines doctor shows (``hookbus log`` shows the rest).
LAST_DIAGNOSTICS = 5


def state_root(found: Findings) -> StateData:
    """The state root as :func:`hookbus.local.state.root` checks it (never creating it)."""
    from hookbus.local import state

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


def last_diagnostics() -> DiagnosticsData:
    """The log's last lines, oldest first; a line that is not JSON is shown as it is."""
    import json

    from hookbus.local import diagnostics, state

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


def log_once(data: bytes) -> None:
    """Log doctor's own diagnostics once each, when the log can take them (see the
    module docstring); lines differing only in their time are one."""
    import json

    from hookbus.local import diagnostics

    unique: dict[str, bytes] = {}
    for line in data.splitlines(keepends=True):
        record = json.loads(line)
        record.pop("timestamp", None)
        unique.setdefault(json.dumps(record, sort_keys=True), line)
    if unique and diagnostics.usable() is None:
        diagnostics.write(b"".join(unique.values()))


def configuration(found: Findings) -> ConfigurationData:
    """The files in effect here, and every file discovery passed over, with why."""
    from hookbus.local import discover
    from hookbus.local.trust import file_problem

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
        if not os.path.lexists(path):
            continue
        untrusted = file_problem(path)
        if path in in_effect and untrusted is None:
            continue
        if untrusted is not None:
            why = f"{untrusted}: its handlers would run as you, so it is not read"
            if path in in_effect:  # the user's own: kept in effect (hookbus.local.discover)
                why += "; the handlers of its last good version are kept"
            found.problem("configuration", path, f"ignored: {why}",
                          f"chown/chmod {path} (or its folder), or remove it")  # fmt: skip
        else:
            why = f"HOOKBUS_CONFIG names {explicit} instead" if explicit else (
                "a nearer .hookbus.toml is in effect")  # fmt: skip
            found.note("configuration", path, f"not read: {why}")
        ignored.append({"path": path, "why": why})
    return {"in_effect": in_effect, "ignored": ignored}


def _project_files() -> list[str]:
    """Every ``.hookbus.toml`` where discovery looks, nearest first (it takes the first it
    trusts)."""
    from hookbus.local.discover import project_candidates, working_folder

    return [path for path in project_candidates(working_folder()) if os.path.lexists(path)]


def compiled(
    files: list[str], cache: dict[tuple[str, ...], IndexData | None], found: Findings
) -> IndexData | None:
    """The compiled index of ``files`` (once per set of files), its configuration
    problems reported (a handler that does not load is :func:`handlers`'s)."""
    from hookbus.bus.errors import HostConfigError
    from hookbus.install.plan import compiled_index

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
        if problem["code"] == "config-untrusted":  # the project's code does not run
            from hookbus.local.project_trust import fix_for

            found.problem("configuration", subject, message,
                          f"review its code, then: {fix_for(subject)}")  # fmt: skip
        elif problem["invalid"]:
            found.problem("configuration", subject, message, f"edit {subject}")
        else:
            found.note("configuration", subject, message)
    return index


def handlers(index: IndexData | None, found: Findings) -> list[HandlerFact]:
    from hookbus.bus.subscriptions import fail_closed
    from hookbus.runtime.index import Unloaded

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
        told = Unloaded(handler)
        found.problem("handlers", name, told.what, told.fix)
    return facts


def server() -> ServerData:
    """This user's warm server (``hookbus serve``), as its ``status`` answers."""
    import time

    from hookbus.runtime.warm.server import server_status

    found = server_status()
    if found is None:
        return {"running": False, "pid": None, "version": None, "uptime": None,
                "served": None, "rss_kb": None, "warm": None, "workers": None,
                "socket": None}  # fmt: skip
    return {"running": True, "pid": found.pid, "version": found.version,
            "uptime": round(time.time() - found.started, 1), "served": found.served,
            "rss_kb": found.rss_kb, "warm": found.warm, "workers": found.workers.count,
            "socket": found.socket}  # fmt: skip
