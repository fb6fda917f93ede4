"""Proof under load (issue 18): a busy machine may make verdicts unclear, never reverse them.

Each proven chapter runs twice in gallery order, in one process as the docs build runs it,
in fast mode: quietly (the run the gallery-order test shares), then while busy loops compete
for every core (``harness.busy_cpus``). No verdict of any example may go from yes to no or
back between the two runs ("unclear" is allowed), and each example's loaded run must report
that the machine was disturbed. A chapter joins by its name in ``PROVEN_CHAPTERS`` once its pages
make their verdicts through compperf's verdict API.
"""

from __future__ import annotations

import pytest
from harness import chapters, quiet_and_loaded, verdict_flips

# Every check here runs the chapter's pages: `nox -s examples`, not `nox -s tests`.
pytestmark = pytest.mark.executes

# The chapters whose every verdict comes from compperf.conclude/interleave (issue 18).
PROVEN_CHAPTERS = ["asynchronous"]


def test_proven_chapters_are_chapters():
    assert set(PROVEN_CHAPTERS) <= set(chapters())


@pytest.mark.parametrize("chapter", PROVEN_CHAPTERS)
def test_no_verdict_flips_under_load_and_the_load_is_reported(chapter: str):
    runs = quiet_and_loaded(chapter)
    flips = {
        name: verdict_flips(quiet.verdicts, loaded.verdicts)
        for name, (quiet, loaded) in runs.items()
    }
    assert not any(flips.values()), flips
    # The pages made verdicts at all (a chapter without any proves nothing here).
    assert any(quiet.verdicts for quiet, _ in runs.values()), chapter
    for name, (quiet, loaded) in runs.items():
        for run in (quiet, loaded):
            assert run.disturbance, f"{name}: no disturbance recorded"
            assert all(v["outcome"] in ("yes", "no", "unclear") for v in run.verdicts)
        # Busy loops on every core: the CPU pressure shows it wherever Linux reports it.
        if loaded.disturbance["pressure"] is not None:
            assert loaded.disturbance["disturbed"], (name, loaded.disturbance)
            assert "pressure" in loaded.disturbance["reasons"], (name, loaded.disturbance)
