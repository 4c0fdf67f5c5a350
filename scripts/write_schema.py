"""Write ``docs/session.schema.json``: the JSON Schema of one native session line, generated from
the pydantic models (R-SES-3), so the committed document can never drift from the code.

    python scripts/write_schema.py [OUT_PATH]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from workbench.importers.native import event_schema

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "docs" / "session.schema.json"


def schema_text() -> str:
    """The schema document exactly as committed (sorted keys, two-space indent, final newline)."""
    return json.dumps(event_schema(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def main(argv: list[str]) -> int:
    out = Path(argv[0]) if argv else DEFAULT_OUT
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(schema_text(), encoding="utf-8")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
