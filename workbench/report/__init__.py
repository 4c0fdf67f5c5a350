"""``workbench report SESSION --config FILE --out report.html``: one self-contained HTML file (R-UI-9).

A report is what a reviewer opens from a bug ticket without installing anything: the usage chart
(local estimate vs provider), the compaction timeline with its cut points, the stage table of every
step, the failed preparations and the configuration used. plotly.js is embedded inline, once, as
the basic partial bundle (scatter, bar and pie traces: the report draws only scatter and bar;
``workbench/assets``), so the file opens offline and references no external script or stylesheet. The same
session, configuration and summariser give byte-identical files (no timestamps, fixed element ids).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from html import escape
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING, Any

from iris.errors import ConfigError

from ..progress import Progress, no_progress
from ..services.output import write_output
from ..services.summarisers import add_summariser_options
from ..views.terminal import progress_bar

if TYPE_CHECKING:
    import pandas as pd
    from jinja2 import Environment

    from ..notebook import NotebookReplay

# pandas, plotly and the replay machinery are imported where used: the CLI builds every
# subcommand's parser at start-up, and `workbench sessions` should not pay for them.

__all__ = ["build_report", "register", "render_report", "stored_replay_report", "write_report"]

_FIGURE_CONFIG = {"displaylogo": False, "responsive": True}
_PAGE_STYLE = "body { max-width: 1200px; margin: 1.5em auto; padding: 0 1em; } h2 { margin-top: 1.6em; }"


def _figure(fig: Any, div_id: str) -> str:
    """The figure's div and script, its template keeping only the trace types it draws (the
    plotly template's defaults for the other two dozen types would change nothing)."""
    import plotly.graph_objects as go

    fig = go.Figure(fig)
    template = fig.layout.template
    used = sorted({trace.type for trace in fig.data})
    fig.layout.template = go.layout.Template(layout=template.layout,
                                             data={kind: template.data[kind] for kind in used})
    return fig.to_html(full_html=False, include_plotlyjs=False, div_id=div_id,
                       config=_FIGURE_CONFIG)


def _stage_overview(r: NotebookReplay) -> pd.DataFrame:
    """One row per step: phase, the final request (whole request, as the pages state it) and
    each stage's status (the spec's words)."""
    import pandas as pd

    rows = []
    for p in r.preparations:
        whole = p.whole_request_tokens
        row = {"step": p.step_index, "phase": p.phase,
               "final_tokens": p.final_input_tokens if whole is None else whole,
               "pressure_line": p.pressure_line}
        row.update({s.name: s.status for s in p.stages})
        rows.append(row)
    return pd.DataFrame(rows)


def _cut_points(r: NotebookReplay) -> pd.DataFrame:
    """Applied compactions with where they cut in the recorded session."""
    import pandas as pd

    table = r.compactions()
    if table.empty:
        return table
    facts = r.result.checkpoints
    table.insert(3, "first_kept_message", pd.Series([c.first_kept_message for c in facts], dtype="Int64",
                                                    index=table.index))
    table.insert(4, "archived_messages", [len(c.archived_messages) for c in facts])
    return table


@cache
def _templates() -> Environment:
    """The report's page, header and section templates (``workbench/report/templates``): text
    is escaped by the templates; the HTML pieces the views make (tables, figures, inline
    markup) come in as ``Markup``."""
    from jinja2 import Environment, PackageLoader, StrictUndefined

    return Environment(loader=PackageLoader("workbench.report", "templates"), autoescape=True,
                       undefined=StrictUndefined)


def _render(template: str, **values: Any) -> str:
    return _templates().get_template(template).render(**values)


def _section(title: str, *body: str) -> str:
    """An ``<h2>`` section of HTML pieces."""
    from markupsafe import Markup

    return _render("section.html.j2", title=title, body=[Markup(part) for part in body])


def _marks(r: NotebookReplay) -> tuple:
    from ..records import recorded_marks

    placed = [c.model_dump() for c in getattr(r.result, "recorded_compactions", ())]
    return recorded_marks(placed or r.session.compactions, r.preparations)


def _truth(r: NotebookReplay) -> str:
    """Where the replay and the agent compacted (one table) and the as-recorded estimate error."""
    import pandas as pd

    from ..analysis.figures import estimate_error
    from ..views.recorded import (
        compaction_answer,
        compaction_answer_text,
        replay_compaction_steps,
        step_compactions,
    )
    from ..views.rich_html import inline_html

    th, marks = r.result.thresholds, _marks(r)
    runs = [{"label": r.label, "compactions": step_compactions(r.preparations),
             "input_budget": th.input_budget, "budget_source": th.budget_source,
             "budget_detail": getattr(th, "budget_detail", "")}]
    answer = compaction_answer_text(r.label, replay_compaction_steps(r.preparations), marks)
    from ..analysis.replay_report import error_meaning

    error = {**estimate_error(r.preparations, [m.step for m in marks]).model_dump(),
             "calibration_ratio": r.calibration_ratio()}
    meaning = error_meaning(r.session)
    note = f"<p><strong>{inline_html(meaning.note)}</strong></p>" if meaning.note else ""
    return _section("Where the replay and the agent compacted",
                    f"<p><strong>{inline_html(answer)}</strong></p>",
                    _table(compaction_answer(runs, marks)),
                    "<h3>Estimate error (as-recorded estimate vs provider)</h3>",
                    _table(pd.DataFrame([error])), note)


#: The cost table's columns: the ReplayCost field each states.
COST_COLUMNS = {"the session as billed (USD)": "recorded_billed_usd",
                "this replay (USD)": "replay_usd", "saved (USD)": "saved_usd",
                "saved (%)": "saved_pct", "sub-agents as billed (USD)": "subagents_billed_usd"}


def _cost_section(r: NotebookReplay) -> str:
    """What the replay costs next to the bill (the Usage page's figures and words)."""
    import pandas as pd

    from ..pricing import cost_lines
    from ..views.rich_html import inline_html

    try:
        cost = r.cost()
    except Exception as exc:  # noqa: BLE001 -- a price that cannot be computed is a note
        return _section("Cost", f"<p class='wb-muted'>Cost: could not be computed "
                        f"({escape(str(exc))}).</p>")
    row = {label: getattr(cost, name, None) for label, name in COST_COLUMNS.items()}
    lines = "".join(f"<p>{inline_html(line)}</p>" for line in cost_lines(cost))
    return _section("Cost", _table(pd.DataFrame([row])), lines)


def _header_values(r: NotebookReplay, name: str, config_source: str) -> dict[str, Any]:
    """What the header states: the session, the configuration and its budget, and where the
    figures come from (the saved replay read back, or a replay run now, with the summariser that
    wrote its compaction summaries)."""
    from iris.config import config_hash
    from markupsafe import Markup

    from ..views.recorded import budget_label
    from ..views.rich_html import inline_html

    th = r.result.thresholds
    return {"name": name, "session_id": r.result.session_id, "messages": len(r.session.messages),
            "source_format": r.session.header.source_format or "native",
            "config_source": config_source or r.label, "config_hash": config_hash(r.config)[:19],
            "budget": budget_label(th.input_budget, th.budget_source, getattr(th, "budget_detail", "")),
            "pressure_line": th.pressure_line, "saved_id": r.saved_id, "label": r.label,
            "summariser": r.summariser,
            "warnings": [Markup(inline_html(w)) for w in r.config.warnings]}


def _sections(r: NotebookReplay) -> list[str]:
    """Summary, usage, compaction, stages, failures and configuration, in that order."""
    from iris.config import config_to_yaml

    from ..views.compaction import timeline_figure
    steps = len(r)
    recorded_at = [m.at_message for m in _marks(r)]
    timeline = (_figure(timeline_figure(r.bands(), recorded_at=recorded_at), "wb-timeline")
                if r.result.checkpoints else
                "<p class='wb-muted'>No compaction was applied: every request stayed below the "
                "pressure line.</p>")
    return [
        _section("Summary", _table(r.totals())),
        _truth(r),
        _cost_section(r),
        _section("Usage: local estimate vs provider", _figure(r.figure("usage"), "wb-usage"),
                 "<details><summary>Per step</summary>",
                 _table(r.usage()), "</details>",
                 "<h3>Summary (compaction) usage, apart from the main model</h3>",
                 _table(r.summary_usage())),
        _section("Compaction", timeline, "<h3>Cut points</h3>",
                 _table(_cut_points(r), empty="no compaction applied"),
                 "<h3>Every attempt</h3>", _table(r.attempts(), empty="no compaction planned")),
        _fidelity_section(r),
        _section("Stages", "<p class='wb-muted'>Statuses per step; before → after tokens are "
                 "whole-request estimates, not costs that add up.</p>",
                 _table(_stage_overview(r)), "<details><summary>Every stage of every step"
                 "</summary>", _table(r.stages()), "</details>"),
        _section("Failed preparations", _table(
            r.failures().drop(columns=["link"]),
            empty=f"Every one of the {steps} preparations is ready.")),
        _section("Configuration", f"<pre>{escape(config_to_yaml(r.config))}</pre>"),
    ]


def _fidelity_section(r: NotebookReplay) -> str:
    """What each compaction lost (docs/fidelity.md): the recall table of the agent's and the
    replay's compactions, then each one's headline and lost facts with the step that needed it."""
    from ..analysis.fidelity import replay_losses
    from ..views.fidelity import fidelity_sentence, lost_table, recall_table
    from ..views.rich_html import inline_html

    records = replay_losses(r.session, r.result).all
    if not records:
        return _section("What compaction lost", "<p class='wb-muted'>Neither the agent nor this "
                        "replay compacted: nothing was lost to compaction.</p>")
    parts = [("<p class='wb-muted'>Facts of each replaced span (paths, commands, identifiers, "
             "errors, URLs, numbers with units, user instructions) that the session mentioned "
             "again after the compaction, and how many the checkpoint kept. String matching: a "
             "paraphrase is not a match; a fact found again by re-reading counts as lost.</p>"),
             _table(recall_table(records))]
    for record in records:
        parts += [f"<h3>{inline_html(fidelity_sentence(record))}</h3>",
                  _table(lost_table(record).drop(columns=["open"]),
                             empty="nothing the session needed again was lost")]
    return _section("What compaction lost", *parts)


#: The report loads nothing: no remote script, style, image, font or frame, and no request of any
#: kind, whatever text a transcript put in it (every text is escaped as well). Its own inline
#: script (plotly) and styles run; plotly draws images only as data: URLs.
REPORT_CSP = ("default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
              "img-src data:; font-src data:; connect-src 'none'; form-action 'none'; "
              "base-uri 'none'")


#: The trace types the inlined plotly.js bundle draws; the report's figures use no others.
BUNDLE_TRACES = frozenset({"scatter", "bar", "pie"})


@cache
def plotly_bundle() -> str:
    """plotly.js' basic partial bundle (1.2 MB instead of the full 4.8 MB), read once."""
    return (files("workbench") / "assets" / "plotly-basic.min.js").read_text(encoding="utf-8")


def _table(frame: pd.DataFrame, *, empty: str = "nothing to show") -> str:
    """A report table: compact (no whitespace between tags, no optional cell end tags: a third
    and a fifth of a long table's bytes, drawing nothing)."""
    from ..views.rich_html import table_html

    return table_html(frame, empty=empty, compact=True)


def render_report(r: NotebookReplay, *, title: str | None = None, config_source: str = "") -> str:
    """The report of an existing notebook replay, as one HTML document."""
    from markupsafe import Markup

    from ..views.rich_html import STYLE

    name = title or r.session.header.title or r.result.session_id
    return _render("page.html.j2", csp=Markup(REPORT_CSP), style=STYLE + _PAGE_STYLE,
                   plotly=plotly_bundle(), sections=[Markup(s) for s in _sections(r)],
                   **_header_values(r, name, config_source)) + "\n"


def build_report(session: Any, config: Any = None, *, title: str | None = None,
                 prompts: Any = None, summariser: Any = None, label: str | None = None,
                 progress: Progress = no_progress) -> str:
    """Replay ``session`` (Session, path or stored id) under ``config`` and render the report."""
    from ..notebook import config_label, load_session, replay, resolve_config

    resolved = resolve_config(config)  # a bad file or preset fails before any work is shown
    if isinstance(session, (str, Path)):
        session = load_session(session)
    progress(0.0, "replaying")
    r = replay(session, resolved, prompts=prompts, summariser=summariser,
               label=label or config_label(config),
               progress=lambda f, text: progress(0.85 * f, f"replaying: {text}"))
    progress(0.9, "rendering")
    source = str(config) if config is not None and not hasattr(config, "model_dump") else ""
    html = render_report(r, title=title, config_source=source or r.label)
    progress(1.0, "rendered")
    return html


def write_report(session: Any, out: str | Path, config: Any = None, *, title: str | None = None,
                 prompts: Any = None, summariser: Any = None,
                 progress: Progress = no_progress) -> Path | None:
    """Write the report of ``session`` to ``out`` (parent folders are created; ``-``: standard
    output, and None is returned)."""
    html = build_report(session, config, title=title, prompts=prompts, summariser=summariser,
                        progress=progress)
    return write_output(out, html, "the report")


def stored_replay_report(store: Any, replay_id: str, *, progress: Progress = no_progress) -> str:
    """The report of a replay saved in the store (the app's "Build an HTML report" button and
    ``workbench report --replay``): the saved records read back, not replayed again, so the
    report states that replay's figures whatever summariser made it (the header says so)."""
    from ..notebook.saved import saved_notebook_replay

    progress(0.0, "reading the saved replay")
    r = saved_notebook_replay(store, replay_id)
    progress(0.9, "rendering")
    html = render_report(r, config_source=r.label)
    progress(1.0, "rendered")
    return html


# ------------------------------------------------------------------------------------ CLI


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("report", help="write a self-contained HTML report of a replayed session")
    p.add_argument("session", metavar="SESSION", nargs="?",
                   help="a transcript file, or the id of a stored session (see `workbench sessions`)")
    p.add_argument("--replay", metavar="REPLAY_ID",
                   help="report a replay saved in the store instead (see `workbench replays`)")
    p.add_argument("--config", metavar="FILE_OR_PRESET",
                   help=f"context configuration YAML or a preset name ({', '.join(_preset_names())}; "
                        "default: bundled)")
    p.add_argument("--out", metavar="HTML", default="report.html",
                   help="default: report.html ('-': standard output)")
    p.add_argument("--title", help="report title (default: the session title)")
    add_summariser_options(p)
    p.set_defaults(handler=_report, opens_store=_opens_store)


def _opens_store(args: argparse.Namespace) -> bool:
    """Whether ``report`` opens the store: for ``--replay`` or a stored session's id. The report
    of a transcript file only reads the file (the process never imports sqlite-utils)."""
    return args.replay is not None or args.session in (None, "-") or not Path(args.session).is_file()


def _preset_names() -> tuple[str, ...]:
    from ..services.presets import PRESET_NAMES

    return PRESET_NAMES


@contextmanager
def _stderr_progress() -> Iterator[Progress]:
    """Progress on standard error: a tqdm bar on a terminal, else one line per quarter (for logs)."""
    if sys.stderr.isatty():
        with progress_bar("report") as bar:
            yield bar
        return
    printed: set[int] = set()

    def report(fraction: float, label: str, /) -> None:
        quarter = int(fraction * 4)
        if quarter not in printed:
            printed.add(quarter)
            print(f"report: {fraction:4.0%} {label}", file=sys.stderr, flush=True)
    yield report


def _report(args: argparse.Namespace) -> int:
    from ..notebook import load_session, resolve_config
    from ..services.summarisers import load_prompts, make_summariser

    if (args.session is None) == (args.replay is None):
        raise ConfigError("give either SESSION or --replay REPLAY_ID", field="report")
    if args.replay is not None:
        return _report_saved(args)
    resolve_config(args.config)  # a bad configuration fails before the session is read
    prompts = load_prompts(args.prompts)
    session = load_session(args.session)
    with _stderr_progress() as progress:
        target = write_report(session, args.out, args.config, title=args.title, prompts=prompts,
                              summariser=make_summariser(args.summariser, session), progress=progress)
    _wrote(target)
    return 0


def _wrote(target: Path | None) -> None:
    if target is not None:  # None: the report went to standard output
        print(f"wrote {target} ({target.stat().st_size / 1e6:.1f} MB)")


def _report_saved(args: argparse.Namespace) -> int:
    """``report --replay ID``: the saved replay's own configuration and template snapshot."""
    from ..storage.store import open_store

    with open_store() as store, _stderr_progress() as progress:
        html = stored_replay_report(store, args.replay, progress=progress)
    _wrote(write_output(args.out, html, "the report"))
    return 0
