"""A notebook exported to HTML shows its figures (R-UI-8): docs/notebook.ipynb is executed in a
Jupyter kernel with nbclient and converted with nbconvert's HTMLExporter, the way a user shares
it; the page must draw every figure offline (plotly.js carried by the page, the figures' data
and titles in it), not only hold plotly's notebook mimetype, which the exported page ignores."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # starts servers, processes, kernels or whole replays

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
nbconvert = pytest.importorskip("nbconvert")

NOTEBOOK = Path(__file__).resolve().parents[2] / "docs" / "notebook.ipynb"


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> tuple[str, object]:
    run_dir = tmp_path_factory.mktemp("export")
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(run_dir)}}).execute()
    html, _ = nbconvert.HTMLExporter().from_notebook_node(nb)
    return html, nb


def _figure_cells(nb) -> list:
    return [c for c in nb.cells if c.cell_type == "code" and any(
        "application/vnd.plotly.v1+json" in o.get("data", {}) for o in c.outputs)]


def test_r_ui_8_exported_notebook_has_no_errors_and_every_figure_carries_html(exported):
    _, nb = exported
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs
              if o.output_type == "error"]
    assert not errors, errors
    figures = _figure_cells(nb)
    assert len(figures) >= 3
    for cell in figures:
        output = next(o for o in cell.outputs if "application/vnd.plotly.v1+json" in o["data"])
        assert "Plotly.newPlot" in output["data"]["text/html"]


def test_r_ui_8_exported_html_draws_the_figures_offline(exported):
    html, nb = exported
    assert re.search(r"plotly\.js v\d", html), "plotly.js is not embedded in the page"
    assert 'src="https://cdn.plot.ly' not in html and "require.config" not in html
    calls = html.count("Plotly.newPlot(")
    assert calls >= len(_figure_cells(nb))
    for cell in _figure_cells(nb):
        figure = next(o for o in cell.outputs
                      if "application/vnd.plotly.v1+json" in o["data"])["data"]["application/vnd.plotly.v1+json"]
        title = figure["layout"]["title"]["text"]
        assert json.dumps(title)[1:-1] in html or title in html
        first = figure["data"][0]
        assert json.dumps(first["name"])[1:-1] in html
