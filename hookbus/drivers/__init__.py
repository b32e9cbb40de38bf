"""Host drivers, loaded by name on first use and cached.

This registry is read on every hook's cold path, so it holds, per host, only what
``hookbus run`` needs before it decides to load the driver: where the event name and the
tool name sit in the payload, and the host's "no opinion" reply. Everything else lives
in the driver module (``hookbus/drivers/<host>.py``, ending in ``driver = ...``).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hookbus.types import Driver


class Peek:
    """What ``hookbus run`` knows of a host before loading its driver: the payload keys of
    the event and tool names, the environment variable naming the project root (hooks may
    run in a subfolder the agent ``cd``-ed into), and the host's no-opinion reply."""

    __slots__ = (
        "event_field", "module", "no_opinion_exit", "no_opinion_stdout", "project_env",
        "tool_field",
    )  # fmt: skip

    def __init__(
        self,
        module: str,
        *,
        event_field: str,
        tool_field: str,
        project_env: str | None = None,
        no_opinion_stdout: bytes = b"",
        no_opinion_exit: int = 0,
    ) -> None:
        self.module = module
        self.event_field = event_field
        self.tool_field = tool_field
        self.project_env = project_env
        self.no_opinion_stdout = no_opinion_stdout
        self.no_opinion_exit = no_opinion_exit

    def project_dir(self) -> str | None:
        import os

        return os.environ.get(self.project_env) if self.project_env else None


HOSTS: dict[str, Peek] = {
    "claude": Peek(
        "hookbus.drivers.claude",
        event_field="hook_event_name",
        tool_field="tool_name",
        project_env="CLAUDE_PROJECT_DIR",
    ),
}

#: Every host name a handler may filter on, drivers or not yet: a typo fails at build time,
#: a handler written for a host whose driver comes later does not.
KNOWN_HOSTS = frozenset(
    ("claude", "codex", "copilot", "cursor", "gemini", "antigravity", "hermes", "opencode",
     "pi", "cline", "kiro")
)  # fmt: skip

_loaded: dict[str, Driver] = {}


def load(host: str) -> Driver:
    """The driver of ``host``; raises KeyError naming the known hosts."""
    driver = _loaded.get(host)
    if driver is None:
        if host not in HOSTS:
            raise KeyError(f"unknown host {host!r}; known: {', '.join(sorted(HOSTS))}")
        import importlib

        driver = _loaded[host] = importlib.import_module(HOSTS[host].module).driver
    return driver
