"""Tabulate how closely the agent profiles follow the agent's recorded compactions.

    .venv/bin/python scripts/twin_measure.py [PATH ...] [--json OUT]

Replays every transcript under the paths (default: ../shared/corpus and ../shared/real-sessions)
with its agent profile (`claude-code` for Claude Code sessions, `codex` for Codex rollouts) and
`--summariser recorded`, the way a user would (`workbench replay FILE --config PRESET --summariser
recorded --summary-json OUT`), and prints one row per recorded compaction: the agent's step and
tokens before / first request after, the profile's nearest compaction, and whether it lands at
the agent's step (±1; Codex ±3 calls) and within 15 % on the first request after. Per file: the
failed steps of the replay (from the command's "ready N · failed M" line).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_PATHS = (ROOT.parent / "shared" / "corpus", ROOT.parent / "shared" / "real-sessions")
WORKBENCH = ROOT / ".venv" / "bin" / "workbench"
FAILED = re.compile(r"ready ([\d,]+) · failed ([\d,]+)")


def preset_for(path: Path) -> str | None:
    parts = path.parts
    if "claude_code" in parts and path.name.endswith((".jsonl", ".jsonl.gz")):
        return "claude-code"
    if "codex_rollout" in parts and path.name.endswith((".jsonl", ".jsonl.gz")):
        return "codex"
    return None


def transcripts(paths: list[Path]) -> list[tuple[Path, str]]:
    found: list[tuple[Path, str]] = []
    for root in paths:
        files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
        for path in files:
            preset = preset_for(path)
            if preset is not None:
                found.append((path, preset))
    return found


def replay(path: Path, preset: str, out: Path, summariser: str = "recorded"
           ) -> tuple[dict, int, str]:
    command = [str(WORKBENCH), "replay", str(path), "--config", preset, "--summariser", summariser]
    command += ["--summary-json", str(out), "--allow-failed"]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if not out.exists():
        # Older command lines have no --allow-failed.
        command.remove("--allow-failed")
        done = subprocess.run(command, capture_output=True, text=True, check=False)
    if not out.exists() and "no recorded compaction summary" in done.stderr:
        # A session without a recorded compaction: the offline summariser is never asked.
        command[command.index("--summariser") : command.index("--summariser") + 2] = []
        done = subprocess.run(command, capture_output=True, text=True, check=False)
    if not out.exists():
        raise SystemExit(f"{path}: replay wrote no summary\n{done.stderr[-2000:]}")
    match = FAILED.search(done.stdout)
    failed = int(match.group(2).replace(",", "")) if match else -1
    return json.loads(out.read_text()), failed, done.stdout


def rows_for(path: Path, preset: str, summary: dict, failed: int) -> list[dict]:
    window = 3 if preset == "codex" else 1
    replayed = summary.get("compactions", [])
    rows = []
    for recorded in summary.get("recorded_compactions", []):
        nearest = min(replayed, key=lambda c: abs(c["step"] - recorded["step"]), default=None)
        row = {
            "file": path.name[:8] if not path.name.startswith("rollout") else path.name[28:36],
            "preset": preset,
            "trigger": recorded.get("trigger"),
            "agent_step": recorded["step"],
            "agent_before": recorded.get("tokens_before"),
            "agent_after": recorded.get("tokens_after"),
            "profile_step": None,
            "profile_before": None,
            "profile_after": None,
            "delta_pct": None,
            "at_step": False,
            "within_15": False,
            "failed_steps": failed,
        }
        if nearest is not None:
            row["profile_step"] = nearest["step"]
            row["profile_before"] = nearest.get("tokens_before")
            row["profile_after"] = nearest.get("tokens_after")
            row["at_step"] = abs(nearest["step"] - recorded["step"]) <= window
            agent_after = recorded.get("tokens_after")
            if agent_after and nearest.get("tokens_after") is not None:
                delta = (nearest["tokens_after"] - agent_after) / agent_after * 100
                row["delta_pct"] = round(delta, 1)
                row["within_15"] = row["at_step"] and abs(delta) <= 15
        rows.append(row)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("paths", nargs="*", type=Path)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--summariser", default="recorded",
                        help="recorded (default) or offline: the summariser of every replay")
    args = parser.parse_args(argv)
    paths = args.paths or [p for p in DEFAULT_PATHS if p.exists()]
    rows: list[dict] = []
    files: list[dict] = []
    with tempfile.TemporaryDirectory() as tmp:
        for index, (path, preset) in enumerate(transcripts(paths)):
            summary, failed, _ = replay(path, preset, Path(tmp) / f"{index}.json",
                                             args.summariser)
            file_rows = rows_for(path, preset, summary, failed)
            extra = len(summary.get("compactions", [])) - len(file_rows)
            files.append({"file": path.name, "preset": preset, "failed_steps": failed,
                          "recorded": len(file_rows), "replayed": len(summary.get("compactions", [])),
                          "extra_compactions": extra})
            rows.extend(file_rows)
    header = f"{'file':9} {'trig':6} {'agent step':>10} {'before':>8} {'after':>7} | {'prof step':>9} {'before':>8} {'after':>7} {'Δ%':>6} ok"
    print(header)
    for r in rows:
        ok = ("S" if r["at_step"] else "-") + ("A" if r["within_15"] else "-")
        print(f"{r['file']:9} {r['trigger'] or '':6} {r['agent_step']:>10} {r['agent_before'] or 0:>8,} "
              f"{r['agent_after'] or 0:>7,} | {r['profile_step'] if r['profile_step'] is not None else '-':>9} "
              f"{r['profile_before'] or 0:>8,} {r['profile_after'] or 0:>7,} "
              f"{r['delta_pct'] if r['delta_pct'] is not None else '-':>6} {ok}")
    for f in files:
        if f["failed_steps"] or f["extra_compactions"]:
            print(f"  {f['file']}: failed steps {f['failed_steps']}, replay compactions "
                  f"{f['replayed']} for {f['recorded']} recorded")
    total = len(rows)
    at_step = sum(r["at_step"] for r in rows)
    within = sum(r["within_15"] for r in rows)
    failed_total = sum(max(f["failed_steps"], 0) for f in files)
    print(f"at the agent's step: {at_step}/{total}; within 15 % after: {within}/{total}; "
          f"failed steps: {failed_total}")
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, "files": files}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
