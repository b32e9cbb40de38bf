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
    "cold-path": "the hook at once (no handler to run)",
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
    asked = f"; {report.event_note}" if report.event_note else ""
    section("payload", f"{report.host} {report.native}, {len(payload)} bytes{asked}")
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
    if report.searched:
        lines.append("  looked for, in order:")
        lines.extend(f"  {printable(line)}" for line in report.searched)
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
        parts.append(f"{len(stand_ins)} did not load, each stood in for (fail-closed: deny)")
    missing = _left_out(report)
    if missing:
        parts.append(f"{len(missing)} did not load, left out (fail-open)")
    return "; ".join(parts)


def _left_out(report: Report) -> list[str]:
    """The wanted handlers that did not load and have no stand-in (fail-open ones)."""
    return [n for n in report.wanted if n not in report.loaded and n not in report.stand_ins]


def _handlers(report: Report, paint: Any) -> list[str]:
    """A row per wanted handler: what it answered, or why it did not load and what that
    did (a stand-in's deny, or nothing)."""
    from hookbus.cli.render import failure, printable, table

    outcomes, missing = report.outcomes, _left_out(report)
    if not outcomes and not missing:
        return ["(no handler ran)"]
    colours = {"ok": "green", "error": "red", "timeout": "yellow"}
    rows = [[paint("handler", "dim"), paint("status", "dim"), paint("time", "dim"),
             paint("reply", "dim")]]  # fmt: skip
    for outcome in outcomes:
        name, status = outcome["handler"], outcome["status"]
        colour = colours.get(status, "")
        summary = _summary(outcome.get("reply"))
        if name in report.stand_ins:
            status, colour = "stand-in", "yellow"
            summary = (f"stand-in for {name}, which {_told(report, name)} "
                       f"({_deny(outcome.get('reply'))})")  # fmt: skip
        elif status != "ok":
            why = failure(outcome.get("error") or "") or "no answer in time"
            closed = "fail-closed: denied" if outcome.get("fail_closed") else "fail-open: no reply"
            summary = f"{why} ({closed})"
        rows.append([printable(name), paint(status, colour),
                     f"{outcome['seconds'] * 1000:.1f} ms", printable(summary)])  # fmt: skip
    for name in missing:
        summary = f"{_told(report, name)} (fail-open: left out, no reply)"
        rows.append([printable(name), paint("not loaded", "yellow"), "-", printable(summary)])
    return table(rows)


def _told(report: Report, name: str) -> str:
    """What the hook told of a handler that did not load: ``did not load: why (enabled
    at path:line); what hooks do meanwhile; fix: ...``."""
    return report.unavailable.get(name) or "did not load (the hook did not say why)"


def _deny(reply: dict[str, Any] | None) -> str:
    """What a stand-in answered: a fail-closed handler that cannot run refuses."""
    decision = (reply or {}).get("decision") or "no opinion"
    return f"fail-closed: {'denied' if decision == 'deny' else decision}"


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
