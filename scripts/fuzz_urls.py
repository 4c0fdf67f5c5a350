"""The URL-parameter class of the fuzz campaign (``scripts/fuzz_campaign.py --urls N``): open
links with random query parameters on random pages of the real app (Streamlit's AppTest) and check
that none breaks a page or silently opens another object.

Each case sets some of ``session``, ``replay``, ``step`` and ``message`` to a hostile, unknown,
out-of-range or good value, runs the app, then switches to a random page. Findings: ``crash`` (an
exception shown on the page), ``hang`` (a run that did not finish in time) and ``silent`` (a
parameter that names nothing in the store, or is not a number in range, without the line that
says so).
"""

from __future__ import annotations

import os
import random
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PAGES = ("sessions", "messages", "step_through", "compaction", "reduction", "usage", "templates",
         "configuration", "failures", "context")
HOSTILE = ("²", "٣", "abc", "-1", "+1", " 1", "1e3", "1.0", "9" * 5000, "99999", "", "0x10",
           "<script>alert(1)</script>", "![x](http://127.0.0.1:9/x)", "../../etc/passwd", "%00",
           "\u202e", "default", "null", "[]")


def _store(home: Path) -> tuple[str, list[str], int, int]:
    """A store with the bugfix sample and its default replay: (session id, replay ids, steps,
    messages)."""
    from workbench.services.replay import ensure_default_replay, open_saved
    from workbench.storage.store import open_store

    with open_store(home / "workbench.db") as store:
        session_id = store.import_file(ROOT / "sample_sessions" / "bugfix.jsonl").session_id
        ensure_default_replay(store, session_id)
        replays = [r.id for r in store.replays.list() if r.session_id == session_id]
        steps = len(open_saved(store, replays[0]))
        messages = len(store.session(session_id).messages)
    return session_id, replays, steps, messages


def _params(rng: random.Random, session_id: str, replays: list[str]) -> dict[str, str]:
    good = {"session": [session_id], "replay": replays, "step": ["0", "1"], "message": ["0", "3"]}
    return {key: rng.choice([*HOSTILE, *values]) for key, values in good.items()
            if rng.random() < 0.6}


def _expected_notice(params: dict[str, str], page: str, known: tuple[str, list[str], int, int]) -> bool:
    """Whether a parameter is bad, so the page must say so."""
    from workbench.views.query import parse_index

    session_id, replays, steps, messages = known
    step = parse_index(params.get("step"))
    message = parse_index(params.get("message"))
    return any((
        "session" in params and params["session"] != session_id,
        "replay" in params and params["replay"] not in replays,
        "step" in params and (step is None or step >= steps),
        page == "messages" and "message" in params and (message is None or message >= messages)))


def _case(params: dict[str, str], page: str, timeout: float) -> tuple[list[str], int]:
    """Run the app with ``params`` and switch to ``page``: (exceptions shown, notices shown)."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "workbench" / "ui" / "app.py"), default_timeout=timeout)
    for key, value in params.items():
        at.query_params[key] = value
    at.run()
    at.switch_page(f"../pages/{page}.py").run()
    notices = [w for w in at.warning if w.proto.icon == "🔗"]
    return [str(e.value)[:200] for e in at.exception], len(notices)


def url_campaign(cases: int, seed: int, timeout: float) -> dict[str, Any]:
    """Run ``cases`` links; the tally and every finding."""
    rng = random.Random(seed)
    home = Path(tempfile.mkdtemp(prefix="fuzz-urls-"))
    os.environ["WORKBENCH_HOME"] = str(home)
    known = _store(home)
    tally: Counter = Counter()
    findings: list[dict[str, Any]] = []
    started = time.monotonic()
    for n in range(cases):
        params, page = _params(rng, known[0], known[1]), rng.choice(PAGES)
        first_visit = {"params": params, "page": page, "case": n}
        try:
            shown, notices = _case(params, page, timeout)
        except RuntimeError as exc:  # AppTest's "script run timed out"
            findings.append({**first_visit, "finding": "hang", "error": str(exc)[:200]})
            continue
        tally["cases"] += 1
        tally["with notice" if notices else "without notice"] += 1
        if shown:
            findings.append({**first_visit, "finding": "crash", "error": shown[0]})
        elif _expected_notice(params, page, known) and not notices:
            findings.append({**first_visit, "finding": "silent"})
    return {"cases": tally["cases"], "seconds": round(time.monotonic() - started, 1),
            "tally": dict(tally), "findings": findings,
            "summary": dict(Counter(f["finding"] for f in findings))}
