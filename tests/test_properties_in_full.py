"""The unit run checks each property on a fifth of its examples; CI's run, on all."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import support

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize(
    ("markexpr", "full"),
    [(None, True), ("", True), ("not e2e", True), ("stress", True), ("not e2e and not stress", False),
     ("e2e", False), ("not (", True)],
)  # fmt: skip
def test_a_run_with_the_stress_tests_checks_every_property_in_full(
    markexpr: str | None, full: bool
) -> None:
    """A run that selects the ``stress`` tests (or cannot be read) uses the full counts."""
    assert support.in_full(markexpr) is full


def test_ci_checks_every_property_in_full() -> None:
    """CI's run of the suite (``.ci/run``, the README's command) selects the ``stress``
    tests, so it checks each property on all its examples."""
    for text in ((ROOT / ".ci" / "run").read_text(), (ROOT / "README.md").read_text()):
        markexprs = re.findall(r"pytest -n 4 -m '([^']*)'", text)
        assert markexprs, "no parallel pytest run found"
        assert all(support.in_full(m) for m in markexprs), markexprs


def test_this_run_uses_the_count_its_marks_call_for(request: pytest.FixtureRequest) -> None:
    """The counts this very run uses follow its ``-m``."""
    full = support.in_full(request.config.getoption("markexpr"))
    assert support.examples(300) == (300 if full else 60)
