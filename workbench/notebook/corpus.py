"""Corpus evaluation from a notebook: ``wb.batch(...)`` runs one, ``wb.load_batch(out)`` opens one.

    import workbench as wb
    corpus = wb.batch(["default", "cost-first"], ["~/transcripts"], "eval/", jobs=4)
    corpus.totals(); corpus.figure(); corpus.differences("default", "cost-first")
    corpus.steps().query("configuration == 'cost-first'")

The tables are the Parquet files ``workbench batch`` writes (read with DuckDB); the figure and the
tables are the Corpus page's own view functions.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd
import plotly.graph_objects as go

from ..analysis.fidelity import recall_means
from ..corpus.batch import read_table as _read
from ..corpus.batch import run_batch
from ..views.corpus import corpus_figure, corpus_totals, largest_differences

__all__ = ["CorpusResult", "batch", "load_batch"]


class CorpusResult:
    """A batch output directory: its five tables, totals per configuration, chart, differences."""

    def __init__(self, out: str | Path) -> None:
        self.out = Path(out)

    def sessions(self) -> pd.DataFrame:
        """One row per (configuration, session): totals, compaction steps, cost, error."""
        return _read(self.out, "sessions")

    def steps(self) -> pd.DataFrame:
        """One row per (configuration, session, step)."""
        return _read(self.out, "steps")

    def compactions(self) -> pd.DataFrame:
        """The replay's compactions (``source='replay'``) and the agent's (``'recorded'``)."""
        return _read(self.out, "compactions")

    def decisions(self) -> pd.DataFrame:
        """Decision counts per (configuration, session, stage, kind)."""
        return _read(self.out, "decisions")

    def fidelity(self) -> pd.DataFrame:
        """What each compaction lost, per (configuration, session, compaction, fact kind) with an
        ``all`` row per compaction (docs/fidelity.md)."""
        return _read(self.out, "fidelity")

    def fidelity_means(self) -> pd.DataFrame:
        """Per configuration, the replay's compactions and the agent's own: how many, the mean
        recall of needed-later facts and the recall of needed-later paths and commands."""
        return pd.DataFrame(recall_means(self.fidelity()),
                            columns=["configuration", "source", "compactions",
                                     "mean_recall_needed_later", "recall_paths_commands"])

    def totals(self) -> pd.DataFrame:
        """One row per configuration (the Corpus page's totals)."""
        return corpus_totals(self.sessions())

    def figure(self) -> go.Figure:
        """Tokens saved vs failed preparations, one panel per configuration (titled; its display
        carries HTML, see :class:`workbench.notebook.frames.NotebookFigure`)."""
        from .frames import NotebookFigure

        return NotebookFigure(corpus_figure(self.sessions()))

    def differences(self, a: str, b: str, *, limit: int = 20) -> pd.DataFrame:
        """Sessions where configurations ``a`` and ``b`` differ most in tokens sent."""
        return largest_differences(self.sessions(), a, b, limit=limit)

    def __repr__(self) -> str:
        s = self.sessions()
        return (f"<CorpusResult {str(self.out)!r}: {s['session'].nunique()} sessions × "
                f"{s['configuration'].nunique()} configurations>")

    def _repr_html_(self) -> str:
        return f"<p><code>{self!r}</code></p>".replace("<Corpus", "&lt;Corpus").replace(
            "s>", "s&gt;") + self.totals().to_html(index=False)


def batch(configs: Sequence[Any] | str, paths: Iterable[str | Path], out: str | Path, *,
          jobs: int = 1, dask: bool = False, scheduler: str | None = None) -> CorpusResult:
    """Replay every session file under ``paths`` (files or directories) under each configuration
    (preset names, YAML paths or ``ContextConfig``) and write the tables to ``out``."""
    configs = [configs] if isinstance(configs, str) else list(configs)
    run_batch(configs, paths, out, jobs=jobs, dask=dask, scheduler=scheduler)
    return CorpusResult(out)


def load_batch(out: str | Path) -> CorpusResult:
    """Open the output directory of an earlier ``workbench batch`` run."""
    if not (Path(out) / "sessions").is_dir():
        raise FileNotFoundError(f"{str(out)!r} is not a batch output directory (no sessions/ tables)")
    return CorpusResult(out)
