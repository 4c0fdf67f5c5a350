"""`workbench replay PATH` loads no heavy library it does not use (start-up time of the CLI)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: Runs the real command in this process, then reports which heavy modules were imported.
_PROBE = """
import json, sys
from workbench.cli import main
code = main(["replay", sys.argv[1]])
heavy = sorted(m for m in ("pandas", "numpy", "httpx", "tenacity", "pyarrow", "asyncio",
                          "opentelemetry.sdk", "google.protobuf") if m in sys.modules)
print(json.dumps({"code": code, "heavy": heavy}))
"""


@pytest.mark.slow  # starts a process
def test_replay_command_imports_no_pandas_numpy_or_http_client(tmp_path):
    """A replay of a transcript file with the offline summariser runs without importing pandas,
    numpy, pyarrow (sqlite_utils would pull them in), httpx/tenacity (remote summariser only),
    asyncio (context sources only) or the OpenTelemetry SDK and protobuf (``export`` only)."""
    env = {**os.environ, "WORKBENCH_HOME": str(tmp_path / "home"), "IRIS_CACHE_DIR": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, "-c", _PROBE, str(ROOT / "sample_sessions" / "bugfix.jsonl")],
                          env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report == {"code": 0, "heavy": []}


@pytest.mark.slow  # starts a process
def test_sqlite_utils_without_pandas_leaves_pandas_importable():
    """Hiding pandas while sqlite_utils loads does not stop a later ``import pandas``."""
    code = ("import sys\nfrom workbench.cli import _import_sqlite_utils_without_pandas\n"
            "_import_sqlite_utils_without_pandas()\n"
            "assert 'sqlite_utils' in sys.modules and 'pandas' not in sys.modules\n"
            "import pandas, numpy\nprint(pandas.DataFrame({'a': [1]}).shape)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                          check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "(1, 1)"
