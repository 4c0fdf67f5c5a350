"""`workbench replay` (R-UI-9): JSON lines, summary, --name, --config, errors,
on every sample and on the real sessions in ../shared/real-sessions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from iris.preparation.records import ContextPreparation

from workbench.cli import main
from workbench.storage.store import open_store

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = sorted((ROOT / "sample_sessions").glob("*.jsonl"))


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["replay", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.stem)
def test_replay_every_sample_writes_json_lines_and_a_summary(sample, tmp_path, capsys):
    out = tmp_path / "preps.jsonl"
    code, stdout, stderr = _run(capsys, str(sample), "--json", str(out))
    assert code == 0, stderr
    preps = [ContextPreparation.model_validate_json(line) for line in out.read_text().splitlines()]
    assert preps and [p.step_index for p in preps] == list(range(len(preps)))
    assert f": {len(preps)} steps in " in stdout
    ready = sum(p.phase == "ready" for p in preps)
    assert f"ready {ready} · failed " in stdout
    assert "compactions applied: " in stdout
    last = preps[-1]
    whole = last.whole_request_tokens if last.whole_request_tokens is not None else (
        last.final_input_tokens)
    assert (f"final request: {whole:,} tokens, whole request (raw local estimate "
            f"{last.final_input_tokens:,})") in stdout
    assert "  estimate error: " in stdout


def test_replay_real_sessions(real_sessions, tmp_path, capsys):
    """Done-when: `workbench replay` works on the real files in ../shared/real-sessions/."""
    files = sorted(p for p in real_sessions.glob("*/*") if p.suffix in (".jsonl", ".json"))
    assert files
    for path in files:
        out = tmp_path / (path.stem + ".jsonl")
        code, stdout, stderr = _run(capsys, str(path), "--json", str(out))
        assert code == 0, (path, stderr)
        lines = out.read_text().splitlines()
        assert lines and f": {len(lines)} steps in " in stdout


def test_r_prep_6_two_replays_write_identical_json(tmp_path, capsys):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    sample = str(ROOT / "sample_sessions" / "bugfix.jsonl")
    assert _run(capsys, sample, "--json", str(a))[0] == 0
    assert _run(capsys, sample, "--json", str(b))[0] == 0
    assert a.read_bytes() == b.read_bytes()


def test_replay_with_config_shows_applied_compaction(tmp_path, capsys):
    config = tmp_path / "tight.yaml"
    config.write_text("compaction:\n  input_budget_tokens: 96000\n", encoding="utf-8")
    code, stdout, _ = _run(capsys, str(ROOT / "sample_sessions" / "long_session.jsonl"),
                           "--config", str(config))
    assert code == 0
    assert "compactions applied: " in stdout and "compactions applied: 0" not in stdout
    assert "budget 96,000 from config, pressure line 76,800" in stdout


def test_replay_name_saves_in_the_store_and_replays_by_session_id(capsys):
    sample = str(ROOT / "sample_sessions" / "unanswered.jsonl")
    code, stdout, _ = _run(capsys, sample, "--name", "first look")
    assert code == 0 and "saved as 'first look'" in stdout
    with open_store() as store:
        session_id = store.list_sessions()[0].id
    code, stdout, _ = _run(capsys, session_id, "--name", "again")
    assert code == 0
    with open_store() as store:
        assert [r.name for r in store.replays.list(session_id)] == ["first look", "again"]


def test_replay_json_to_stdout_sends_the_summary_to_stderr(capsys):
    code, stdout, stderr = _run(capsys, str(ROOT / "sample_sessions" / "unanswered.jsonl"),
                                "--json", "-")
    assert code == 0
    assert all(json.loads(line)["session_id"] for line in stdout.splitlines())
    assert "steps in" in stderr and "steps in" not in stdout


def test_replay_bad_config_names_file_and_field_without_traceback(tmp_path, capsys):
    config = tmp_path / "bad.yaml"
    config.write_text("compaction:\n  keep_recent_ratio: 2\n", encoding="utf-8")
    code, stdout, stderr = _run(capsys, str(ROOT / "sample_sessions" / "bugfix.jsonl"),
                                "--config", str(config))
    assert code == 1 and stdout == ""
    assert str(config) in stderr and "keep_recent_ratio" in stderr
    assert "Traceback" not in stderr


def test_replay_unknown_target_is_a_clear_error(capsys):
    code, _, stderr = _run(capsys, "no-such-session")
    assert code == 1
    assert "'no-such-session' is neither a transcript file nor a stored session id" in stderr


def test_replay_defaults_makes_the_app_replays_of_every_stored_session(capsys):
    """`make run` can have replays ready before the app opens."""

    with open_store() as store:
        ids = [store.import_file(ROOT / "sample_sessions" / f"{n}.jsonl").session_id
               for n in ("bugfix", "unanswered")]
    code, stdout, _ = _run(capsys, "--defaults")
    assert code == 0
    with open_store() as store:
        for session_id in ids:
            assert store.replays.find(session_id, "default") is not None
            made = {r.name: r for r in store.replays.list(session_id)}
            # one line per session naming every replay it made, with its steps
            line = next(x for x in stdout.splitlines() if x.startswith(f"{session_id}: "))
            assert {"default", "as recorded"} <= set(made)
            for name, info in made.items():
                assert f"{name!r} ({info.step_count} steps" in line
    code, stdout, _ = _run(capsys, "--defaults")  # already there: nothing replayed again
    assert code == 0 and stdout.count("ready") == 2


def test_replay_without_target_or_defaults_is_a_usage_error(capsys):
    code, _, stderr = _run(capsys)
    assert code == 1 and "give PATH_OR_SESSION_ID, or --defaults" in stderr


def test_r_ui_9_replay_takes_a_preset_name_like_report_and_notebook(capsys):
    """R-UI-9/R-UI-6: `--config` accepts a bundled preset name; an unknown name lists the presets."""
    from workbench.services.presets import load_preset

    code, stdout, _ = _run(capsys, str(ROOT / "sample_sessions" / "long_session.jsonl"), "--config", "cost-first")
    budget = load_preset("cost-first").compaction.input_budget_tokens
    assert code == 0 and f"budget {budget:,} from config" in stdout
    code, _, stderr = _run(capsys, str(ROOT / "sample_sessions" / "long_session.jsonl"), "--config", "nosuch")
    assert code == 1 and "presets: default, cost-first, quality-first" in stderr


def test_replay_defaults_line_counts_in_words():
    """R-UI-9: the `--defaults` line says "1 step" / "1 compaction applied", never "1 compactions"."""
    from types import SimpleNamespace

    from workbench.cli.replay import _defaults_line  # pyright: ignore[reportPrivateUsage]

    line = _defaults_line("s", [SimpleNamespace(name="default", step_count=1, compactions_applied=1),
                                SimpleNamespace(name="as recorded", step_count=68, compactions_applied=0)])
    assert line == ("s: replays ready: 'default' (1 step, 1 compaction applied), "
                    "'as recorded' (68 steps, 0 compactions applied)")
