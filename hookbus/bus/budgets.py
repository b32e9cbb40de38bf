"""How long one dispatch may take: hookbus's budget under the host's own timeout.

One rule, used by the bus, the watchdog and the cold path alike (standard library only).
"""

from __future__ import annotations

#: hookbus's own budget for one dispatch when neither configuration nor host says less.
DEFAULT_BUDGET = 5.0
#: Below this margin under the host's timeout, the host's own overheads eat the answer.
MIN_MARGIN = 0.5


def budget(own: float, host_timeout: float) -> float:
    """Seconds one dispatch may take: ``own``, never above the host's timeout minus a margin
    (10 %, at least 0.5 s). Claude's SessionEnd hooks share 1.5 s, so ours gets 1 s.
    A budget that is not a positive finite number is hookbus's default."""
    if not 0 < own < float("inf"):
        own = DEFAULT_BUDGET
    if not 0 < host_timeout < float("inf"):
        host_timeout = DEFAULT_BUDGET + MIN_MARGIN
    margin = max(MIN_MARGIN, 0.1 * host_timeout)
    return max(0.05, min(own, host_timeout - margin))
