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

A project's file runs no code of its own (a handler ``module:function``, a
``python_path``, the modules of its folder) until the user trusts it
(:mod:`hookbus.local.project_trust`); built-in handlers need no trust.

A broken file or section never breaks a hook: what is valid is kept, defaults fill the
rest, and every problem becomes a ``config-invalid`` diagnostic naming the file. A
handler also reads the problems of its own section, as ``ctx.problems``.
"""

import os
import re
from collections.abc import Sequence

import msgspec

from hookbus.bus.budgets import DEFAULT_BUDGET
from hookbus.bus.dispatch import HandlerSettings
from hookbus.bus.errors import ConfigError
from hookbus.local.discover import is_project_file, read_config

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hookbus.local.project_trust import CodeSet

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
    #: The project's configuration file, and the folders its modules would come from
    #: (its own folder and its ``python_path``, trusted or not): a module found there is
    #: imported only as its trust record allows (:mod:`hookbus.runtime.project_imports`).
    project: str | None = None
    project_paths: tuple[str, ...] = ()


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


def read_file(path: str, problems: list[ConfigError]) -> tuple[_File, bytes]:
    """The file at ``path`` (what is valid of it) and the bytes it was read from."""
    import tomllib

    raw = b""
    try:
        # Checked again here, and never blocking: the user's file stays in effect when
        # another user could have written it, or it became a FIFO (hookbus.local.discover).
        raw = read_config(path)
        data = tomllib.loads(raw.decode("utf-8"))
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError, RecursionError) as exc:
        problems.append(ConfigError(path, f"unreadable, ignored: {exc!r}"))
        return _File(), raw
    return _valid(data, path, problems), raw


def enable_lines(path: str, raw: bytes, names: list[str]) -> dict[str, str]:
    """``path:line`` of the ``enable`` entry naming each of ``names`` in the file ``raw``
    was read from (``path`` alone for a name not found): where a message about a handler
    points, and where its fix is made. An entry is the first line at or after
    ``enable =`` that writes the quoted name before any comment (TOML puts the top-level
    keys, ``enable`` among them, ahead of every table). One pass over the file, whatever
    the number of names: a project's file may be large, and is read on a hook's path."""
    lines = raw.decode("utf-8", "replace").splitlines()
    start = next((i for i, text in enumerate(lines)
                  if re.match(r"""\s*["']?enable["']?\s*=""", text)), 0)  # fmt: skip
    wanted = set(names)
    found: dict[str, str] = {}
    for number, text in enumerate(lines[start:], start + 1):
        for quoted in _QUOTED.finditer(text.partition("#")[0]):
            name = quoted.group(1) if quoted.group(1) is not None else quoted.group(2)
            if name in wanted and name not in found:
                found[name] = f"{path}:{number}"
        if len(found) == len(wanted):
            break
    return {name: found.get(name, path) for name in names}


#: A TOML basic or literal string on one line (a handler's name has no escapes).
_QUOTED = re.compile(r""""([^"\\]*)"|'([^']*)'""")


def _valid(data: dict[str, object], path: str, problems: list[ConfigError]) -> _File:
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


def _project_paths(f: _File, base: str) -> list[str]:
    """The folders a project's modules come from: its ``python_path`` (relative to its
    folder), then its folder itself, which is where handler modules kept beside the
    configuration that enables them are found (``~/.config/hookbus/`` for the user's)."""
    return [*(os.path.normpath(os.path.join(base, p)) for p in f.python_path), base]


def _names_code(f: _File) -> bool:
    """Whether a project file names code of its own (built-in handlers are hookbus's)."""
    return bool(f.python_path) or any(":" in name for name in f.enable)


def _without_untrusted_code(
    f: _File, path: str, raw: bytes, problems: list[ConfigError]
) -> tuple[_File, bool]:
    """``f`` (a project file read as ``raw``) and whether its code may run: as it is when
    the user trusts it as it is now; else without its handlers, its ``python_path`` and
    their sections, said once (``config-untrusted``)."""
    if not _names_code(f):
        return f, False
    from hookbus.local import project_trust

    verdict = project_trust.check(path, raw)
    if verdict.trusted:
        return f, True
    named = ", ".join([*(n for n in f.enable if ":" in n),
                       *(f"python_path {p!r}" for p in f.python_path)])  # fmt: skip
    if verdict.changed is None:
        why = f"names code of its own ({named}) that you have not trusted"
    elif verdict.changed == path:
        why = f"changed since you trusted it ({named})"
    else:
        why = f"runs {verdict.changed}, which changed since you trusted it ({named})"
    store = f" ({verdict.problem})" if verdict.problem else ""
    problems.append(ConfigError(path, f"{why}{store}: none of it runs (built-in handlers "
                                "and your own still do); to review and trust it: "
                                f"{project_trust.fix_for(path)}", invalid=False,
                                untrusted=True))  # fmt: skip
    kept = msgspec.structs.replace(
        f,
        enable=[n for n in f.enable if ":" not in n],
        python_path=[],
        handlers={n: s for n, s in f.handlers.items() if ":" not in n},
    )
    return kept, False


def project_code(path: str) -> "tuple[CodeSet, list[str]]":
    """What the project file ``path`` would run, hashed now (:func:`hookbus.local.project_trust
    .code_set`), and the code it names (its handlers and ``python_path``, as written);
    :class:`ConfigError` when it cannot be read."""
    from hookbus.local import project_trust

    problems: list[ConfigError] = []
    f, data = read_file(path, problems)
    unreadable = [p for p in problems if p.problem.startswith("unreadable")]
    if unreadable:
        raise unreadable[0]
    targets = [n for n in f.enable if ":" in n]
    named = [*targets, *(f"python_path {p!r}" for p in f.python_path)]
    entries = _project_paths(f, os.path.dirname(path))
    return project_trust.code_set(path, data, targets, entries), named


def load(paths: Sequence[str]) -> Loaded:
    """Read and merge ``paths`` (lowest precedence first); never raises on bad content."""
    problems: list[ConfigError] = []
    budget = DEFAULT_BUDGET
    python_path: list[str] = []
    enabled: list[str] = []
    #: Handlers the user's own configuration enables: the project (which the agent can
    #: write) may add to them, but not switch them off or make a guard fail open.
    users: set[str] = set()
    enabled_at: dict[str, str] = {}
    sections: dict[str, tuple[str, dict[str, object]]] = {}
    project_file: str | None = None
    project_paths: list[str] = []
    runs_code = False
    for path in paths:
        f, data = read_file(path, problems)
        base = os.path.dirname(path)
        project = is_project_file(path)
        if project:
            f = _without_changes_to_the_users_handlers(f, users, path, problems)
            project_file, project_paths = path, _project_paths(f, base)
            f, runs_code = _without_untrusted_code(f, path, data, problems)
        if f.budget is not None:
            if 0 < f.budget < float("inf"):
                budget = f.budget
            else:
                problems.append(
                    ConfigError(path, f"budget must be positive finite seconds, not {f.budget}")
                )
        # A project's folders only when its code may run: else nothing of it is imported.
        if not project or runs_code:
            python_path += _project_paths(f, base)
        enabled = [n for n in enabled if n not in f.disable]
        added = [n for n in f.enable if n not in enabled]
        enabled += added
        enabled_at.update(enable_lines(path, data, added))
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
        made = _settings_of(name, raw, path, problems)
        made = msgspec.structs.replace(made, enabled_at=enabled_at.get(name))
        refs.append(HandlerRef(name=name, target=target, settings=made))
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
        project=project_file,
        project_paths=tuple(dict.fromkeys(project_paths)),
    )
    unreadable = tuple(p.source for p in problems if p.problem.startswith("unreadable"))
    return Loaded(settings=settings, problems=tuple(problems), unreadable=unreadable)
