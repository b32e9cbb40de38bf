"""``hookbus.install`` as a library: install, verify and uninstall called from Python
return what they did, file by file, and print nothing."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from support import SHELL_AND_LIFECYCLE

from hookbus.install import plan, verify, write


def test_install_verify_uninstall_return_their_results_and_print_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    """Claude's project settings installed, read back up to date, drifted once a handler
    is added, and uninstalled: each step a typed result, nothing on stdout or stderr."""
    # A module name of its own: an earlier test in this process may have imported another
    # project's ``hooks_mod``, which the index's compile (a fork of this process) would see.
    project = tmp_path / "proj"
    project.mkdir()
    (project / "library_hooks.py").write_text(SHELL_AND_LIFECYCLE)
    monkeypatch.chdir(project)
    settings = str(project / ".claude" / "settings.json")
    manifest = plan.manifest_of("claude")
    scope = plan.scope_of("claude", manifest, None)
    (project / ".hookbus.toml").write_text('enable = ["library_hooks:shell"]\n')
    index = plan.compiled_index(plan.config_files(scope, manifest))
    form = plan.chosen_form(manifest, plan.installed(manifest, index, sys.executable, scope))
    planned = manifest.plan(index, python=sys.executable, scope=scope, form=form)
    done = list(write.install(manifest, planned, "claude", scope, form, sys.executable))
    assert done == [write.DocumentInstalled(path=settings, outcome="installed", shared=True)]
    checked = list(verify.verify(manifest, index, sys.executable, scope))
    assert checked == [verify.Checked(where=settings, drift=[], form="server")]
    (project / ".hookbus.toml").write_text(
        'enable = ["library_hooks:shell", "library_hooks:lifecycle"]\n'
    )
    wider = plan.compiled_index(plan.config_files(scope, manifest))
    (drifted,) = verify.verify(manifest, wider, sys.executable, scope)
    assert verify.grouped(drifted.drift) == [
        "missing: SessionStart, Stop (not registered, but an enabled handler may want them)"]  # fmt: skip
    removed = list(write.uninstall(manifest, scope, "claude"))
    assert removed == [write.DocumentRemoved(path=settings, outcome="created",
                                             pruned=[str(project / ".claude")])]  # fmt: skip
    assert capfd.readouterr() == ("", "")
