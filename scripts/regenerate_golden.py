"""Regenerate the golden preparation records of the sample sessions.

    .venv/bin/python scripts/regenerate_golden.py          # rewrite tests/golden/preparations/
    .venv/bin/python scripts/regenerate_golden.py --check  # exit 1 if any golden file differs

Each sample in ``sample_sessions/*.jsonl`` is replayed under the default configuration, the
default template snapshot and the offline extractive summariser (``iris.replay.replay(session)``);
``long_session`` is also replayed with a 96,000-token input budget so the golden files hold an
applied compaction. Run it after an intended change of the engine, the default configuration or
the samples, and review the diff before committing it.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_sessions"
GOLDEN = ROOT / "tests" / "golden" / "preparations"

#: name → configuration overrides (None: the default configuration).
VARIANTS: dict[str, dict | None] = {"default": None,
                                    "budget96k": {"compaction": {"input_budget_tokens": 96000}}}


def golden_cases() -> list[tuple[str, Path, dict | None]]:
    """(golden file stem, sample path, configuration overrides) for every golden file."""
    cases = []
    for path in sorted(SAMPLES.glob("*.jsonl")):
        cases.append((f"{path.stem}.default", path, None))
        if path.stem == "long_session":
            cases.append((f"{path.stem}.budget96k", path, VARIANTS["budget96k"]))
    return cases


def golden_text(path: Path, overrides: dict | None) -> str:
    """The golden JSON text of one replay: records, checkpoints and thresholds."""
    from iris.config import default_config, parse_config
    from iris.replay import replay

    from workbench.importers.native import load_native

    config = parse_config(overrides) if overrides else default_config()
    result = replay(load_native(path), config)
    data = result.model_dump(mode="json", include={"session_id", "configuration_snapshot_id",
                                                   "thresholds", "preparations", "checkpoints",
                                                   "cancelled"})
    return json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").partition("\n")[0])
    parser.add_argument("--check", action="store_true", help="compare only, write nothing")
    args = parser.parse_args(argv)
    GOLDEN.mkdir(parents=True, exist_ok=True)
    stale = []
    for stem, path, overrides in golden_cases():
        target = GOLDEN / f"{stem}.json"
        text = golden_text(path, overrides)
        if target.is_file() and target.read_text(encoding="utf-8") == text:
            continue
        stale.append(target.name)
        if not args.check:
            target.write_text(text, encoding="utf-8")
    verb = "differ" if args.check else "rewritten"
    print(f"{len(stale)} golden file(s) {verb}: {', '.join(stale) or '-'}")
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
