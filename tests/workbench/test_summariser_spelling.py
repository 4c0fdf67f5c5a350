"""One spelling of "summariser" in identifiers (British, as SPEC.md and STYLE.md write it), while
records saved before the change and scripts written for the old CLI option still work."""

from __future__ import annotations

import argparse

from iris.compaction.checkpoint import Checkpoint
from iris.compaction.records import CandidateDecision

from workbench.services.summarisers import add_summariser_options


def _candidate(key: str) -> dict[str, object]:
    return {"kind": "candidate", key: "extractive", "summary_tokens": 10,
            "summary_max_tokens": 100, "checkpoint_tokens": 20,
            "projected_request_tokens": 500, "pressure_line": 400}


def test_candidate_decisions_saved_with_the_old_key_read_back_and_save_the_new_one():
    old = CandidateDecision.model_validate(_candidate("summarizer"))
    new = CandidateDecision.model_validate(_candidate("summariser"))
    assert old == new
    assert old.summariser == "extractive"
    dumped = old.model_dump(mode="json")
    assert "summariser" in dumped and "summarizer" not in dumped


def test_checkpoints_saved_with_the_old_key_read_back():
    old = Checkpoint.model_validate({"mode": "continuation", "summarizer": "recorded",
                                     "sections": []})
    assert old.summariser == "recorded"
    assert "(summary: recorded)" in old.render()


def test_the_cli_accepts_both_spellings_of_the_summariser_option():
    parser = argparse.ArgumentParser()
    add_summariser_options(parser)
    assert parser.parse_args(["--summariser", "recorded"]).summariser == "recorded"
    assert parser.parse_args(["--summarizer", "recorded"]).summariser == "recorded"
    assert parser.parse_args([]).summariser == "offline"
