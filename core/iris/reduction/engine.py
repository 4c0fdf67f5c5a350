"""The entry point: reduce one main-model request (R-RED-1…9) and trim old bodies (R-POL-2).

``messages`` is the durable history exactly as it will be sent. Ages: with ``A`` assistant
messages in ``messages`` the request about to be sent is batch ``A``; a tool result belongs to the
batch of the assistant message that declared its call (``index_session``: the k-th assistant
message is batch k, parallel calls share it), so ``age = A − batch``: a result is age 1 at the
first request that can react to it. A result whose call is missing takes the batch of its message.

Incremental: per-result content facts are computed once (cached in the state's memo, keyed by call
id and the text object), message token counts are cached per message object, reduced renderings
are frozen by call id and reused byte-for-byte; per request only new results and results whose
age crossed a gate are rendered.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..context.policy import ContextPolicy
from ..session import Message, ToolCallBlock, ToolResultBlock
from ..tokens import REQUEST_OVERHEAD, TokenEstimator, default_estimator
from .artifacts import INLINE_BUDGET_BYTES, externalize_large_result
from .classify import Context, ResultInfo, Verdict, classify, describe
from .config import ReductionConfig
from .facts import extract_facts
from .models import FrozenRendering, ReductionResult, ReductionState, ToolResultDecision
from .render import Rendering, commit, render_verdict
from .toolkinds import ToolKindMap
from .trim import plan_trims
from .validity import ReadEvent, analyze_read_validity

__all__ = ["reduce_request"]


class _Item:
    """One tool result in this request and what is being decided for it."""

    __slots__ = (
        "age",
        "bi",
        "block",
        "frozen",
        "group_closed",
        "group_rank",
        "info",
        "mi",
        "rendering",
        "text",
        "verdict",
    )

    def __init__(self, mi: int, bi: int, block: ToolResultBlock, info: ResultInfo, age: int) -> None:
        self.mi, self.bi, self.block, self.info, self.age = mi, bi, block, info, age
        self.verdict: Verdict | None = None
        self.rendering: Rendering | None = None
        self.frozen: FrozenRendering | None = None
        self.group_closed = True
        self.group_rank = 0
        self.text = block.text

    @property
    def ref(self) -> str:
        return f"result:{self.mi}:{self.bi}"


def _info(memo: dict, kinds: ToolKindMap, kinds_key: tuple, call: ToolCallBlock | None,
          block: ToolResultBlock) -> ResultInfo:
    key = ("info", block.call_id, call.name if call else None, block.text, kinds_key)
    info = memo.get(key)
    if info is None:
        name = call.name if call else "unknown"
        args = dict(call.arguments) if call else {}
        facts = extract_facts(kinds.kind_of_call(name, args), args, block.text, block.is_error)
        info = describe(block.call_id, name, args, facts, block.text, reducible=block.reducible,
                        has_artifact=bool(block.artifact_path))
        memo[key] = info
    return info


class _Scan:
    """Calls, batches and results of the messages seen so far; extended in place when a later request
    only appended messages (checked by identity of the first and last scanned message)."""

    def __init__(self) -> None:
        self.msgs: list[Message] = []
        self.batches = 0
        self.calls: dict[str, tuple[ToolCallBlock, int, int]] = {}
        """Call id → (call block, assistant message index, batch)."""
        self.results: list[tuple[int, int, ToolResultBlock, int | None]] = []
        """(message, block, result, batch of the latest assistant message before it)."""
        self.group_calls: dict[int, list[str]] = {}

    def extends(self, messages: Sequence[Message]) -> bool:
        k = len(self.msgs)
        return k <= len(messages) and (k == 0 or (messages[0] is self.msgs[0] and messages[k - 1] is self.msgs[-1]))

    def extend(self, messages: Sequence[Message]) -> None:
        for mi in range(len(self.msgs), len(messages)):
            msg = messages[mi]
            if msg.role == "assistant":
                ids = []
                for block in msg.content:
                    if isinstance(block, ToolCallBlock) and block.id not in self.calls:
                        self.calls[block.id] = (block, mi, self.batches)
                        ids.append(block.id)
                if ids:
                    self.group_calls[mi] = ids
                self.batches += 1
                continue
            for bi, block in enumerate(msg.content):
                if isinstance(block, ToolResultBlock):
                    self.results.append((mi, bi, block, self.batches - 1 if self.batches else None))
        self.msgs.extend(messages[len(self.msgs):])


def _scan(messages: Sequence[Message], memo: dict) -> _Scan:
    scan = memo.get("scan")
    if scan is None or not scan.extends(messages):
        scan = _Scan()
        memo["scan"] = scan
    scan.extend(messages)
    return scan


def _collect(messages: Sequence[Message], memo: dict, kinds: ToolKindMap) -> list[_Item]:
    scan = _scan(messages, memo)
    current = scan.batches
    kinds_key = (kinds.format, tuple(sorted(kinds.overrides.items())))
    items = []
    answered: set[str] = set()
    for mi, bi, block, own_batch in scan.results:
        call = scan.calls.get(block.call_id)
        batch = call[2] if call else own_batch
        age = max(current - (batch if batch is not None else 0), 0)
        items.append(_Item(mi, bi, block, _info(memo, kinds, kinds_key, call[0] if call else None, block), age))
        answered.add(block.call_id)
    closed_groups = [mi for mi, ids in scan.group_calls.items() if all(c in answered for c in ids)]
    ranks = {mi: r for r, mi in enumerate(reversed(closed_groups))}
    for it in items:
        call = scan.calls.get(it.block.call_id)
        it.group_rank = ranks.get(call[1], -1) if call else -1
        it.group_closed = it.group_rank >= 0
    return items


def _conversation_facts(items: list[_Item], state: ReductionState,
                        memo: dict) -> tuple[dict, set, set, frozenset]:
    """Read validity, repeated outputs, and the recalled inputs of this request."""
    validity = analyze_read_validity((ReadEvent(it.info.call_id, it.info.facts, it.info.text) for it in items
                                      if it.info.kind in ("read", "edit", "write", "delete")), memo)
    repeated, seen, newest = set(), set(), {}
    for it in reversed(items):
        key = (it.info.input_key, it.info.digest)
        if key in seen:
            repeated.add(it.info.call_id)
        if not it.info.facts.is_error:
            seen.add(key)
        newest.setdefault(it.info.input_key, it)
    recalled = set(state.recalled_inputs)
    for key, it in newest.items():
        if key in state.reduced_inputs and it.info.refetchable and it.info.call_id not in state.frozen:
            recalled.add(key)
    protected = {newest[k].info.call_id for k in recalled if k in newest}
    return validity, repeated, protected, frozenset(recalled)


def reduce_request(messages: Sequence[Message], *, config: ReductionConfig, policy: ContextPolicy,
                   state: ReductionState | None = None, session_dir: Path | None = None,
                   context_read_available: bool = True, tool_kinds: ToolKindMap | None = None,
                   todos_completed: bool = False,
                   estimator: TokenEstimator | None = None) -> ReductionResult:
    """Reduce the tool results of one request; never changes ``messages`` themselves (R-RED-1)."""
    state = state or ReductionState()
    memo = state.memo()
    est = estimator or default_estimator()
    kinds = tool_kinds or ToolKindMap()
    items = _collect(messages, memo, kinds)
    validity, repeated, protected, recalled = _conversation_facts(items, state, memo)
    hint = policy.enabled and context_read_available
    cfg_key = config.model_dump_json()
    for it in items:
        ctx = Context(age=it.age, validity=validity.get(it.info.call_id),
                      repeated=it.info.call_id in repeated, recalled=it.info.call_id in protected,
                      tool_results=len(items))
        _decide(it, ctx, config, state, session_dir, memo, cfg_key, hint)
    fresh = [it for it in items if it.frozen is None and it.rendering is not None]
    saving = sum(est.count(it.text) - est.count(it.rendering.text) for it in fresh)  # type: ignore[union-attr]
    grace = todos_completed and state.grace_used < config.wrap_up_grace_requests
    gate = _gate(state, config, saving, grace)
    if gate:
        for it in fresh:
            _defer(it, gate, saving, config)
    if hint:
        plan_trims(items, policy, est)
    _externalize(items, memo, session_dir)
    return _finish(messages, items, state, est, memo, hint, recalled, session_dir,
                   grace_used=(state.grace_used + 1 if grace else state.grace_used) if todos_completed else 0)


def _age_cap(cfg: ReductionConfig) -> int:
    """Every age at or above this compares the same against every age gate."""
    return max(cfg.confirm_age_turns, cfg.error_age_turns, cfg.high_risk_protect_age_turns,
               cfg.diff_protect_age_turns, cfg.shell_success_age_turns, cfg.shell_read_only_age_turns,
               cfg.read_like_age_turns, cfg.stale_age_turns)


def _decide(it: _Item, ctx: Context, cfg: ReductionConfig, state: ReductionState,
            session_dir: Path | None, memo: dict, cfg_key: str, hint: bool) -> None:
    frozen = state.frozen.get(it.info.call_id)
    # Reused only while its ref, original and read-back mode still hold (a compaction shifts refs).
    if (frozen is not None and frozen.ref == it.ref and frozen.digest == it.info.digest
            and (frozen.read_back == it.ref) == hint):
        it.frozen = frozen
        it.verdict = Verdict(frozen.action, frozen.rule, frozen.category,  # type: ignore[arg-type]
                             f"{frozen.reason} (frozen since request {frozen.since_request})")
        it.text = frozen.text
        return
    if not cfg.enabled:
        it.verdict = Verdict("kept", "reduction_disabled", it.info.shape, "reduction: false → kept")
        return
    key = ("verdict", it.info.call_id, it.info.digest, min(ctx.age, _age_cap(cfg)), ctx.validity, ctx.repeated,
           ctx.recalled, min(ctx.tool_results, cfg.min_tool_results_prune), cfg_key)
    verdict = memo.get(key)
    if verdict is None:
        verdict = memo[key] = classify(it.info, ctx, cfg)
    it.verdict = verdict
    if it.verdict.action != "kept":
        existing = it.block.artifact_path or state.externalized.get(it.info.call_id)
        rkey = ("render", it.info.call_id, it.info.digest, verdict.render, verdict.why, str(session_dir), existing)
        rendering = memo.get(rkey)
        if rendering is None:
            rendering = memo[rkey] = render_verdict(verdict, it.info, session_dir=session_dir,
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


def _defer(it: _Item, gate: str, saving: int, cfg: ReductionConfig) -> None:
    v = it.verdict
    assert v is not None
    why = ("todos completed: wrap-up grace request" if gate == "wrap_up_grace"
           else "previous reduced prefix reused")
    it.verdict = Verdict("kept", gate, v.category, f"would be {v.action} by {v.rule} ({v.reason}); new "
                         f"saving {saving:,} tokens < min_incremental_saved_tokens "
                         f"{cfg.min_incremental_saved_tokens:,} → {why}")
    it.rendering = None


def _externalize(items: list[_Item], memo: dict, session_dir: Path | None) -> None:
    """Results over the inline budget are replaced by a preview on first entry (R-RED-8)."""
    if session_dir is None:
        return
    for it in items:
        v = it.verdict
        if v is None or v.action != "kept" or it.frozen is not None or it.block.artifact_path:
            continue
        if it.info.bytes <= INLINE_BUDGET_BYTES:
            continue
        key = ("ext", it.info.call_id, it.info.digest, str(session_dir))
        if key not in memo:
            memo[key] = externalize_large_result(it.block, session_dir=session_dir,
                                                 tool_name=it.info.tool_name)
        block, path = memo[key]
        it.verdict = Verdict("externalized", "inline_budget", v.category,
                             f"{it.info.bytes:,} B > inline budget {INLINE_BUDGET_BYTES:,} B → preview + "
                             f"saved file (kept by {v.rule})")
        it.rendering = Rendering(block.text, str(path), False)


def _message_tokens(memo: dict, est: TokenEstimator, msg: Message) -> int:
    hit = memo.get(("mt", id(msg)))
    if hit is not None and hit[0] is msg:
        return hit[1]
    n = est.message_tokens(msg)
    memo[("mt", id(msg))] = (msg, n)
    return n


def _finish(messages: Sequence[Message], items: list[_Item], state: ReductionState, est: TokenEstimator,
            memo: dict, hint: bool, recalled: frozenset, session_dir: Path | None,
            grace_used: int) -> ReductionResult:
    request_no = state.requests + 1
    frozen = dict(state.frozen)
    externalized = dict(state.externalized)
    reduced_inputs = set(state.reduced_inputs)
    decisions, changed = [], {}
    for it in items:
        v = it.verdict
        assert v is not None
        art = read_back = None
        if it.frozen is not None:
            text, art, read_back = it.frozen.text, it.frozen.artifact_path, it.frozen.read_back
        elif it.rendering is not None:
            commit(it.rendering, it.info, session_dir)
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
                    category=v.category, reason=v.reason.replace("{age}", str(it.age)), artifact_path=art, read_back=read_back,
                    since_request=request_no)
                reduced_inputs.add(it.info.input_key)
        else:
            text = it.block.text
        if text != it.block.text:
            changed.setdefault(it.mi, {})[it.bi] = text
        decisions.append(ToolResultDecision.fast(
            ref=it.ref, message_index=it.mi, block_index=it.bi, call_id=it.info.call_id,
            tool_name=it.info.tool_name, kind=it.info.kind, category=v.category, age=it.age,
            bytes=it.info.bytes, action=v.action, rule=v.rule, reason=v.reason.replace("{age}", str(it.age)),
            tokens_before=est.count(it.block.text), tokens_after=est.count(text),
            artifact_path=art or it.block.artifact_path, read_back=read_back))
    out = list(messages)
    for mi, texts in changed.items():
        key = ("msg", id(messages[mi]), tuple(sorted(texts.items())))
        hit = memo.get(key)
        if hit is None or hit[0] is not messages[mi]:
            content = tuple(b.model_copy(update={"text": texts[i]}) if i in texts else b
                            for i, b in enumerate(messages[mi].content))
            hit = (messages[mi], messages[mi].model_copy(update={"content": content}))
            memo[key] = hit
        out[mi] = hit[1]
    before = REQUEST_OVERHEAD + sum(_message_tokens(memo, est, m) for m in messages)
    after = before - sum(d.tokens_before - d.tokens_after for d in decisions)
    new_state = ReductionState(frozen=frozen, externalized=externalized,
                               reduced_inputs=frozenset(reduced_inputs), recalled_inputs=recalled,
                               requests=request_no, has_prefix=bool(frozen), grace_used=grace_used)
    new_state._memo = memo
    return ReductionResult(messages=tuple(out), decisions=tuple(decisions), state=new_state,
                           tokens_before=before, tokens_after=after)
