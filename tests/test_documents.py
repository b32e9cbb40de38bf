"""The user's settings files keep what is theirs through an edit: comments, key order and
layout in TOML and YAML; a file that cannot be parsed is refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from hookbus.errors import HostConfigError
from hookbus.manifests import documents

CODEX = """\
# my Codex settings
model = "gpt-5"   # the one I pay for

[profiles.fast]
model = "gpt-5-mini"
"""

HERMES = """\
# Hermes: keep my comments
model: claude-opus   # main model
plugins:
  - mine            # my own plugin
delegation:
  model: 'claude-haiku'
"""


@pytest.mark.parametrize(
    ("fmt", "text", "edit", "kept"),
    [
        ("toml", CODEX, lambda d: d.update({"hooks": {"enabled": True}}),
         ["# my Codex settings", 'model = "gpt-5"   # the one I pay for', "[profiles.fast]"]),
        ("yaml", HERMES, lambda d: d["plugins"].append("hookbus"),
         ["# Hermes: keep my comments", "model: claude-opus   # main model",
          "  - mine            # my own plugin", "  model: 'claude-haiku'"]),
    ],
)  # fmt: skip
def test_an_edit_keeps_the_users_comments_and_layout(
    tmp_path: Path, fmt: documents.Format, text: str, edit: object, kept: list[str]
) -> None:
    """Adding hookbus's part leaves every comment, quote and line of the user's as it was."""
    path = tmp_path / f"settings.{fmt}"
    path.write_text(text)
    before, document = documents.read(str(path), fmt)
    assert before == text
    edit(document)  # type: ignore[operator]
    out = documents.dump(document, fmt)
    for line in kept:
        assert line in out.splitlines()
    assert documents.dump(documents.read(str(path), fmt)[1], fmt) == text  # untouched: same bytes


@pytest.mark.parametrize(
    ("fmt", "broken"),
    [("json", "{not json"), ("toml", "model = = 1"), ("yaml", "a: [unclosed")],
)
def test_a_file_that_cannot_be_parsed_is_refused(
    tmp_path: Path, fmt: documents.Format, broken: str
) -> None:
    """hookbus never overwrites what it cannot read, and says so."""
    path = tmp_path / f"settings.{fmt}"
    path.write_text(broken)
    with pytest.raises(HostConfigError, match="will not overwrite it"):
        documents.read(str(path), fmt)


def test_a_missing_file_is_an_empty_document(tmp_path: Path) -> None:
    """No file yet: an empty document of the right kind, and no text."""
    for fmt in ("json", "toml", "yaml"):
        text, document = documents.read(str(tmp_path / "absent"), fmt)  # type: ignore[arg-type]
        assert (text, dict(document)) == (None, {})
