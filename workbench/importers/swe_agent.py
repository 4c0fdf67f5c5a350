"""SWE-agent trajectories (``.traj``) → :class:`Session` (R-SES-4).

A trajectory is one JSON document ``{environment, trajectory: [...], history: [...], info,
replay_config?}``. The conversation is ``history``: OpenAI-style messages with SWE-agent's own
fields. In 1.x (function calling) assistant messages carry ``tool_calls`` and the observations are
``tool`` messages whose ``tool_call_ids`` (a list) name the call they answer; in 0.x the action is
written inside the assistant text and observations are ``user`` messages. Messages of another
agent than the first one's (0.x sub-agents) are left out with a warning; demonstrations
(``is_demo``) are context the model saw and are kept.

Usage: a trajectory records no per-request usage and no timestamps, only totals in
``info.model_stats`` (``tokens_sent``, ``tokens_received``, ``api_calls``). Responses therefore have
no usage (the engine estimates), and a warning states the totals. When ``history`` is absent, the
last ``trajectory`` step's ``messages`` (the exact context of that step in 1.x) plus its
``response`` are the conversation.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from iris.errors import SessionFormatError
from iris.frozen import UNCHANGED
from iris.session import ContentBlock, Session, SessionHeader, TextBlock, ToolCallBlock, ToolResultBlock

from ._builder import MessageList
from ._common import LINE_FAILURES, LineErrors, as_dict, as_list, as_str, short_id, shorten_title
from ._document import in_field, load_document
from .openai_chat import _call, _content

__all__ = ["load_swe_agent"]

_ROLES = {"system": "system", "user": "user", "assistant": "assistant", "tool": "tool"}


def load_swe_agent(path: str | Path, *, lenient: bool = False,
                   skipped: list[SessionFormatError] | None = None,
                   warnings: list[SessionFormatError] | None = None,
                   content_hash: str | None = None) -> Session:
    """Import a SWE-agent trajectory (see the module docstring for the rules)."""
    path = Path(path)
    errors = LineErrors(path, lenient, skipped, warnings)
    doc = load_document(path)
    if not isinstance(doc, dict):
        raise SessionFormatError("expected a JSON object with 'history' or 'trajectory'", path=path)
    history, where = _history(doc, path)
    out = MessageList()
    ids = _SequentialIds(errors)
    agent = next((m.get("agent") for m in history if isinstance(m, dict) and m.get("agent")), None)
    errors.lines_read = len(history)
    for i, raw in enumerate(history):
        try:
            _add(out, as_dict(raw, ""), agent, errors, f"{where}[{i}]", ids)
        except LINE_FAILURES as exc:
            errors.failed(in_field(exc, f"{where}[{i}]"), None)
    if not out.entries:
        raise errors.nothing_imported("message")
    out.check_orphans(errors)
    out.check_repeated_calls(errors, f"{where}.tool_calls.id", f"{where}.tool_call_ids")
    _warn_usage(doc, errors)
    messages = out.freeze()
    model = _model(doc)
    title = next((_text(m.get("content")) for m in history if isinstance(m, dict)
                  and m.get("role") == "user" and not m.get("is_demo") and _text(m.get("content"))),
                 "SWE-agent trajectory")
    instance = _instance(doc)
    return Session(header=SessionHeader(
        session_id=short_id("swe_agent", content_hash or "sha256:unknown"),
        title=shorten_title(f"{instance} ({model or 'unknown model'})" if instance else title),
        source_format="swe_agent", model=model), messages=tuple(messages))


def _history(doc: dict[str, Any], path: Path) -> tuple[list[Any], str]:
    if isinstance(doc.get("history"), list) and doc["history"]:
        return doc["history"], "history"
    steps = doc.get("trajectory")
    if isinstance(steps, list) and steps and isinstance(steps[-1], dict):
        last = steps[-1]
        context = last.get("messages") or last.get("query")
        if isinstance(context, list) and context:
            where = f"trajectory[{len(steps) - 1}]"
            response = last.get("response")
            tail = [{"role": "assistant", "content": response}] if isinstance(response, str) else []
            return [*context, *tail], where
    raise SessionFormatError("no 'history' messages (and no 'messages' in the last trajectory step)",
                             path=path, field="history")


class _SequentialIds:
    """SWE-agent may give the next call the id of an earlier call once that call has its result
    (seen in a real demonstration trajectory). Pairing in order is unambiguous then: such a call
    gets the id ``<id>#<n>`` (n = 2, 3, …) and the results that follow it answer it. An id used
    again while its call is still unanswered stays as it is (strict import refuses it: a result
    could not say which call it answers)."""

    def __init__(self, errors: LineErrors) -> None:
        self.errors = errors
        self.current: dict[str, str] = {}   # recorded id -> id of its latest call
        self.answered: set[str] = set()     # ids (as renamed) that have a result
        self.uses: dict[str, int] = {}

    def call(self, block: ToolCallBlock, where: str) -> ToolCallBlock:
        latest = self.current.get(block.id)
        if latest is None or latest not in self.answered:
            self.current.setdefault(block.id, block.id)
            return block
        self.uses[block.id] = n = self.uses.get(block.id, 1) + 1
        self.current[block.id] = renamed = f"{block.id}#{n}"
        self.errors.warn(f"tool call id {block.id!r} is used again after its earlier call was "
                         f"answered: paired in order, as {renamed!r}", field=where)
        return block.evolve(**UNCHANGED, id=renamed)

    def result(self, call_id: str) -> str:
        renamed = self.current.get(call_id, call_id)
        self.answered.add(renamed)
        return renamed


def _add(out: MessageList, raw: dict[str, Any], agent: Any, errors: LineErrors, where: str,
         sequence: _SequentialIds) -> None:
    if agent is not None and raw.get("agent") not in (None, agent):
        errors.warn(f"message of agent {raw.get('agent')!r} (not {agent!r}) left out", field=where)
        return
    role = raw.get("role")
    if role not in _ROLES:
        raise SessionFormatError(f"unknown role {role!r} (expected one of "
                                 f"{', '.join(sorted(_ROLES))})", field="role")
    blocks = _content(raw.get("content"))
    if role == "tool":
        ids = raw.get("tool_call_ids") or ([raw["tool_call_id"]] if raw.get("tool_call_id") else [])
        ids = as_list(ids, "tool_call_ids")
        if not ids:  # an observation of a non-function-calling parser: what the model read
            errors.warn("a tool message without tool_call_ids is kept as a user message", field=where)
            out.add("user", blocks)
            return
        if len(ids) > 1:
            errors.warn(f"one observation answers {len(ids)} calls; it is paired with the first",
                        field=where)
        text = "\n".join(b.text for b in blocks if isinstance(b, TextBlock))
        call_id = sequence.result(as_str(ids[0], "tool_call_ids[0]"))
        out.add("tool", [ToolResultBlock(call_id=call_id, text=text)])
        return
    if role != "assistant":
        out.add(role, blocks)
        return
    if not blocks:
        blocks = _thought_action(raw)
    calls = [_call(c, i) for i, c in enumerate(as_list(raw.get("tool_calls") or [], "tool_calls"))]
    out.add("assistant", blocks + [sequence.call(c, where) for c in calls])


def _text(content: Any) -> str:
    """The first text of a history message's content (for the title)."""
    if isinstance(content, list):
        content = next((p.get("text") for p in content if isinstance(p, dict)), "")
    return content.strip() if isinstance(content, str) else ""


def _thought_action(raw: dict[str, Any]) -> list[ContentBlock]:
    """The response text rebuilt from ``thought`` and ``action`` when ``content`` is empty."""
    parts = [raw.get(k) for k in ("thought", "action")]
    text = "\n\n".join(p.strip() for p in parts if isinstance(p, str) and p.strip())
    return [TextBlock(text=text)] if text else []


def _warn_usage(doc: dict[str, Any], errors: LineErrors) -> None:
    info = doc.get("info")
    if not isinstance(info, dict):
        info = {}
    stats = info.get("model_stats")
    if not isinstance(stats, dict):
        stats = {}
    totals = ", ".join(f"{k}={stats[k]}" for k in ("tokens_sent", "tokens_received", "api_calls",
                                                     "instance_cost") if k in stats)
    errors.warn("SWE-agent trajectories record no per-request usage: responses have none "
                f"(estimated); info.model_stats totals: {totals or 'none recorded'}",
                field="info.model_stats")


def _replay_config(doc: dict[str, Any]) -> dict[str, Any]:
    raw = doc.get("replay_config")
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError:
            return {}
    return raw if isinstance(raw, dict) else {}


def _model(doc: dict[str, Any]) -> str | None:
    agent = _replay_config(doc).get("agent")
    model = agent.get("model") if isinstance(agent, dict) else None
    name = model.get("name") if isinstance(model, dict) else None
    return name if isinstance(name, str) and name else None


def _instance(doc: dict[str, Any]) -> str | None:
    problem = _replay_config(doc).get("problem_statement")
    pid = problem.get("id") if isinstance(problem, dict) else None
    return pid if isinstance(pid, str) and pid else None
