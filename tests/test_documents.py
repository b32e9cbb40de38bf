"""The user's settings files keep what is theirs through an edit: comments, key order and
layout in TOML and YAML; a file that cannot be parsed is refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hookbus.bus.errors import HostConfigError
from hookbus.hosts.shared import documents

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


# -- JSON, edited in place ------------------------------------------------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from support import examples  # noqa: E402

scalars = st.none() | st.booleans() | st.integers(-5, 5) | st.floats(allow_nan=False,
          allow_infinity=False, width=16) | st.text(max_size=4)  # fmt: skip
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3)
                      | st.dictionaries(st.text(max_size=3), inner, max_size=3), max_leaves=6)  # fmt: skip
objects = st.dictionaries(st.text(max_size=4), values, max_size=5)
layouts = st.sampled_from([
    {"indent": None, "separators": (",", ":")},
    {"indent": None, "separators": (", ", ": ")},
    {"indent": 2},
    {"indent": "\t"},
    {"indent": 4, "separators": (",", " : ")},
])  # fmt: skip


@st.composite
def edits(draw: st.DrawFn) -> tuple[str, dict[str, object], dict[str, object]]:
    """An object in some layout (with or without a final newline), and an edit of it:
    members removed, values changed (``1`` to ``true`` too), members added at the end."""
    original = draw(objects)
    text = json.dumps(original, **draw(layouts)) + draw(st.sampled_from(["", "\n", "\n\n"]))
    edited = {}
    for key, value in original.items():
        choice = draw(st.sampled_from(["keep", "keep", "drop", "change"]))
        if choice == "keep":
            edited[key] = value
        elif choice == "change":
            edited[key] = draw(values)
    for key, value in draw(objects).items():
        edited.setdefault(key, value)
    return text, original, edited


@pytest.mark.timeout(300)  # hundreds of examples: minutes on a loaded machine
@settings(max_examples=examples(400), deadline=None)
@given(edits())
def test_a_json_edit_gives_exactly_the_document_and_keeps_untouched_members(
    case: tuple[str, dict[str, object], dict[str, object]],
) -> None:
    text, original, edited = case
    out = documents.dump(edited, "json", original=text)
    assert documents.same(json.loads(out), edited), (text, out)
    assert list(json.loads(out)) == list(edited)  # key order, too
    # Given back: the original text, byte for byte, when nothing changed.
    assert documents.dump(original, "json", original=text) == text
    kept = [k for k in edited if k in original]
    if kept != [k for k in original if k in edited] or list(edited)[: len(kept)] != kept:
        return  # reordered: written afresh (what install does never reorders)
    _, members, _ = documents._members(text)
    for m in members:  # an untouched member keeps its bytes
        if m.key in edited and documents.same(edited[m.key], original[m.key]):
            assert text[m.start : m.value_end] in out, (text, out, m.key)


def test_a_repeated_key_is_not_spliced() -> None:
    """Which of two ``hooks`` keys counts is the reader's guess: a clean dump instead."""
    text = '{"model":"opus","hooks":{},"hooks":{"Stop":[]}}'
    out = documents.dump({"model": "opus"}, "json", original=text)
    assert json.loads(out) == {"model": "opus"}
