"""Turns the cases' JSON into ``bench/RESULTS.md``: one table row per figure with median, min,
max, the same-run baseline and the ratio, and whether the issue's target is met."""

from __future__ import annotations

from typing import Any

from report_floor import (
    floor_inprocess_rows,
    floor_process_rows,
    import_process_rows,
    peer_rows,
    scaling_rows,
)
from report_format import _mb, _one, _row, _s, _text_row
from report_targets import (
    bound_rows,
    corpus_rows,
    memory_rows,
    outside_rows,
    report_html_rows,
    save_bound_rows,
    save_memory_rows,
    startup_rows,
    store_import_rows,
    ui_clicks_rows,
    ui_real_rows,
)
from report_twin import twin_lines

HEADER = ("| Measurement | median | min | max | baseline (same run) | ratio | target | |\n"
          "|---|---:|---:|---:|---:|---:|---|---|")


def replay_rows(r: dict) -> list[str]:
    n, nv = r["naive_steps"], r["naive"]
    speed_wall = nv["wall"] / r["prefix_wall"]["median"]
    speed_cpu = nv["cpu"] / r["prefix_cpu"]["median"]
    mem_ratio = r["peak_extra"]["median"] / r["session_bytes"]
    rows = [
        _row(f"Replay, {r['responses']:,} responses, total wall", r["wall"], _s),
        _row("Replay, total CPU", r["cpu"], _s),
        _row(f"Replay, first {n} steps, wall (naive: same steps)", r["prefix_wall"], _s, _s(nv["wall"]),
             f"{speed_wall:,.1f}× faster", "≥ 20×", speed_wall >= 20),
        _row(f"Replay, first {n} steps, CPU (naive: same steps)", r["prefix_cpu"], _s, _s(nv["cpu"]),
             f"{speed_cpu:,.1f}× faster", "≥ 20×", speed_cpu >= 20),
        _text_row("Replay, per step wall (median; p95, p99, max)", f"{r['step_ms_median']:.2f} ms",
                  f"p95 {r['step_ms_p95']:.2f} ms, p99 {r.get('step_ms_p99', float('nan')):.1f} ms, "
                  f"max {r['step_ms_max']:.1f} ms", "median ≤ 1 ms, p99 < 20 ms",
                  r["step_ms_median"] <= 1 and r.get("step_ms_p99", 1e9) < 20),
        _text_row("Replay, per step CPU (median; p95)", f"{r['step_cpu_ms_median']:.2f} ms",
                  f"p95 {r['step_cpu_ms_p95']:.2f} ms", "median ≤ 1 ms", r["step_cpu_ms_median"] <= 1),
        _row("Replay, peak memory above the loaded session (RSS)", r["peak_extra"], _mb,
             _mb(r["session_bytes"]) + " (session in memory)", f"{mem_ratio:.2f}×", "≤ 3×", mem_ratio <= 3),
    ]
    if "traced" in r:
        t, size = r["traced"], r["session_bytes"]
        rows.append(_text_row(f"Replay, Python memory at peak (tracemalloc; its result keeps {_mb(t['result'])}, "
                              f"archive texts {_mb(r['archive_bytes'])})", _mb(t["peak"]),
                              f"{t['peak'] / size:.2f}× the session; working memory beyond the result "
                              f"{_mb(t['peak'] - t['result'])} = {(t['peak'] - t['result']) / size:.2f}×",
                              "≤ 3×", t["peak"] <= 3 * size))
    return rows


def store_rows(s: dict) -> list[str]:
    return [
        _row(f"Store, save the {s['steps']:,}-step replay (one run)", _one(s["save_wall"]), _s),
        _row("Store, reopen (open store + replay + last step + its request)", s["reopen_wall"], _s,
             target="≤ 1 s", ok=s["reopen_wall"]["max"] <= 1),
    ]


def import_rows(i: dict) -> list[str]:
    ratio = i["wall"]["median"] / i["base_wall"]["median"]
    ratio_cpu = i["cpu"]["median"] / i["base_cpu"]["median"]
    mem = i["peak_extra"]["median"] / i["file_bytes"]
    return [
        _row(f"Import {_mb(i['file_bytes'])} Claude Code transcript, wall", i["wall"], _s,
             _s(i["base_wall"]["median"]), f"{ratio:.2f}× the baseline", "≤ 3×", ratio <= 3),
        _row("Import, CPU", i["cpu"], _s, _s(i["base_cpu"]["median"]), f"{ratio_cpu:.2f}× the baseline",
             "≤ 3×", ratio_cpu <= 3),
        _row("Import, peak memory above start (RSS)", i["peak_extra"], _mb, _mb(i["base_peak"]["median"]),
             f"{mem:.2f}× the file size; session itself {_mb(i['session_bytes'])}",
             "streaming (< 2× file + session)", i["peak_extra"]["median"] < 2 * i["file_bytes"] + i["session_bytes"]),
    ]


def token_rows(t: dict) -> list[str]:
    tok = t["tokens"]

    def rate(st: dict) -> dict:
        return {"median": tok / st["median"], "min": tok / st["max"], "max": tok / st["min"]}

    def f(v: float) -> str:
        return f"{v / 1e6:,.2f} M tok/s"

    raw = tok / t["raw_cpu"]["median"]
    cold, warm = rate(t["cold_cpu"]), rate(t["warm_cpu"])
    return [
        _row("Token estimation, raw tiktoken (CPU throughput)", rate(t["raw_cpu"]), f),
        _row("Token estimation, cold cache (CPU throughput)", cold, f, f(raw), f"{cold['median'] / raw:.2f}× raw",
             "≥ 0.8×", cold["median"] / raw >= 0.8),
        _row("Token estimation, warm cache (CPU throughput)", warm, f, f(raw), f"{warm['median'] / raw:,.0f}× raw"),
    ]


def ui_rows(u: dict) -> list[str]:
    rows = [
        _row("UI, step-through first render (fresh server)", _one(u["cold_first_render"]), _s),
        _row("UI, step-through first render (new page load)", u["warm_first_render"], _s),
        _row("UI, next step → new step header shown", u["next_shown"], _s, target="≤ 1 s",
             ok=u["next_shown"]["median"] <= 1),
        _row("UI, next step → step completely rendered", u["next_done"], _s, target="≤ 1 s",
             ok=u["next_done"]["median"] <= 1),
    ]
    if "server_next" in u:
        rows += [_row("UI, step-through script run only (AppTest, no browser), first", _one(u["server_first"]), _s),
                 _row(f"UI, next step script run only (AppTest; {u['code_blocks']} code blocks)", u["server_next"],
                      _s, target="≤ 1 s", ok=u["server_next"]["median"] <= 1)]
    return rows


def target_rows(results: dict[str, Any]) -> list[str]:
    """Rows of the corpus-evaluation cases, in the order of the issue's targets."""
    makers = (("startup", startup_rows), ("memory", memory_rows), ("save_memory", save_memory_rows),
              ("store_import", store_import_rows), ("import_process", import_process_rows),
              ("corpus", corpus_rows), ("ui_real", ui_real_rows), ("ui_clicks", ui_clicks_rows),
              ("bound", bound_rows),
              ("save_bound", save_bound_rows),
              ("report_html", report_html_rows), ("outside", outside_rows),
              ("floor_process", floor_process_rows), ("floor_inprocess", floor_inprocess_rows),
              ("memory", scaling_rows), ("peer", peer_rows))
    return [row for name, make in makers if name in results for row in make(results[name])]


def _case_dates(meta: dict[str, Any]) -> list[str]:
    """When each case was measured, if not all in this run (a run of some cases keeps the others'
    earlier figures)."""
    cases = meta.get("cases", {})
    if not meta.get("kept"):
        return []
    lines = ["When each case's rows were measured (a run of some cases keeps the others' earlier figures):", ""]
    lines += [f"- `{name}`: {c['date']}" + (f" ({c['load']})" if c.get("load") else "")
              for name, c in cases.items()]
    return [*lines, ""]


def render(results: dict[str, Any], meta: dict[str, Any]) -> str:
    rows = []
    if "replay" in results:
        rows += replay_rows(results["replay"]) + store_rows(results["replay"]["store"])
    if "import" in results:
        rows += import_rows(results["import"])
    if "tokens" in results:
        rows += token_rows(results["tokens"])
    if "ui" in results:
        rows += ui_rows(results["ui"])
    rows += target_rows(results)
    r = results.get("replay", {})
    ran = meta.get("ran")
    how = f"`bench/run.py {' '.join(ran)}`" if ran and meta.get("kept") else "`make bench`"
    how += f" on {meta['date']} in {meta['duration']:.0f} s"
    intro = (f"Written by {how}; {meta['load_before']} "
             f"at the start, {meta['load_after']} at the end. Wall times include any load from other "
             "processes on the machine; CPU times and the ratios against baselines measured in the same run "
             "do not depend on it as much. See `docs/performance.md` for what each figure means.")
    lines = ["# Benchmark results", "", intro, ""]
    lines += _case_dates(meta)
    lines += [*meta.get("later", ()), ""] if meta.get("later") else []
    if r:
        lines += [(f"Replay input: synthetic session (seed 7), {r['responses']:,} assistant responses, "
                   f"{r['session_messages']:,} messages, {r['tool_output_tokens']:,} tokens of tool output, "
                   f"{_mb(r['session_bytes'])} in memory; {r['compactions']} compactions applied; phases "
                   f"{r['phases']}. The naive baseline replays the first {r['naive_steps']} responses "
                   "(all of them would take many minutes)."), ""]
    lines += [HEADER, *rows, ""]
    if "twin" in results:
        lines += twin_lines(results["twin"])
    if meta.get("errors"):
        lines += ["## Cases that failed", "", *(f"- {e}" for e in meta["errors"]), ""]
    return "\n".join(lines)
