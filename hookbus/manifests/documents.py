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
import json
import re
from typing import Any, Literal, Protocol

from hookbus.errors import HostConfigError

Format = Literal["json", "toml", "yaml"]


class Codec(Protocol):
    def load(self, text: str) -> dict[str, Any]:
        """The document (an empty one for empty text); ValueError when it cannot be parsed."""
        ...

    def dump(self, document: dict[str, Any]) -> str: ...


class JsonCodec:
    def load(self, text: str) -> dict[str, Any]:
        data = json.loads(text) if text.strip() else {}
        if not isinstance(data, dict):
            raise ValueError("expected a JSON object")  # noqa: TRY004
        return data

    def dump(self, document: dict[str, Any]) -> str:
        return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


class TomlCodec:
    def load(self, text: str) -> dict[str, Any]:
        import tomlkit

        try:
            return tomlkit.parse(text)
        except tomlkit.exceptions.ParseError as exc:
            raise ValueError(str(exc)) from None

    def dump(self, document: dict[str, Any]) -> str:
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

    def dump(self, document: dict[str, Any]) -> str:
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


def dump(document: dict[str, Any], fmt: Format) -> str:
    return CODECS[fmt].dump(document)
