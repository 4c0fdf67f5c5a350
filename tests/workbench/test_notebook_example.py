"""The example notebook ``docs/notebook.ipynb`` runs top to bottom (R-UI-8).

Jupyter is not needed: each code cell is executed with plain Python in one namespace, the way a
kernel would, and the value of a cell's last expression (what Jupyter would display) is checked to
be something Jupyter can show: a DataFrame, a plotly figure or an object with ``_repr_html_``.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pandas as pd
import plotly.graph_objects as go
import pytest

pytestmark = pytest.mark.slow  # starts servers, processes, kernels or whole replays

NOTEBOOK = Path(__file__).resolve().parents[2] / "docs" / "notebook.ipynb"


def _cells() -> list[str]:
    document = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    assert document["nbformat"] == 4
    return ["".join(c["source"]) for c in document["cells"] if c["cell_type"] == "code"]


def _run(source: str, namespace: dict[str, Any], name: str) -> Any:
    """Execute a cell; return the value of its last expression (None when it ends in a statement)."""
    tree = ast.parse(source, filename=name)
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    exec(compile(tree, name, "exec"), namespace)  # noqa: S102 - running the notebook is the test
    if not isinstance(last, ast.Expr):  # no expression was popped
        return None
    return eval(compile(ast.Expression(last.value), name, "eval"), namespace)


@pytest.fixture(scope="module")
def displayed(tmp_path_factory) -> dict[str, Any]:
    """Run every cell (cwd: a temporary folder) and keep what each one would display."""
    import os

    namespace: dict[str, Any] = {"__name__": "__main__"}
    shown: dict[str, Any] = {}
    cwd = os.getcwd()
    os.chdir(tmp_path_factory.mktemp("notebook"))
    try:
        for i, source in enumerate(_cells()):
            shown[source] = _run(source, namespace, f"{NOTEBOOK.name}[cell {i}]")
    finally:
        os.chdir(cwd)
    shown["__namespace__"] = namespace
    return shown


def test_r_ui_8_notebook_has_no_stored_outputs_and_uses_the_whole_api():
    document = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    code = "\n".join(_cells())
    assert all(not c.get("outputs") for c in document["cells"] if c["cell_type"] == "code")
    for call in ("wb.load_session(", "wb.replay(", ".stages()", ".decisions()", ".usage()",
                 '.figure("usage")', '.figure("timeline")', ".step(", "wb.compare(",
                 "wb.write_report("):
        assert call in code, call


def test_r_ui_8_notebook_runs_top_to_bottom_and_every_cell_displays(displayed):
    for source, value in displayed.items():
        if source == "__namespace__":
            continue
        assert value is not None, f"cell shows nothing:\n{source}"
        assert isinstance(value, (pd.DataFrame, go.Figure, tuple, bool)) or hasattr(
            value, "_repr_html_"), f"{type(value).__name__} from:\n{source}"


def test_r_ui_8_notebook_results_are_real(displayed):
    ns = displayed["__namespace__"]
    assert ns["cost"].totals().loc[0, "compactions"] >= 1
    assert ns["cost"].step(ns["first"]).preparation.compaction_applied
    figure = displayed["comparison.figure()"]
    assert {"default", "cost-first"} <= {t.name for t in figure.data}
    assert ns["report"].is_file() and ns["report"].read_text(encoding="utf-8").startswith("<!DOCTYPE")
