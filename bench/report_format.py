"""The table cells of ``bench/RESULTS.md``: durations, sizes and one row's layout, shared by
:mod:`report` and :mod:`report_targets` (which import this module, not each other)."""

from __future__ import annotations

MB = 1024 * 1024


def _s(v: float) -> str:
    return f"{v * 1000:,.1f} ms" if v < 1 else f"{v:,.2f} s"


def _mb(v: float) -> str:
    return f"{v / MB:,.1f} MB"


def _row(name: str, st: dict, fmt, base: str = "—", ratio: str = "—", target: str = "—", ok: bool | None = None) -> str:
    mark = "—" if ok is None else ("✅ met" if ok else "❌ missed")
    return (f"| {name} | {fmt(st['median'])} | {fmt(st['min'])} | {fmt(st['max'])} | {base} | {ratio} | "
            f"{target} | {mark} |")


def _one(v: float) -> dict:
    return {"median": v, "min": v, "max": v}


def _text_row(name: str, median: str, ratio: str, target: str, ok: bool) -> str:
    return f"| {name} | {median} | — | — | — | {ratio} | {target} | {'✅ met' if ok else '❌ missed'} |"
