"""The committed JSON Schema of the native format (R-SES-3) is exactly what the models generate."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

from write_schema import DEFAULT_OUT, schema_text  # pyright: ignore[reportMissingImports]  # scripts/ is on sys.path from the line above


def test_r_ses_3_committed_schema_matches_the_models():
    assert DEFAULT_OUT == ROOT / "docs" / "session.schema.json"
    assert DEFAULT_OUT.read_text(encoding="utf-8") == schema_text(), \
        "docs/session.schema.json is stale: run python scripts/write_schema.py"


def test_r_ses_3_schema_covers_every_event_and_carries_the_version():
    schema = json.loads(DEFAULT_OUT.read_text(encoding="utf-8"))
    kinds = set(schema["discriminator"]["mapping"])
    assert kinds == {"header", "message", "model_switch", "compaction", "microcompaction",
                     "context_snapshot", "subagent"}
    assert "schema_version" in schema["$comment"]


@pytest.mark.slow  # starts a process
def test_r_ses_3_script_writes_the_same_bytes(tmp_path):
    out = tmp_path / "schema.json"
    subprocess.run([sys.executable, str(ROOT / "scripts" / "write_schema.py"), str(out)], check=True,
                   capture_output=True, timeout=60)
    assert out.read_bytes() == DEFAULT_OUT.read_bytes()
