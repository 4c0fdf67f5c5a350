"""``RESULTS.md`` rows of the cases against the floor (``bench/floor_cases.py``) and of the
total-cost scaling of the ``memory`` case: each a same-run ratio with the issue's target."""

from __future__ import annotations

from report_format import _mb, _row, _s, _text_row

LABELS = {"claude_code": "real Claude Code session", "codex": "real Codex rollout"}


def _skipped(name: str, reason: str, target: str) -> str:
    return f"| {name} | — | — | — | — | {reason} | {target} | skipped |"


def _where(label: str, one: dict) -> str:
    return f"{LABELS.get(label, label)} ({one['path'][:13]}…)"


def floor_process_rows(f: dict) -> list[str]:
    """``workbench replay FILE`` against ``python bench/floor.py FILE``, new processes, CPU."""
    rows = []
    for label, one in f.items():
        name = f"`workbench replay FILE` (load + replay) vs the floor process, CPU, {LABELS.get(label, label)}"
        if "skipped" in one:
            rows.append(_skipped(name, one["skipped"], "≤ 2×"))
            continue
        name = f"`workbench replay FILE` (load + replay) vs the floor process, CPU, {_where(label, one)}"
        ours, floor = one["replay"], one["floor"]
        ratio = ours["cpu"]["median"] / floor["cpu"]["median"]
        rows.append(_row(name, ours["cpu"], _s, _s(floor["cpu"]["median"]) + " floor process",
                         f"{ratio:.2f}× the floor (wall {ours['wall']['median'] / floor['wall']['median']:.2f}×)",
                         "≤ 2×", ratio <= 2))
        rows.append(_row(f"The same, peak RSS of the process, {LABELS.get(label, label)}", ours["rss"], _mb,
                         _mb(floor["rss"]["median"]) + " floor process",
                         f"{ours['rss']['median'] / floor['rss']['median']:.2f}× the floor"))
    return rows


def floor_inprocess_rows(f: dict) -> list[str]:
    """``load_session`` + ``replay`` against :func:`floor.floor_counts`, one warm process, CPU."""
    rows = []
    for label, one in f.items():
        name = f"In-process replay (load + replay) vs the in-process floor, CPU, {LABELS.get(label, label)}"
        if "skipped" in one:
            rows.append(_skipped(name, one["skipped"], "≤ 2.5×"))
            continue
        name = (f"In-process replay (load + replay, {one['steps']} steps) vs the in-process floor, CPU, "
                f"{_where(label, one)}")
        floor = one["floor_cpu"]["median"]
        ratio = one["ours_cpu"]["median"] / floor
        rows.append(_row(name, one["ours_cpu"], _s, _s(floor) + " floor",
                         f"{ratio:.2f}× the floor (load {one['load_cpu']['median'] / floor:.2f}×, replay "
                         f"{one['replay_cpu']['median'] / floor:.2f}×); floor {one['floor_counts']['tokens']:,} "
                         f"tokens, engine {one['engine_content_tokens']:,}", "≤ 2.5×", ratio <= 2.5))
    return rows


def scaling_rows(m: dict) -> list[str]:
    """Total replay CPU against the session's length and the per-step CPU along the long one."""
    s = m.get("scaling")
    if not s:
        return []
    totals = s["totals"]
    steps = " → ".join(f"{t['steps']:,}" for t in totals)
    cpus = " → ".join(_s(t["cpu"]) for t in totals)
    drift = s["end_ms"] / s["start_ms"]
    return [
        _text_row(f"Total replay CPU, {steps} generated steps: fitted exponent (total ∝ steps^k)",
                  f"{s['exponent']:.3f}", f"totals {cpus}", "≤ 1.05", s["exponent"] <= 1.05),
        _text_row(f"Per-step CPU median, first vs last {s['window']} steps of the {totals[-1]['steps']:,}-step session",
                  f"{s['start_ms']:.2f} → {s['end_ms']:.2f} ms",
                  f"{drift:.2f}× (p95 {s['start_p95_ms']:.1f} → {s['end_p95_ms']:.1f} ms)",
                  "flat (end ≤ 1.1× start)", drift <= 1.1),
    ]


def peer_rows(p: dict) -> list[str]:
    """``workbench report FILE`` against ``claude-code-log FILE``: CPU and peak RSS."""
    name = "Peer `claude-code-log` (import + HTML) on the same transcript"
    if "skipped" in p:
        return [_skipped(f"{name}: CPU", p["skipped"], "ours ≤ 1× its"),
                _skipped(f"{name}: peak memory", p["skipped"], "ours ≤ 1× its")]
    ours, theirs = p["ours"], p["theirs"]
    cpu = ours["cpu"]["median"] / theirs["cpu"]["median"]
    rss = ours["rss"]["median"] / theirs["rss"]["median"]
    where = f"({p['path'][:13]}…, claude-code-log {p['peer_version']})"
    return [
        _row(f"`workbench report FILE` (load, replay, HTML) vs {name[5:]} {where}: CPU", ours["cpu"], _s,
             _s(theirs["cpu"]["median"]) + " claude-code-log", f"{cpu:.2f}× its CPU", "≤ 1×", cpu <= 1),
        _row("The same: peak RSS of the process", ours["rss"], _mb, _mb(theirs["rss"]["median"]) + " claude-code-log",
             f"{rss:.2f}× its memory; HTML {_mb(p['ours_html'])} vs {_mb(p['theirs_html'])}", "≤ 1×", rss <= 1),
    ]


def import_process_rows(f: dict) -> list[str]:
    """``workbench import FILE`` against ``python bench/floor_import.py FILE``, new processes, CPU."""
    rows = []
    for label, one in f.items():
        name = f"`workbench import FILE` (into an existing store) vs the import floor process, CPU, {LABELS.get(label, label)}"
        if "skipped" in one:
            rows.append(_skipped(name, one["skipped"], "≤ 3×"))
            continue
        name = f"`workbench import FILE` (into an existing store) vs the import floor process, CPU, {_where(label, one)}"
        ours, floor = one["import"], one["floor"]
        ratio = one["cpu_ratio"]
        rows.append(_row(name, ours["cpu"], _s, _s(floor["cpu"]["median"]) + " floor (start, parse every line)",
                         f"{ratio:.2f}× the floor (median of pairs); into a new store "
                         f"{_s(one['first_store']['cpu'])}", "≤ 3×", ratio <= 3))
    return rows
