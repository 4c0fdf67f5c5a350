"""HTML report benchmark on a real session: its size and how long Chromium takes to open it.

The report of the transcript is rendered once (``build_report``, default configuration). The
same-run baseline is the same document with the full plotly.js the ``plotly`` package ships in
place of the basic partial bundle the report inlines. Each file is opened ``repeats`` times in a
new page of Debian's chromium (playwright, ``file://``): wall time from navigation until every
plotly figure has drawn its SVG, and the renderer's busy time (CDP ``TaskDuration``) in between.

Run as ``python bench/report_open.py report_html OUT.json '{"real": TRANSCRIPT, "repeats": 5}'``.
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

#: Every figure div has drawn its plot (plotly adds .main-svg when a figure is drawn).
DRAWN = ("() => { const p = document.querySelectorAll('.plotly-graph-div');"
         " return p.length > 0 && [...p].every(d => d.querySelector('.main-svg')); }")


def _open(browser, path: Path) -> dict[str, float]:
    page = browser.new_page(viewport={"width": 1280, "height": 1400})
    cdp = page.context.new_cdp_session(page)
    cdp.send("Performance.enable")
    start = time.perf_counter()
    page.goto(path.as_uri())
    page.wait_for_function(DRAWN, timeout=120_000)
    wall = time.perf_counter() - start
    metrics = cdp.send("Performance.getMetrics")["metrics"]
    busy = next(m["value"] for m in metrics if m["name"] == "TaskDuration")
    page.close()
    return {"wall": wall, "busy": busy}


def _stats(values: list[float]) -> dict[str, float]:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def case_report_html(real: str, repeats: int = 5) -> dict:
    from playwright.sync_api import sync_playwright
    from plotly.offline import get_plotlyjs
    from ui import _chrome_args

    from workbench.report import build_report, plotly_bundle

    started = time.process_time()
    html = build_report(real)
    render_cpu = time.process_time() - started
    full = html.replace(plotly_bundle(), get_plotlyjs(), 1)
    with tempfile.TemporaryDirectory(prefix="bench-report-") as tmp:
        ours, base = Path(tmp) / "report.html", Path(tmp) / "full-plotly.html"
        ours.write_text(html, encoding="utf-8")
        base.write_text(full, encoding="utf-8")
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=_chrome_args())
            _open(browser, ours)  # the browser's own first start is not the report's
            runs: dict[str, list[dict[str, float]]] = {"report": [], "full": []}
            for _ in range(repeats):  # alternate, so load on the machine hits both alike
                runs["report"].append(_open(browser, ours))
                runs["full"].append(_open(browser, base))
            browser.close()
    return {"transcript": Path(real).name, "bytes": len(html.encode()), "full_bytes": len(full.encode()),
            "bundle_bytes": len(plotly_bundle().encode()), "render_cpu": render_cpu,
            "figures": html.count("Plotly.newPlot"),
            **{f"{k}_{m}": _stats([r[m] for r in v]) for k, v in runs.items() for m in ("wall", "busy")}}


if __name__ == "__main__":
    name, out = sys.argv[1], Path(sys.argv[2])
    args = json.loads(sys.argv[3]) if len(sys.argv) > 3 else {}
    if name != "report_html":
        raise SystemExit(f"unknown case {name!r}")
    out.write_text(json.dumps(case_report_html(**args), indent=1), encoding="utf-8")
