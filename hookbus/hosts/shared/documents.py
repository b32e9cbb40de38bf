"""The user's settings files, read and written in their own format without losing what is
theirs: JSON (Claude Code, Gemini CLI, Copilot, Cursor), TOML (Codex's ``config.toml``)
and YAML (Hermes's ``config.yaml``).

TOML and YAML are read with round-trip parsers (tomlkit, ruamel.yaml): comments, key
order, quoting and layout of everything hookbus does not touch survive an install. A
manifest edits the loaded document in place, so that what it does not touch is written
back as it was. A file that cannot be parsed is refused, never overwritten. These
libraries cost tens of milliseconds to import: only ``hookbus install`` and its kin load
them, never a hook.
"""

from __future__ import annotations

import io
import itertools
import json
import re
from typing import Any, Literal, Protocol

from hookbus.bus.errors import HostConfigError

Format = Literal["json", "toml", "yaml"]


class Codec(Protocol):
    def load(self, text: str) -> dict[str, Any]:
        """The document (an empty one for empty text); ValueError when it cannot be parsed."""
        ...

    def dump(self, document: dict[str, Any], original: str | None = None) -> str:
        """``document`` as text; ``original``, the file's text as read, when the codec
        can keep its layout."""
        ...


class JsonCodec:
    """JSON, edited in place: only the top-level members whose value changed are
    rewritten (in the file's own indentation and separators); every other byte of the
    user's file (odd key order, compact layout, the final newline or its absence) stays."""

    def load(self, text: str) -> dict[str, Any]:
        data = json.loads(text) if text.strip() else {}
        if not isinstance(data, dict):
            raise ValueError("expected a JSON object")  # noqa: TRY004
        return data

    def dump(self, document: dict[str, Any], original: str | None = None) -> str:
        if original is not None and original.strip():
            try:
                return _splice(original, document)
            except ValueError:  # not a layout the splice understands: a clean dump
                pass
        return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def same(a: object, b: object) -> bool:
    """Equal as JSON: ``1`` is not ``true`` and ``1`` is not ``1.0`` (Python's ``==`` says
    they are, and an edit from one to the other must not pass for no change)."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


class _Member:
    """One top-level member of a JSON object, by offsets into its text: ``start`` is its
    key's first quote; the value runs from ``value_start`` to ``value_end``."""

    __slots__ = ("key", "start", "value_end", "value_start")

    def __init__(self, key: str, start: int, value_start: int, value_end: int) -> None:
        self.key, self.start, self.value_start, self.value_end = key, start, value_start, value_end


def _members(text: str) -> tuple[int, list[_Member], int]:
    """The top-level object's opening brace, members and closing brace, by offset."""
    decoder = json.JSONDecoder()
    ws = re.compile(r"[ \t\r\n]*")

    def skip(i: int) -> int:
        match = ws.match(text, i)
        return match.end() if match else i

    i = skip(0)
    if text[i : i + 1] != "{":
        raise ValueError("not an object")
    opening, i = i, skip(i + 1)
    members: list[_Member] = []
    while text[i : i + 1] != "}":
        if members:
            if text[i : i + 1] != ",":
                raise ValueError("expected a comma")
            i = skip(i + 1)
        key, after = decoder.raw_decode(text, i)
        colon = skip(after)
        if not isinstance(key, str) or text[colon : colon + 1] != ":":
            raise ValueError("expected a key")
        value_start = skip(colon + 1)
        _, value_end = decoder.raw_decode(text, value_start)
        members.append(_Member(key, i, value_start, value_end))
        i = skip(value_end)
    if len({m.key for m in members}) != len(members):
        raise ValueError("a key is repeated")  # which one counts is the reader's guess
    return opening, members, i


def _style(text: str, members: list[_Member]) -> tuple[str | None, str, str, bool]:
    """(indent unit or None for one-line JSON, item separator, key separator,
    ensure_ascii) as the file writes them."""
    key_sep = ": "
    if members:
        m = members[0]
        between = text[m.start : m.value_start]
        key_sep = ":" + between.rsplit(":", 1)[1] if ":" in between else ": "
        key_sep = ": " if key_sep.strip(" ") != ":" else key_sep
    unit = re.search(r"\n([ \t]+)\S", text)
    ascii_only = bool(re.search(r"\\u[0-9a-fA-F]{4}", text)) and text.isascii()
    if unit is None and "\n" not in text.strip():
        item_sep = ", " if re.search(r',[ ]+["\[{0-9tfn-]', text) else ","
        return None, item_sep, key_sep, ascii_only
    return (unit.group(1) if unit else "  "), ",", key_sep, ascii_only


def _splice(text: str, document: dict[str, Any]) -> str:
    """``text`` (a JSON object) edited to hold ``document``: the members whose value is
    unchanged keep their bytes, changed values are written in the file's style, removed
    members go with the separator before them, new ones are added at the end. The object
    is rebuilt from whole spans of the original, never edited offset by offset."""
    opening, members, closing = _members(text)
    before = {m.key: json.loads(text[m.value_start : m.value_end]) for m in members}
    kept = [k for k in document if k in before]
    if [k for k in before if k in document] != kept or list(document)[: len(kept)] != kept:
        raise ValueError("keys reordered")  # (new keys can only come after the old ones)
    unit, item_sep, key_sep, ascii_only = _style(text, members)

    def value(obj: object) -> str:
        dumped = json.dumps(obj, indent=unit, separators=(item_sep, key_sep),
                            ensure_ascii=ascii_only)  # fmt: skip
        return dumped.replace("\n", "\n" + unit) if unit else dumped

    # A member's separator is the text before its key: the layout after "{" for the
    # first, the comma and layout after the previous value for the others. A kept member
    # whose predecessor is kept too keeps its own; any other takes one the file uses.
    seps = [text[prev.value_end : m.start] for prev, m in itertools.pairwise(members)]
    if members:
        first = text[opening + 1 : members[0].start]
        between = seps[0] if seps else "," + (first or (" " if unit is None else ""))
    else:
        first = "" if unit is None else "\n" + unit
        between = item_sep if unit is None else "," + first
    joined: list[str] = []
    previous = -2  # the original position of the member written last
    for n, m in enumerate(members):
        if m.key not in document:
            continue
        body = text[m.value_start : m.value_end]
        if not same(document[m.key], before[m.key]):
            body = value(document[m.key])
        sep = first if not joined else seps[n - 1] if previous == n - 1 else between
        joined.append(sep + text[m.start : m.value_start] + body)
        previous = n
    for key in (k for k in document if k not in before):
        member = json.dumps(key, ensure_ascii=ascii_only) + key_sep + value(document[key])
        joined.append((between if joined else first) + member)
    if not joined:
        return text[: opening + 1] + text[closing:]
    end = text[members[-1].value_end : closing] if members else ("\n" if unit else "")
    return text[: opening + 1] + "".join(joined) + end + text[closing:]


class TomlCodec:
    def load(self, text: str) -> dict[str, Any]:
        import tomlkit

        try:
            return tomlkit.parse(text)
        except tomlkit.exceptions.ParseError as exc:
            raise ValueError(str(exc)) from None

    def dump(self, document: dict[str, Any], original: str | None = None) -> str:
        import tomlkit

        return tomlkit.dumps(document)


class YamlCodec:
    """YAML, written back with the indentation the user's file had (ruamel guesses it)."""

    def __init__(self) -> None:
        self._indents: dict[int, tuple[int, int, int]] = {}

    def _yaml(self, indent: tuple[int, int, int] = (2, 2, 0)) -> Any:
        from ruamel.yaml import YAML

        yaml = YAML(typ="rt")
        yaml.preserve_quotes = True
        mapping, sequence, offset = indent
        yaml.indent(mapping=mapping, sequence=sequence, offset=offset)
        return yaml

    def load(self, text: str) -> dict[str, Any]:
        from ruamel.yaml.comments import CommentedMap
        from ruamel.yaml.error import YAMLError
        from ruamel.yaml.util import load_yaml_guess_indent

        if not text.strip():
            return CommentedMap()
        try:
            # ruamel guesses how sequences are indented; mappings, from the first key
            # nested under another.
            _, sequence, offset = load_yaml_guess_indent(text)
            nested = re.search(r"^[^\s#][^\n]*:[ \t]*\n([ ]+)[^\s#-]", text, re.MULTILINE)
            mapping = len(nested.group(1)) if nested else 2
            indent = (mapping, sequence or mapping, offset or 0)
            data = self._yaml(indent).load(text)
        except YAMLError as exc:
            raise ValueError(str(exc)) from None
        if not isinstance(data, dict):
            raise ValueError("expected a YAML mapping")  # noqa: TRY004
        self._indents[id(data)] = indent
        return data

    def dump(self, document: dict[str, Any], original: str | None = None) -> str:
        out = io.StringIO()
        self._yaml(self._indents.get(id(document), (2, 2, 0))).dump(document, out)
        return out.getvalue()


CODECS: dict[str, Codec] = {"json": JsonCodec(), "toml": TomlCodec(), "yaml": YamlCodec()}


def read(path: str, fmt: Format) -> tuple[str | None, dict[str, Any]]:
    """The file's text (None when absent) and its document; refuses one it cannot parse."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        return None, CODECS[fmt].load("")
    except (OSError, UnicodeDecodeError) as exc:
        raise HostConfigError(f"{path}: cannot read it ({exc}); nothing changed") from None
    try:
        return text, CODECS[fmt].load(text)
    except ValueError as exc:
        raise HostConfigError(
            f"{path}: not valid {fmt.upper()} ({exc}); fix or move it, hookbus will not "
            "overwrite it"
        ) from None


def dump(document: dict[str, Any], fmt: Format, original: str | None = None) -> str:
    """``document`` in ``fmt``, keeping the layout of ``original`` (the file's text as
    :func:`read` returned it) where the codec can."""
    return CODECS[fmt].dump(document, original)
