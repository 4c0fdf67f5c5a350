"""Stage 4, trim old bodies: the reduction rules of §8 and the context policy's old-body trimming.

One call of the reduction engine over the working history (R-RED-1, R-POL-2). Its per-result
decisions become records as they are: ``kept`` results of recent groups → ``kept-recent``,
``trimmed`` → ``trimmed`` (preview plus read-back hint), every other action → ``reduced`` with the
category and rule that fired. Only this request changes; the durable history keeps the originals.
A decision already recorded at an earlier step for the same result and action is counted in the
stage note instead of being repeated (the frozen prefix is reused byte for byte, R-RED-9).

Incremental: when the engine says which messages may differ from its previous
result, only those are looked at again; the rest of the previous output is reused as it was.
"""

from __future__ import annotations

from collections.abc import Iterable

from .. import lineage
from ..errors import PreparationError
from ..reduction import ReductionMemory, ReductionResult, ToolResultDecision, reduce_request
from ..session import Message
from . import microcompact
from .memory import Rewrite, RewriteKey, TrimRun, starts_with
from .records import Decision, KeptRecent, Microcompacted, Reduced, StageRecord, Trimmed
from .state import Marks, Part, PipelineSettings, PreparationState

__all__ = ["apply"]


def _decision(d: ToolResultDecision, part: Part, ref: str) -> Decision:
    path = d.artifact_path or None
    if d.action == "kept":
        return KeptRecent(ref=ref, message_index=part.history_index, reason=d.reason,
                          tool_name=d.tool_name, call_id=d.call_id)
    if d.action == "trimmed":
        return Trimmed(ref=ref, message_index=part.history_index, reason=d.reason,
                       block_index=d.block_index, tool_name=d.tool_name,
                       tokens_before=d.tokens_before, tokens_after=d.tokens_after,
                       artifact_path=path)
    return Reduced(ref=ref, message_index=part.history_index, reason=d.reason,
                   block_index=d.block_index, tool_name=d.tool_name, category=str(d.category),
                   rule=d.rule or "", action=d.action, age=d.age, tokens_before=d.tokens_before,
                   tokens_after=d.tokens_after, artifact_path=path)


def _key(part: Part, position: int) -> RewriteKey:
    """Session messages by their index (stable across compactions), others by position."""
    return (part.origin, part.history_index, part.key,
            -1 if part.history_index is not None else position)


def _shortened(part: Part, position: int, new_message: Message, actions: frozenset[str],
               settings: PipelineSettings) -> Part:
    """The part carrying the engine's rewritten message, marked trimmed and/or reduced (the same
    object while part, message and actions stay the same: later stages reuse what they derived
    from a part object)."""
    memory = settings.memory.trim.shortened
    key = _key(part, position)
    applied = (new_message, actions)
    hit = memory.get(key)
    if hit is not None and hit.made_from(part, applied):
        return hit.result
    marked = _mark(part, new_message, actions, settings)
    memory[key] = Rewrite(part, applied, marked)
    return marked


def _mark(part: Part, new_message: Message, actions: frozenset[str],
          settings: PipelineSettings) -> Part:
    tokens = settings.cache.message(new_message)
    actions = actions - {"kept"}
    marked = part.replaced(new_message, tokens, "trimmed" if "trimmed" in actions else "reduced")
    if "trimmed" in actions and actions - {"trimmed"}:
        marked = marked.replaced(new_message, tokens, "reduced")
    return marked


def _new_decisions(part: Part, found: list[ToolResultDecision], seen: Marks, added: set[str]
                   ) -> tuple[list[Decision], int]:
    """Decisions not recorded at an earlier step (``added`` is updated) and the carried count."""
    out: list[Decision] = []
    carried = 0
    for d in found:
        ref = (f"result:{part.history_index}:{d.block_index}" if part.history_index is not None
               else d.ref)
        mark = f"{d.action} {ref} {d.rule}"
        if mark in added or mark in seen:
            carried += 1
            continue
        added.add(mark)
        out.append(_decision(d, part, ref))
    return out, carried


def apply(state: PreparationState, settings: PipelineSettings
          ) -> tuple[PreparationState, StageRecord]:
    before = state.input_tokens
    config = settings.config
    state, cleared = microcompact.apply(state, settings)
    if not config.reduction.enabled and not config.context_policy.enabled:
        if cleared:
            return state, StageRecord(name="trim_old_bodies", status="entered",
                                      before_input_tokens=before,
                                      after_input_tokens=state.input_tokens, decisions=cleared,
                                      note=_cleared_note(cleared) + " (reduction and context "
                                      "policy are both disabled)")
        return state, StageRecord(name="trim_old_bodies", status="skipped",
                                  before_input_tokens=before, after_input_tokens=before,
                                  note="reduction and context policy are both disabled")
    messages = settings.memory.trim.messages(state.history)
    memory: ReductionMemory = settings.memory.reduction
    # R-RED-1, R-POL-2; todos_completed grants the wrap-up grace of R-RED-9
    result = reduce_request(
        messages, config=config.reduction, policy=config.context_policy,
        state=state.reduction_state, memory=memory,
        work_dir=settings.artifacts if settings.artifacts is not None else settings.work_dir,
        context_read_available=config.context_policy.enabled, tool_kinds=settings.tool_kinds,
        todos_completed=state.todos_completed, estimator=settings.cache.estimator)
    if len(result.messages) != len(messages):
        raise PreparationError(f"reduction returned {len(result.messages)} messages for "
                               f"{len(messages)}", stage="trim_old_bodies", step=state.step_index)
    run = _Run(state, result, settings)
    history = run.out
    if run.previous is not None:
        lineage.note(history, run.previous, run.kept)
    new_state = state.evolve(history=history,
                             history_tokens=state.history_tokens + run.delta,
                             reduction_state=result.state, seen=run.seen)
    note = (f"{run.changed} message(s) shortened in this request; {len(run.decisions)} new "
            f"decision(s), {run.carried} carried over unchanged from earlier steps")
    if cleared:
        note = f"{_cleared_note(cleared)}; {note}"
    return new_state, StageRecord(name="trim_old_bodies", status="entered",
                                  before_input_tokens=before,
                                  after_input_tokens=new_state.input_tokens,
                                  decisions=(*cleared, *run.decisions), note=note)


def _cleared_note(cleared: tuple[Decision, ...]) -> str:
    n = sum(len(d.call_ids) for d in cleared if isinstance(d, Microcompacted))
    return f"microcompaction: {n} old tool result(s) cleared in the durable history, as the agent did"


class _Run:
    """The stage's work on one result: every message in full, or (when the engine continued the
    previous step's result and the history only grew) just the messages it says may differ.

    The previous run is in the step memory (:class:`~iris.preparation.memory.TrimRun`). Every mark
    of its decisions is in ``state.seen`` (the step that made it was ready), so untouched messages
    add nothing new."""

    def __init__(self, state: PreparationState, result: ReductionResult,
                 settings: PipelineSettings) -> None:
        self.state, self.result, self.settings = state, result, settings
        self.decisions: list[Decision] = []
        self.history: list[Part] | _Patched = []
        self.delta = self.changed = self.carried = 0
        self.shrunk: set[int] = set()
        self.previous: tuple[Part, ...] | None = None
        """The previous run's output when this run continued it (None: decided in full)."""
        self.kept = 0
        """How many leading parts of :attr:`previous` this run's history holds unchanged."""
        seen = Marks.of(state.seen)
        self.added: set[str] = set()
        self._seen = seen
        memory = settings.memory.trim
        prev = memory.previous
        touched = result.changed_since(state.reduction_state)
        if prev is not None and touched is not None and _continues(prev, state):
            self._continue(prev, touched)
        else:
            self._full()
        self.seen = seen.with_added(self.added)
        self.out = self.history.joined() if isinstance(self.history, _Patched) else tuple(self.history)
        memory.previous = TrimRun(result.state, state.history, self.out, self.delta,
                                  self.changed, frozenset(self.shrunk))

    def _full(self) -> None:
        self.history = list(self.state.history)
        by_message: dict[int, list[ToolResultDecision]] = {}
        for d in self.result.decisions:
            by_message.setdefault(d.message_index, []).append(d)
        self._messages(range(len(self.history)), by_message)

    def _continue(self, prev: TrimRun, touched: tuple[int, ...]) -> None:
        old_in, old_out = prev.history_in, prev.history_out
        self.delta, self.changed, self.shrunk = prev.delta, prev.changed, set(prev.shrunk)
        self.history = _Patched(old_out, self.state.history)
        for i in touched:
            if i < len(old_out) and i in self.shrunk:  # undo what the previous run did here
                self.delta -= old_out[i].tokens - old_in[i].tokens
                self.changed -= 1
                self.shrunk.discard(i)
            if i < len(old_out):
                self.history[i] = self.state.history[i]
        # only the decisions of the touched messages are built; the others are carried
        grouped = self.result.decisions_of(touched)
        self.carried = self.result.decision_count - sum(len(found) for found in grouped.values())
        self._messages(touched, grouped)
        self.previous, self.kept = old_out, self.history.kept()

    def _messages(self, indices: Iterable[int],
                  by_message: dict[int, list[ToolResultDecision]]) -> None:
        seen, added, history = self._seen, self.added, self.state.history
        for i in indices:
            found = by_message.get(i, [])
            new, kept_over = _new_decisions(history[i], found, seen, added)
            self.decisions += new
            self.carried += kept_over
            new_message = self.result.messages[i]
            if new_message is not history[i].message:
                self.history[i] = _shortened(history[i], i, new_message,
                                             frozenset(d.action for d in found), self.settings)
                self.delta += self.history[i].tokens - history[i].tokens
                self.changed += 1
                self.shrunk.add(i)


class _Patched:
    """The previous output, then the new parts of the input, with the parts this run replaced:
    read and written like the list it stands for, joined into one tuple at the end (one copy of
    the window, none when nothing before its end changed)."""

    __slots__ = ("base", "patches", "source")

    def __init__(self, base: tuple[Part, ...], source: tuple[Part, ...]) -> None:
        self.base, self.source = base, source
        self.patches: dict[int, Part] = {}

    def __getitem__(self, i: int) -> Part:
        part = self.patches.get(i)
        if part is not None:
            return part
        return self.base[i] if i < len(self.base) else self.source[i]

    def __setitem__(self, i: int, part: Part) -> None:
        self.patches[i] = part

    def kept(self) -> int:
        """How many leading parts of the previous output are unchanged."""
        base = self.base
        return min((i for i, p in self.patches.items() if i < len(base) and p is not base[i]),
                   default=len(base))

    def joined(self) -> tuple[Part, ...]:
        base, source, patches = self.base, self.source, self.patches
        n, lo = len(base), self.kept()
        if lo == n:  # the previous output whole, then the new parts
            tail = source[n:]
            return base + (tuple(patches.get(i, p) for i, p in enumerate(tail, n))
                           if any(i >= n for i in patches) else tail)
        out = [*base, *source[n:]]
        for i, p in patches.items():
            out[i] = p
        return tuple(out)


def _continues(prev: TrimRun, state: PreparationState) -> bool:
    """This step continues the previous run: the reduction state that run returned (the same or
    an equal one) and a history starting with the previous input (the same parts or equal)."""
    carried = state.reduction_state
    if carried is None or not (prev.reduction_state is carried or prev.reduction_state == carried):
        return False
    return starts_with(state.history, prev.history_in)
