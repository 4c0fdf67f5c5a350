"""Seed 000 knobs that must have their documented effect (R-CMP-1/5, R-PRM-1, R-TOK-6, R-PREP-1,
R-POL-1/2).

Seed 000 "压缩预算": ``keep_recent_ratio`` (0.15, 0 < v < 1) is the soft target for recent
original text, the recent target is ``ceil(input_budget_tokens × keep_recent_ratio)``.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest
from iris.compaction import choose_cut, thresholds
from iris.config import parse_config
from iris.replay import ReplayEnvironment, replay
from iris.session import Message, ModelLimits, TextBlock
from iris.tokens import default_estimator

from workbench.importers.native import load_native
from workbench.services.presets import load_preset

ROOT = Path(__file__).resolve().parents[2]
LONG = ROOT / "sample_sessions" / "long_session.jsonl"
EST = default_estimator()


def _turns(n: int, words: int = 60) -> list[Message]:
    out = []
    for i in range(n):
        out.append(Message(role="user", content=(TextBlock(text=f"request {i} " + "w " * words),)))
        out.append(Message(role="assistant", content=(TextBlock(text=f"answer {i} " + "a " * words),)))
    return out


@pytest.mark.parametrize("ratio", [0.05, 0.1, 0.15, 0.3])
def test_r_cmp_5_tail_budget_is_the_recent_target(ratio):
    """R-CMP-5 (seed 000 压缩预算): the tail budget is ceil(budget × keep_recent_ratio) for every
    ratio, not capped at 5%."""
    config = parse_config({"compaction": {"input_budget_tokens": 40000, "keep_recent_ratio": ratio}})
    t = thresholds(config, ModelLimits())
    assert t.recent_target == math.ceil(40000 * ratio)
    plan = choose_cut(_turns(40), profile="continuation", input_budget=t.input_budget,
                      recent_target=t.recent_target, estimator=EST)
    assert plan.tail_budget == t.recent_target


def test_r_cmp_5_six_turn_cap_holds_whatever_the_ratio():
    """R-CMP-5: within the recent target, continuation keeps at most the last 6 complete turns."""
    history = _turns(20, words=10)
    plan = choose_cut(history, profile="continuation", input_budget=96000,
                      recent_target=math.ceil(96000 * 0.9), estimator=EST)
    assert plan.tail_turns == 6 and plan.cut_index == len(history) - 12


def test_r_cmp_5_keep_recent_ratio_changes_what_a_replay_keeps():
    """R-CMP-5: a larger keep_recent_ratio keeps a larger raw tail in a real replay's compaction
    (the knob has an effect above 0.05), and every tail stays within its recent target."""
    session = load_native(LONG)
    tails = []
    for ratio in (0.05, 0.15, 0.3):
        result = replay(session, parse_config({"compaction": {"input_budget_tokens": 96000,
                                                              "keep_recent_ratio": ratio}}))
        plans = [(p, d) for p in result.preparations for s in p.stages if s.name == "compaction"
                 and s.status == "applied" for d in s.decisions if type(d).__name__ == "CompactionPlan"]
        assert plans, ratio
        prep, plan = plans[0]
        m = re.search(r"tail ([\d,]+) tokens, recent target ([\d,]+)", plan.reason)
        assert m is not None, plan.reason
        tail, target = (int(x.replace(",", "")) for x in m.groups())
        # the engine counts local tokens: the target, a share of the whole request, is divided
        # by the step's calibration ratio
        assert target == int(math.ceil(96000 * ratio) / prep.calibration_ratio) and tail <= target
        tails.append(tail)
    assert tails[0] < tails[1] < tails[2]


def test_r_cmp_5_chord_style_preset_sets_five_percent():
    """R-CMP-5: Chord's "about 5% of the window" is what the chord-style preset sets."""
    config = load_preset("chord-style")
    assert config.compaction.keep_recent_ratio == 0.05
    t = thresholds(config, ModelLimits(context=200000, output=64000))
    assert t.recent_target == math.ceil(t.input_budget * 0.05)


# ------------------------------------------------------------------ prompts.root (R-PRM-1)

MARK = "PROJECT TEMPLATE MARKER 7f3a"


def _workspace_with_compaction_template(workspace: Path, root: str) -> Path:
    from iris.prompts import default_template_source

    directory = workspace / root
    directory.mkdir(parents=True)
    (directory / "compaction.j2").write_text(f"{MARK}\n{default_template_source('compaction')}",
                                             encoding="utf-8")
    return directory


def _budget_config(root: str | None = None):
    data: dict[str, dict[str, int | str]] = {"compaction": {"input_budget_tokens": 96000}}
    if root is not None:
        data["prompts"] = {"root": root}
    return parse_config(data)


def test_r_prm_1_engine_replay_reads_the_configured_root(tmp_path):
    """R-PRM-1 (seed 000 项目命名模板): prompts.root, relative to the workspace root, decides where a
    replay's templates come from; without a workspace the packaged defaults are used."""
    _workspace_with_compaction_template(tmp_path, "team/prompts")
    session = load_native(LONG)
    config = _budget_config("team/prompts")
    used = replay(session, config, environment=ReplayEnvironment(workspace_root=tmp_path))
    assert used.checkpoints and all(MARK in c.summary_request_text for c in used.checkpoints)
    packaged = replay(session, config)
    assert packaged.checkpoints and MARK not in packaged.checkpoints[0].summary_request_text
    assert used.configuration_snapshot_id != packaged.configuration_snapshot_id
    default_root = replay(session, _budget_config(), environment=ReplayEnvironment(workspace_root=tmp_path))
    assert MARK not in default_root.checkpoints[0].summary_request_text  # .iris/prompts is absent


def test_r_prm_1_configured_root_that_is_not_a_directory_is_a_config_error(tmp_path):
    """R-PRM-1: a configured root that does not exist is a clear error naming prompts.root."""
    from iris.errors import ConfigError

    with pytest.raises(ConfigError, match=r"prompts\.root.*missing/prompts") as err:
        replay(load_native(LONG), _budget_config("missing/prompts"),
               environment=ReplayEnvironment(workspace_root=tmp_path))
    assert err.value.field == "prompts.root"


def test_r_prm_1_workbench_notebook_and_cli_use_the_configured_root(tmp_path, monkeypatch, capsys):
    """R-PRM-1: the workbench (notebook replay, CLI replay, the Configuration page's snapshot) reads
    templates from prompts.root under the workbench workspace ($WORKBENCH_HOME/workspace)."""
    from workbench import notebook
    from workbench.cli import main
    from workbench.services.templates import default_workspace, saved_snapshot

    workspace = default_workspace()
    _workspace_with_compaction_template(workspace, "custom")
    config_file = tmp_path / "cfg.yaml"
    config_file.write_text("compaction:\n  input_budget_tokens: 96000\nprompts:\n  root: custom\n",
                           encoding="utf-8")
    r = notebook.replay(LONG, str(config_file))
    assert r.result.checkpoints and MARK in r.result.checkpoints[0].summary_request_text
    elsewhere = tmp_path / "other"
    _workspace_with_compaction_template(elsewhere, "custom")
    assert MARK in notebook.replay(LONG, str(config_file), workspace_root=elsewhere
                                   ).result.checkpoints[0].summary_request_text
    assert MARK in saved_snapshot(workspace, _budget_config("custom")).template_source("compaction")
    assert MARK not in saved_snapshot(workspace).template_source("compaction")
    out = tmp_path / "preps.jsonl"
    assert main(["replay", str(LONG), "--config", str(config_file), "--json", str(out)]) == 0
    capsys.readouterr()
    ids = {json.loads(line)["configuration_snapshot_id"] for line in out.read_text().splitlines()}
    assert ids == {r.result.configuration_snapshot_id}  # the CLI froze the same templates


def test_r_prm_1_templates_page_edits_the_configured_root(tmp_path):
    """R-PRM-1: the Templates page edits the templates under the Configuration page's
    prompts.root (so a saved edit is what the next replay uses)."""
    from streamlit.testing.v1 import AppTest

    from workbench.views.templates import editor_prompts_root

    assert editor_prompts_root("prompts:\n  root: team/prompts\n") == "team/prompts"
    assert editor_prompts_root("prompts: [broken") == ".iris/prompts"
    assert editor_prompts_root(None) == ".iris/prompts"
    workspace = tmp_path / "ws"
    at = AppTest.from_file(str(ROOT / "pages" / "templates.py"), default_timeout=60)
    at.session_state["cfg_yaml"] = "prompts:\n  root: team/prompts\n"
    at.run()
    at.text_input(key="tpl_workspace").input(str(workspace)).run()
    assert at.text_input(key="tpl_root").value == "team/prompts"
    assert any(str(workspace / "team" / "prompts") in c.value for c in at.caption)
