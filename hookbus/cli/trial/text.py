"""``hookbus try``'s report for people: the payload, the event, the handlers, the merged
reply and what the host receives, in sections (coloured only on a terminal)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hookbus.cli.trial import Report


#: Who answered, as ``answered_by`` says it, for a person.
ANSWERERS = {
    "dispatch": "the handlers' dispatch",
    "worker": "the worker, without a dispatch",
    "cold-path": "the cold path, at once",
    "watchdog": "the watchdog",
    "nobody": "nobody",
}


#: Which path answered, as ``path`` says it, for a person.
PATHS = {
    "warm-server": "in the warm server",
    "client-cold": "on the cold path the client ran (no server answered; it starts one)",
    "client": "in the client, from the subscription index",
    "cold": "on the cold path (hookbus run)",
}


def human(report: Report) -> list[str]:
    """The report as sections for a person (colour on a terminal only). Every text that
    comes from the payload, a handler or the log is shown :func:`printable`: an escape
    sequence in a tool's input must not rewrite the screen."""
    from hookbus.cli.render import Style, printable

    paint = Style(sys.stdout)
    lines: list[str] = []

    def section(title: str, note: str = "") -> None:
        if lines:
            lines.append("")
        lines.append(paint(title, "bold") + (f"  {paint(note, 'dim')}" if note else ""))

    payload = report.data("payload")
    section("payload", f"{report.host} {report.native}, {len(payload)} bytes")
    lines.extend(f"  {printable(line)}" for line in _pretty(payload))
    section("event", f"decoded by {report.decoded_by}")
    if report.event is None:
        lines.append("  (none: the payload cannot be decoded)")
    else:
        lines.extend(f"  {printable(k)}: {printable(v)}" for k, v in _flat(report.event))
    section("handlers", _handlers_note(report))
    lines.extend(f"  {line}" for line in _handlers(report, paint))
    section("merged reply")
    lines.extend(f"  {printable(line)}" for line in _reply_lines(report))
    if report.diagnostics:
        section("diagnostics", "what the hook logs")
        for d in report.diagnostics:
            said = f"{d.get('level', '?')} {d.get('event', '?')}: {d.get('message', '')}"
            lines.append(f"  {printable(said)}")
    who = ANSWERERS.get(report.answered_by, report.answered_by)
    path = PATHS.get(report.path, report.path)
    section("host receives", f"answered by {who} {path}, in {report.seconds * 1000:.0f} ms")
    lines.append(f"  why: {printable(report.why)}")
    lines.extend(f"  {line}" for line in _received(report, paint))
    return lines


def _pretty(payload: bytes) -> list[str]:
    import json

    try:
        return json.dumps(json.loads(payload), indent=2, ensure_ascii=False).splitlines()
    except (ValueError, RecursionError):
        from hookbus.cli.render import exact

        return exact(payload) or ["(empty)"]


def _flat(value: object, prefix: str = "") -> list[tuple[str, str]]:
    """``value`` as ``key.sub: value`` pairs, leaving out what is empty."""
    import json

    if isinstance(value, dict) and value:
        return [p for k, v in value.items() for p in _flat(v, f"{prefix}.{k}" if prefix else k)]
    if value is None or value in ("", [], {}):
        return []
    if isinstance(value, str) and "\n" not in value:
        return [(prefix, value)]
    return [(prefix, json.dumps(value, ensure_ascii=False))]


def _handlers_note(report: Report) -> str:
    wanted, loaded, stand_ins = report.wanted, report.loaded, report.stand_ins
    if not wanted and not report.outcomes:
        return "none ran"
    parts = [f"{len(wanted)} wanted it", f"{len(loaded)} loaded"]
    if stand_ins:
        parts.append(f"{len(stand_ins)} could not load and stood in for (fail-closed: deny)")
    missing = [n for n in wanted if n not in loaded and n not in stand_ins]
    if missing:
        parts.append(f"not loaded, left out (fail-open): {', '.join(missing)}")
    return "; ".join(parts)


def _handlers(report: Report, paint: Any) -> list[str]:
    from hookbus.cli.render import printable, table

    outcomes = report.outcomes
    if not outcomes:
        return ["(no handler ran)"]
    colours = {"ok": "green", "error": "red", "timeout": "yellow"}
    rows = [[paint("handler", "dim"), paint("status", "dim"), paint("time", "dim"),
             paint("reply", "dim")]]  # fmt: skip
    for outcome in outcomes:
        status = outcome["status"]
        if outcome["handler"] in report.stand_ins:
            status += " (stand-in)"
        summary = _summary(outcome.get("reply"))
        if outcome["status"] != "ok":
            error = (outcome.get("error") or "").strip().splitlines()
            why = error[-1] if error else "no answer in time"
            closed = "fail-closed: denied" if outcome.get("fail_closed") else "fail-open: no reply"
            summary = f"{why} ({closed})"
        rows.append([printable(outcome["handler"]),
                     paint(status, colours.get(outcome["status"], "")),
                     f"{outcome['seconds'] * 1000:.1f} ms", printable(summary)])  # fmt: skip
    return table(rows)


def _summary(reply: dict[str, Any] | None, limit: int = 80) -> str:
    """A reply in a few words: ``deny: reason; context: text``."""
    if not reply:
        return "no opinion"

    def cut(text: str) -> str:
        text = " ".join(text.split())
        return text if len(text) <= limit else text[: limit - 1] + "…"

    parts = []
    if reply.get("decision"):
        reason = reply.get("reason")
        parts.append(f"{reply['decision']}: {cut(reason)}" if reason else reply["decision"])
    labels = {"updated_input": "rewrite", "context": "context", "message": "message",
              "keep_working": "keep working", "halt": "halt"}  # fmt: skip
    for field, label in labels.items():
        value = reply.get(field)
        if value is None or value == "":
            continue
        if not isinstance(value, str):
            import json

            value = json.dumps(value, ensure_ascii=False)
        parts.append(f"{label}: {cut(value)}")
    return "; ".join(parts) or "no opinion"


def _reply_lines(report: Report) -> list[str]:
    reply = report.reply
    if reply is None:
        return ["(no dispatch: nothing to merge)"]
    lines = [f"{k}: {v}" for k, v in _flat(reply)] or ["no opinion"]
    for part in report.dropped:
        lines.append(f"dropped: {part['field']} from {part['handler']}: {part['why']}")
    return lines


def _received(report: Report, paint: Any) -> list[str]:
    import shlex

    from hookbus.cli.render import exact

    lines = [f"command: {shlex.join(report.command)}", f"index: {report.index}"]
    if report.registered is False:
        lines.append(paint(f"not registered: the {report.host} settings that install writes "
                           f"start no hook for {report.native} (no enabled handler wants "
                           "it)", "yellow"))  # fmt: skip
    code = report.exit_code
    lines.append(f"exit code: {'none (still running)' if code is None else code}")
    for name in ("stdout", "stderr"):
        data = report.data(name)
        if not data:
            lines.append(f"{name}: empty")
            continue
        lines.append(f"{name}: {len(data)} bytes")
        lines.extend(f"  {line}" for line in exact(data))
    return lines
