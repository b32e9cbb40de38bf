"""``trust.file_problem`` judges the file a path ends at and that file's folder, links
followed; it resolves the path (an lstat per component) only when the path itself is a
link, so over any layout of links and permissions it must say what resolving it first
says."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import examples

from hookbus.local import trust


def resolved_first(path: str) -> str | None:
    """The rule, restated the long way: resolve ``path``, then judge the file and its folder."""
    try:
        real = os.path.realpath(path)
        st_file = os.stat(real)
    except OSError as exc:
        return f"cannot be checked ({exc.strerror or exc})"
    if not stat.S_ISREG(st_file.st_mode):
        return "is not a regular file"
    why = trust.writable_by_others(st_file)
    if why:
        return f"is {why}"
    folder = os.path.dirname(real)
    try:
        folder_st = os.stat(folder)
    except OSError as exc:
        return f"has a folder that cannot be checked ({exc.strerror or exc})"
    why = trust.writable_by_others(folder_st)
    if why:
        return f"is in {folder}, which is {why}"
    return None


#: What a folder of the chain is: a plain one, one anyone may write to, a link to a
#: plain or a world-writable folder elsewhere.
FOLDER = st.sampled_from(["plain", "world", "link", "link-to-world"])
#: What the path ends at: a file, a world-writable file, a link to a file in a world-
#: writable folder, a link to a folder, a dangling link, nothing.
LEAF = st.sampled_from(["file", "world-file", "link-to-exposed", "link-to-folder",
                        "dangling", "missing"])  # fmt: skip


def _folder(base: Path, name: str, kind: str) -> Path:
    path = base / name
    if kind.startswith("link"):
        target = base.parent / f"real-{base.name}-{name}"
        target.mkdir()
        if kind == "link-to-world":
            target.chmod(0o777)
        path.symlink_to(target)
    else:
        path.mkdir()
        if kind == "world":
            path.chmod(0o777)
    return path


def _leaf(folder: Path, kind: str, top: Path) -> Path:
    path = folder / ".hookbus.toml"
    if kind in ("file", "world-file"):
        path.write_text("")
        path.chmod(0o666 if kind == "world-file" else 0o644)
    elif kind == "link-to-exposed":
        exposed = top / "exposed"
        exposed.mkdir(exist_ok=True)
        exposed.chmod(0o777)
        (exposed / "target.toml").write_text("")
        path.symlink_to(exposed / "target.toml")
    elif kind == "link-to-folder":
        path.symlink_to(top)
    elif kind == "dangling":
        path.symlink_to(top / "nowhere")
    return path


@settings(max_examples=examples(80), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(folders=st.lists(FOLDER, min_size=1, max_size=3), leaf=LEAF, dotdot=st.booleans())
def test_a_path_is_judged_as_if_resolved_first(folders: list[str], leaf: str, dotdot: bool) -> None:
    with tempfile.TemporaryDirectory() as top:
        root = Path(top) / "tree"
        root.mkdir()
        here = root
        for i, kind in enumerate(folders):
            here = _folder(here, f"d{i}", kind)
        path = _leaf(here, leaf, Path(top))
        text = str(path)
        if dotdot:  # through a link, then back up: the kernel's order, as realpath's
            (here / "sub").mkdir(exist_ok=True)
            text = str(here / "sub" / ".." / ".hookbus.toml")
        assert trust.file_problem(text) == resolved_first(text)


def test_a_file_in_a_linked_folder_names_the_real_folder(tmp_path: Path) -> None:
    """A plain file reached through a link to a world-writable folder is refused, and the
    problem names the folder the link leads to."""
    exposed = tmp_path / "exposed"
    exposed.mkdir()
    exposed.chmod(0o777)
    (exposed / ".hookbus.toml").write_text("")
    (tmp_path / "project").symlink_to(exposed)
    problem = trust.file_problem(str(tmp_path / "project" / ".hookbus.toml"))
    assert problem == f"is in {exposed}, which is writable by every user"
