"""Typed tables and exportable figures for the notebook API (R-UI-8).

Every table the notebook returns has one fixed dtype per column, also when it has no rows, so
``pd.concat`` of the tables of several sessions keeps token counts numeric (an empty frame built
from no rows would otherwise hold ``object`` columns and turn the concatenation into objects).
Counts are ``int64`` (``Int64`` where a value may be missing), words are ``str``, structured
columns (``decision_kinds``, ``cut_points``, ``marks``) hold dicts and lists.

Figures carry a title and, next to plotly's own mimetype, an HTML rendering with plotly.js from
the installed plotly package, so a notebook exported to HTML with nbconvert shows them offline.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

import pandas as pd
import plotly.graph_objects as go

__all__ = ["SCHEMAS", "NotebookFigure", "notebook_figure", "typed"]

_WORDS, _COUNT, _MAYBE = "str", "int64", "Int64"

#: Column → dtype of every table the notebook returns, by table name.
SCHEMAS: dict[str, dict[str, str]] = {
    "stages": {"step": _COUNT, "stage": _WORDS, "status": _WORDS, "before_tokens": _COUNT,
               "after_tokens": _COUNT, "change": _COUNT, "decisions": _COUNT,
               "decision_kinds": "object", "note": _WORDS, "local_before_tokens": _COUNT,
               "local_after_tokens": _COUNT},
    "decisions": {"step": _COUNT, "stage": _WORDS, "kind": _WORDS, "what": _WORDS,
                  "reason": _WORDS, "message": _MAYBE, "ref": "object"},
    "usage": {"step": _COUNT, "phase": _WORDS, "local_estimate": _COUNT, "provider_tokens": _MAYBE,
              "estimated": "bool", "difference": _MAYBE, "ratio": "Float64",
              "compaction_applied": "bool", "pressure_line": _COUNT, "reminder_line": _MAYBE,
              "as_recorded_estimate": _MAYBE, "error_pct": "Float64", "replayed_request": _COUNT,
              "trigger_tokens": _MAYBE, "trigger_basis": _WORDS},
    "summary_usage": {"kind": _WORDS, "calls": _COUNT, "prompt_tokens": _COUNT,
                      "input_tokens": _COUNT, "output_tokens": _COUNT, "attempts": _COUNT,
                      "failures": _COUNT, "refused": _COUNT, "cache_hits": _COUNT},
    "compactions": {"n": _COUNT, "step": _COUNT, "cut_index": _COUNT, "tokens_before": _MAYBE,
                    "tokens_after": _MAYBE, "trigger_value": _MAYBE, "trigger_basis": _WORDS,
                    "history_tokens_before": _COUNT, "history_tokens_after": _COUNT,
                    "checkpoint_tokens": _COUNT, "archive": _WORDS, "reason": _WORDS},
    "attempts": {"step": _COUNT, "outcome": _WORDS, "attempt": _MAYBE, "what": _WORDS,
                 "reason": _WORDS},
    "failures": {"step": _COUNT, "phase": _WORDS, "stage": _WORDS, "kind": _WORDS,
                 "error": _WORDS, "link": _WORDS},
    "steps": {"step": _COUNT},  # and Int64 ``tokens · <label>`` / ``difference`` columns
    "totals": {"configuration": _WORDS, "steps": _COUNT, "failed_steps": _COUNT,
               "tokens_sent": _COUNT, "compactions": _COUNT, "cut_points": "object",
               "reduction_saved": _COUNT, "fold_saved": _COUNT, "summary_calls": _COUNT,
               "summary_input_tokens": _COUNT, "summary_output_tokens": _COUNT,
               "input_budget": _COUNT, "budget_source": _WORDS, "pressure_line": _COUNT},
    "compared_compactions": {"configuration": _WORDS, "n": _COUNT, "step": _COUNT,
                             "tokens_before": _MAYBE, "tokens_after": _MAYBE,
                             "cut_index": _COUNT, "first_kept_message": _MAYBE,
                             "archived_messages": _COUNT, "summary_input_tokens": _COUNT,
                             "summary_output_tokens": _COUNT},
    "sessions": {"id": _WORDS, "title": _WORDS, "format": _WORDS, "messages": _COUNT,
                 "responses": _COUNT, "tool_calls": _COUNT, "estimated_tokens": _MAYBE,
                 "imported_at": "datetime64[us, UTC]", "source_path": _WORDS, "parent_id": "object",
                 "unplaced_lines": _COUNT},
    "messages": {"index": _COUNT, "role": _WORDS, "batch": _MAYBE, "content": _WORDS,
                 "estimate": _COUNT, "prompt_tokens": _MAYBE, "input_tokens": _MAYBE,
                 "cache_read_tokens": _MAYBE, "cache_write_tokens": _MAYBE,
                 "output_tokens": _MAYBE, "model": _WORDS, "timestamp": "datetime64[us, UTC]",
                 "tool_calls": "object", "error": "bool", "compaction_summary": "bool",
                 "synthetic": "bool"},
    "fidelity": {"source": _WORDS, "n": _COUNT, "step": _COUNT, "kind": _WORDS, "facts": _COUNT,
                 "kept": _COUNT, "needed_later": _COUNT, "needed_later_kept": _COUNT,
                 "recall_needed_later": "Float64", "never_recovered": _COUNT,
                 "recovery_tokens": _COUNT},
    "lost": {"source": _WORDS, "n": _COUNT, "step": _COUNT, "kind": _WORDS, "fact": _WORDS,
             "stated_at_message": _COUNT, "needed_at_step": _COUNT, "needed_at_message": _COUNT,
             "recovered_at_step": _MAYBE, "recovered_by": "object", "recovery_tokens": _MAYBE},
    "request": {"position": _COUNT, "role": _WORDS, "origin": _WORDS, "label": _WORDS,
                "marks": "object", "chars": _COUNT, "history_index": _MAYBE, "changed": "bool",
                "text": _WORDS, "original_text": _WORDS},
}


def typed(frame: pd.DataFrame, table: str) -> pd.DataFrame:
    """``frame`` with the dtypes of :data:`SCHEMAS` ``[table]`` (columns it lacks are left out;
    Int64 for the extra columns of a comparison's ``steps``)."""
    schema = dict(SCHEMAS[table])
    if table == "steps":
        schema |= {c: _MAYBE for c in frame.columns if c != "step"}
    wanted = {c: t for c, t in schema.items() if c in frame.columns and str(frame[c].dtype) != t}
    return frame.astype(wanted) if wanted else frame


def rows_frame(rows: Sequence[Mapping[str, Any]], table: str) -> pd.DataFrame:
    """A typed frame of ``rows`` with the columns of :data:`SCHEMAS` ``[table]`` in order."""
    return typed(pd.DataFrame(list(rows), columns=list(SCHEMAS[table])), table)


#: Whether this process has sent plotly.js with a figure's HTML (once per kernel is enough: the
#: figures of one notebook share the page it is exported to).
_sent = {"plotlyjs": False}


class NotebookFigure(go.Figure):
    """A plotly figure that Jupyter shows through plotly's renderer and that nbconvert exports as
    HTML: the first figure a kernel shows carries plotly.js (from the installed plotly package,
    no network); the later ones draw with it."""

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None, validate: bool = True,
                          **kwargs: Any) -> dict[str, Any]:
        import plotly.io as pio

        bundle = pio.renderers["plotly_mimetype"].to_mimebundle(self.to_dict())
        first = not _sent["plotlyjs"]
        _sent["plotlyjs"] = True
        html = self.to_html(full_html=False, include_plotlyjs=first,
                            config={"displaylogo": False, "responsive": True})
        title = self.layout.title.text or "figure"
        return {**bundle, "text/html": html, "text/plain": f"<Figure: {title}>"}

    def _repr_html_(self) -> str:
        return self._repr_mimebundle_()["text/html"]

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self._repr_mimebundle_(), raw=True)


def notebook_figure(fig: go.Figure, title: str) -> NotebookFigure:
    """``fig`` as a :class:`NotebookFigure` titled ``title`` (room made above the plot, more when
    the legend sits above it)."""
    out = NotebookFigure(fig)
    top = out.layout.margin.t
    legend_above = (out.layout.legend.y or 0) > 1
    out.update_layout(title={"text": escape(title), "x": 0, "xanchor": "left"},
                      margin={"t": max(top if top is not None else 0, 90 if legend_above else 60)})
    return out
