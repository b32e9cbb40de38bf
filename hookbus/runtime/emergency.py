"""The last-resort answer of a hook process.

Whatever happens in ``hookbus run`` — a read that hangs on a hung mount, a Ctrl-C that
reaches the whole process group (``claude -p`` is interrupted that way), the host's own
SIGTERM — the host gets a valid native reply and a clean exit, never a traceback and
never silence: the answer the hook would give if it gave up right now. That answer
starts as the host's no-opinion and is sharpened as the hook learns more (the event,
then a fail-closed refusal once it knows a guard wants the event). An interval timer
delivers it at the hook's deadline if nothing else has.

Standard library only.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Callable

from hookbus.bus.output import HookOutput

#: Signals that end a hook with its current answer.
SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGALRM)


def write(output: HookOutput) -> None:
    """Write ``output``'s stdout and stderr unbuffered; a host that stopped reading ends it."""
    for fd, data in ((1, output.stdout), (2, output.stderr)):
        view = memoryview(data)
        while view:
            try:
                view = view[os.write(fd, view) :]
            except OSError:  # closed, or the host stopped reading: nothing more to do
                break


class Emergency:
    """The answer a hook gives if it must stop now (see the module docstring)."""

    def __init__(self) -> None:
        self.output = HookOutput()
        self.lazy: Callable[[], HookOutput] | None = None
        self.answered = False
        self.exit_code = 0
        #: When the host would kill the hook, less a margin (None until armed).
        self.deadline: float | None = None
        #: Called (with the signal's name) after the answer, before the process exits:
        #: the hook records why it gave up there.
        self.on_fire: Callable[[str], None] | None = None

    def set(self, output: HookOutput) -> None:
        self.output = output
        self.lazy = None

    def set_lazy(self, make: Callable[[], HookOutput]) -> None:
        """An answer that needs a driver to encode: built only if the hook must give up."""
        self.lazy = make

    def current(self) -> HookOutput:
        """The answer to give now (a lazy one that fails to build leaves the plain one)."""
        if self.lazy is not None:
            try:
                return self.lazy()
            except BaseException:
                return self.output
        return self.output

    def answer(self, output: HookOutput) -> int:
        """Write the hook's real reply (once); its exit code. Signals wait while it is
        written: a reply is never cut short, nor followed by a second one."""
        if not self.answered:
            blocked = signal.pthread_sigmask(signal.SIG_BLOCK, SIGNALS)
            try:
                self.answered = True
                self.exit_code = output.exit_code
                write(output)
            finally:
                signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        return self.exit_code

    def install(self) -> None:
        for sig in SIGNALS:
            signal.signal(sig, self._fire)

    def arm(self, deadline: float) -> None:
        """Answer by ``deadline`` (a ``time.monotonic()`` value) whatever the hook is doing."""
        self.deadline = deadline
        delay = min(max(0.001, deadline - time.monotonic()), 86_400.0)
        signal.setitimer(signal.ITIMER_REAL, delay)

    def disarm(self) -> None:
        signal.setitimer(signal.ITIMER_REAL, 0)

    def _fire(self, signum: int, frame: object) -> None:
        code = self.answer(self.current()) if not self.answered else self.exit_code
        # A worker still at work would outlive the hook: its process group is its own
        # (hookbus.runtime.isolate), out of reach of a signal sent to the hook's. Looked
        # up, not imported: a hook that forked none never loaded the module.
        isolate = sys.modules.get("hookbus.runtime.isolate")
        if isolate is not None:
            isolate.kill_waited()
        if self.on_fire is not None:
            try:  # noqa: SIM105 (contextlib is not loaded on the cold path)
                self.on_fire(signal.Signals(signum).name)
            except BaseException:  # nothing may stand between the answer and the exit
                pass
        os._exit(code)
