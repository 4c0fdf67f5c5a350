"""Untrusted text inside Streamlit markdown, shown as text.

Every ``st.markdown``, ``st.caption``, alert, header, expander or tab label, metric and tooltip
renders its string as markdown: a transcript title ``![t](http://host/x)`` would become an image
the browser fetches, ``:red[…]`` a colour, ``$…$`` a formula. Text that comes from a transcript,
an import error, a file or a replay name goes through :func:`plain` (or :func:`code_span` for
names) before it is joined into such a string; the markdown the pages write themselves stays
markdown.
"""

from __future__ import annotations

import re

__all__ = ["code_span", "one_line", "plain"]

# CommonMark lets a backslash escape any ASCII punctuation; these are the characters that start
# markdown, HTML, GFM (tables, strikethrough) or LaTeX ($). A colon starts Streamlit's directives
# (``:red[…]``, ``:material/…:``, emoji shortcodes) and a GFM autolink (``http://…``, whose text
# would keep the backslashes) only when something follows it directly, so only such a colon is
# escaped: "source: x" stays as it reads.
_CONTROL = re.compile(r"[\\`*_{}\[\]()<>#+\-.!|~$=&]|:(?=\S)")


def plain(text: object) -> str:
    """``text`` escaped so markdown renders it literally (line breaks kept)."""
    return _CONTROL.sub(lambda m: "\\" + m.group(0), str(text))


def one_line(text: object) -> str:
    """:func:`plain` on one line: runs of whitespace (line breaks included) become one space, so
    the text cannot start a block of its own (a heading, a list, a link reference definition)."""
    return plain(" ".join(str(text).split()))


def code_span(text: object) -> str:
    """Inline code for a transcript-provided name: backticks become quotes and line breaks spaces,
    so the span can neither be closed early nor ended by a blank line."""
    flat = " ".join(str(text if text is not None else "").split())
    return "`" + (flat.replace("`", "'") or " ") + "`"
