"""The offline summary quotes the session's own text (R-CMP-7, R-PREP-7): a reasoning tag the
user or a tool wrote (``<think>``) is written ``‹think›`` in it, so the summary passes the check
that refuses a model's leaked reasoning; a model's summary with the tag is still refused."""

from __future__ import annotations

import pytest
from iris.compaction import ExtractiveSummariser, SummaryRequest
from iris.compaction.checkpoint import SummaryInvalid, validate_summary
from iris.session import Message, TextBlock


def test_r_cmp_7_an_offline_summary_of_text_about_think_tags_is_valid():
    head = (Message(role="user", content=(TextBlock(
        text="Strip the <think>…</think> blocks and the <reasoning> tags from the replies."),)),
            Message(role="assistant", content=(TextBlock(text="Done: <thinking> removed."),)))
    request = SummaryRequest(system_prompt="s", input_text="i", head=head, max_tokens=2000,
                             current_request=head[0].text)
    result = ExtractiveSummariser().summarise(request, timeout_seconds=5)
    validate_summary(result.text)  # raises SummaryInvalid on a leak
    assert "‹think›" in result.text and "<think>" not in result.text
    with pytest.raises(SummaryInvalid, match="reasoning leakage"):
        validate_summary(result.text.replace("‹think›", "<think>"))
