"""Built-in handlers, enabled by name in the configuration.

Each name maps to ``module:function``; the module is imported only when an event one of
its subscriptions wants arrives (the subscription index knows without importing it).
"""

from __future__ import annotations

BUILTIN: dict[str, str] = {
    # The subagent cost guard: docs/guard.md.
    "guard": "hookbus.handlers.guard.handler:GUARD",
}
