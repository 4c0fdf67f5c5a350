"""Builders shared by the reduction tests: a small conversation DSL over the real session model."""

from __future__ import annotations

from typing import Any

from iris.context.policy import ContextPolicy
from iris.reduction import ReductionConfig, ReductionResult, ReductionState, reduce_request
from iris.session import Message, TextBlock, ToolCallBlock, ToolResultBlock

NO_POLICY = ContextPolicy(enabled=False)


class Conv:
    """Append calls and turns; every assistant message is one request batch."""

    def __init__(self) -> None:
        self.messages: list[Message] = [Message(role="user", content=(TextBlock(text="do the task"),))]
        self._n = 0

    def _id(self) -> str:
        self._n += 1
        return f"call_{self._n}"

    def parallel(self, *calls: tuple[str, dict[str, Any], str], is_error: bool = False,
                 answer: bool = True) -> list[str]:
        """One assistant response with several calls, then one tool message per result."""
        ids = [self._id() for _ in calls]
        self.messages.append(Message(role="assistant", content=tuple(
            ToolCallBlock(id=i, name=name, arguments=args) for i, (name, args, _) in zip(ids, calls))))
        if answer:
            for i, (_, _, text) in zip(ids, calls):
                self.messages.append(Message(role="tool", content=(
                    ToolResultBlock(call_id=i, text=text, is_error=is_error),)))
        return ids

    def call(self, name: str, args: dict[str, Any], text: str, *, is_error: bool = False,
             reducible: bool = True) -> str:
        cid = self._id()
        self.messages.append(Message(role="assistant", content=(ToolCallBlock(id=cid, name=name, arguments=args),)))
        self.messages.append(Message(role="tool", content=(
            ToolResultBlock(call_id=cid, text=text, is_error=is_error, reducible=reducible),)))
        return cid

    def turns(self, n: int) -> Conv:
        """``n`` assistant text responses (each ages every earlier result by one batch)."""
        for _ in range(n):
            self.messages.append(Message(role="assistant", content=(TextBlock(text="thinking"),)))
            self.messages.append(Message(role="user", content=(TextBlock(text="go on"),)))
        return self

    def reduce(self, *, config: ReductionConfig | None = None, policy: ContextPolicy = NO_POLICY,
               state: ReductionState | None = None, **kw: Any) -> ReductionResult:
        return reduce_request(self.messages, config=config or ReductionConfig(), policy=policy,
                              state=state, **kw)


def decision(result: ReductionResult, call_id: str):
    found = [d for d in result.decisions if d.call_id == call_id]
    assert len(found) == 1, f"expected one decision for {call_id}"
    return found[0]


def sent_text(result: ReductionResult, call_id: str) -> str:
    d = decision(result, call_id)
    block = result.messages[d.message_index].content[d.block_index]
    assert block.type == "tool_result", block.type
    return block.text


def lines(n: int, fmt: str = "line {i} of the build output, all fine") -> str:
    return "\n".join(fmt.format(i=i) for i in range(n))


def padding(k: int) -> Conv:
    """A conversation that already has ``k`` small unrelated tool results (for min_tool_results_prune)."""
    c = Conv()
    for i in range(k):
        c.call("TodoWrite", {"todos": [{"content": f"t{i}", "status": "pending"}]}, "Todos updated")
    return c
