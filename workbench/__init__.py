"""Context Workbench: storage, importers, views, CLI and notebook API on top of the Iris engine.

The public API is the notebook one (R-UI-8) plus the report writer and the store::

    import workbench as wb
    r = wb.replay(wb.load_session("session.jsonl"), "cost-first")
    r.usage(); r.figure("usage"); r.step(3)

Names are imported on first use (PEP 562), so ``workbench import`` and the Streamlit pages do not
pay for pandas and plotly before they need them; ``__all__`` is the complete, sorted list.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any


def _check_engine() -> None:
    """The engine's import name ``iris`` is also SciTools Iris's: with both installed, whichever
    comes first on ``sys.path`` wins. Say so, naming what was found, instead of a bare
    ``ModuleNotFoundError`` from deep inside the other package (``cf_units``)."""
    import importlib.util

    try:
        spec = importlib.util.find_spec("iris")
    except (ImportError, ValueError) as exc:  # a broken 'iris' on the path
        spec, found = None, f"an 'iris' that cannot be imported ({exc})"
    else:
        if spec is None:
            found = "no package 'iris'"
        else:  # a namespace package (a folder named iris on the path) has locations, no origin
            where = spec.origin or ", ".join(spec.submodule_search_locations or ())
            found = f"another package named 'iris' at {where}"
    if spec is not None:
        try:
            engine = importlib.import_module("iris")
        except ImportError as exc:
            found = f"{found}, which fails to import ({exc})"
        else:
            if getattr(engine, "__context_workbench_engine__", False):
                return
    raise ImportError(
        f"Context Workbench needs its engine, import name 'iris', but Python finds {found}. "
        "SciTools Iris (the climate-data library) uses the same import name: install Context "
        "Workbench in its own virtual environment (pip uninstall scitools-iris there), or run it "
        "with its own .venv (make run).")


_check_engine()

__all__ = [
    "Comparison",
    "CorpusResult",
    "NotebookReplay",
    "StepView",
    "Store",
    "batch",
    "build_report",
    "compare",
    "export_otlp",
    "load_batch",
    "load_session",
    "messages",
    "open_store",
    "preset_names",
    "replay",
    "resolve_config",
    "sample_path",
    "saved_replay",
    "sessions",
    "write_report",
]

#: Public name → the module that defines it.
_HOMES = {
    "Comparison": "workbench.notebook", "NotebookReplay": "workbench.notebook",
    "StepView": "workbench.notebook", "compare": "workbench.notebook",
    "load_session": "workbench.notebook", "preset_names": "workbench.notebook",
    "replay": "workbench.notebook", "resolve_config": "workbench.notebook",
    "sample_path": "workbench.notebook", "build_report": "workbench.report",
    "write_report": "workbench.report", "Store": "workbench.storage.store", "open_store": "workbench.storage.store",
    "CorpusResult": "workbench.notebook.corpus", "batch": "workbench.notebook.corpus",
    "load_batch": "workbench.notebook.corpus", "export_otlp": "workbench.notebook",
    "messages": "workbench.notebook.tables", "sessions": "workbench.notebook.tables",
    "saved_replay": "workbench.notebook.saved",
}

if TYPE_CHECKING:  # for type checkers and IDEs: the same names, imported eagerly
    from .notebook import (
        Comparison,
        NotebookReplay,
        StepView,
        compare,
        export_otlp,
        load_session,
        preset_names,
        replay,
        resolve_config,
        sample_path,
    )
    from .notebook.corpus import CorpusResult, batch, load_batch
    from .notebook.saved import saved_replay
    from .notebook.tables import messages, sessions
    from .report import build_report, write_report
    from .storage.store import Store, open_store


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'workbench' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
