"""Names and seams of the code base (docs/architecture.md): the engine's root exception, module
names that must not shadow the standard library, the declared summariser kind."""

from __future__ import annotations

import sys
from pathlib import Path

import iris.errors
from iris.compaction import ExtractiveSummariser, RecordedSummariser, Summariser
from iris.compaction.remote import OpenAICompatibleSummariser

ROOT = Path(__file__).resolve().parents[2]


def test_root_exception_has_an_engine_name_and_keeps_the_old_one():
    """Every error the project raises derives from ``IrisError``; ``WorkbenchError`` is the very
    same class, so code that catches the old name keeps working."""
    assert iris.errors.WorkbenchError is iris.errors.IrisError
    for name in iris.errors.__all__:
        cls = getattr(iris.errors, name)
        assert issubclass(cls, iris.errors.IrisError), name


def test_the_code_names_the_root_exception_iris_error():
    """The code says ``IrisError``: the older name ``WorkbenchError`` stays only as the alias in
    ``iris.errors`` (docs/architecture.md, "Names")."""
    import re

    roots = ["core", "workbench", "pages", "tests", "scripts", "bench"]
    found = sorted(f"{path.relative_to(ROOT)}:{n}" for root in roots for path in (ROOT / root).rglob("*.py")
                   if path.resolve() not in (Path(__file__).resolve(), ROOT / "core" / "iris" / "errors.py")
                   for n, line in enumerate(path.read_text("utf-8").splitlines(), 1)
                   if re.search(r"\bWorkbenchError\b", line))
    assert found == []


def test_no_module_of_the_app_folder_shadows_the_standard_library():
    """``streamlit run workbench/ui/app.py`` puts the entry script's folder, ``workbench/ui/``, first
    on ``sys.path``: no module or package there may carry a standard-library name (a
    ``workbench/ui/secrets.py`` would replace ``secrets`` for every import in the server), and
    app.py does not rewrite ``sys.path``. The package folder itself is checked too, for any entry
    script moved up."""
    for folder in (ROOT / "workbench" / "ui", ROOT / "workbench"):
        names = {p.stem for p in folder.glob("*.py")}
        names |= {p.parent.name for p in folder.glob("*/__init__.py")}
        clash = names & set(sys.stdlib_module_names)
        assert not clash, f"{folder.relative_to(ROOT)} shadows the standard library: {sorted(clash)}"
    assert "sys.path" not in (ROOT / "workbench" / "ui" / "app.py").read_text("utf-8")


def test_summarisers_declare_their_kind():
    """Each engine summariser declares the kind that labels its checkpoints and stored re-runs."""
    assert ExtractiveSummariser.kind == "extractive"
    assert RecordedSummariser.kind == "recorded"
    assert OpenAICompatibleSummariser.kind == "remote"
    assert isinstance(ExtractiveSummariser(), Summariser)


def test_one_spelling_and_old_records_still_read():
    """New identifiers spell "summariser" (STYLE.md) and the old spelling is gone from the engine's
    names; a decision saved with the old key ``summarizer`` still reads."""
    from iris import compaction
    from iris.compaction.records import CandidateDecision

    for old in ("Summarizer", "ExtractiveSummarizer", "RecordedSummarizer",
                "OpenAICompatibleSummarizer"):
        assert not hasattr(compaction, old), old
    assert not hasattr(iris.errors, "SummarizerError")
    saved = {"summarizer": "extractive", "summary_tokens": 10, "summary_max_tokens": 20,
             "checkpoint_tokens": 30, "projected_request_tokens": 40, "pressure_line": 50}
    assert CandidateDecision.model_validate(saved).summariser == "extractive"


def test_r_cfg_yaml_errors_are_worded_once(tmp_path):
    """A YAML syntax error reads the same from a configuration and from a context.yaml: the
    problem, the file and the 1-based line, never a traceback."""
    import pytest
    from iris.config import parse_config
    from iris.context import parse_context_build_input
    from iris.errors import ConfigError

    broken = "system:\n  text: [unclosed\nmemory: x\n"
    with pytest.raises(ConfigError) as from_config:
        parse_config(broken, source="c.yaml")
    with pytest.raises(ConfigError) as from_context:
        parse_context_build_input(broken, base_dir=tmp_path, path="c.yaml")
    assert str(from_config.value) == str(from_context.value)
    assert "invalid YAML" in str(from_config.value) and "c.yaml:" in str(from_config.value)


def test_one_text_diff_for_templates_and_reruns():
    """The Templates page and the re-run comparison draw their diffs with the same helper."""
    from workbench.services.rerun import text_diff
    from workbench.views.templates import template_diff

    assert template_diff("a\nb\n", "a\nc\n", "compaction").splitlines()[:2] == [
        "--- saved/compaction.j2", "+++ edited/compaction.j2"]
    assert text_diff("a\nb\n", "a\nc\n", "x").splitlines()[-2:] == ["-b", "+c"]
    assert text_diff("same\n", "same\n", "x") == template_diff("same\n", "same\n", "compaction") == ""


def test_r_cfg_every_section_words_an_unknown_field_the_same(tmp_path):
    """R-CFG: an unknown key reads "unknown field" with its file, line and field path in every
    section of a configuration, ``reduction`` included, and in a runner configuration."""
    import pytest
    from iris.config import SECTIONS, parse_config
    from iris.errors import ConfigError
    from iris.runner.config import parse_runner_config

    for section in SECTIONS:
        if section == "model":
            text = "model:\n  name: m\n  bogus: 1\n"
        elif section == "catalogue":
            continue  # entries are keyed by model name: see below
        else:
            text = f"{section}:\n  bogus: 1\n"
        with pytest.raises(ConfigError) as caught:
            parse_config(text, source="c.yaml")
        assert caught.value.problem == "unknown field", (section, str(caught.value))
        assert caught.value.line == text.splitlines().index("  bogus: 1") + 1
        assert str(caught.value).startswith(f"c.yaml:{caught.value.line} [{section}.bogus]")
    with pytest.raises(ConfigError, match=r"\[catalogue\.m\.bogus\]: unknown field"):
        parse_config("catalogue:\n  m:\n    context: 1000\n    bogus: 1\n", source="c.yaml")
    with pytest.raises(ConfigError, match="unknown field"):
        parse_runner_config("bogus: 1\n", base_dir=tmp_path)


def test_one_list_of_summariser_kinds():
    """R-PREP-7: the summarisers the workbench offers are exactly the kinds the engine declares,
    and the command line's choices are the same list with the extractive one named offline."""
    from typing import get_args

    from iris.compaction import SummariserKind

    from workbench.services.summarisers import CLI_SUMMARISERS, SUMMARISER_LABELS, SUMMARISERS

    assert SUMMARISERS == get_args(SummariserKind)
    assert set(SUMMARISER_LABELS) == set(SUMMARISERS)
    assert CLI_SUMMARISERS == ("offline", "recorded", "remote")
