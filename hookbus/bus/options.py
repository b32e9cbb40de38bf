"""A handler's options section converted to its ``options=`` Struct, keeping what is valid.

A section that converts as a whole is the common case and costs one ``msgspec.convert``.
One that does not is converted field by field: every valid field is kept, and a field
typed as a table of tables (``dict[str, SomeStruct]``, such as a guard's per-host
sections) keeps each valid entry, so that ``[handlers.guard.hosts.codex]`` with a typo
costs codex only and the other hosts keep their settings. Each dropped part becomes one
readable line naming its key path; the handler reads them as ``ctx.problems`` and the
loader reports them as ``config-invalid``. Nothing is silently replaced by a default.
"""

from __future__ import annotations

from typing import Any, get_args, get_origin

import msgspec


def convert_options(
    raw: dict[str, object], options_type: type[msgspec.Struct]
) -> tuple[Any, list[str]]:
    """``raw`` as ``options_type`` and the parts of it that had to be dropped. Raises
    :class:`msgspec.ValidationError` only when what is left still does not convert (a
    required field missing or invalid)."""
    try:
        return msgspec.convert(raw, options_type), []
    except msgspec.ValidationError:
        pass
    problems: list[str] = []
    fields = {f.encode_name: f for f in msgspec.structs.fields(options_type)}
    forbids = bool(options_type.__struct_config__.forbid_unknown_fields)
    kept: dict[str, object] = {}
    for key, value in raw.items():
        field = fields.get(key)
        if field is None:
            if forbids:
                known = ", ".join(sorted(fields)) or "none"
                problems.append(f"{key}: unknown option (known: {known}); dropped")
            continue
        _, why = _check(field.type, value, key)
        if not why:
            kept[key] = value
            continue
        entries = _entries(field.type, value, key)
        if entries is None:
            problems.append(f"{why}; dropped")
            continue
        kept[key], dropped = entries
        problems += dropped
    return msgspec.convert(kept, options_type), problems


def _check(annotation: Any, value: object, path: str) -> tuple[Any, str]:
    """``value`` converted to ``annotation``, or why not, as ``<key path>: <problem>``."""
    try:
        return msgspec.convert(value, annotation), ""
    except msgspec.ValidationError as exc:
        return None, _line(path, exc)


def _entries(
    annotation: Any, value: object, path: str
) -> tuple[dict[str, object], list[str]] | None:
    """The valid entries of ``value`` when ``annotation`` is a table of tables (a
    ``dict[str, X]``), with one line per dropped entry; None for any other field."""
    if get_origin(annotation) is not dict or not isinstance(value, dict):
        return None
    key_type, item_type = get_args(annotation) or (str, Any)
    kept: dict[str, object] = {}
    dropped: list[str] = []
    for key, item in value.items():
        _, why = _check(key_type, key, f"{path}.{key}")
        if not why:
            _, why = _check(item_type, item, f"{path}.{key}")
        if why:
            dropped.append(f"{why}; dropped")
        else:
            kept[key] = item
    return kept, dropped


def _line(path: str, exc: msgspec.ValidationError) -> str:
    """msgspec's ``Expected `int`, got `str` - at `$.mode``` as
    ``<path>.mode: Expected `int`, got `str```."""
    problem, _, at = str(exc).partition(" - at `")
    return f"{path}{at.rstrip('`').removeprefix('$')}: {problem}"
