"""import-pdf on six layouts the project did not design for, against their expected round trip.

The layouts are typeset from eight monographs of data/formulary by tests/fixtures/layouts/ (four with
reportlab in other styles, two as HTML + CSS printed by headless Chromium, skipped without it); the
round trip is measured sentence by sentence against those monographs.
"""

from __future__ import annotations

import pytest

from .fixtures.layouts.html_layouts import chromium
from .fixtures.layouts.measure import LAYOUTS, NEEDS_CHROMIUM, expected, measure

# ~4 s each on a quiet machine; the Chromium ones print first and read one text object per glyph (~8 s)
CASES = [pytest.param(name, marks=pytest.mark.slow) if name in NEEDS_CHROMIUM else name for name in LAYOUTS]


@pytest.mark.parametrize("name", CASES)
def test_foreign_layout_round_trip(name, tmp_path):
    if name in NEEDS_CHROMIUM and chromium() is None:
        pytest.skip("Chromium is not installed (make e2e-deps)")
    target = expected()[name]
    measured = measure(name, tmp_path)
    trip, report = measured.round_trip, measured.result.report
    summary = trip.summary() + "\n" + report.render()
    assert trip.sentence_recall >= target["sentence_recall"] >= 0.99, summary
    assert not trip.missing_monographs and not trip.extra_monographs and not trip.missing_sections, summary
    assert not measured.silent_moves, summary
    assert trip.line_start_recall >= target["line_start_recall"], summary
    assert not trip.extra_line_starts, summary  # a break the source does not have cuts a sentence
    assert trip.tables == trip.tables_found == target["tables"], summary
    if target["tables_joined"] is not None:
        assert len(report.joined_tables) == target["tables_joined"], summary
    assert report.exit_status == target["exit_status"], summary
    assert report.line_counts.get("not placed", 0) == 0 and not report.front_matter_pages, summary
