"""One root for every error hookbus raises; each mixes in the builtin it resembles."""

from __future__ import annotations

from collections.abc import Sequence


class HookbusError(Exception):
    """Root of hookbus's errors."""


class DecodeError(HookbusError, ValueError):
    """A host payload could not be decoded; ``path`` is msgspec's JSON path when known."""

    def __init__(self, host: str, problem: str, path: str | None = None) -> None:
        self.host = host
        self.problem = problem
        self.path = path
        where = f" at {path}" if path else ""
        super().__init__(f"{host} payload rejected{where}: {problem}")


class HandlerError(HookbusError, TypeError):
    """A handler's declaration or signature is invalid; raised when the bus is built."""

    def __init__(self, handler: object, problem: str) -> None:
        self.handler = handler
        name = getattr(handler, "__qualname__", None) or repr(handler)
        module = getattr(handler, "__module__", None)
        self.name = f"{module}:{name}" if module else name
        self.problem = problem
        super().__init__(f"handler {self.name}: {problem}")


class ConfigError(HookbusError, ValueError):
    """A configuration file or section is invalid; ``source`` names the file."""

    def __init__(
        self, source: str, problem: str, *, invalid: bool = True, untrusted: bool = False
    ) -> None:
        self.source = source
        self.problem = problem
        #: False for a note on a valid file (a section of a handler not enabled, a project
        #: refused the power to switch off a user's guard): install does not fail on it.
        self.invalid = invalid
        #: True when a project's code was left out because the user has not trusted it
        #: (``config-untrusted``, a note: install does not fail on it either).
        self.untrusted = untrusted
        super().__init__(f"{source}: {problem}")


class HostConfigError(HookbusError, ValueError):
    """A host's settings file cannot be read or changed safely."""


class SampleError(HookbusError, ValueError):
    """No sample payload can be built as asked: ``value`` is not among ``choices`` (which
    ``choices_are``: "its events", "its tools")."""

    def __init__(
        self, host: str, problem: str, value: str, choices: Sequence[str], choices_are: str
    ) -> None:
        self.host = host
        self.problem = problem
        self.value = value
        self.choices = tuple(choices)
        super().__init__(f"{problem}; {choices_are}: {', '.join(self.choices)}")
