"""Seeded generator of long sessions of tiny messages, for the message-count bound (R-BOUND-1).

`tiny_session(messages, responses="many")` builds a native :class:`iris.session.Session` of
about ``messages`` short messages (a few words each): user turns, assistant answers with a tool
call, and their one-line tool results. ``responses="many"``: every assistant message is a model
response (a step), so a session of ``n`` messages has about ``n / 3`` steps; ``responses="few"``:
the same messages but only about 20 assistant responses carry usage and end a request (the
others are folded into long user turns), so each step sees a long stretch of new history;
``responses="repeats"``: as ``many``, but every call returns the same 230-token output, so each
new copy folds the one before.

    python bench/tiny.py 100000 OUT.jsonl [many|few|repeats]   # write it as a native JSONL transcript
"""

from __future__ import annotations

import random
import sys
from pathlib import Path
from typing import Literal

from iris.session import (
    Message,
    ModelLimits,
    Session,
    SessionHeader,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
    Usage,
)

WORDS = ("ok", "yes", "no", "done", "next", "fine", "go", "stop", "check", "run", "list", "read")
Responses = Literal["many", "few", "repeats"]
#: The one output every call returns in ``responses="repeats"`` (long enough to be folded).
REPEATED_OUTPUT = "On branch main\nnothing to commit, working tree clean\n" + "ok " * 190


def _words(rng: random.Random, k: int) -> str:
    return " ".join(rng.choices(WORDS, k=k))


def _turn(rng: random.Random, i: int, prompt: int, output: str | None = None) -> list[Message]:
    """One user message, one assistant response with a tool call, and the call's result (a few
    words, or ``output``)."""
    call = f"call_{i:07d}"
    usage = Usage(input_tokens=prompt, output_tokens=rng.randint(3, 9), model="tiny-model")
    text = output if output is not None else _words(rng, 2)
    return [Message(role="user", content=(TextBlock(text=_words(rng, 3)),)),
            Message(role="assistant", usage=usage, model="tiny-model",
                    content=(TextBlock(text=_words(rng, 2)),
                             ToolCallBlock(id=call, name="Bash", arguments={"command": "ls"}))),
            Message(role="tool", content=(ToolResultBlock(call_id=call, text=text),))]


def _few(rng: random.Random, messages: int) -> list[Message]:
    """User messages with an assistant answer after every ``messages / 20`` of them."""
    every = max(messages // 20, 2)
    out: list[Message] = []
    for i in range(messages):
        if (i + 1) % every == 0:
            out.append(Message(role="assistant", model="tiny-model", content=(TextBlock(text=_words(rng, 2)),),
                               usage=Usage(input_tokens=10 + i * 4, output_tokens=4, model="tiny-model")))
        else:
            out.append(Message(role="user", content=(TextBlock(text=_words(rng, 3)),)))
    return out


def tiny_session(messages: int = 100_000, responses: Responses = "many", seed: int = 5, *,
                 window: int | None = None) -> Session:
    """About ``messages`` tiny messages (see the module docstring). ``window``: the recorded
    context window (None: none recorded, so the default budget applies and compaction keeps the
    request short; a window larger than the whole session makes every step carry all of it)."""
    rng = random.Random(seed)
    msgs: list[Message] = [Message(role="system", content=(TextBlock(text="Be brief."),))]
    if responses == "few":
        msgs += _few(rng, messages - 1)
    else:
        prompt = 20
        for i in range((messages - 1) // 3):
            prompt += 14
            msgs += _turn(rng, i, prompt, REPEATED_OUTPUT if responses == "repeats" else None)
    header = SessionHeader(session_id=f"tiny-{responses}-{messages}", title="Tiny messages",
                           model="tiny-model",
                           limits=ModelLimits(context=window, output=8_000) if window else None)
    return Session(header=header, messages=tuple(msgs))


def main(argv: list[str]) -> int:
    from workbench.importers.native import dumps_session

    count, out = int(argv[0]), Path(argv[1])
    kind: Responses = "many"
    if len(argv) > 2 and argv[2] in ("few", "repeats"):
        kind = "few" if argv[2] == "few" else "repeats"
    out.write_text(dumps_session(tiny_session(count, kind)), encoding="utf-8")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
