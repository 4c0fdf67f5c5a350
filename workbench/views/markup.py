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

# CommonMark lets a backslash escape any ASCII punctuation. Escaped everywhere: what starts a link
# or image (``[``, ``]``; so also a Streamlit ``:red[…]`` directive), code, emphasis, LaTeX, ``#``, GFM
# strikethrough and tables. Escaped only where it means something, so that ordinary text such as
# "0 < value < 1", "tool:web_search" or "input_budget_tokens" reads the same in the markdown source:
# ``<`` before a tag, comment or autolink; ``&`` before an entity; ``_`` at a word boundary; ``:``
# opening an emoji or icon shortcode; and at a line start (up to three spaces in) what starts a
# heading, quote, list, setext underline or ordered list.
_INLINE = re.compile(r"[\\`*\[\]$~|#]|<(?=[A-Za-z/!?])|&(?=[#A-Za-z])"
                     r"|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])|:(?=[\w+-]+:|material/)")
_LINE_START = re.compile(r"^( {0,3})([#>+=-])", re.MULTILINE)
_ORDERED = re.compile(r"^( {0,3}\d{1,9})([.)])", re.MULTILINE)


def plain(text: object) -> str:
    """``text`` escaped so markdown renders it literally (line breaks kept)."""
    out = _INLINE.sub(lambda m: "\\" + m.group(0), str(text))
    return _ORDERED.sub(r"\1\\\2", _LINE_START.sub(r"\1\\\2", out))


def one_line(text: object) -> str:
    """:func:`plain` on one line: runs of whitespace (line breaks included) become one space, so
    the text cannot start a block of its own (a heading, a list, a link reference definition)."""
    return plain(" ".join(str(text).split()))


def code_span(text: object) -> str:
    """Inline code for a transcript-provided name: backticks become quotes and line breaks spaces,
    so the span can neither be closed early nor ended by a blank line."""
    flat = " ".join(str(text if text is not None else "").split())
    return "`" + (flat.replace("`", "'") or " ") + "`"
