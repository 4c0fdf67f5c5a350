"""The Templates page's words (R-UI-4, R-PRM-3): which snapshot a view uses, where templates are
saved, what a re-run compares, and how its results read. Pure functions of their inputs."""

from __future__ import annotations

from pathlib import Path

from iris.prompts import PROMPT_IDS, PROMPT_VARIABLES, PromptSnapshot

from workbench.services.rerun import StepComparison, StepOutcome
from workbench.services.summarisers import SUMMARISERS
from workbench.views.templates import (
    SUMMARISER_LABELS,
    checkpoint_same_caption,
    default_replay_name,
    edited_sides_caption,
    engine_only_note,
    preview_template,
    rendered_heading,
    rerun_intro,
    saved_replay_message,
    snapshot_status,
    source_caption,
    step_labels,
    variables_caption,
)


def test_r_prm_1_source_caption_names_the_folder_and_the_saved_count():
    caption = source_caption(Path("/ws/.iris/prompts"), 2)
    assert caption.startswith("Prompts root: `/ws/.iris/prompts` (2 of ")
    assert f"2 of {len(PROMPT_IDS)} templates saved there" in caption


def test_r_prm_4_variables_caption_lists_what_the_consuming_code_passes():
    caption = variables_caption("todo_reminder")
    assert caption.startswith("Variables provided by the consuming code: ")
    assert caption.count("`") == 2 * len(PROMPT_VARIABLES["todo_reminder"])
    assert "`turns_since_update`" in caption


def test_r_ui_4_snapshot_status_says_saved_or_edited_with_the_changed_ids():
    base = PromptSnapshot.defaults()
    same = preview_template(base, base, "compaction", base.template_source("compaction"))
    assert snapshot_status(base, same) == (
        False, f"This view uses the **saved snapshot** `{base.snapshot_id[:19]}…`")
    edit = preview_template(base, base, "goal_context", "GOAL: {{ objective }}")
    edited, sentence = snapshot_status(base, edit)
    assert edited
    assert "**edited snapshot** (not saved): goal_context." in sentence
    assert edit.snapshot.snapshot_id[:19] in sentence and base.snapshot_id[:19] not in sentence


def test_r_ui_4_rendered_heading_names_the_step_or_the_examples():
    assert rendered_heading(None) == "Rendered with example variables"
    assert rendered_heading(12) == "Rendered with the variables of step 12"


def test_r_ui_4_engine_only_note_only_for_templates_a_replay_never_renders():
    engine = ("compaction", "compaction_input")
    assert engine_only_note("compaction", engine) is None
    note = engine_only_note("todo_reminder", engine)
    assert note == ("The engine renders only `compaction`, `compaction_input` during a replay; an "
                    "edit of `todo_reminder` does not change a replay.")


def test_r_ui_4_rerun_intro_mentions_the_selected_step_only_when_it_differs():
    plain = rerun_intro(12, "budget 96k", "applied", None)
    assert plain == ("Compaction step **12** of replay **budget 96k** (stage applied). Both sides "
                     "walk the same history; only the template snapshot differs.")
    assert rerun_intro(12, "budget 96k", "applied", 12) == plain
    assert "; the nearest compaction to the selected step 30." in rerun_intro(
        12, "budget 96k", "applied", 30)


def test_r_prep_7_every_summariser_has_a_label():
    assert set(SUMMARISER_LABELS) == set(SUMMARISERS)
    assert SUMMARISER_LABELS["extractive"].startswith("extractive (offline")


def test_r_ui_4_edited_sides_caption_names_the_changed_templates():
    assert edited_sides_caption(("compaction",)).startswith(
        "The edited side uses this page's `compaction` (edited or saved in the workspace)")
    assert "both sides will be identical until you edit one" in edited_sides_caption(())


def _side(label: str, status: str) -> StepOutcome:
    return StepOutcome(label=label, step_index=12, snapshot_id="sha256:x", status=status)


def test_r_ui_4_step_labels_read_original_then_edited_status():
    steps = [StepComparison(step_index=12, original=_side("original", "applied"),
                            edited=_side("edited", "rejected"), prompt_diff="", checkpoint_diff=""),
             StepComparison(step_index=40, original=_side("original", "candidate"),
                            edited=_side("edited", "applied"), prompt_diff="", checkpoint_diff="")]
    assert step_labels(steps) == {12: "step 12: applied → rejected",
                                  40: "step 40: candidate → applied"}
    assert step_labels([]) == {}


def test_r_ui_4_identical_checkpoint_explains_the_extractive_summariser():
    assert checkpoint_same_caption("extractive") == (
        "The checkpoint text is identical: the extractive summariser reads the messages, not the "
        "prompt.")
    assert checkpoint_same_caption("remote") == "The checkpoint text is identical."


def test_r_ui_4_saved_replay_name_and_message_show_the_snapshot():
    snapshot_id = PromptSnapshot.defaults().snapshot_id
    assert default_replay_name(snapshot_id) == f"templates {snapshot_id[7:15]}"
    assert default_replay_name(None) == "templates "
    message = saved_replay_message("penguins", snapshot_id)
    assert message.startswith("Saved replay **penguins** with template snapshot ")
    assert f"`{snapshot_id[:19]}…`" in message and message.endswith("pick it in the sidebar.")
