"""What a ``workbench replay FILE`` process loads: only what replaying a file needs.

Start-up is most of the distance between the whole-process replay and the floor process
(bench/floor.py). A file replayed without ``--name`` is read, not stored: the process neither
imports sqlite-utils (nor, through it, pandas or numpy) nor opens the store; it posts nothing, so
``urllib.request`` with ``http.client`` and ``ssl`` stays unloaded; and a replay that compacts
nothing and has no context.yaml renders no template, so Jinja is never imported (the packaged
prompt templates are compiled when first rendered); nothing is priced, so the pricing package
stays unloaded. These tests run the command in a new process
and read its ``sys.modules``, so a module-level import that brings one of them back fails here
instead of silently adding to every replay's start-up. Record classes build their validators when
first used (``defer_build`` on ``FrozenModel``), so a replay that compacts nothing never builds the
compaction checkpoint's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from iris.errors import TemplateError
from iris.prompts import PROMPT_IDS, PromptSnapshot

from workbench.storage.migrations import MIGRATIONS, migration_names

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "workbench" / "sample_sessions" / "bugfix.jsonl"

#: Modules a replay of a file must not import (what each stands for: see the module docstring).
DEFERRED = ("sqlite_utils", "pandas", "numpy", "urllib.request", "http.client", "ssl", "jinja2",
            "iris.context.build", "iris.context.load", "iris.prompts.render", "workbench.pricing")

# The probe runs the command line in this process and reports the deferred modules it loaded and
# whether the compaction checkpoint record's validator was built.
_PROBE = """
import json, sys
from workbench.cli import main
code = main(sys.argv[2:])
from iris.compaction.checkpoint import Checkpoint
from iris.compaction.model_driven import CompactContextArgs
print(json.dumps({"code": code, "loaded": [m for m in json.loads(sys.argv[1]) if m in sys.modules],
                  "checkpoint_built": Checkpoint.__pydantic_complete__
                  or CompactContextArgs.__pydantic_complete__}))
"""


def _run(home: Path, *argv: str) -> dict[str, object]:
    env = {**os.environ, "WORKBENCH_HOME": str(home)}
    done = subprocess.run([sys.executable, "-c", _PROBE, json.dumps(DEFERRED), *argv], env=env,
                          cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.slow  # starts a process
def test_r_ui_9_replaying_a_file_loads_no_store_http_or_templates(tmp_path):
    """R-UI-9: ``workbench replay FILE`` (no ``--name``) writes its preparations without importing
    sqlite-utils, pandas, numpy, the HTTP client modules, Jinja (the sample compacts nothing
    and has no context.yaml), the context builder or the context.yaml loader, the pricing
    package (nothing is priced without ``--summary-json``), builds no
    validator for the compaction checkpoint record or the ``compact_context`` tool's arguments,
    and creates no store."""
    home = tmp_path / "home"
    probe = _run(home, "replay", str(SAMPLE), "--json", str(tmp_path / "out.jsonl"))
    assert probe == {"code": 0, "loaded": [], "checkpoint_built": False}
    assert (tmp_path / "out.jsonl").stat().st_size > 0
    assert not (home / "workbench.db").exists()


@pytest.mark.slow  # starts a process
def test_r_ui_9_saving_a_replay_opens_the_store_without_pandas(tmp_path):
    """R-UI-9: with ``--name`` the same command imports the file into the store and saves the
    replay; sqlite-utils is then loaded, still with pandas and numpy hidden from it."""
    home = tmp_path / "home"
    probe = _run(home, "replay", str(SAMPLE), "--name", "kept")
    assert probe["code"] == 0
    assert "sqlite_utils" in probe["loaded"]  # type: ignore[operator]
    assert not {"pandas", "numpy"} & set(probe["loaded"])  # type: ignore[arg-type]
    assert (home / "workbench.db").is_file()


def test_r_prm_3_packaged_defaults_compile_when_rendered_and_pass_the_edit_check():
    """R-PRM-3: the packaged default templates, compiled only when first rendered, are the same
    snapshot as one built from their sources with every template compiled and checked at once
    (so the check an edit gets still holds for the defaults), and an edit of the default
    snapshot is still refused when it is made."""
    defaults = PromptSnapshot.defaults()
    checked = PromptSnapshot(dict(defaults.sources))  # compiles all 15 and checks their names
    assert checked.snapshot_id == defaults.snapshot_id
    assert list(checked.sources) == list(PROMPT_IDS)
    with pytest.raises(TemplateError):
        defaults.with_template(PROMPT_IDS[0], "{{ no_such_variable }}")


def test_r_ui_9_the_migration_set_is_built_on_first_use():
    """R-UI-9: the store's migration set, loaded with sqlite-utils when first used, holds every
    migration in the order the module declares them."""
    names = [m.name for m in MIGRATIONS._migrations]  # pyright: ignore[reportPrivateUsage]
    assert names == list(migration_names())
    assert names[0] == "m001_initial" and names == sorted(names)
