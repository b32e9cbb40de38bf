"""Handlers' loggers: structlog, writing JSON lines into the diagnostics log.

Imported only when a handler first touches ``ctx.log``: structlog costs tens of
milliseconds to import, which a hook that logs nothing must not pay.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hookbus.local import diagnostics

if TYPE_CHECKING:
    from hookbus.bus.context import Context


class _DiagnosticsFile:
    """A structlog-compatible sink: each message is one JSON line in the diagnostics log
    (deferred like every diagnostic while a hook is answering)."""

    def msg(self, message: str) -> None:
        diagnostics.record((message + "\n").encode("utf-8", "replace"))

    log = debug = info = warn = warning = error = critical = exception = msg


def handler_logger(ctx: Context) -> Any:
    import structlog

    logger = structlog.wrap_logger(
        _DiagnosticsFile(),
        processors=[
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            structlog.processors.JSONRenderer(),
        ],
    )
    event = ctx.event
    return logger.bind(
        handler=ctx.handler, host=event.host, native=event.native, session_id=event.session_id
    )
