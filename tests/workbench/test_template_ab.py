"""A template A/B says what it compared (R-FID-6): ``--summary-json`` names the summariser and the
template snapshot; with the offline summariser two templates give the same checkpoints and the
command warns; against a local OpenAI-compatible server (a real HTTP server on 127.0.0.1 that
answers as a model following its template would) the two templates give different recall, the
example docs/summarisers.md walks through."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from iris.compaction import REQUIRED_SECTIONS

from workbench.analysis.summariser_info import summariser_info, templates_ignored
from workbench.cli import main

pytestmark = pytest.mark.slow

SAMPLE = Path(__file__).resolve().parents[2] / "workbench" / "sample_sessions" / "long_session.jsonl"
DEFAULTS = Path(__file__).resolve().parents[2] / "core" / "iris" / "prompts" / "defaults"
TIGHT = "compaction: {input_budget_tokens: 60000}\n"
ASK = "List every file path and shell command you saw, verbatim, under ## Files and Evidence."
_PATHS = re.compile(r"(?<![\w.-])/?(?:[\w.-]+/)+[\w.-]+\.\w+")


class _Model(BaseHTTPRequestHandler):
    """Answers a chat completion as a model that follows its instructions: the required sections,
    and the paths of the conversation only when the system prompt asks for them."""

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        system = " ".join(m["content"] for m in body["messages"] if m["role"] == "system")
        text = " ".join(m["content"] for m in body["messages"] if m["role"] != "system")
        sections = {s: f"Worked on the task ({s.lower()}), details in the archive." for s in
                    REQUIRED_SECTIONS}
        sections["Next Step"] = "Continue with the user's current request as planned."
        if ASK in system:
            sections["Files and Evidence"] = "\n".join(
                f"- `{p}`" for p in dict.fromkeys(_PATHS.findall(text))) or "- none"
        content = "\n\n".join(f"## {k}\n{v}" for k, v in sections.items())
        data = json.dumps({"model": body["model"], "choices": [
            {"message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": len(text) // 4, "completion_tokens": len(content) // 4}})
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data.encode())

    def log_message(self, format: str, *args: Any) -> None:
        return


@pytest.fixture
def local_model(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Model)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    monkeypatch.setenv("WORKBENCH_SUMMARY_BASE_URL", url)
    monkeypatch.setenv("WORKBENCH_SUMMARY_MODEL", "local-model")
    try:
        yield url
    finally:
        server.shutdown()
        server.server_close()


def _templates(tmp_path: Path) -> tuple[Path, Path]:
    base = (DEFAULTS / "compaction.j2").read_text(encoding="utf-8")
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    (a / "compaction.j2").write_text(base, encoding="utf-8")
    (b / "compaction.j2").write_text(base + "\n" + ASK + "\n", encoding="utf-8")
    return a, b


def _run(tmp_path: Path, prompts: Path, summariser: str, capsys: pytest.CaptureFixture[str]
         ) -> tuple[dict[str, Any], str]:
    config = tmp_path / "tight.yaml"
    config.write_text(TIGHT, encoding="utf-8")
    out = tmp_path / f"{prompts.name}-{summariser}.json"
    code = main(["replay", str(SAMPLE), "--config", str(config), "--summariser", summariser,
                 "--prompts", str(prompts), "--summary-json", str(out)])
    assert code == 0
    return json.loads(out.read_text(encoding="utf-8")), capsys.readouterr().out


def _kept(summary: dict[str, Any]) -> tuple[int, int]:
    fid = [c["fidelity"] for c in summary["compactions"]]
    return sum(f["needed_later_kept"] for f in fid), sum(f["needed_later"] for f in fid)


def test_r_fid_6_offline_ab_is_identical_and_says_the_templates_were_ignored(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    """R-FID-6: with the offline summariser the two template snapshots give the same loss
    records; the summary names the summariser (offline, does not read templates) and each
    side's snapshot, and the command prints the warning."""
    a, b = _templates(tmp_path)
    first, said = _run(tmp_path, a, "offline", capsys)
    second, _ = _run(tmp_path, b, "offline", capsys)
    assert first["summariser"] == {"kind": "offline", "model": None, "base_url": None,
                                   "reads_templates": False}
    assert first["template_snapshot_id"] != second["template_snapshot_id"]
    assert first["compactions"] and first["compactions"] == second["compactions"]
    assert "warning: --prompts" in said and "Templates not compared" in said


def test_r_fid_6_template_ab_against_a_local_model_server(
        tmp_path: Path, local_model: str, capsys: pytest.CaptureFixture[str]):
    """R-FID-6: against a local OpenAI-compatible server the summary names the endpoint and its
    model, reads_templates is true, no warning is printed, and template B (which asks for the
    paths) keeps more of the needed-later facts than A."""
    a, b = _templates(tmp_path)
    first, said = _run(tmp_path, a, "remote", capsys)
    second, _ = _run(tmp_path, b, "remote", capsys)
    assert first["summariser"] == {"kind": "remote", "model": "local-model",
                                   "base_url": local_model, "reads_templates": True}
    assert "warning: --prompts" not in said
    assert first["template_snapshot_id"] != second["template_snapshot_id"]
    kept_a, needed_a = _kept(first)
    kept_b, needed_b = _kept(second)
    assert needed_a > 0 and needed_b > 0
    assert kept_b / needed_b > kept_a / needed_a + 0.2, (kept_a, needed_a, kept_b, needed_b)


def test_r_fid_6_summariser_info_of_each_kind():
    """R-FID-6: the offline and recorded summarisers do not read templates (a warning is worded),
    a remote or custom one does (no warning)."""
    assert not summariser_info(None).reads_templates
    assert summariser_info("recorded").kind == "recorded"
    assert templates_ignored(summariser_info("extractive")) is not None
    assert templates_ignored(summariser_info("remote")) is None


def test_r_fid_6_notebook_compare_warns_when_the_templates_were_not_read(tmp_path: Path):
    """R-FID-6: ``compare()`` of two replays with different template snapshots under the
    offline summariser warns (``warnings`` and a UserWarning); with the same snapshot it does
    not."""
    from iris.prompts import PromptSource

    from workbench.notebook import compare, replay

    a, b = _templates(tmp_path)
    first = replay(SAMPLE, prompts=PromptSource(a, ".").snapshot(), label="A")
    second = replay(SAMPLE, prompts=PromptSource(b, ".").snapshot(), label="B")
    assert first.template_snapshot_id != second.template_snapshot_id
    with pytest.warns(UserWarning, match="Templates not compared"):
        both = compare(first, second)
    assert len(both.warnings) == 1
    assert compare(first, replay(SAMPLE, prompts=PromptSource(a, ".").snapshot())).warnings == ()
