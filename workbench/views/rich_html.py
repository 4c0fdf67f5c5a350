"""HTML pieces shared by the notebook's rich displays and the HTML report (R-UI-8, R-UI-9).

Transcript content reaches these functions (tool outputs, error messages, tool names), so every
string goes through :func:`html.escape` or pandas' escaping ``to_html``: a transcript that contains
``<script>`` is shown as text, never run. Colours come from :mod:`workbench.views.colors`, which
keeps them readable on light and dark backgrounds; text and table colours are inherited, so a dark
Jupyter theme stays dark.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from html import escape
from numbers import Integral, Real
from typing import Any, SupportsInt

import pandas as pd

from .colors import MARK_COLOURS, STATUS_COLOURS
from .display import display_frame
from .recorded import budget_label

__all__ = ["STYLE", "comparison_html", "header_words", "inline_html", "replay_html", "step_html",
           "table_html"]

#: How much of a message is shown before it is collapsed behind "show all".
PREVIEW_CHARS = 2000

STYLE = """
.wb { font-family: system-ui, sans-serif; line-height: 1.4; }
.wb table.wb-table { border-collapse: collapse; margin: 0.4em 0 1em; font-size: 0.9em; }
.wb table.wb-table th, .wb table.wb-table td { border: 1px solid rgba(127,127,127,0.35);
  padding: 0.2em 0.5em; text-align: left; vertical-align: top; }
.wb table.wb-table th { background: rgba(127,127,127,0.12); }
.wb .wb-badge { display: inline-block; padding: 0 0.5em; border-radius: 0.6em; color: #fff;
  font-weight: 600; font-size: 0.85em; }
.wb .wb-msg { border-left: 5px solid rgba(127,127,127,0.35); padding: 0.2em 0.7em; margin: 0.5em 0; }
.wb pre { white-space: pre-wrap; word-break: break-word; margin: 0.3em 0;
  background: rgba(127,127,127,0.08); padding: 0.4em; }
.wb .wb-error { border-left: 5px solid #DC2626; padding: 0.3em 0.7em; }
.wb .wb-muted { opacity: 0.75; font-size: 0.9em; }
.wb .wb-scroll { overflow-x: auto; max-width: 100%; }
"""


#: Columns holding token counts (whole figures shown with thousands separators even when the
#: column holds fractions elsewhere).
_COUNT_WORDS = ("token", "saved", "line", "budget", "sent", "estimate", "difference", "request")


def _cell(value: Any, count: bool) -> Any:
    kind = type(value)  # the common exact types first: the checks below are slow per cell
    if kind is str:
        return value
    if kind is int:
        return f"{value:,}"
    if kind is float and not math.isnan(value):  # NaN is a missing value
        return f"{int(value):,}" if count and value == int(value) else value
    if value is None or (not isinstance(value, (str, bytes)) and pd.isna(value)):
        return ""
    if isinstance(value, bool) or not isinstance(value, Real) or not isinstance(value, SupportsInt):
        return value
    if isinstance(value, Integral) or (count and value == int(value)):
        return f"{int(value):,}"
    return value


def header_words(name: Any) -> str:
    """A data column's name as a table header: ``failed_steps`` → ``failed steps``."""
    return str(name).replace("_", " ")


def table_html(frame: pd.DataFrame, *, empty: str = "nothing to show", compact: bool = False) -> str:
    """A DataFrame as an escaped HTML table that scrolls sideways when wide; structured columns
    in words (:func:`~workbench.views.display.display_frame`), missing values are empty cells and
    token counts get thousands separators.

    The cells are the text ``DataFrame.to_html(index=False, escape=True)`` writes (pandas' own
    column formatting), written here row by row: pandas' HTML writer is most of a report's table
    time. ``compact`` leaves out the whitespace between the tags and the optional cell end tags
    (the report: a third and a fifth of a long table's bytes, drawing nothing)."""
    if frame.empty:
        return f'<p class="wb-muted">{escape(empty)}</p>'
    frame = display_frame(frame)
    columns = [header_words(c) for c in frame.columns]
    with pd.option_context("display.max_colwidth", None):  # as to_html: no cell is cut short
        texts = [_column_texts([_cell(v, any(w in str(c) for w in _COUNT_WORDS)) for v in frame[c]])
                 for c in frame.columns]
    html = _rows_html(columns, texts, compact)
    return '<div class="wb-scroll">' + _CODE_SPAN.sub(r"<code>\1</code>", html) + "</div>"


def _column_texts(values: list[Any]) -> list[str]:
    """One column's cells as pandas' ``to_html`` formats them (a float column to one precision)."""
    from pandas.io.formats import format as pandas_format

    # pandas' own cell formatter, private (pandas-stubs leaves it out): typed here as it is called
    format_array: Callable[..., list[str]] = vars(pandas_format)["format_array"]
    if all(type(v) is str and not _ESCAPED_BY_PANDAS.intersection(v) for v in values):
        return values  # pandas writes such text as it is (padded, and the padding is stripped)
    return format_array(pd.Series(values)._values, None, leading_space=False)


#: The characters pandas writes as escapes (``\\n``) in a cell of text.
_ESCAPED_BY_PANDAS = frozenset("\t\r\n")

#: What ``to_html(escape=True)`` escapes in a cell (quotes stay as they are).
_CELL_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;"})


def _cell_html(text: str) -> str:
    return text.translate(_CELL_ESCAPES).strip().replace("  ", "&nbsp;&nbsp;")


def _rows_html(columns: list[str], texts: list[list[str]], compact: bool) -> str:
    """The table of ``DataFrame.to_html(index=False, escape=True, border=0, classes="wb-table")``;
    compact: without the whitespace between tags and the optional cell end tags."""
    rows = zip(*texts) if texts else ()
    if compact:
        head = "".join(f"<th>{_cell_html(c)}" for c in columns)
        body = "".join("<tr>" + "".join(f"<td>{_cell_html(t)}" for t in row) + "</tr>" for row in rows)
        return (f'<table class="dataframe wb-table"><thead><tr style="text-align: right;">{head}</tr>'
                f"</thead><tbody>{body}</tbody></table>")
    head = "".join(f"\n      <th>{_cell_html(c)}</th>" for c in columns)
    body = "".join("\n    <tr>" + "".join(f"\n      <td>{_cell_html(t)}</td>" for t in row) + "\n    </tr>"
                   for row in rows)
    return (f'<table class="dataframe wb-table">\n  <thead>\n    <tr style="text-align: right;">{head}'
            f"\n    </tr>\n  </thead>\n  <tbody>{body}\n  </tbody>\n</table>")


#: A Markdown code span in already escaped text (no tag inside: it never spans two cells).
_CODE_SPAN = re.compile(r"`([^`<>]+)`")


def inline_html(text: str) -> str:
    """Escaped text with its Markdown code spans (the pages' `name`) as ``<code>``, so the
    report and the notebook show what the pages render, never literal backticks."""
    return _CODE_SPAN.sub(r"<code>\1</code>", escape(text))


def badge(text: str, colour: str) -> str:
    return f'<span class="wb-badge" style="background:{colour}">{escape(text)}</span>'


def _status_cells(frame: pd.DataFrame) -> str:
    """The stage table with each status in its colour (the status words are the spec's)."""
    shown = frame.copy()
    html = table_html(shown)
    for status, colour in STATUS_COLOURS.items():
        html = html.replace(f"<td>{status}</td>",
                            f'<td><b style="color:{colour}">{status}</b></td>')
    return html


def _message_html(message: Any) -> str:
    colour = MARK_COLOURS.get(message.marks[0]) if message.marks else None
    border = f' style="border-left-color:{colour}"' if colour else ""
    marks = " ".join(badge(m, MARK_COLOURS.get(m, "#64748B")) for m in message.marks)
    text = message.text
    body = f"<pre>{escape(text[:PREVIEW_CHARS])}{'…' if len(text) > PREVIEW_CHARS else ''}</pre>"
    if len(text) > PREVIEW_CHARS:
        body += (f"<details><summary>show all ({len(text):,} characters)</summary>"
                 f"<pre>{escape(text)}</pre></details>")
    if message.original_text is not None:
        body += (f"<details><summary>original ({len(message.original_text):,} characters)"
                 f"</summary><pre>{escape(message.original_text)}</pre></details>")
    return (f'<div class="wb-msg"{border}><b>{message.position} · {escape(message.role)}</b> · '
            f"{escape(message.label)} {marks}{body}</div>")


def _final(header: Any) -> int:
    """The step's final request as the header states it: whole request when recorded."""
    whole = getattr(header, "whole_request_tokens", None)
    return header.final_input_tokens if whole is None else whole


def _whole_words(header: Any) -> str:
    return "" if getattr(header, "whole_request_tokens", None) is None else " (whole request)"


def step_html(prep: Any, header: Any, stages: pd.DataFrame, decisions: pd.DataFrame,
              messages: Sequence[Any]) -> str:
    """One preparation: header, stage table, decisions, final request (all escaped)."""
    reminder = f"{prep.reminder_line:,}" if prep.reminder_line is not None else "off"
    parts = [f"<style>{STYLE}</style><div class='wb'>",
             f"<h4>Step {prep.step_index} {badge(header.phase, header.phase_colour)}</h4>",
             (f"<p>Final input{_whole_words(header)} <b style='color:{header.pressure_colour}'>"
              f"{_final(header):,}</b> of {header.input_budget:,} "
              f"({header.percent_of_budget}%) · pressure line {prep.pressure_line:,} · reminder "
              f"{reminder} · trigger compared {escape(header.trigger_label)} · provider usage "
              f"of this response {escape(header.provider_label)} · response message "
              f"#{prep.response_message_index}</p>")]
    if header.error:
        parts.append(f"<p class='wb-error'>{escape(header.phase)} in stage "
                     f"<code>{escape(header.error_stage or '—')}</code>: {escape(header.error)}</p>")
    parts += ["<b>Stages</b>", _status_cells(stages),
              f"<details><summary><b>Decisions</b> ({len(decisions)})</summary>",
              table_html(decisions, empty="no decisions"), "</details>",
              f"<details><summary><b>Final request</b> ({len(messages)} messages)</summary>",
              *([_message_html(m) for m in messages] or ["<p class='wb-muted'>no final request</p>"]),
              "</details></div>"]
    return "".join(parts)


def replay_html(session_id: str, totals: Mapping[str, Any], thresholds: Any) -> str:
    """A replay's one-line identity and its totals."""
    frame = pd.DataFrame([dict(totals)])
    return (f"<style>{STYLE}</style><div class='wb'><b>Replay {escape(str(totals['configuration']))}</b> of "
            f"<code>{escape(session_id)}</code> · budget "
            f"{escape(budget_label(thresholds.input_budget, thresholds.budget_source, getattr(thresholds, 'budget_detail', '')))}"
            " · pressure line "
            f"{thresholds.pressure_line:,}{table_html(frame)}</div>")


def comparison_html(labels: Sequence[str], totals: pd.DataFrame) -> str:
    """Two replays side by side: their totals."""
    title = " vs ".join(escape(label) for label in labels)
    return f"<style>{STYLE}</style><div class='wb'><b>{title}</b>{table_html(totals)}</div>"
