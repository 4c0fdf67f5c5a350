"""One palette for every view, so a colour means the same thing on every page and chart.

Streamlit users switch between light and dark themes, and plotly charts keep their trace colours
in both. Every colour here is chosen to keep a contrast of at least 3:1 (the WCAG figure for
graphics) against both the light background (#FFFFFF) and Streamlit's dark one (#0E1117), which
``tests/workbench/test_views_colors.py`` checks. Each mapping is keyed by the spec's own words (phases,
stage statuses, compaction fates, request marks), so a view never invents a synonym.
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = [
    "BACKGROUNDS",
    "FATE_COLOURS",
    "MARK_COLOURS",
    "PHASE_COLOURS",
    "PRESSURE_COLOURS",
    "SERIES_COLOURS",
    "STATUS_COLOURS",
    "contrast_ratio",
    "relative_luminance",
]

#: The two backgrounds every colour must stay readable on (Streamlit light and dark themes).
BACKGROUNDS: tuple[str, str] = ("#FFFFFF", "#0E1117")

_GREEN = "#16A34A"
_ORANGE = "#EA580C"
_AMBER = "#D97706"
_RED = "#DC2626"
_BLUE = "#2563EB"
_SKY = "#0284C7"
_VIOLET = "#8B5CF6"
_TEAL = "#0D9488"
_PINK = "#DB2777"
_SLATE = "#64748B"
_OCHRE = "#A16207"

#: Preparation phases (R-PREP-1).
PHASE_COLOURS: Mapping[str, str] = {"ready": _GREEN, "failed": _RED, "cancelled": _SLATE}

#: Stage statuses, the spec's five words exactly (R-PREP-3).
STATUS_COLOURS: Mapping[str, str] = {
    "entered": _BLUE, "skipped": _SLATE, "candidate": _AMBER, "rejected": _RED, "applied": _VIOLET,
}

#: Pressure colour of a request size (R-CMP-4): below the reminder, up to the line, at/over it.
PRESSURE_COLOURS: Mapping[str, str] = {"green": _GREEN, "orange": _ORANGE, "red": _RED}

#: Fate of a message in one compaction (R-UI-3 message timeline).
FATE_COLOURS: Mapping[str, str] = {
    "archived": _SLATE, "summarised": _VIOLET, "kept raw": _TEAL, "retained verbatim": _PINK,
}

#: Marks on messages of the final request (R-UI-2).
MARK_COLOURS: Mapping[str, str] = {
    "reduced": _AMBER, "trimmed": _ORANGE, "folded": _SKY, "dropped": _RED, "summarised": _VIOLET,
    "notice": _PINK,
}

#: Line series of the usage chart (R-UI-5).
SERIES_COLOURS: Mapping[str, str] = {
    "local estimate": _BLUE, "provider": _TEAL, "pressure line": _RED, "reminder line": _ORANGE,
    "compaction": _VIOLET, "summary usage": _PINK, "recorded compaction": _OCHRE,
    "trigger value": _SKY, "as-recorded estimate": _SLATE,
}


def relative_luminance(colour: str) -> float:
    """WCAG relative luminance of a ``#RRGGBB`` colour."""
    value = colour.lstrip("#")
    channels = [int(value[i:i + 2], 16) / 255 for i in (0, 2, 4)]
    linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast_ratio(first: str, second: str) -> float:
    """WCAG contrast ratio between two colours (1.0 … 21.0)."""
    high, low = sorted((relative_luminance(first), relative_luminance(second)), reverse=True)
    return (high + 0.05) / (low + 0.05)
