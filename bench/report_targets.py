"""``RESULTS.md`` rows of the corpus-evaluation cases (``bench/targets.py``, ``bench/ui_real.py``)."""

from __future__ import annotations

import statistics

from report_format import _mb, _one, _row, _s, _text_row


def startup_rows(s: dict) -> list[str]:
    """``workbench replay`` of a real session against the naive re-encode, both new processes."""
    rw, nw = s["replay"]["wall"], s["naive"]["wall"]
    rc, nc = s["replay"]["cpu"], s["naive"]["cpu"]
    ratio, ratio_cpu = nw["median"] / rw["median"], nc["median"] / rc["median"]
    name = f"`workbench replay` of a real session ({s['responses']} responses), new process"
    return [
        _row(f"{name}, wall", rw, _s, _s(nw["median"]) + " naive", f"{ratio:.1f}× faster", "≥ 10×", ratio >= 10),
        _row(f"{name}, CPU", rc, _s, _s(nc["median"]) + " naive", f"{ratio_cpu:.1f}× faster", "≥ 10×",
             ratio_cpu >= 10),
        _row("Python start-up alone (`python -c pass`), wall", s["python"]["wall"], _s),
        _row("`import workbench.cli` in a new process, wall", s["cli_import"]["wall"], _s),
    ]


def memory_rows(m: dict) -> list[str]:
    ratio = m["peak_extra"] / m["session_bytes"]
    return [
        _text_row(f"Replay of {m['responses']:,} responses: peak RSS above the loaded session",
                  _mb(m["peak_extra"]), f"{ratio:.2f}× the session ({_mb(m['session_bytes'])})", "≤ 3×",
                  ratio <= 3),
        _text_row(f"Replay of {m['responses']:,} responses: per step wall (median; p99)",
                  f"{m['step_ms_median']:.2f} ms", f"p99 {m['step_ms_p99']:.1f} ms; total {_s(m['wall'])}",
                  "median ≤ 1 ms, p99 < 20 ms", m["step_ms_median"] <= 1 and m["step_ms_p99"] < 20),
    ]


def save_memory_rows(m: dict) -> list[str]:
    """Replay + save as the app and the CLI make it, per size: the streamed save against the whole
    replay saved in one piece and the engine alone (each its own process)."""
    rows = []
    by = {(r["responses"], r["path"]): r for r in m["runs"]}
    for n in sorted({r["responses"] for r in m["runs"]}):
        streamed, whole, engine = (by.get((n, p)) for p in ("streamed", "whole", "engine"))
        if streamed is None:
            continue
        base = [f"whole replay saved {whole['peak_x_session']:.2f}×" if whole else "",
                f"engine alone {engine['peak_x_session']:.2f}×" if engine else ""]
        rows.append(_text_row(
            f"Replay + save of {n:,} responses (streamed, as the app and CLI): peak RSS above the "
            f"loaded session", f"{streamed['peak_extra_mb']:.1f} MB",
            f"{streamed['peak_x_session']:.2f}× the session ({streamed['session_mb']:.1f} MB); same run: "
            + ", ".join(b for b in base if b), "≤ 3×", streamed["peak_x_session"] <= 3))
    return rows


def store_import_rows(i: dict) -> list[str]:
    ratio = i["wall"]["median"] / i["base_wall"]["median"]
    ratio_cpu = i["cpu"]["median"] / i["base_cpu"]["median"]
    size = i["size"]
    store_ratio = size["store_bytes"] / size["transcript_bytes"]
    name = f"Import {_mb(i['file_bytes'])} Claude Code transcript through the store (`Store.import_file`)"
    return [
        _row(f"{name}, wall", i["wall"], _s, _s(i["base_wall"]["median"]) + " json.loads",
             f"{ratio:.2f}×", "≤ 3×", ratio <= 3),
        _row(f"{name}, CPU", i["cpu"], _s, _s(i["base_cpu"]["median"]) + " json.loads", f"{ratio_cpu:.2f}×",
             "≤ 3×", ratio_cpu <= 3),
        _text_row(f"Store size: real session ({size['path'][:13]}…) + its default replay",
                  _mb(size["store_bytes"]),
                  f"{store_ratio:.2f}× the transcript ({_mb(size['transcript_bytes'])}; session alone "
                  f"{_mb(size['session_only_bytes'])})", "≤ 2×", store_ratio <= 2),
    ]


def corpus_rows(c: dict) -> list[str]:
    runs = c["runs"]
    serial, pool, dask = runs["serial"]["wall"], runs["pool"]["wall"], runs["dask"]["wall"]
    name = f"`workbench batch`, {c['sessions']} sessions × {c['responses']} responses"
    same = c["pool_equals_dask"] and runs["serial"]["rows"] == runs["pool"]["rows"]
    return [
        _row(f"{name}, serial (`--jobs 1`)", _one(serial), _s, target="—"),
        _row(f"{name}, process pool (`--jobs {c['jobs']}`)", _one(pool), _s, _s(serial) + " serial",
             f"{serial / pool:.2f}× the serial speed", f"> 1× on {c['cpus']} CPUs", serial / pool > 1),
        _row(f"{name}, Dask LocalCluster (`--dask --jobs {c['jobs']}`)", _one(dask), _s, _s(pool) + " pool",
             f"{dask / pool:.2f}× the pool's time", "same tables", same),
    ]


def _work(d: dict) -> float:
    return d["server_cpu"] + d.get("browser_busy", 0.0)


def _ui_row(name: str, values: list[dict], target: float) -> str:
    walls = [v["wall"] for v in values]
    work = statistics.median(_work(v) for v in values)
    st = {"median": statistics.median(walls), "min": min(walls), "max": max(walls)}
    return _row(name, st, _s, f"work {_s(work)}", "server CPU + renderer busy", f"≤ {target:g} s",
                st["median"] <= target)


def ui_real_rows(u: dict) -> list[str]:
    pages = u["pages"]
    return [
        _ui_row("UI (real session): first app load, fresh server", [u["first_load"]], 3),
        _ui_row("UI: first Step-through", [u["first_step_through"]], 1),
        _ui_row("UI: next step (4 clicks)", u["next_step"], 1),
        _ui_row("UI: Messages page opened", [u["messages_first"]], 1),
        _ui_row("UI: Messages page flip (4 flips)", u["messages_flip"], 1),
        _ui_row("UI: Usage, Compaction, Reduction pages opened", list(pages.values()), 1),
    ]


def ui_clicks_rows(u: dict) -> list[str]:
    """The first clicks (``bench/ui_clicks.py``): each one interaction on a fresh server."""
    rows = [_ui_row(f"UI first click: {name}", u[key], 1) for key, name in (
        ("usage", "Usage opened by its address"),
        ("timeline", "step timeline expander opened"),
        ("breakdown", "context breakdown expander opened"),
        ("messages_from_page_list", "Messages from the page list (same document)"),
        ("messages_by_address", "Messages opened by a link's address (new document)"),
        ("discard", "Discard edit (Templates)")) if u.get(key)]
    long = u.get("long_sample", {})
    rows += [_ui_row(f"UI first click (long sample): {name}", long[key], 1) for key, name in (
        ("messages_by_link", "a decision's message link in the Why panel (same document)"),
        ("discard", "Discard edit (Templates)")) if long.get(key)]
    if long.get("rerun_all"):
        runs, target = long["rerun_all"], long["replay_cpu"] + 1
        walls = [r["wall"] for r in runs]
        wall = {"median": statistics.median(walls), "min": min(walls), "max": max(walls)}
        rows.append(_row("UI first click: Re-run the whole replay (long sample, budget 96k)",
                         wall, _s, f"replay CPU {_s(long['replay_cpu'])}",
                         f"work {_s(statistics.median(_work(r) for r in runs))} (server CPU "
                         f"{_s(statistics.median(r['server_cpu'] for r in runs))})",
                         f"≤ replay CPU + 1 s ({_s(target)})", wall["median"] <= target))
    return rows


def report_html_rows(r: dict) -> list[str]:
    """The HTML report of a real session: size and opening time against the full plotly.js."""
    wall, full = r["report_wall"], r["full_wall"]
    name = f"HTML report of a real session ({r['transcript'][:13]}…)"
    return [
        _text_row(f"{name}: file size", _mb(r["bytes"]),
                  f"{r['full_bytes'] / r['bytes']:.2f}× smaller than with the full plotly.js "
                  f"({_mb(r['full_bytes'])}); bundle {_mb(r['bundle_bytes'])}", "≤ 1.5 MB",
                  r["bytes"] <= 1_500_000),
        _row(f"{name}: opened in Chromium until every figure is drawn", wall, _s,
             _s(full["median"]) + " full plotly.js",
             f"{full['median'] / wall['median']:.2f}× faster; renderer busy {_s(r['report_busy']['median'])}",
             "≤ 1 s", wall["median"] <= 1),
    ]


def outside_rows(o: dict) -> list[str]:
    """Store size with the app's default replays; native import against json.loads."""
    rows = []
    for st in o["stores"]:
        ratio = st["store_bytes"] / st["transcript_bytes"]
        top = ", ".join(f"{name} {_mb(size)}" for name, size in list(st["tables"].items())[:5])
        rows.append(_text_row(f"Store size: real session ({st['path'][:13]}…) + its {st['replays']} default "
                              f"replays ({st['steps']:,} steps)", _mb(st["store_bytes"]),
                              f"{ratio:.2f}× the transcript ({_mb(st['transcript_bytes'])}); {top}",
                              "≤ 2×", ratio <= 2))
    n = o["native"]
    name = f"Import of a {_mb(n['file_bytes'])} native session ({n['responses']:,} responses), CPU"
    for key, what in (("load", "`load_native`"), ("store", "`Store.import_file`")):
        ratio = n[key] / n["json"]
        rows.append(_text_row(f"{name}: {what}", _s(n[key]), f"{ratio:.2f}× json.loads ({_s(n['json'])})",
                              "≤ 3×", ratio <= 3))
    return rows


def bound_rows(b: dict) -> list[str]:
    """Replay of tiny-message sessions of growing size against their import (R-BOUND-1): CPU per
    size, per step by tenth, 20,000 against 5,000 messages in all and 100,000 against 20,000 per
    message."""
    sizes = b["sizes"]
    per = [s["cpu"] / s["messages"] * 1e6 for s in sizes]
    rows = []
    for s, us in zip(sizes, per):
        name = (f"Replay of {s['messages']:,} tiny messages ({s['steps']:,} steps, "
                f"{s['compactions']} compactions), CPU")
        ratio = s["cpu"] / s["import_cpu"]
        rows.append(_row(name, _one(s["cpu"]), _s, _s(s["import_cpu"]) + " import", f"{ratio:.1f}× the import; "
                         f"{us:,.0f} µs per message", "—"))
        tenths = s.get("tenths_ms")
        if tenths:
            at = ", ".join(f"{c:,}" for c in s.get("compaction_steps", [])) or "none"
            warm = tenths[1:] or tenths  # the first tenth also pays the first use of lazy modules
            rows.append(_text_row(f"Replay of {s['messages']:,} tiny messages: CPU per step by tenth",
                                  " → ".join(f"{t:.2f}" for t in tenths) + " ms",
                                  f"tenths 2–10: largest {max(warm) / min(warm):.2f}× the smallest; "
                                  f"compactions at steps {at}", "flat (≤ 1.2×)",
                                  max(warm) <= 1.2 * min(warm)))
        rows.append(_row(f"Replay of {s['messages']:,} tiny messages: peak RSS above the loaded session",
                         _one(s["peak_extra"]), _mb, "—",
                         f"{s['peak_extra'] / s['messages'] / 1024:,.1f} KB per message; wall {_s(s['wall'])}"))
    by_size = {round(s["messages"], -3): s for s in sizes}
    small, mid, large = by_size.get(5000), by_size.get(20000), by_size.get(100000)
    if small and mid:
        total = mid["cpu"] / small["cpu"]
        rows.append(_text_row(f"Replay CPU in all, {mid['messages']:,} vs {small['messages']:,} messages",
                              f"{total:.2f}×", f"{_s(mid['cpu'])} vs {_s(small['cpu'])}; linear is "
                              f"{mid['messages'] / small['messages']:.1f}×", "≤ 4.6×", total <= 4.6))
    if mid and large:
        growth = (large["cpu"] / large["messages"]) / (mid["cpu"] / mid["messages"])
        mem_growth = ((large["peak_extra"] / large["messages"])
                      / max(mid["peak_extra"] / mid["messages"], 1))
        rows.append(_text_row(f"Replay CPU per message, {large['messages']:,} vs {mid['messages']:,} messages",
                              f"{growth:.2f}×", f"peak memory per message {mem_growth:.2f}×",
                              "≤ 1.2× (linear: flat per message)", growth <= 1.2))
    return rows


def save_bound_rows(b: dict) -> list[str]:
    """Saving a replay against the replay, by steps (R-BOUND-2): CPU per size, then the largest
    size against the smallest."""
    rows = []
    for s in b["sizes"]:
        added = (s["cpu"] - s["plain_cpu"]) / s["steps"] * 1e3
        rows.append(_row(f"Replay saved (streamed, as `replay --name`) of {s['steps']:,} steps "
                         f"({s['messages']:,} tiny messages, {s['compactions']} compactions), CPU",
                         _one(s["cpu"]), _s, _s(s["plain_cpu"]) + " replay",
                         f"{s['cpu'] / s['plain_cpu']:.2f}× the replay; saving adds "
                         f"{added:.2f} ms per step", "—"))
    first, last = b["sizes"][0], b["sizes"][-1]
    rows.append(_text_row(
        f"Save CPU relative to the replay, {last['steps']:,} vs {first['steps']:,} steps",
        f"{b['save_vs_replay_growth']:.2f}×",
        f"per step: the save {b['save_per_step_growth']:.2f}×, what saving adds "
        f"{b['added_per_step_growth']:.2f}×, the replay alone {b['replay_per_step_growth']:.2f}×",
        "≤ 1.3× (a save linear like its replay)", bool(b["linear"])))
    return rows
