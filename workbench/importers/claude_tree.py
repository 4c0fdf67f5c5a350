"""Placing the lines of a Claude Code transcript in its conversation tree (R-SES-4, R-TWIN-1).

Every line names its parent through ``parentUuid`` (a compact boundary through
``logicalParentUuid``). The placement never drops a line because a parent is missing:

* a parent (or logical parent) that is not in the file is replaced by the **preceding line in
  file order** on the same side (main conversation or sidechain), which is where Claude Code
  really continued (a compact boundary's logical parent may point at a line the file never
  received; the compaction request in ``agent-acompact-*`` answers the line just before it);
* a compact boundary without any parent, a conversation line without a parent that comes after
  conversation lines, and a ``/clear`` that starts the conversation again in the same file (its
  ``SessionStart:clear`` hook line, without a parent) continue at the preceding line the same
  way (the importer records the clear: the context restarts there);
* the conversation is the chain back from the last main-side user/assistant line, plus every
  assistant line of a response on that chain, plus every ``tool_result`` line answering a call of
  it (FORMATS.md §1);
* a response that answers a line of that chain but is not on it (cut off: the conversation went
  on from its request after a resume) is kept at its place, since it was sent and billed there;
  what hangs below it is not;
* every other user/assistant line is either on a branch a rewind abandoned (its ancestors reach
  the conversation: it is placed, just not live) or **unplaced** (its ancestors never reach the
  conversation: a ``parentUuid`` cycle): the importer counts and reports the unplaced ones.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from iris.session import ContentBlock, Usage

__all__ = ["CONVERSATION", "Line", "Placement", "place"]

CONVERSATION = ("user", "assistant")


@dataclass(slots=True)
class Line:
    """What the importer keeps of one transcript line."""

    lineno: int
    kind: str
    uuid: str
    parent: str | None
    logical_parent: str | None = None
    msg_id: str | None = None
    blocks: tuple[ContentBlock, ...] = ()
    usage: Usage | None = None
    model: str | None = None
    timestamp: datetime | None = None
    synthetic: bool = False
    compact_summary: bool = False
    compact_meta: dict[str, Any] | None = None
    call_ids: tuple[str, ...] = ()
    result_ids: tuple[str, ...] = ()
    sidechain: bool = False
    writer: tuple[object, ...] = ()
    """``(cwd, version, gitBranch, slug)`` of the agent run that wrote the line."""
    restart: bool = False
    """The line starts the conversation again (the ``SessionStart:clear`` hook of a ``/clear``,
    without a parent): the context the agent sends restarts here."""


@dataclass(slots=True)
class Branch:
    """Conversation lines a rewind left behind, forking off the conversation at ``fork``."""

    fork: int
    """Line number of the live line the branch hangs from."""
    lines: list[Line] = field(default_factory=list)


@dataclass(slots=True)
class Placement:
    """Where the lines went."""

    live: list[Line]
    """The conversation, in file order."""
    rechained: list[tuple[Line, str | None, Line]] = field(default_factory=list)
    """``(line, the parent it named or None, the preceding line it now continues)``."""
    branches: list[Branch] = field(default_factory=list)
    """Abandoned branches (a rewind re-sent a message from an earlier point)."""
    unplaced: list[tuple[Line, str]] = field(default_factory=list)
    """``(line, why)``: user/assistant lines whose ancestors never reach the conversation."""
    other_side: int = 0
    """User/assistant lines of the other side (sidechain lines inside a main transcript)."""
    cut_off: list[Line] = field(default_factory=list)
    """The first line of each response kept although the conversation went on from its request
    instead (:func:`_interrupted`)."""


def place(lines: list[Line]) -> Placement:
    """Place every line (see the module docstring); ``lines`` holds at least one user/assistant line."""
    parents, rechained = _resolve(lines)
    talk = [i for i, line in enumerate(lines) if line.kind in CONVERSATION]
    # Older versions log subagent (sidechain) lines inside the main file: the main conversation's
    # leaf is the last non-sidechain line; a subagent file is all sidechain.
    leaf = next((i for i in reversed(talk) if not lines[i].sidechain), talk[-1])
    chain: set[int] = set()
    node: int | None = leaf
    while node is not None and node not in chain:
        chain.add(node)
        node = parents[node]
    responses = {lines[i].msg_id for i in chain if lines[i].msg_id}
    cut_off = _interrupted(lines, parents, chain, responses, lines[leaf].sidechain)
    live = {i for i, line in enumerate(lines)
            if i in chain or (line.kind == "assistant" and line.msg_id in responses)}
    calls = {cid for i in live for cid in lines[i].call_ids}
    live |= {i for i, line in enumerate(lines) if line.kind == "user" and calls.intersection(line.result_ids)}
    live |= {i for i, line in enumerate(lines) if line.kind == "assistant" and line.msg_id in cut_off}
    placement = Placement(live=[lines[i] for i in sorted(live)], rechained=rechained)
    firsts: dict[str | None, Line] = {}
    for line in placement.live:
        if line.kind == "assistant" and line.msg_id in cut_off:
            firsts.setdefault(line.msg_id, line)
    placement.cut_off = list(firsts.values())
    side = lines[leaf].sidechain
    _classify(lines, parents, live, [i for i in talk if i not in live and lines[i].sidechain == side],
              placement)
    placement.other_side = sum(1 for i in talk if lines[i].sidechain != side)
    return placement


def _interrupted(lines: list[Line], parents: list[int | None], chain: set[int],
                 responses: set[str | None], side: bool) -> set[str | None]:
    """Responses the agent received for a request of the conversation and then left behind: an
    assistant line with usage that answers a line of the chain (its prompt is the conversation up
    to there) but is not on the chain, because the conversation went on from its parent (the
    response was cut off, e.g. by the process exiting, and a resume continued at the request).
    They were sent and billed at that point, so they are part of the conversation; what hangs
    below them stays off it."""
    found: set[str | None] = set()
    for i, line in enumerate(lines):
        parent = parents[i]
        if (line.kind == "assistant" and line.sidechain == side and i not in chain
                and parent in chain and line.usage is not None
                and not line.synthetic and line.msg_id and line.msg_id not in responses):
            found.add(line.msg_id)
    return found


def _resolve(lines: list[Line]) -> tuple[list[int | None], list[tuple[Line, str | None, Line]]]:
    """Each line's parent as an index; a missing parent continues at the preceding line."""
    position: dict[str, int] = {}
    for i, line in enumerate(lines):
        position[line.uuid] = i  # a repeated uuid: the last line wins, as a rebuilt tree would
    parents: list[int | None] = []
    rechained: list[tuple[Line, str | None, Line]] = []
    previous: dict[bool, int] = {}
    talked: set[bool] = set()
    for i, line in enumerate(lines):
        ref = line.parent if line.parent is not None else line.logical_parent
        before = previous.get(line.sidechain)
        found = position.get(ref) if ref is not None else None
        if found is not None:
            parents.append(found)
        elif before is not None and (ref is not None or line.compact_meta is not None
                                     or (line.sidechain in talked
                                         and (line.kind in CONVERSATION or line.restart))):
            parents.append(before)
            rechained.append((line, ref, lines[before]))
        else:
            parents.append(None)  # a root: the first line of its side, or no earlier line to go on
        previous[line.sidechain] = i
        if line.kind in CONVERSATION:
            talked.add(line.sidechain)
    return parents, rechained


def _classify(lines: list[Line], parents: list[int | None], live: set[int], left: list[int],
              placement: Placement) -> None:
    """Sort the left-out conversation lines into abandoned branches and unplaced lines."""
    fate: dict[int, int | str] = {i: i for i in live}
    """index → the live line it descends from, or why it reaches none"""
    branches: dict[int, Branch] = {}
    for start in left:
        path: list[int] = []
        seen: set[int] = set()
        node: int | None = start
        while node is not None and node not in fate and node not in seen:
            seen.add(node)
            path.append(node)
            node = parents[node]
        if node is None:
            reached: int | str = (f"its parentUuid chain ends at line {lines[path[-1]].lineno}, "
                                  "which is not part of the conversation")
        elif node in seen:
            reached = (f"its parentUuid chain loops (through line {lines[node].lineno}) and never "
                       "reaches the conversation")
        else:
            reached = fate[node]
        for i in path:
            fate[i] = reached
        if isinstance(reached, str):
            placement.unplaced.append((lines[start], reached))
        else:
            branches.setdefault(reached, Branch(fork=lines[reached].lineno)).lines.append(lines[start])
    placement.branches = sorted(branches.values(), key=lambda b: b.fork)
