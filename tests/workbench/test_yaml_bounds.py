"""YAML alias expansion is bounded (R-BOUND-1): a "billion laughs" document (each anchor a list of
ten aliases of the previous one) in a context.yaml or a --config file is refused at once with an
error naming the file and the line of the alias; recursive aliases too; ordinary anchors work."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from iris.config import load_config, parse_config
from iris.context.load import load_context_build_input
from iris.errors import ConfigError
from iris.yaml_errors import MAX_YAML_NODES, read_yaml


def _bomb(levels: int = 9) -> str:
    lines = ['a0: &a0 "lol"']
    for i in range(1, levels + 1):
        refs = ", ".join([f"*a{i - 1}"] * 10)
        lines.append(f"a{i}: &a{i} [{refs}]")
    return "\n".join(lines) + "\n"


def test_r_bound_1_the_bomb_is_small():
    """The document below is about 550 bytes and expands to 10⁹ strings."""
    assert len(_bomb()) < 600


def test_r_bound_1_billion_laughs_context_yaml_is_refused_quickly(tmp_path: Path):
    """R-BOUND-1: a 550-byte context.yaml whose aliases expand to 10⁹ nodes (it spun for over
    60 s) is refused in well under a second, naming the file and the line of the alias."""
    path = tmp_path / "context.yaml"
    path.write_text(_bomb() + "system:\n  slots:\n    - {name: x, content: *a9}\n", "utf-8")
    started = time.process_time()
    with pytest.raises(ConfigError, match=r"aliases expand to more than 100,000 nodes") as err:
        load_context_build_input(path)
    assert time.process_time() - started < 1
    assert err.value.path == str(path) and err.value.line is not None and 3 <= err.value.line <= 11
    assert str(err.value).startswith(f"{path}:{err.value.line}: aliases expand")


def test_r_bound_1_billion_laughs_in_a_config_file_is_refused_quickly(tmp_path: Path):
    """R-BOUND-1: a bomb under compaction.model_pool in a --config file is refused the same way."""
    path = tmp_path / "config.yaml"
    items = "".join(f"    - {line.split(': ', 1)[1]}\n" for line in _bomb().splitlines())
    path.write_text("compaction:\n  model_pool:\n" + items, "utf-8")
    started = time.process_time()
    with pytest.raises(ConfigError, match="aliases expand") as err:
        load_config(path)
    assert time.process_time() - started < 1 and err.value.path == str(path)


def test_r_bound_1_recursive_alias_is_refused():
    """R-BOUND-1: an alias inside its own anchor (a cyclic document) is refused by line."""
    with pytest.raises(ConfigError, match=r"alias \*loop refers to the node that contains it") as err:
        read_yaml("a: 1\nb: &loop\n  - x\n  - *loop\n", "f.yaml")
    assert err.value.line == 4


def test_r_bound_1_ordinary_anchors_and_merge_keys_still_load():
    """R-BOUND-1: anchors, aliases and merge keys of a normal size load as before."""
    text = ("base: &base {threshold: 0.7, reserved: 10}\n"
            "compaction:\n  <<: *base\n  reserved: 20\n"
            "list: &l [1, 2, 3]\nmore: [*l, *l]\n")
    data, node = read_yaml(text, "ok.yaml")
    assert data == {"base": {"threshold": 0.7, "reserved": 10},
                    "compaction": {"threshold": 0.7, "reserved": 20},
                    "list": [1, 2, 3], "more": [[1, 2, 3], [1, 2, 3]]}
    assert node is not None
    cfg = parse_config("compaction: &c {threshold: 0.7}\n")
    assert cfg.compaction.threshold == 0.7


def test_r_bound_1_the_bound_is_just_above_what_is_allowed():
    """R-BOUND-1: a document expanding to fewer nodes than MAX_YAML_NODES loads; one more level
    of aliases past it is refused."""
    assert MAX_YAML_NODES == 100_000
    read_yaml(_bomb(4), "ok.yaml")  # about 11,000 nodes
    with pytest.raises(ConfigError):
        read_yaml(_bomb(5), "big.yaml")  # about 111,000 nodes


def test_r_bound_1_the_configuration_page_reads_its_yaml_through_the_bounded_reader():
    """R-BOUND-1: the Configuration page's checks and form edits read the editor text through
    read_yaml, so a bomb typed there is a ConfigError, not a hang."""
    from workbench.views.configuration import apply_form, check_config

    text = _bomb() + "compaction:\n  model_pool: *a9\n"
    check = check_config(text)
    assert not check.ok and "aliases expand" in (check.error or "")
    with pytest.raises(ConfigError, match="aliases expand"):
        apply_form(text, {})


def test_r_bound_1_every_yaml_load_goes_through_read_yaml():
    """R-BOUND-1: no module of the engine, the workbench or the pages parses YAML except through
    iris.yaml_errors.read_yaml (dumping is free)."""
    import re

    root = Path(__file__).resolve().parents[2]
    direct = re.compile(r"yaml\.(safe_load|load|full_load|unsafe_load|compose|load_all|"
                        r"safe_load_all|compose_all|SafeLoader\(|Loader\()")
    offenders = [f"{p.relative_to(root)}:{n}" for folder in ("core", "workbench", "pages")
                 for p in (root / folder).rglob("*.py") if p.name != "yaml_errors.py"
                 for n, line in enumerate(p.read_text("utf-8").splitlines(), 1)
                 if direct.search(line)]
    assert offenders == []
