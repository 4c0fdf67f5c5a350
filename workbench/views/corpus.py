"""What the Corpus page shows of a batch output directory, as plain functions.

Input is the ``sessions`` table of :func:`workbench.corpus.batch.read_table` (one row per session and
configuration). Outputs: totals per configuration, a tokens-saved-vs-failed-preparations chart
with one panel per configuration, and the sessions where two configurations differ most, each
with a link to the session in the app.
"""

from __future__ import annotations

from urllib.parse import urlencode

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

__all__ = ["CORPUS_TOTAL_COLUMNS", "DIFFERENCE_COLUMNS", "corpus_figure", "corpus_totals",
           "largest_differences", "session_link"]

CORPUS_TOTAL_COLUMNS = ["configuration", "sessions", "failed_sessions", "steps",
                        "failed_preparations", "tokens_sent", "tokens_saved", "compactions",
                        "recorded_compactions", "summary_calls", "replay_usd", "saved_usd"]
DIFFERENCE_COLUMNS = ["session", "tokens_sent_a", "tokens_sent_b", "tokens_sent_change",
                      "compactions_a", "compactions_b", "failed_a", "failed_b", "link"]
_SUMMED = ["steps", "failed_preparations", "tokens_sent", "tokens_saved", "compactions",
           "recorded_compactions", "summary_calls", "replay_usd", "saved_usd"]


def session_link(session_id: str, *, page: str = "step-through") -> str:
    """A relative link that opens the session (its default replay) in the app."""
    return f"{page}?" + urlencode({"session": session_id})


def corpus_totals(sessions: pd.DataFrame) -> pd.DataFrame:
    """One row per configuration: sessions, failures and the sums of the per-session figures."""
    if sessions.empty:
        return pd.DataFrame({c: pd.Series(dtype="int64" if c not in ("configuration",) else object)
                             for c in CORPUS_TOTAL_COLUMNS})
    ok = sessions.loc[sessions["error"].isna()]
    grouped = ok.groupby("configuration")[_SUMMED].sum(min_count=1)
    counts = sessions.groupby("configuration").agg(
        sessions=("session", "size"), failed_sessions=("error", lambda e: int(e.notna().sum())))
    frame = counts.join(grouped, how="left").reset_index()
    for column in _SUMMED[:-2]:
        frame[column] = frame[column].fillna(0).astype("int64")
    return frame.loc[:, CORPUS_TOTAL_COLUMNS]


def corpus_figure(sessions: pd.DataFrame) -> go.Figure:
    """Tokens saved (vs the recorded session) against failed preparations, one point per session,
    one panel per configuration."""
    ok = sessions.loc[sessions["error"].isna()] if not sessions.empty else sessions
    configurations = sorted(ok["configuration"].unique()) if not ok.empty else []
    fig = make_subplots(rows=1, cols=max(len(configurations), 1), shared_yaxes=True,
                        subplot_titles=configurations or ["no sessions"])
    for i, name in enumerate(configurations, start=1):
        part = ok.loc[ok["configuration"] == name]
        fig.add_trace(go.Scatter(
            x=part["failed_preparations"], y=part["tokens_saved"], mode="markers", name=name,
            text=part["session"], customdata=part[["steps", "compactions"]].to_numpy(),
            hovertemplate=("%{text}<br>tokens saved %{y:,}<br>failed preparations %{x}"
                           "<br>steps %{customdata[0]} · compactions %{customdata[1]}<extra></extra>")),
            row=1, col=i)
        fig.update_xaxes(title_text="failed preparations", rangemode="tozero", row=1, col=i)
    fig.update_yaxes(title_text="tokens saved vs recorded", row=1, col=1)
    fig.update_layout(title="Tokens saved vs failed preparations, per configuration",
                      showlegend=False, height=420, margin={"t": 70})
    return fig


def largest_differences(sessions: pd.DataFrame, a: str, b: str, *, limit: int = 20) -> pd.DataFrame:
    """Sessions replayed under both ``a`` and ``b``, largest difference in tokens sent first."""
    ok = sessions.loc[sessions["error"].isna()] if not sessions.empty else sessions
    columns = ["session", "tokens_sent", "compactions", "failed_preparations"]
    left = ok.loc[ok["configuration"] == a, columns] if not ok.empty else pd.DataFrame(columns=columns)
    right = ok.loc[ok["configuration"] == b, columns] if not ok.empty else pd.DataFrame(columns=columns)
    both = left.merge(right, on="session", suffixes=("_a", "_b"))
    both = both.rename(columns={"failed_preparations_a": "failed_a", "failed_preparations_b": "failed_b"})
    both["tokens_sent_change"] = both["tokens_sent_b"] - both["tokens_sent_a"]
    both["link"] = [session_link(s) for s in both["session"]]
    frame = both.sort_values("tokens_sent_change", key=lambda change: change.abs(), ascending=False,
                             kind="stable").head(limit).reset_index(drop=True)
    return frame.loc[:, DIFFERENCE_COLUMNS].astype({c: "int64" for c in DIFFERENCE_COLUMNS[1:-1]})
