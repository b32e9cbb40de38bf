"""Kimi Code CLI's ``[[hooks]]`` tables in ``~/.kimi/config.toml``: generate, verify,
install, uninstall.

Kimi reads hooks from one place only, its ``config.toml`` (``$KIMI_SHARE_DIR``, else
``~/.kimi``; kimi-cli 1.49.0 ``share.py``, ``config.py``), beside the user's models,
providers and keys; there is no project file. Each hook is a table of its own
(``hooks/config.py`` ``HookDef``)::

    [[hooks]]
    event = "PreToolUse"      # one of the 13 events: any other makes the file invalid
    command = "..."           # run by a shell, the payload on stdin
    matcher = "^(?:Shell)$"   # re.search over the tool name (or the event's own value)
    timeout = 10              # whole seconds, 1 to 600 (30 by default)

The file is edited with tomlkit (:mod:`hookbus.hosts.shared.documents`), in place: the
user's comments, order and layout survive, and only hookbus's tables (recognised by
their command) are added or removed. Only events an enabled handler subscribes to are
registered, and only the 13 names Kimi accepts. Never imported on a hook's path.
"""

from __future__ import annotations

import os
from typing import Any

from hookbus.hosts.kimi.driver import ALL_EVENTS, driver
from hookbus.hosts.kimi.facts import FACTS
from hookbus.hosts.shared import flat
from hookbus.hosts.shared.manifest import CommandForm, Scope

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from hookbus.bus.subscriptions import IndexData

HOST = "kimi"
Hooks = flat.Hooks
#: Kimi has no project-scope hooks: the user's own file is the only one.
SCOPES: dict[Scope, bool] = {"user": False}
#: ``HookDef.timeout``'s bounds: a value outside makes config.toml invalid.
TIMEOUT_MAX = 600
NOTE = "Kimi reads hooks when it starts: restart a running Kimi to load them."


def config_path() -> str:
    """``$KIMI_SHARE_DIR/config.toml``, else ``~/.kimi/config.toml`` (kimi-cli ``share.py``)."""
    share = os.environ.get("KIMI_SHARE_DIR") or os.path.join(os.path.expanduser("~"), ".kimi")
    return os.path.join(share, "config.toml")


class KimiManifest(flat.FlatManifest):
    """Kimi's ``[[hooks]]`` array of tables (see the module docstring)."""

    command_key = "command"
    document_format = "toml"
    facts = FACTS
    scopes = SCOPES
    events = ALL_EVENTS
    driver = driver

    def path(self, scope: Scope, project_dir: str | None) -> str:
        return config_path()  # the user's: Kimi has no other

    def timeouts(self, native: str, budget: float) -> tuple[float | None, float | None]:
        seconds = min(self.facts.timeout_value(budget + 5), TIMEOUT_MAX)
        return seconds, seconds

    def notes(self, hooks: Hooks) -> tuple[str, ...]:
        return (NOTE,) if hooks else ()

    def flat_entry(self, native: str, group: flat.Entry, entry: flat.Entry) -> flat.Entry:
        """``command`` and ``timeout`` (whole seconds); a matcher where the group has one."""
        mine: flat.Entry = {"type": "command", "command": entry["command"]}
        if "timeout" in entry:
            mine["timeout"] = entry["timeout"]
        if "matcher" in group:
            mine["matcher"] = group["matcher"]
        return mine

    def generate(
        self, index: IndexData | None, python: str | None = None, form: CommandForm = "absolute"
    ) -> Hooks:
        """Kimi's tables for what ``index`` subscribes to, by event: ``event`` first."""
        return {
            native: [{"event": native, **{k: v for k, v in e.items() if k != "type"}}
                     for e in entries]
            for native, entries in super().generate(index, python, form).items()
        }  # fmt: skip

    # -- the document: a tomlkit one, edited in place ------------------------------------

    def commands(self, document: dict[str, Any]) -> dict[str, list[str]]:
        found: dict[str, list[str]] = {}
        for table in _tables(document):
            if self.is_ours(table):
                found.setdefault(str(table.get("event")), []).append(table["command"])
        return found

    def without_ours(self, document: dict[str, Any]) -> dict[str, Any]:
        tables = document.get("hooks")
        if isinstance(tables, list):
            for i in reversed(range(len(tables))):
                if self.is_ours(tables[i]):
                    del tables[i]
            if not tables:
                del document["hooks"]  # install added the key; an empty one is no hook
        return document

    def merge(self, document: dict[str, Any], entries: Mapping[str, Any]) -> dict[str, Any]:
        import tomlkit

        self.without_ours(document)
        mine = [entry for event in self.events for entry in entries.get(event, [])]
        if not mine:
            return document
        tables = document.get("hooks")
        if tables is None:
            tables = tomlkit.aot()
            document["hooks"] = tables
        for entry in mine:
            table = tomlkit.table()
            for key, value in entry.items():
                table[key] = value
            table.add(tomlkit.nl())
            tables.append(table)
        return document

    def drift(self, document: dict[str, Any], entries: Mapping[str, Any]) -> list[str]:
        have: dict[str, list[dict[str, Any]]] = {}
        for table in _tables(document):
            if self.is_ours(table):
                have.setdefault(str(table.get("event")), []).append(dict(table))
        return flat.drift(self.events, have, entries)

    def check(self, path: str, document: dict[str, Any]) -> None:
        from hookbus.bus.errors import HostConfigError

        tables = document.get("hooks")
        # An array of tables; an inline array (hooks = [...]) is valid TOML too, but
        # hookbus will not rewrite the user's layout of it.
        if tables is not None and (type(tables).__name__ != "AoT" or not all(
                isinstance(t, dict) for t in tables)):  # fmt: skip
            raise HostConfigError(f"{path}: 'hooks' is not an array of [[hooks]] tables; "
                                  "write it so (or move it), nothing changed")  # fmt: skip


def _tables(document: dict[str, Any]) -> list[Any]:
    tables = document.get("hooks")
    return [t for t in tables if isinstance(t, dict)] if isinstance(tables, list) else []


manifest = KimiManifest()
