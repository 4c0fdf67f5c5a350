"""``bench/RESULTS.md``'s twin-check section: the corpus check's compaction table, its file table
and its shares against the targets (case ``twin``, bench/twin.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

#: The issue's targets: share at the agent's step, share within 15 % after.
AT_STEP, WITHIN_AFTER = 0.90, 0.80


def _n(value: Any) -> str:
    return "—" if value is None else f"{value:,}" if isinstance(value, int) else str(value)


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value:+.1f} %"


def _short(path: str) -> str:
    name = Path(path).name.removesuffix(".gz").removesuffix(".jsonl").removeprefix("rollout-")
    return name[-36:][:8] if len(name) > 36 else name[:8]


def twin_lines(r: dict[str, Any]) -> list[str]:
    if r.get("skipped"):
        return ["## Twin check", "", f"Skipped: {r['skipped']}.", ""]
    s = r["summary"]
    at, close = s["at_step_share"], s["within_after_share"]
    met = (at is not None and at >= AT_STEP and close is not None and close >= WITHIN_AFTER
           and s["failed_steps"] == 0 and s["bills_off"] == 0 and s["files_failed"] == 0)
    lines = ["## Twin check (`workbench twin-check ../shared/corpus`)", "",
             (f"{s['files']} files ({s['files_failed']} refused by the strict import), "
              f"{s['compactions']} recorded compactions: {s['at_step']} at the agent's step "
              f"({at:.0%}; target ≥ {AT_STEP:.0%}; ±1 step, Codex ±3), {s['within_after']} within "
              f"15 % on the first request after ({close:.0%}; target ≥ {WITHIN_AFTER:.0%}); "
              f"{s['failed_steps']} failed steps (target 0); {s['responses_missing']} responses in "
              f"the files not imported ({s.get('subagent_responses_missing', 0)} of sub-agents' "
              f"agent_progress copies); {s['bills_off']} bills off by more than 2 % (target 0). "
              f"{'Targets met' if met else 'Targets not met'}. The check took {r['wall']:.0f} s "
              f"wall, {r['cpu']:.0f} s CPU." if at is not None and close is not None else
              f"{s['files']} files, no recorded compaction."), "",
             ("| file | # | trigger | agent step | profile step | agent before → after | "
             "profile before → after | Δ after |"),
             "|---|---:|---|---:|---:|---:|---:|---:|"]
    for f in r["files"]:
        for c in f["compactions"]:
            lines.append(f"| {_short(f['file'])} | {c['n']} | {c['trigger']} | {c['agent_step']} | "
                         f"{_n(c['profile_step'])} | {_n(c['agent_before'])} → {_n(c['agent_after'])} | "
                         f"{_n(c['profile_before'])} → {_n(c['profile_after'])} | "
                         f"{_pct(c['after_delta_pct'])} |")
    lines += ["", ("| file | agent | version | responses in file / imported | failed steps | "
              "bill of the usage fields / recorded_billed_usd | sub-agents, their responses (bill) |"),
              "|---|---|---|---:|---:|---:|---:|"]
    for f in r["files"]:
        usd = (lambda v: "—" if v is None else f"${v:,.2f}")
        lines.append(f"| {_short(f['file'])} | {f['agent']} | {f['version']} | "
                     f"{f['responses_in_file']} / {f['responses_imported']} | {f['failed_steps']} | "
                     f"{usd(f['usage_billed_usd'])} / {usd(f['recorded_billed_usd'])} | "
                     f"{f['subagents']}, {f.get('subagent_responses_imported', 0)} responses "
                     f"({usd(f['subagents_billed_usd'])}) |")
    return [*lines, ""]
