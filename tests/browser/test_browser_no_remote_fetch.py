"""Through a real browser (security, R-UI-2): transcript text never makes the app fetch a URL. A
local beacon HTTP server on 127.0.0.1 records every request; a session whose title, texts, tool
names, arguments, results, model names and recorded compaction summary carry markdown images
(``![x](http://127.0.0.1:PORT/…)``, also as a reference definition) and ``<img src=…>`` is opened on
every page, and an import whose error echoes a payload is shown on the Sessions page: the beacon
gets no request and no ``<img>`` pointing at it is in the page."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from typing import ClassVar

import pytest
from iris.session import (
    Message,
    RecordedCompaction,
    Session,
    SessionHeader,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultBlock,
    Usage,
)
from playwright.sync_api import Page, expect

from workbench.importers.native import dump_session
from workbench.storage.store import Store

FIRST = 60_000
PAGES = ("sessions", "messages", "step-through", "compaction", "reduction", "usage", "templates",
         "configuration", "failures", "context", "corpus")
TITLES = {"sessions": "Sessions", "messages": "Messages", "step-through": "Step-through",
          "compaction": "Compaction", "reduction": "Reduction", "usage": "Usage",
          "templates": "Templates", "configuration": "Configuration", "failures": "Failures",
          "context": "Context", "corpus": "Corpus"}


class _Beacon(http.server.BaseHTTPRequestHandler):
    hits: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        self.hits.append(self.path)
        self.send_response(204)
        self.end_headers()

    do_POST = do_HEAD = do_GET

    def log_message(self, format: str, *args: object) -> None:
        return


@pytest.fixture
def beacon() -> Iterator[tuple[int, list[str]]]:
    """A local HTTP server recording the path of every request it gets."""
    hits: list[str] = []
    handler = type("Beacon", (_Beacon,), {"hits": hits})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1], hits
    server.shutdown()
    server.server_close()


def _payloads(port: int, where: str) -> str:
    base = f"http://127.0.0.1:{port}"
    return (f"![x]({base}/{where}-md) <img src=\"{base}/{where}-html\"> ![r][{where}]\n\n"
            f"[{where}]: {base}/{where}-ref\n\n:red[{where}] $x^2$ **{where}**")


def _hostile_session(port: int) -> Session:
    def p(where: str) -> str:
        return _payloads(port, where)

    usage = Usage(input_tokens=120, output_tokens=20, model=f"m ![m](http://127.0.0.1:{port}/usage)")
    msgs = (Message(role="system", content=(TextBlock(text=p("system")),)),
            Message(role="user", content=(TextBlock(text=p("user")),)),
            Message(role="assistant", model=p("model"), usage=usage, content=(
                ThinkingBlock(text=p("thinking")), TextBlock(text=p("assistant")),
                ToolCallBlock(id=p("callid"), name=p("toolname"), arguments={"file_path": p("args")}))),
            Message(role="tool", content=(ToolResultBlock(call_id=p("callid"), text=p("result"),
                                                          is_error=True),)),
            Message(role="user", content=(TextBlock(text=p("user2")),)),
            Message(role="assistant", usage=usage, content=(TextBlock(text=p("done")),)))
    header = SessionHeader(session_id="beacon-probe", title=p("title").replace("\n", " "),
                           model=p("header-model"))
    compaction = RecordedCompaction(at_message=4, summary=p("summary"), source=p("source"))
    return Session(header=header, messages=msgs, compactions=(compaction,))


def _no_beacon_images(page: Page, port: int) -> None:
    assert page.locator(f"img[src*='127.0.0.1:{port}']").count() == 0


def test_transcript_text_never_fetches_a_url(page: Page, streamlit_factory, tmp_path, beacon):
    port, hits = beacon
    home = tmp_path / "home"
    home.mkdir()
    src = dump_session(_hostile_session(port), tmp_path / "beacon.jsonl")
    with Store(home / "workbench.db") as store:
        session_id = store.import_file(src).session_id
    bad = tmp_path / "bad.jsonl"  # auto-detected native; its error echoes the unknown tag
    bad.write_text('{"type":"header","session_id":"bad","title":"t"}\n{"type":"message","role":"user",'
                   f'"content":[{{"type":"![e](http://127.0.0.1:{port}/import-error)"}}]}}\n')
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    url = streamlit_factory(home)

    page.goto(f"{url}/?session={session_id}")
    expect(page.get_by_role("heading", name="Sessions")).to_be_visible(timeout=FIRST)
    page.get_by_role("tab", name="From a path").click()
    box = page.get_by_label("Paths (files or folders), one per line")
    box.fill(str(bad))
    box.press("Control+Enter")
    page.get_by_role("button", name="Import path").click()
    failed = page.get_by_test_id("stAlert").filter(has_text="Import failed")
    expect(failed).to_contain_text(f"![e](http://127.0.0.1:{port}/import-error)", timeout=FIRST)
    _no_beacon_images(page, port)

    for name in PAGES:
        page.goto(f"{url}/{name if name != 'sessions' else ''}?session={session_id}&step=1")
        expect(page.get_by_role("heading", name=TITLES[name]).first).to_be_visible(timeout=FIRST)
        expect(page.get_by_test_id("stStatusWidget")).to_have_count(0, timeout=FIRST)  # run done
        _no_beacon_images(page, port)
        if name == "messages":
            expect(page.get_by_text("title-md").first).to_be_visible()  # the title, as text
    page.goto(f"{url}/messages?session={session_id}")
    expect(page.get_by_text("result-md").first).to_be_visible(timeout=FIRST)
    _no_beacon_images(page, port)

    assert hits == []
    assert [u for u in requested if f"127.0.0.1:{port}" in u] == []


def test_report_of_a_hostile_transcript_fetches_nothing(page: Page, tmp_path, beacon):
    """Security (R-UI-9): the HTML report escapes transcript text and its Content-Security-Policy
    lets it load nothing; opened in a browser, the beacon gets no request and plotly still draws."""
    import workbench as wb

    port, hits = beacon
    src = dump_session(_hostile_session(port), tmp_path / "beacon.jsonl")
    out = wb.write_report(src, tmp_path / "report.html", "default")
    assert out is not None  # None only for standard output ('-')
    text = out.read_text()
    assert f"<img src=\"http://127.0.0.1:{port}" not in text
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(out.as_uri())
    expect(page.locator("#wb-usage svg.main-svg").first).to_be_visible(timeout=FIRST)
    expect(page.get_by_text("title-md").first).to_be_visible()  # the title, as text
    _no_beacon_images(page, port)
    # The policy refuses the request before it leaves the page: the browser reports the violation
    # (or the image's error) for that very URL, and only then is the beacon checked.
    outcome = page.evaluate(f"""() => new Promise((resolve) => {{
        const url = 'http://127.0.0.1:{port}/csp';
        document.addEventListener('securitypolicyviolation',
            (e) => {{ if (e.blockedURI.startsWith(url)) resolve('blocked'); }});
        const i = new Image();
        i.onload = () => resolve('loaded');
        i.onerror = () => resolve('error');
        i.src = url;
    }})""")
    assert outcome in ("blocked", "error"), outcome
    assert hits == [] and errors == []
