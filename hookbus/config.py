"""Configuration: which handlers are on, with what options, and hookbus's own budget.

Files, later ones overriding earlier ones: the user's ``$XDG_CONFIG_HOME/hookbus/config.toml``,
then the nearest ``.hookbus.toml`` at or above the working directory. ``HOOKBUS_CONFIG``
names the one file to read instead. Example::

    budget = 3.0                      # seconds for one dispatch
    enable = ["mypkg.hooks:no_force_push"]

    [handlers."mypkg.hooks:no_force_push"]
    timeout = 2                       # overrides the handler's own declaration
    fail_closed = true
    words = ["--force", "-f"]         # any other key is an option of the handler

A broken file or section never breaks a hook: what is valid is kept, defaults fill the
rest, and every problem becomes a ``config-invalid`` diagnostic naming the file. A
handler also reads the problems of its own section, as ``ctx.problems``.
"""

import os
from collections.abc import Sequence

import msgspec

from hookbus.budgets import DEFAULT_BUDGET
from hookbus.bus.dispatch import HandlerSettings
from hookbus.discover import PROJECT_FILE, read_config
from hookbus.errors import ConfigError

#: Keys of a handler's section that are hookbus's, not the handler's options.
_RESERVED = ("priority", "timeout", "fail_closed")


class HandlerRef(msgspec.Struct, frozen=True, kw_only=True):
    """One enabled handler: its config name, ``module:function`` and settings.
    ``target`` may name a group (:func:`hookbus.group`) instead of a function."""

    name: str
    target: str
    settings: HandlerSettings = msgspec.field(default_factory=HandlerSettings)


class Settings(msgspec.Struct, frozen=True, kw_only=True):
    """The configuration in effect, after merging the files."""

    budget: float = DEFAULT_BUDGET
    python_path: tuple[str, ...] = ()
    handlers: tuple[HandlerRef, ...] = ()
    files: tuple[str, ...] = ()


class Loaded(msgspec.Struct, frozen=True, kw_only=True):
    settings: Settings
    problems: tuple[ConfigError, ...] = ()
    #: Files that could not be read or parsed at all (their handlers are unknown now).
    unreadable: tuple[str, ...] = ()


class _File(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    budget: float | None = None
    python_path: list[str] = msgspec.field(default_factory=list)
    enable: list[str] = msgspec.field(default_factory=list)
    disable: list[str] = msgspec.field(default_factory=list)
    handlers: dict[str, dict[str, object]] = msgspec.field(default_factory=dict)


def target_of(name: str) -> str | None:
    """``module:function`` of a handler name: itself for user handlers, else a built-in's."""
    if ":" in name:
        return name
    from hookbus.handlers import BUILTIN

    return BUILTIN.get(name)


def _read(path: str, problems: list[ConfigError]) -> _File:
    import tomllib

    try:
        # Checked again here, and never blocking: the user's file stays in effect when
        # another user could have written it, or it became a FIFO (hookbus.discover).
        data = tomllib.loads(read_config(path).decode("utf-8"))
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError, RecursionError) as exc:
        problems.append(ConfigError(path, f"unreadable, ignored: {exc!r}"))
        return _File()
    try:
        return msgspec.convert(data, _File)
    except msgspec.ValidationError:
        pass
    # Keep every valid part: keys one at a time, list items and sections one by one.
    kept: dict[str, object] = {}
    for key, value in data.items():
        if isinstance(value, list) and key in ("enable", "disable", "python_path"):
            good = [v for v in value if isinstance(v, str)]
            if len(good) < len(value):
                bad = [v for v in value if not isinstance(v, str)]
                problems.append(ConfigError(path, f"{key}: {bad!r} are not names; ignored"))
            value = good  # noqa: PLW2901
        elif isinstance(value, dict) and key == "handlers":
            good_sections = {k: v for k, v in value.items() if isinstance(v, dict)}
            for name in value.keys() - good_sections.keys():
                problems.append(ConfigError(path, f"handlers.{name} is not a table; ignored"))
            value = good_sections  # noqa: PLW2901
        try:
            msgspec.convert({key: value}, _File)
            kept[key] = value
        except msgspec.ValidationError as exc:
            problems.append(ConfigError(path, f"{exc}; ignored"))
    return msgspec.convert(kept, _File)


def _settings_of(
    name: str, raw: dict[str, object], path: str, problems: list[ConfigError]
) -> HandlerSettings:
    options = {k: v for k, v in raw.items() if k not in _RESERVED}
    reserved: dict[str, object] = {}
    own: list[str] = []  # the handler's to read, as ctx.problems
    for key in _RESERVED:  # one by one: a bad timeout must not cost a valid fail_closed
        if key not in raw:
            continue
        value = raw[key]
        number = isinstance(value, int | float) and not isinstance(value, bool)
        if key == "timeout" and number and not 0 < value < float("inf"):  # type: ignore[operator]
            why = f"timeout must be positive finite seconds, not {value}; declared value kept"
        else:
            try:
                msgspec.convert({key: value}, HandlerSettings)
                reserved[key] = value
                continue
            except msgspec.ValidationError as exc:
                why = f"{key}: {str(exc).partition(' - at ')[0]}; declared value kept"
        own.append(why)
        problems.append(ConfigError(path, f"[handlers.{name!r}] {why}"))
    return msgspec.convert(
        {"options": options, **reserved, "problems": own, "source": path or None},
        HandlerSettings,
    )


def _without_changes_to_the_users_handlers(
    f: _File, users: set[str], path: str, problems: list[ConfigError]
) -> _File:
    """``f`` (a project file) without what would switch off or weaken a handler the
    user's own configuration enables: a ``disable`` of it, or a section for it."""
    kept = [n for n in f.disable if n not in users]
    for name in set(f.disable) - set(kept):
        problems.append(ConfigError(path, f"disable {name!r} ignored: your user configuration "
                                    "enables it, and a project cannot switch it off",
                                    invalid=False))  # fmt: skip
    sections = dict(f.handlers)
    for name in sorted(users & sections.keys()):
        # Not fail_closed = false, and not its options either: ``words = []`` would make
        # a guard of yours allow everything as surely as switching it off.
        del sections[name]
        why = ("ignored: your user configuration enables this handler, and a project "
               "cannot change its settings (set them in your user configuration)")  # fmt: skip
        problems.append(ConfigError(path, f"[handlers.{name!r}] {why}", invalid=False))
    return msgspec.structs.replace(f, disable=kept, handlers=sections)


def load(paths: Sequence[str]) -> Loaded:
    """Read and merge ``paths`` (lowest precedence first); never raises on bad content."""
    problems: list[ConfigError] = []
    budget = DEFAULT_BUDGET
    python_path: list[str] = []
    enabled: list[str] = []
    #: Handlers the user's own configuration enables: the project (which the agent can
    #: write) may add to them, but not switch them off or make a guard fail open.
    users: set[str] = set()
    sections: dict[str, tuple[str, dict[str, object]]] = {}
    for path in paths:
        f = _read(path, problems)
        base = os.path.dirname(path)
        project = os.path.basename(path) == PROJECT_FILE
        if project:
            f = _without_changes_to_the_users_handlers(f, users, path, problems)
        if f.budget is not None:
            if 0 < f.budget < float("inf"):
                budget = f.budget
            else:
                problems.append(
                    ConfigError(path, f"budget must be positive finite seconds, not {f.budget}")
                )
        python_path += [os.path.normpath(os.path.join(base, p)) for p in f.python_path]
        # The file's own folder too: handler modules kept next to the configuration that
        # enables them (a project's, or ~/.config/hookbus/ for the user's) just work.
        python_path.append(base)
        enabled = [n for n in enabled if n not in f.disable]
        enabled += [n for n in f.enable if n not in enabled]
        if not project:
            users = set(enabled)
        for name, section in f.handlers.items():
            merged = {**sections.get(name, ("", {}))[1], **section}
            sections[name] = (path, merged)
    refs = []
    for name in enabled:
        target = target_of(name)
        if target is None:
            where = sections.get(name, (paths[-1] if paths else "config", {}))[0]
            from hookbus.handlers import BUILTIN

            builtin = ", ".join(sorted(BUILTIN)) or "none yet"
            problems.append(ConfigError(where, f"unknown handler {name!r}; ignored (a handler "
                                        "of yours is named module:function; built-in "
                                        f"handlers: {builtin})"))  # fmt: skip
            continue
        path, raw = sections.get(name, ("", {}))
        refs.append(
            HandlerRef(name=name, target=target, settings=_settings_of(name, raw, path, problems))
        )
    for name, (path, _) in sections.items():
        if name not in enabled:
            problems.append(
                ConfigError(path, f"[handlers.{name!r}] is set but not enabled", invalid=False)
            )
    settings = Settings(
        budget=budget,
        python_path=tuple(dict.fromkeys(python_path)),
        handlers=tuple(refs),
        files=tuple(paths),
    )
    unreadable = tuple(p.source for p in problems if p.problem.startswith("unreadable"))
    return Loaded(settings=settings, problems=tuple(problems), unreadable=unreadable)
