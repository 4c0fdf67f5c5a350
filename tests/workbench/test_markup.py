"""Security (R-UI-2): transcript text joined into Streamlit markdown is shown as text. The escaping
helpers are checked with a CommonMark renderer (no image, link, HTML or emphasis comes out, the text
reads the same), and the Messages and Sessions pages are run with a hostile title and import error."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
from iris.session import Message, Session, SessionHeader, TextBlock
from markdown_it import MarkdownIt
from streamlit.testing.v1 import AppTest

from workbench.importers.native import dump_session
from workbench.storage.store import Store
from workbench.views.markup import code_span, one_line, plain

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = [
    "![t](http://127.0.0.1:9/x)",
    "<img src=\"http://127.0.0.1:9/y\"> <script>alert(1)</script>",
    "![r][ref]\n\n[ref]: http://127.0.0.1:9/ref",
    "line\n\n![after a blank line](http://127.0.0.1:9/z)",
    ":red[colour] :material/home: $x^2$ **bold** _it_ ~~s~~ `code`",
    "# heading\n- item\n1. item\n> quote\n| a | b |\n|---|---|\n| 1 | 2 |",
    "[link](javascript:alert(1)) <http://127.0.0.1:9/auto> &lt;img&gt; \\![x](y)",
]
_MD = MarkdownIt("commonmark").enable("table").enable("strikethrough")


def _text_of(rendered: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", rendered))


@pytest.mark.parametrize("text", HOSTILE)
def test_plain_renders_literally(text):
    """R-UI-2: plain() text renders as one paragraph of exactly the same characters."""
    rendered = _MD.render(plain(text))
    assert "<img" not in rendered and "<a " not in rendered and "<script" not in rendered
    assert re.sub(r"</?(p|br /?)>", "", rendered).count("<") == 0  # no markup besides paragraphs
    assert _text_of(rendered).split() == text.split()


@pytest.mark.parametrize("text", HOSTILE)
def test_one_line_and_code_span_stay_inline(text):
    """R-UI-2: one_line() and code_span() make one inline run: no block, image or link."""
    for escaped in (one_line(text), code_span(text)):
        rendered = _MD.render(f"Imported: {escaped} — native").strip()
        assert rendered.startswith("<p>Imported: ") and rendered.endswith("</p>")
        assert rendered.count("<p>") == 1
        assert "<img" not in rendered and "<a " not in rendered
    assert "\n" not in one_line(text) and "\n" not in code_span(text)
    assert _text_of(_MD.render(code_span(text))).strip() == " ".join(text.replace("`", "'").split())


def test_code_span_of_nothing_is_a_span():
    assert code_span(None) == code_span("") == "` `"


def _hostile_store(home: Path) -> str:
    session = Session(header=SessionHeader(session_id="hostile", title=HOSTILE[0] + " " + HOSTILE[1]),
                      messages=(Message(role="user", content=(TextBlock(text=HOSTILE[2]),)),
                                Message(role="assistant", content=(TextBlock(text="ok"),))))
    src = dump_session(session, home / "hostile.jsonl")
    with Store(home / "workbench.db") as store:
        return store.import_file(src).session_id


def test_messages_page_title_is_escaped(workbench_home):
    """R-UI-2: the Messages page's heading is the escaped title, never markdown of it."""
    session_id = _hostile_store(workbench_home)
    at = AppTest.from_file(str(ROOT / "workbench" / "ui" / "app.py"), default_timeout=60)
    at.query_params["session"] = session_id
    at.run()
    at.switch_page("../pages/messages.py").run()
    assert not at.exception
    heading = [h.value for h in at.subheader]
    assert plain(HOSTILE[0]) in heading[0]
    rendered = _MD.render(heading[0])
    assert "<img" not in rendered


def test_import_error_is_escaped(workbench_home, tmp_path):
    """R-UI-2: an import error that echoes transcript text is shown escaped on the Sessions page."""
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"type":"header","session_id":"bad","title":"t"}\n{"type":"message","role":"user",'
                   '"content":[{"type":"![e](http://127.0.0.1:9/y)"}]}\n')
    at = AppTest.from_file(str(ROOT / "workbench" / "ui" / "app.py"), default_timeout=60).run()
    at.text_area(key="wb_import_path").input(str(bad)).run()
    at.button(key="wb_import_path_button").click().run()
    errors = [e.value for e in at.error if "Import failed" in e.value]
    assert errors and plain("![e](http://127.0.0.1:9/y)") in errors[0]
    assert "<img" not in _MD.render(errors[0])
