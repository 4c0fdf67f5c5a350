"""The shared palette stays readable in Streamlit's light and dark themes (UX.md "Charts")."""

from __future__ import annotations

import pytest

from workbench.views import colors

PALETTES = {"phase": colors.PHASE_COLOURS, "status": colors.STATUS_COLOURS,
            "pressure": colors.PRESSURE_COLOURS, "fate": colors.FATE_COLOURS,
            "mark": colors.MARK_COLOURS, "series": colors.SERIES_COLOURS}


@pytest.mark.parametrize("name", sorted(PALETTES))
def test_every_colour_has_3_to_1_contrast_on_light_and_dark(name):
    """UX.md: colours readable in light and dark themes (WCAG 3:1 for graphics)."""
    for key, colour in PALETTES[name].items():
        for background in colors.BACKGROUNDS:
            assert colors.contrast_ratio(colour, background) >= 3.0, (name, key, background)


def test_palettes_use_the_spec_words():
    """R-PREP-3 statuses, R-PREP-1 phases, R-CMP-4 pressure colours, R-UI-3 fates."""
    assert set(colors.STATUS_COLOURS) == {"entered", "skipped", "candidate", "rejected", "applied"}
    assert set(colors.PHASE_COLOURS) == {"ready", "failed", "cancelled"}
    assert set(colors.PRESSURE_COLOURS) == {"green", "orange", "red"}
    assert set(colors.FATE_COLOURS) == {"archived", "summarised", "kept raw", "retained verbatim"}


def test_contrast_ratio_matches_known_values():
    assert colors.contrast_ratio("#000000", "#FFFFFF") == pytest.approx(21.0)
    assert colors.contrast_ratio("#FFFFFF", "#FFFFFF") == pytest.approx(1.0)
