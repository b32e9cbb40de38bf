"""Reading an install back: how the files hookbus wrote differ from what the
configuration wants now (``hookbus verify``, and doctor's drift), and what fixes it."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import msgspec

if TYPE_CHECKING:
    from hookbus.bus.subscriptions import IndexData
    from hookbus.hosts.shared.manifest import CommandForm, Manifest, Scope


class Checked(msgspec.Struct, frozen=True, kw_only=True):
    """One settings file (or the folder of the files hookbus owns) at ``where``, compared
    with the configuration in the ``form`` installed: its ``drift``, one line a
    difference (none: up to date)."""

    where: str
    drift: list[str]
    form: CommandForm


def verify(  # noqa: PLR0917
    manifest: Manifest,
    index: IndexData | None,
    python: str,
    scope: Scope,
    form: CommandForm | None = None,
    server: bool | None = None,
    planned: dict[str, Any] | None = None,
) -> Iterator[Checked]:
    """Each file of ``scope``, compared with what install would write for ``index`` in
    the form asked for (``form``, ``server``: :func:`~hookbus.install.plan.chosen_form`),
    else the one installed. ``planned``: the manifest's extra keywords (Hermes's ``via``)."""
    from hookbus.hosts.shared import documents
    from hookbus.install.plan import chosen_form, installed_form, owned_form

    extra = planned or {}
    probe = manifest.plan(index, python=python, scope=scope, **extra)
    for document in probe.documents:
        _, current = documents.read(document.path, document.format)
        manifest.check(document.path, current)
        chosen = chosen_form(manifest, installed_form(manifest, current), form=form,
                             server=server)  # fmt: skip
        (wanted,) = [d for d in manifest.plan(index, python=python, scope=scope, form=chosen,
                                              **extra).documents
                     if d.path == document.path]  # fmt: skip
        yield Checked(where=document.path, drift=manifest.drift(current, wanted.entries),
                      form=chosen)  # fmt: skip
    candidates = manifest.owned_paths(scope)
    if candidates:
        from hookbus.hosts.shared import owned

        chosen = chosen_form(manifest, owned_form(manifest, scope), form=form, server=server)
        wanted_files = manifest.plan(index, python=python, scope=scope, form=chosen,
                                     **extra).owned  # fmt: skip
        yield Checked(where=os.path.dirname(candidates[0]),
                      drift=owned.drift(wanted_files, candidates), form=chosen)  # fmt: skip


def grouped(problems: list[str]) -> list[str]:
    """``problems`` (:meth:`Manifest.drift`'s lines) with the events that are missing said
    in one line: a handler that did not load may want any event, and makes every event
    of the host missing."""
    said = " is not registered"
    missing = [p.removeprefix("missing: ").partition(said)[0] for p in problems
               if p.startswith("missing: ") and said in p]  # fmt: skip
    if len(missing) < 2:
        return problems
    rest = [p for p in problems if not (p.startswith("missing: ") and said in p)]
    return [f"missing: {', '.join(missing)} (not registered, but an enabled handler may "
            "want them)", *rest]  # fmt: skip


def drift_fix(invalid: int, install: str) -> str:
    """What to do about a difference from the configuration: run ``install`` (the
    command that writes it), unless the configuration has ``invalid`` problems: then
    install refuses, and the difference may be that problem's (a handler that did not
    load may want every event), so the problem is fixed first."""
    if invalid:
        return (f"fix the configuration's {count(invalid, 'problem')} (above) first: "
                "install refuses until then")  # fmt: skip
    return f"run: {install}"


def count(n: int, what: str) -> str:
    """``n what`` with the plural ``s`` when ``n`` is not one."""
    return f"{n} {what}{'s' if n != 1 else ''}"
