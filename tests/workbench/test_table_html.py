"""The report's and the notebook's tables are written row by row (R-UI-8, R-UI-9): the same cells
pandas' ``to_html`` writes (its column formatting, escaping and missing values), without its HTML
writer, which was a quarter of a report's time (docs/performance.md)."""

from __future__ import annotations

import random
import re

import pandas as pd

from workbench.views.display import display_frame
from workbench.views.rich_html import _CODE_SPAN, _COUNT_WORDS, _cell, header_words, table_html

#: Cells that exercise pandas' formatting: text with escapes, double spaces, markup and code
#: spans, long text (never cut short), missing values, whole and fractional numbers, booleans.
CELLS = ("a", "b\nc", " lead", "tab\tx", "x  y", "", "long " * 30, None, float("nan"), 1, 2.5, 3.0,
         True, pd.NA, "<&>\"'", "`code` span", 1234567, 0.1234567)


def _pandas_table(frame: pd.DataFrame) -> str:
    """What table_html wrote when it called ``DataFrame.to_html``."""
    frame = display_frame(frame)
    shown = pd.DataFrame({header_words(c): [_cell(v, any(w in str(c) for w in _COUNT_WORDS))
                                            for v in frame[c]] for c in frame.columns})
    html = shown.to_html(index=False, escape=True, border=0, classes="wb-table")
    return '<div class="wb-scroll">' + _CODE_SPAN.sub(r"<code>\1</code>", html) + "</div>"


def _compacted(html: str) -> str:
    """The same table without whitespace between tags and the optional cell end tags."""
    return re.sub(r"</t[dh]>(?=<t[dh]\b|</tr>)", "", re.sub(r">\n\s*<", "><", html))


def test_r_ui_9_table_cells_are_what_pandas_to_html_writes():
    """R-UI-9 / R-UI-8: 300 random frames (typed columns too) give the bytes pandas' to_html gave,
    and the compact table is that table without the whitespace and optional end tags."""
    rng = random.Random(7)
    for _ in range(300):
        rows = rng.randint(1, 5)
        columns = {f"c{j}{rng.choice(['', '_tokens', '_saved', ' name'])}":
                   [rng.choice(CELLS) for _ in range(rows)] for j in range(rng.randint(1, 4))}
        frame = pd.DataFrame(columns)
        expected = _pandas_table(frame)
        assert table_html(frame) == expected, columns
        assert table_html(frame, compact=True) == _compacted(expected), columns
    typed = pd.DataFrame({"step": pd.array([1, None, 3], dtype="Int64"),
                          "phase": pd.array(["ready", None, "a  b"], dtype="str"),
                          "final_tokens": [1.0, 2.5, float("nan")], "share": [0.5, 0.25, 1 / 3]})
    assert table_html(typed) == _pandas_table(typed)
    assert "<td>0.333333</td>" in table_html(typed) and "<td>a&nbsp;&nbsp;b</td>" in table_html(typed)


def test_r_ui_9_an_empty_frame_is_the_note():
    """R-UI-9: an empty table is its note, escaped."""
    assert table_html(pd.DataFrame(), empty="no <steps>") == '<p class="wb-muted">no &lt;steps&gt;</p>'
