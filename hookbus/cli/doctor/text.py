"""``hookbus doctor``'s report for people: a compact table per section, then the
problems and notes (coloured only on a terminal)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import TextIO

    from hookbus.cli.doctor.report import InterpreterData, Report
    from hookbus.cli.render import Style


def write(report: Report, stream: TextIO) -> None:
    """``report`` for people on ``stream`` (coloured only on a terminal)."""
    from hookbus.cli.render import Style

    stream.write("".join(line + "\n" for line in render(report, Style(stream))))


def render(report: Report, style: Style) -> list[str]:
    """The report as lines: a compact table per section, then the problems and notes.
    Every text is made :func:`~hookbus.cli.render.printable` first: paths, handler
    errors and logged messages can hold escape sequences that would rewrite the screen."""
    from hookbus.cli.doctor.report import strings
    from hookbus.cli.render import printable, section

    report = strings(report, printable)  # type: ignore[assignment]
    ok = style("ok", "green")

    def bad(word: str, why: str | None = None) -> str:
        return style(word, "red", "bold") + (f" {why}" if why else "")

    lines: list[str] = []
    for host in report["hosts"]:
        rows = [[style(h, "dim") for h in ("scope", "file", "form", "entries", "interpreter")]]
        for item in host["installs"]:
            file = item["file"] + (f" ({item['variant']})" if item["variant"] != "default" else "")
            if not item["installed"]:
                what = "unreadable" if item["error"] else "not installed"
                rows.append([item["scope"], file, "-", style(what, "dim"), ""])
                continue
            rows.append([item["scope"], file, item["form"] or "-",
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
