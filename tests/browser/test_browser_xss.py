"""Through a real browser (security): session content is never rendered as raw HTML. A
transcript whose title, user text, tool name, arguments and result carry `<script>` and
`<img onerror>` payloads shows them as text on the Messages and Step-through pages, and none of the
payloads runs."""

from __future__ import annotations

from iris.session import Message, Session, SessionHeader, TextBlock, ToolCallBlock, ToolResultBlock
from playwright.sync_api import Dialog, Page, expect

from workbench.importers.native import dump_session
from workbench.storage.store import Store

FIRST = 60_000
SCRIPT = "<script>window.__xss = 'script'</script>"
IMG = "<img src=x onerror=\"window.__xss = 'img'\">"
SVG = "<svg onload=\"window.__xss = 'svg'\"></svg>"


def _hostile_session() -> Session:
    msgs = (Message(role="system", content=(TextBlock(text="You are careful."),)),
            Message(role="user", content=(TextBlock(text=f"Please look at {SCRIPT} and {IMG}"),)),
            Message(role="assistant", content=(TextBlock(text=f"Reading {SVG}"), ToolCallBlock(
                id="c1", name="Read<img src=x onerror=alert(1)>", arguments={"file_path": IMG}))),
            Message(role="tool", content=(ToolResultBlock(call_id="c1", text=f"{SCRIPT}\n{IMG}\n**bold**"),)),
            Message(role="assistant", content=(TextBlock(text="Done."),)))
    return Session(header=SessionHeader(session_id="xss-probe", title=f"XSS {IMG}"), messages=msgs)


def test_session_content_is_shown_as_text_and_never_executes(page: Page, streamlit_factory, tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    src = dump_session(_hostile_session(), tmp_path / "xss.jsonl")
    with Store(home / "workbench.db") as store:
        session_id = store.import_file(src).session_id
    dialogs: list[str] = []

    def on_dialog(dialog: Dialog) -> None:
        dialogs.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", on_dialog)
    url = streamlit_factory(home)

    page.goto(f"{url}/messages?session={session_id}")
    expect(page.get_by_text(SCRIPT).first).to_be_visible(timeout=FIRST)  # literally, as text
    expect(page.get_by_text(IMG).first).to_be_visible()

    page.goto(f"{url}/step-through?session={session_id}&step=1")
    expect(page.get_by_text("Step 1 of 1")).to_be_visible(timeout=FIRST)
    expect(page.get_by_text(SCRIPT).first).to_be_visible(timeout=FIRST)

    assert page.evaluate("() => window.__xss") is None
    assert dialogs == []
    # no element of the payloads made it into the DOM as markup
    assert page.locator("img[src='x']").count() == 0
    assert page.locator("svg[onload]").count() == 0
    assert page.locator("script", has_text="__xss").count() == 0
