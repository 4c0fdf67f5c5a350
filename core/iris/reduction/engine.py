"""The entry point: reduce one main-model request (R-RED-1…9) and trim old bodies (R-POL-2).

``messages`` is the durable history exactly as it will be sent. Ages: with ``A`` assistant
messages in ``messages`` the request about to be sent is batch ``A``; a tool result belongs to the
batch of the assistant message that declared its call (``index_session``: the k-th assistant
message is batch k, parallel calls share it), so ``age = A − batch``: a result is age 1 at the
first request that can react to it. A result whose call is missing takes the batch of its message.

Incremental: the caller passes a :class:`~iris.reduction.memory.ReductionMemory` (a replay keeps
one for all its steps; none means a fresh one, the request decided from scratch). In it, per-result
content facts, verdicts and renderings are computed once (keyed by call id and content), and a
:class:`~iris.reduction.tracker.Tracker` extends what it derived from the history with the new
messages only. Reduced renderings are frozen by call id in the state and reused byte-for-byte.
Per request only the results the tracker names dirty (new, age gate reached, affected by a new
event, group window moved, reduced or deferred last time) are classified and rendered; every
other result keeps its decision with the new age. The first request of a tracker decides every
result, exactly as the incremental path would.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from pathlib import Path

from ..context.policy import ContextPolicy
from ..frozen import UNCHANGED, constructed
from ..session import ContentBlock, Message, ToolCallBlock, ToolResultBlock
from ..tokens import REQUEST_OVERHEAD, TokenEstimator, default_estimator
from .artifacts import INLINE_BUDGET_BYTES, ArtifactWriter, as_writer, externalize_large_result
from .classify import Context, Verdict, classify, describe
from .config import AGE_FIELDS, ReductionConfig
from .facts import extract_facts
from .layered import with_added
from .memory import InfoKey, KindsKey, ReductionMemory, ResultMemory, TrackerKey
from .models import FrozenRendering, ReductionResult, ReductionState
from .render import Rendering, commit, render_verdict
from .toolkinds import ToolKindMap
from .tracker import Item, Tracker
from .trim import plan_trims

__all__ = ["classified_count", "reduce_request"]


def _info(results: dict[InfoKey, ResultMemory], kinds: ToolKindMap, kinds_key: KindsKey,
          call: ToolCallBlock | None, block: ToolResultBlock) -> ResultMemory:
    """The result's content facts, computed once per (call id, call, content, kinds)."""
    name = call.name if call else None
    key = (block.call_id, name, block.text, block.is_error, block.reducible, bool(block.artifact_path),
           kinds_key)
    args = call.arguments if call else None
    entry = results.get(key)
    if entry is None or entry.arguments != args:
        tool = name or "unknown"
        arguments = dict(args) if args is not None else {}
        facts = extract_facts(kinds.kind_of_call(tool, arguments), arguments, block.text, block.is_error)
        info = describe(block.call_id, tool, arguments, facts, block.text, reducible=block.reducible,
                        has_artifact=bool(block.artifact_path))
        entry = results[key] = ResultMemory(args, info)
    return entry


def _tracker(messages: Sequence[Message], state: ReductionState, memory: ReductionMemory,
             key: TrackerKey, kinds: ToolKindMap, kinds_key: KindsKey) -> Tracker:
    """The run's tracker when this request continues its previous one, else a new one."""
    tracker = memory.tracker
    if (tracker is None or tracker.unsafe or tracker.key != key or tracker.out_state is not state
            or not tracker.extends(messages)):
        # the tracker holds the slots it fills, never the memory: no cycle keeps a memory alive
        tracker = Tracker(key, partial(_info, memory.results, kinds, kinds_key), memory.validity)
        memory.tracker = tracker
    return tracker


def classified_count(memory: ReductionMemory) -> int:
    """How many results the engine classified in the requests reduced with ``memory`` (an
    instrumentation counter: it grows with new results and gate crossings, not with
    requests × history)."""
    return memory.classified


def _gates(cfg: ReductionConfig) -> tuple[int, ...]:
    """Every age at which some rule's comparison flips (``age >= 1`` for repeats included): the
    value of every ``*_age_turns`` field, so a new age rule cannot be left out."""
    return tuple(sorted({1, *(getattr(cfg, name) for name in AGE_FIELDS)}))


def reduce_request(messages: Sequence[Message], *, config: ReductionConfig, policy: ContextPolicy,
                   state: ReductionState | None = None,
                   work_dir: ArtifactWriter | Path | None = None,
                   context_read_available: bool = True, tool_kinds: ToolKindMap | None = None,
                   todos_completed: bool = False,
                   estimator: TokenEstimator | None = None,
                   memory: ReductionMemory | None = None) -> ReductionResult:
    """Reduce the tool results of one request; never changes ``messages`` themselves (R-RED-1).

    ``work_dir`` (a directory or an :class:`ArtifactWriter`) receives the recovery files; the
    text names them under the logical root ``<session_dir>`` whatever the directory is.
    ``memory`` is what may be reused from earlier requests of the same run (the caller owns it and
    passes the same one each time); None decides this request from scratch. The result is the
    same either way."""
    state = state or ReductionState()
    writer = as_writer(work_dir)
    memory = ReductionMemory() if memory is None else memory
    est = estimator or default_estimator()
    kinds = tool_kinds or ToolKindMap()
    hint = policy.enabled and context_read_available
    cfg_key = memory.config_key(config)
    kinds_key: KindsKey = (kinds.format, tuple(sorted(kinds.overrides.items())))
    key: TrackerKey = (cfg_key, policy, hint, writer is not None, kinds_key, est.encoding_name)
    tracker = _tracker(messages, state, memory, key, kinds, kinds_key)
    seen_items = len(tracker.items)
    dirty, recalled, first_new = tracker.advance(messages, state, policy.preserve_recent_tool_groups)
    gates = _gates(config)
    if seen_items < config.min_tool_results_prune:  # the generic rule's activation may change
        dirty = {it.seq: it for it in tracker.items}
    elif config.enabled and tracker.timed:
        _skip_unchanged(tracker, dirty, _Rules(tracker, config, cfg_key), gates)
    decide = partial(_redecide, tracker=tracker, cfg=config, state=state, writer=writer,
                     cfg_key=cfg_key, hint=hint)
    work = [dirty[k] for k in sorted(dirty)]
    for it in work:
        decide(it)
    pending = tracker.pending
    waiting = [pending[k] for k in dirty if k in pending]
    owed = tracker.owed - sum(it.owed for it in waiting)
    fresh = [it for it in work if it.frozen is None and it.rendering is not None]
    saving = owed + sum(_saving(it, est) for it in fresh)
    grace = todos_completed and state.grace_used < config.wrap_up_grace_requests
    gate = _gate(state, config, saving, grace)
    if (gate is None or gate != tracker.pending_gate) and len(pending) > len(waiting):
        # the gate lets the waiting results through, or keeps them for another reason: decide
        # them again with the others (their verdicts still hold, so the saving is the same)
        rest = [it for k, it in pending.items() if k not in dirty]
        for it in rest:
            decide(it)
        work = sorted([*work, *rest], key=lambda it: it.seq)
        fresh = [it for it in work if it.frozen is None and it.rendering is not None]
        saving = sum(_saving(it, est) for it in fresh)
        gate = _gate(state, config, saving, grace)
    memory.classified += len(work)
    for it in work:
        it.fresh = False
        if pending.pop(it.seq, None) is not None:
            tracker.owed -= it.owed
    for it in fresh:
        it.fresh = True
    if gate:
        for it in fresh:
            it.owed = _saving(it, est)
            _defer(it, gate, saving, config)
            pending[it.seq] = it
            tracker.owed += it.owed
    tracker.pending_gate = gate if pending else None
    if hint:
        plan_trims(work, policy, est)
    _externalize(work, writer)
    for it in work:
        tracker.schedule(it, gates)
    return _finish(messages, tracker, work, first_new, state, est, memory, hint, recalled, writer,
                   grace_used=(state.grace_used + 1 if grace else state.grace_used) if todos_completed else 0,
                   saving=saving)


def _saving(it: Item, est: TokenEstimator) -> int:
    rendering = it.rendering
    assert rendering is not None
    return est.count(it.text) - est.count(rendering.text)


def _redecide(it: Item, *, tracker: Tracker, cfg: ReductionConfig, state: ReductionState,
              writer: ArtifactWriter | None, cfg_key: str, hint: bool) -> None:
    """Decide one result afresh with its age and group at this request."""
    it.age = max(tracker.batches - it.batch, 0)
    it.group_rank = tracker.rank(it)
    it.group_closed = it.group_rank >= 0
    it.reset()
    ctx = Context(age=it.age, validity=it.validity, repeated=it.repeated, recalled=it.protected,
                  tool_results=len(tracker.items))
    _decide(it, ctx, cfg, state, writer, cfg_key, hint)


def _skip_unchanged(tracker: Tracker, dirty: dict[int, Item], rules: _Rules,
                    gates: tuple[int, ...]) -> None:
    """Leave out of ``dirty`` the results whose age reached a gate and nothing else happened to,
    when the rules decide the same at the new age as at their latest decision: the rules compare
    the age only with the gates, and the group rank, validity, repeats, recall and the saving
    gate make a result dirty by themselves, so a result kept (or externalised) whose rules'
    verdict did not change would be decided the same: only its age moves, which its decision
    derives. Such a result waits for its next gate."""
    for it in tracker.timed:
        if (it.rules is not None and rules.age_free(it)
                and rules.verdict_at(it, max(tracker.batches - it.batch, 0)) == it.rules):
            del dirty[it.seq]
            tracker.schedule(it, gates)


class _Rules:
    """The rules' verdicts of this request's results at other ages (the same cache
    :func:`_decide` fills)."""

    def __init__(self, tracker: Tracker, cfg: ReductionConfig, cfg_key: str) -> None:
        self.tracker, self.cfg, self.cfg_key = tracker, cfg, cfg_key
        self.cap = _age_cap(cfg)
        self.results = len(tracker.items)
        self.results_key = min(self.results, cfg.min_tool_results_prune)

    def age_free(self, it: Item) -> bool:
        """``it`` may skip the gates at which its rules' verdict stays the same."""
        v = it.verdict
        return (v is not None and v.action in ("kept", "externalized") and it.defer is None
                and it.seq not in self.tracker.pending)

    def verdict_at(self, it: Item, age: int) -> Verdict:
        key = (min(age, self.cap), it.validity, it.repeated, it.protected, self.results_key,
               self.cfg_key)
        entry = it.entry
        verdict = entry.verdicts.get(key)
        if verdict is None:
            ctx = Context(age=age, validity=it.validity, repeated=it.repeated, recalled=it.protected,
                          tool_results=self.results)
            verdict = entry.verdicts[key] = classify(it.info, ctx, self.cfg)
        return verdict


def _age_cap(cfg: ReductionConfig) -> int:
    """Every age at or above this compares the same against every age gate."""
    return max(getattr(cfg, name) for name in AGE_FIELDS)


def _decide(it: Item, ctx: Context, cfg: ReductionConfig, state: ReductionState,
            work_dir: ArtifactWriter | None, cfg_key: str, hint: bool) -> None:
    frozen = state.frozen.get(it.info.call_id)
    # Reused only while its ref, original and read-back mode still hold (a compaction shifts refs).
    if (frozen is not None and frozen.ref == it.ref and frozen.digest == it.info.digest
            and (frozen.read_back == it.ref) == hint):
        it.frozen = frozen
        it.verdict = Verdict(frozen.action, frozen.rule, frozen.category,
                             f"{frozen.reason} (frozen since request {frozen.since_request})")
        it.text = frozen.text
        return
    if not cfg.enabled:
        it.verdict = Verdict("kept", "reduction_disabled", it.info.shape, "reduction: false → kept")
        return
    entry = it.entry
    key = (min(ctx.age, _age_cap(cfg)), ctx.validity, ctx.repeated, ctx.recalled,
           min(ctx.tool_results, cfg.min_tool_results_prune), cfg_key)
    verdict = entry.verdicts.get(key)
    if verdict is None:
        verdict = entry.verdicts[key] = classify(it.info, ctx, cfg)
    it.verdict = it.rules = verdict
    if verdict.action != "kept":
        existing = it.block.artifact_path or state.externalized.get(it.info.call_id)
        rkey = (verdict.render, verdict.why, work_dir is not None, existing)
        rendering = entry.renderings.get(rkey)
        if rendering is None:
            rendering = entry.renderings[rkey] = render_verdict(verdict, it.info, work_dir=work_dir,
                                                                existing_artifact=existing)
        it.rendering = rendering


def _gate(state: ReductionState, cfg: ReductionConfig, saving: int, grace: bool) -> str | None:
    if saving >= cfg.min_incremental_saved_tokens:
        return None
    if grace:
        return "wrap_up_grace"
    if state.has_prefix:
        return "min_incremental_saved_tokens"
    return None


def _defer(it: Item, gate: str, saving: int, cfg: ReductionConfig) -> None:
    v = it.verdict
    assert v is not None
    why = ("todos completed: wrap-up grace request" if gate == "wrap_up_grace"
           else "previous reduced prefix reused")
    head = f"would be {v.action} by {v.rule} ({v.reason}); new saving "
    tail = (f" tokens < min_incremental_saved_tokens {cfg.min_incremental_saved_tokens:,} → "
            f"{why}")
    it.verdict = Verdict("kept", gate, v.category, f"{head}{saving:,}{tail}")
    it.rendering = None
    it.defer = (head, tail)


def _externalize(items: list[Item], work_dir: ArtifactWriter | None) -> None:
    """Results over the inline budget are replaced by a preview on first entry (R-RED-8)."""
    if work_dir is None:
        return
    for it in items:
        v = it.verdict
        if v is None or v.action != "kept" or it.frozen is not None or it.block.artifact_path:
            continue
        if it.info.bytes <= INLINE_BUDGET_BYTES:
            continue
        entry = it.entry
        if entry.externalized is None:
            entry.externalized = externalize_large_result(it.block, work_dir=work_dir,
                                                          tool_name=it.info.tool_name)
        block, path = entry.externalized
        it.defer = None
        it.verdict = Verdict("externalized", "inline_budget", v.category,
                             f"{it.info.bytes:,} B > inline budget {INLINE_BUDGET_BYTES:,} B → preview + "
                             f"saved file (kept by {v.rule})")
        it.rendering = Rendering(block.text, path, False)


def _settle(it: Item, state: ReductionState, est: TokenEstimator, hint: bool, request_no: int,
            work_dir: ArtifactWriter | None, frozen: dict[str, FrozenRendering],
            externalized: dict[str, str], new_reduced: set[str]) -> None:
    """The text sent for a re-decided result, its frozen rendering, and its decision values."""
    v = it.verdict
    assert v is not None
    art = read_back = None
    if it.frozen is not None:
        text, art, read_back = it.frozen.text, it.frozen.artifact_path, it.frozen.read_back
    elif it.rendering is not None:
        commit(it.rendering, it.info, work_dir)
        art = it.rendering.artifact
        text = it.rendering.text
        if v.action == "externalized":
            externalized[it.info.call_id] = art or ""
        else:
            read_back = it.ref if hint else art
            if hint and v.render not in ("repeat", "confirmation"):
                text += f'\n[Read back with context_read(ref="{it.ref}")]'
            frozen[it.info.call_id] = FrozenRendering(
                ref=it.ref, digest=it.info.digest, text=text, action=v.action, rule=v.rule,
                category=v.category, reason=v.reason.replace("{age}", str(it.age)), artifact_path=art,
                read_back=read_back, since_request=request_no)
            if it.info.input_key not in state.reduced_inputs:
                new_reduced.add(it.info.input_key)
    else:
        text = it.block.text
    it.text = text
    before, after = est.count(it.block.text), est.count(text)
    it.saved = before - after
    it.reason, it.age_in_reason = v.reason, "{age}" in v.reason
    it.vals = {"ref": it.ref, "message_index": it.mi, "block_index": it.bi, "call_id": it.info.call_id,
               "tool_name": it.info.tool_name, "kind": it.info.kind, "category": v.category, "age": it.age,
               "bytes": it.info.bytes, "action": v.action, "rule": v.rule,
               "reason": v.reason.replace("{age}", str(it.age)), "tokens_before": before,
               "tokens_after": after, "artifact_path": art or it.block.artifact_path, "read_back": read_back}


def _with_text(block: ContentBlock, text: str) -> ContentBlock:
    """A re-decided result block with its new text (the tracker only re-texts tool results)."""
    assert isinstance(block, ToolResultBlock)
    return block.evolve(**UNCHANGED, text=text)


def _messages(messages: Sequence[Message], tracker: Tracker, touched: set[int], first_new: int,
              memory: ReductionMemory) -> None:
    """Bring the tracker's output messages up to date: new messages as they are, and each message
    holding a re-decided result rebuilt (remembered: an equal message with the same texts gives
    the same object)."""
    tracker.out.extend(messages[first_new:])
    for mi in sorted(touched):
        items = tracker.by_msg[mi]
        texts = {it.bi: it.text for it in items if it.text != it.block.text}
        original = messages[mi]
        if not texts:
            tracker.out[mi] = original
            continue
        key = (items[0].block.call_id, tuple(sorted(texts.items())))
        hit = memory.rebuilt.get(key)
        if hit is None or not (hit[0] is original or hit[0] == original):
            content = tuple(_with_text(b, texts[i]) if i in texts else b
                            for i, b in enumerate(original.content))
            hit = memory.rebuilt[key] = (original, original.evolve(**UNCHANGED, content=content))
        tracker.out[mi] = hit[1]


def _finish(messages: Sequence[Message], tracker: Tracker, work: list[Item], first_new: int,
            state: ReductionState, est: TokenEstimator, memory: ReductionMemory, hint: bool,
            recalled: frozenset[str],
            work_dir: ArtifactWriter | None, grace_used: int, saving: int) -> ReductionResult:
    request_no = state.requests + 1
    # the maps gain a few entries per request: shared, not copied (the state is never changed)
    frozen: dict[str, FrozenRendering] = {}
    externalized: dict[str, str] = {}
    new_reduced: set[str] = set()
    for it in work:
        saved = it.saved
        _settle(it, state, est, hint, request_no, work_dir, frozen, externalized, new_reduced)
        it.settled = tracker.requests
        tracker.saved += it.saved - saved
    touched = {it.mi for it in work}
    _messages(messages, tracker, touched, first_new, memory)
    for m in messages[first_new:]:
        tracker.before += memory.message_token_count(est, m)
    before = REQUEST_OVERHEAD + tracker.before
    all_frozen = with_added(state.frozen, frozen)
    # the engine's own values, already of the fields' types: no validation pass (it would copy
    # the whole layered map into a dict)
    new_state = constructed(ReductionState, {
        "frozen": all_frozen, "externalized": with_added(state.externalized, externalized),
        "reduced_inputs": state.reduced_inputs | new_reduced if new_reduced else state.reduced_inputs,
        "recalled_inputs": recalled, "requests": request_no, "has_prefix": bool(all_frozen),
        "grace_used": grace_used})
    # one decision per result, built when read: the re-decided ones as settled, the others with
    # this request's age (and saving figure while the saving gate keeps them)
    result = ReductionResult.of(messages=tuple(tracker.out), decisions=tracker.view(saving),
                                state=new_state, tokens_before=before,
                                tokens_after=before - tracker.saved)
    if tracker.requests:  # a continuation: say what may differ from the previous result
        result.mark_continuation(state, tuple(sorted(touched.union(range(first_new, len(messages))))))
    tracker.requests += 1
    # a rendering applied now is frozen from the next request on, which decides it again; a
    # result the saving gate keeps waits in ``tracker.pending``, an externalised one stays so
    tracker.carry = [it for it in work if it.rendering is not None and it.frozen is None
                     and it.seq not in tracker.pending and it.verdict is not None
                     and it.verdict.action != "externalized"]
    tracker.new_reduced = frozenset(new_reduced)
    tracker.out_state = new_state
    return result
