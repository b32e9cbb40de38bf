"""The user's own prices: a small TOML file read before any dataset.

``$HOOKBUS_PRICES`` names it, else ``$XDG_CONFIG_HOME/hookbus/prices.toml`` (``~/.config``
without ``XDG_CONFIG_HOME``). Each entry is a table under ``models``::

    [models."my-proxy-sonnet"]          # an exact id (compared lower-cased)
    input = 3.0                         # $ per million input tokens
    output = 15.0                       # $ per million output tokens
    provider = "anthropic"              # optional

    [models.house-models]               # a name, and the ids it stands for
    match = "house-*"                   # a glob: * any run, ? one character
    input = 0.5
    output = 2.0

Exact ids are tried first, then the globs in the file's order. An entry naming a
provider answers only lookups for no provider or for that one. An invalid entry (a
missing or negative price, an unknown key) is skipped with a ``config-invalid``
diagnostic naming it; the others still count. A file another user could write is not
read (``config-ignored``, the rule of :mod:`hookbus.local.trust`): it would decide what the
guard lets through.
"""

from __future__ import annotations

import math
import os

import msgspec

from hookbus.local import diagnostics
from hookbus.local.trust import file_problem

_KEYS = frozenset({"input", "output", "provider", "match"})


class Entry(msgspec.Struct, frozen=True, kw_only=True):
    """One valid entry: ``name`` is the table's key, ``glob`` its lower-cased ``match``."""

    name: str
    input_mtok: float
    output_mtok: float
    provider: str = ""
    glob: str = ""

    def answers(self, provider: str | None) -> bool:
        return not self.provider or provider is None or provider.strip().lower() == self.provider


class Overrides(msgspec.Struct, frozen=True):
    """The valid entries of the file: exact ones by id, then the globs in file order."""

    exact: dict[str, Entry]
    globs: tuple[Entry, ...]

    def find(self, ref: str, provider: str | None) -> Entry | None:
        entry = self.exact.get(ref)
        if entry is not None and entry.answers(provider):
            return entry
        if self.globs:
            from fnmatch import fnmatchcase

            for entry in self.globs:
                if entry.answers(provider) and fnmatchcase(ref, entry.glob):
                    return entry
        return None


EMPTY = Overrides({}, ())


def path() -> str:
    explicit = os.environ.get("HOOKBUS_PRICES")
    if explicit:
        return os.path.abspath(os.path.expanduser(explicit))
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(base, "hookbus", "prices.toml")


def _invalid(file: str, problem: str) -> None:
    diagnostics.emit("config-invalid", f"{file}: {problem}", file=file)


def _price(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    price = float(value)
    return price if math.isfinite(price) and price >= 0 else None


def _entry(name: str, table: object) -> Entry | str:
    """The entry ``[models.NAME]``, or why it is invalid."""
    if not isinstance(table, dict):
        return "is not a table"
    unknown = sorted(set(table) - _KEYS)
    if unknown:
        return f"has unknown keys {', '.join(unknown)} (known: input, output, provider, match)"
    prices = [_price(table.get(key)) for key in ("input", "output")]
    if prices[0] is None or prices[1] is None:
        return "needs input and output, numbers of dollars per million tokens, 0 or more"
    provider = table.get("provider", "")
    glob = table.get("match", "")
    if not isinstance(provider, str) or not isinstance(glob, str):
        return "has a provider or match that is not a string"
    if not name.strip():
        return "has an empty name"
    return Entry(
        name=name.strip().lower(),
        input_mtok=prices[0],
        output_mtok=prices[1],
        provider=provider.strip().lower(),
        glob=glob.strip().lower(),
    )


def load(file: str) -> Overrides | None:
    """The entries of ``file``; None when there is no such file (or it is not read)."""
    try:
        with open(file, "rb") as f:
            data = f.read(1 << 20)
    except FileNotFoundError:
        if os.environ.get("HOOKBUS_PRICES"):
            _invalid(file, "named by HOOKBUS_PRICES, does not exist; no prices of yours are used")
        return None
    except OSError as exc:
        _invalid(file, f"cannot be read ({exc.strerror or exc}); no prices of yours are used")
        return None
    problem = file_problem(file)
    if problem is not None:
        diagnostics.emit(
            "config-ignored", f"{file} {problem}: its prices would steer the guard, so it "
            "is not read", file=file,
        )  # fmt: skip
        return None
    import tomllib

    try:
        document = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        _invalid(file, f"unreadable, ignored ({exc})")
        return None
    for key in sorted(set(document) - {"models"}):
        _invalid(file, f"unknown key {key!r} ignored (prices go under [models.ID])")
    models = document.get("models", {})
    if not isinstance(models, dict):
        _invalid(file, "'models' is not a table, ignored")
        return EMPTY
    exact: dict[str, Entry] = {}
    globs: list[Entry] = []
    for name, table in models.items():
        entry = _entry(name, table)
        if isinstance(entry, str):
            _invalid(file, f"[models.{name!r}] {entry}; skipped")
        elif entry.glob:
            globs.append(entry)
        else:
            exact.setdefault(entry.name, entry)
    return Overrides(exact, tuple(globs))
