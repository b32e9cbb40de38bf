"""``hookbus doctor``'s report for people, most urgent first: the problems, each with its
fix; then what is installed, a compact table per section; the notes; one line naming
the hosts hookbus is not installed for (their files only with ``--all``: a user of one
host must not read twenty tables of another's); the verdict. Coloured only on a
terminal."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import TextIO

    from hookbus.cli.doctor.report import Finding, HostData, InterpreterData, Report
    from hookbus.cli.render import Style


def write(report: Report, stream: TextIO, *, every_host: bool = False) -> None:
    """``report`` for people on ``stream`` (coloured only on a terminal); ``every_host``:
    the files of the hosts hookbus is not installed for too."""
    from hookbus.cli.render import Style

    stream.write("".join(line + "\n" for line in render(report, Style(stream), every_host)))


def render(report: Report, style: Style, every_host: bool = False) -> list[str]:
    """The report as lines (see the module docstring). Every text is made
    :func:`~hookbus.cli.render.printable` first: paths, handler errors and logged
    messages can hold escape sequences that would rewrite the screen."""
    from hookbus.cli.doctor.report import strings
    from hookbus.cli.render import printable, section

    report = strings(report, printable)  # type: ignore[assignment]
    ok = style("ok", "green")

    def bad(word: str, why: str | None = None) -> str:
        return style(word, "red", "bold") + (f" {why}" if why else "")

    absent = [] if every_host else [h["host"] for h in report["hosts"] if not _present(h)]
    lines = _findings(report["problems"], style("problem", "red", "bold"))
    lines += [""] if lines else []
    for host in report["hosts"]:
        if host["host"] not in absent:
            lines += _host(host, style, ok, bad, every_host=every_host)
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
    server = report["server"]
    if server["running"]:
        facts = (f"pid {server['pid']}, hookbus {server['version']}, up {server['uptime']:.0f} s, "
                 f"{server['served']} requests, {(server['rss_kb'] or 0) // 1024} MiB, "
                 f"{server['warm']} warm modules, {server['workers']} workers")  # fmt: skip
        row = [server["socket"] or "", facts]
    else:
        row = [style("not running ('hookbus serve --detach' starts it)", "dim")]
    lines += section(style("warm server", "bold"), [row])
    diagnostics = report["diagnostics"]
    rows = [[d["time"] or "?", style(d["code"] or "?", "yellow"), d["message"]]
            for d in diagnostics["last"]]  # fmt: skip
    rows += [[style(diagnostics["problem"], "red")]] if diagnostics["problem"] else []
    title = f"last diagnostics ({diagnostics['file']}; 'hookbus log' for more)"
    lines += section(style(title, "bold"), rows or [[style("none", "dim")]])
    # A note about a host not installed says only that: the line below says it once.
    notes = [n for n in report["notes"] if n["area"] not in absent]
    lines += _findings(notes, style("note", "yellow", "bold"))
    if absent:
        lines.append(f"{style('not installed', 'dim')} for {', '.join(absent)} ('hookbus "
                     "doctor --all' shows their files; 'hookbus install --host NAME' installs "
                     "one)")  # fmt: skip
    count = len(report["problems"])
    verdict = f"{count} problem{'s' if count != 1 else ''} (above)"
    lines.append(style("ok: nothing would make a hook misbehave", "green") if not count else
                 style(verdict, "red", "bold"))  # fmt: skip
    return lines


def _host(
    host: HostData, style: Style, ok: str, bad: Callable[[str], str], *, every_host: bool
) -> list[str]:
    """``host``'s table: its files holding hookbus's install (every file it may have with
    ``every_host``, and always one that cannot be read), then their drift."""
    from hookbus.cli.render import section

    rows = [[style(h, "dim") for h in ("scope", "file", "form", "entries", "interpreter")]]
    for item in host["installs"]:
        file = item["file"] + (f" ({item['variant']})" if item["variant"] != "default" else "")
        if not item["installed"]:
            if item["error"] or every_host:
                what = "unreadable" if item["error"] else "not installed"
                rows.append([item["scope"], file, "-", style(what, "dim"), ""])
            continue
        rows.append([item["scope"], file, item["form"] or "-",
                     f"{item['entries']} ({', '.join(item['events'])})",
                     ", ".join(f"{_status(i, ok, bad)} {i['found'] or i['program']}"
                               + (f" (hookbus {i['hookbus']})" if i["hookbus"] else "")
                               for i in item["interpreters"])])  # fmt: skip
    lines = section(style(host["host"], "bold"), rows)
    from hookbus.install.verify import grouped

    drift = [[style("drift", "red"), i["scope"], d] for i in host["installs"]
             for d in grouped(i["drift"])]  # fmt: skip
    return lines + (section(None, drift) if drift else [])


def _present(host: HostData) -> bool:
    """Whether ``host`` has something to show: a file with hookbus's install, or one
    that cannot be read."""
    return any(i["installed"] or i["error"] for i in host["installs"])


def _findings(findings: list[Finding], label: str) -> list[str]:
    """Each finding as ``label: where: what``, then its fix on a line of its own."""
    lines: list[str] = []
    for f in findings:
        lines.append(f"{label}: {f['subject']}: {f['message']}")
        lines += [f"  fix: {f['fix']}"] if f["fix"] else []
    return lines


def _status(interpreter: InterpreterData, ok: str, bad: Callable[[str], str]) -> str:
    if interpreter["ok"]:
        return ok
    return bad("missing" if interpreter["found"] is None else "broken")
