"""A session evaluated in a notebook shows a short line and a small table, never its messages
(R-UI-8): the long sample's pydantic repr was over a megabyte."""

from __future__ import annotations

from iris.session import Message, Session, SessionHeader, TextBlock

import workbench as wb


def test_session_repr_is_one_short_line_with_its_counts():
    session = wb.load_session(wb.sample_path("long_session"))
    text = repr(session)
    assert len(text) < 200 and "\n" not in text
    assert text.startswith(f"<Session {session.header.session_id!r}")
    assert f"{len(session.messages):,} messages" in text and str(session) == text


def test_session_html_is_a_small_escaped_table():
    session = Session(header=SessionHeader(session_id="s<1>", title="<script>alert(1)</script>"),
                      messages=(Message(role="user", content=(TextBlock(text="x" * 100_000),)),))
    html = session._repr_html_()
    assert len(html) < 2000 and "<script>" not in html and "&lt;script&gt;" in html
    assert "1 (1 user)" in html and "s&lt;1&gt;" in html
