"""Importers word a JSON decode error once, with its place (R-SES-5): "invalid control character
at line L, column C", never the decoder's "Invalid control character at at column"."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from iris.errors import SessionFormatError

from workbench.importers import load_session
from workbench.importers._common import json_error_words


def _decode_error(text: str) -> json.JSONDecodeError:
    with pytest.raises(json.JSONDecodeError) as caught:
        json.loads(text)
    return caught.value


def test_json_error_words_names_what_line_and_column():
    assert json_error_words(_decode_error('{"a": "x\ty"}')) == \
        "invalid control character at line 1, column 9"
    assert json_error_words(_decode_error('{\n "a": }')) == "expecting value at line 2, column 7"
    assert json_error_words(_decode_error('{"a": 1}x'), line=12) == \
        "extra data at line 12, column 9"


FIXTURES = Path(__file__).parents[1] / "fixtures" / "importers"


@pytest.mark.parametrize("fixture", [
    "claude_compact.jsonl", "codex_basic.jsonl", "otel_legacy.jsonl", "chat_array.json",
    "otel_otlp.json", "swe_agent_1x.traj", "mini_swe.traj.json",
])
def test_every_importer_words_a_decode_error_with_its_line_and_column(tmp_path, fixture):
    """A raw tab inside a string on the second line holding a string value (R-SES-5)."""
    lines = (FIXTURES / fixture).read_text(encoding="utf-8").splitlines(keepends=True)
    line = next(n for n, text in enumerate(lines) if n and '": "' in text)
    column = lines[line].index('": "') + 4  # just inside the opening quote (1-based: +4)
    lines[line] = lines[line][:column] + "\t" + lines[line][column:]
    path = tmp_path / fixture
    path.write_text("".join(lines), encoding="utf-8")
    with pytest.raises(SessionFormatError) as caught:
        load_session(path)
    message = str(caught.value)
    assert "at at" not in message and "Invalid control" not in message
    assert f"invalid control character at line {line + 1}, column {column + 1}" in message
