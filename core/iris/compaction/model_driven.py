"""Model-driven checkpoints (R-CMP-12): the ``compact_context`` tool, its gates and its state.

The model calls ``compact_context`` alone in a response; at the tool-batch barrier the runtime
validates the arguments, checks the gates (duplicate, interval of 3 batches, low-gain cooldown of 2
batches, expected saving ≥ 2048 tokens **and** ≥ 10% of the prepared surface) and, if they pass,
archives the head and applies a checkpoint built deterministically from the arguments (no summary
model), merged with the previous typed state. ``state_files`` are normalised relative to the
project root; paths that escape it, or symlinks resolving outside it, are rejected. Nothing is read.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from ..frozen import FrozenModel
from ..hashing import canonical_json, text_hash
from .typed_state import Claim, ClaimKind

__all__ = ["COMPACT_CONTEXT_TOOL", "CheckpointArgsError", "CompactContextArgs", "GateResult",
           "args_fingerprint", "check_gates", "normalize_state_files", "parse_compact_args"]

MIN_SAVED_TOKENS = 2048
MIN_SAVED_SHARE = 0.10
MIN_INTERVAL_BATCHES = 3
COOLDOWN_BATCHES = 2
PROJECTED_OVERHEAD = 1500

_LIST = {"type": "array", "items": {"type": "string"}}
COMPACT_CONTEXT_TOOL: dict[str, Any] = {
    "name": "compact_context",
    "description": ("Request a durable context checkpoint once the facts needed later are "
                    "externalised (state files or these arguments). Call it alone in a response."),
    "input_schema": {
        "type": "object",
        "required": ["active_objective", "next_step"],
        "additionalProperties": False,
        "properties": {
            "active_objective": {"type": "string"}, "next_step": {"type": "string"},
            "completed": _LIST, "decisions": _LIST, "open_issues": _LIST,
            "open_issues_complete": {"type": "boolean"}, "retired_items": _LIST,
            "state_files": _LIST, "planned_state_files": _LIST, "evidence_refs": _LIST,
            "claim_kinds": {"type": "object", "additionalProperties": {
                "enum": ["observed", "derived", "assumed", "proposed"]}},
            "claim_evidence": {"type": "object", "additionalProperties": _LIST},
        },
    },
}


class CheckpointArgsError(ValueError):
    """Invalid ``compact_context`` arguments; ``reason`` goes back to the model."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


class CompactContextArgs(BaseModel):
    # validators built when a model first calls the tool, not when the engine is imported
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    active_objective: str
    next_step: str
    completed: tuple[str, ...] = ()
    decisions: tuple[str, ...] = ()
    open_issues: tuple[str, ...] = ()
    open_issues_complete: bool = False
    retired_items: tuple[str, ...] = ()
    state_files: tuple[str, ...] = ()
    planned_state_files: tuple[str, ...] = ()
    evidence_refs: tuple[str, ...] = ()
    claim_kinds: dict[str, ClaimKind] = {}
    claim_evidence: dict[str, tuple[str, ...]] = {}

    @field_validator("active_objective", "next_step")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be empty")
        return value.strip()

    def claims(self) -> tuple[Claim, ...]:
        return tuple(Claim(key=k, kind=v, evidence=self.claim_evidence.get(k, ()))
                     for k, v in sorted(self.claim_kinds.items()))


def parse_compact_args(raw: Mapping[str, Any], *, known_evidence: set[str] | None = None,
                       ) -> CompactContextArgs:
    """Validate the tool arguments; ``observed`` claims need evidence, evidence ids must exist."""
    try:
        args = CompactContextArgs.model_validate(dict(raw))
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        msg = "unknown argument" if err["type"] == "extra_forbidden" else err["msg"]
        raise CheckpointArgsError(f"compact_context.{where}: {msg}") from None
    for key, kind in args.claim_kinds.items():
        if kind == "observed" and not args.claim_evidence.get(key):
            raise CheckpointArgsError(f"compact_context.claim_kinds[{key!r}]: an observed claim "
                                      "needs claim_evidence")
    refs = {*args.evidence_refs, *(r for v in args.claim_evidence.values() for r in v)}
    if known_evidence is not None and (unknown := sorted(refs - known_evidence)):
        raise CheckpointArgsError(f"compact_context.evidence_refs: unknown evidence id "
                                  f"{unknown[0]!r}")
    return args


def normalize_state_files(paths: Sequence[str], project_root: Path) -> tuple[str, ...]:
    """Paths relative to the project root; escapes and outside symlinks are rejected.

    ``~``, ``./``, ``../`` and absolute forms are accepted when they resolve lexically inside the
    root; an existing symlink whose target lies outside the root is rejected. No file is read.
    """
    root = Path(os.path.realpath(project_root))
    out: list[str] = []
    for raw in paths:
        text = os.path.expanduser(raw.strip())
        if not text:
            raise CheckpointArgsError("compact_context.state_files: empty path")
        candidate = Path(os.path.normpath(text if os.path.isabs(text) else root / text))
        try:
            rel = candidate.relative_to(root)
        except ValueError:
            raise CheckpointArgsError(f"compact_context.state_files: {raw!r} resolves outside "
                                      "the project root") from None
        if os.path.lexists(candidate):
            try:
                Path(os.path.realpath(candidate)).relative_to(root)
            except ValueError:
                raise CheckpointArgsError(f"compact_context.state_files: {raw!r} is a symlink "
                                          "pointing outside the project root") from None
        out.append(rel.as_posix() or ".")
    return tuple(dict.fromkeys(out))


def args_fingerprint(args: CompactContextArgs, work_marker: int) -> str:
    """Hash of the arguments and of the amount of real work seen (the duplicate gate)."""
    return text_hash(f"{canonical_json(args)}|{work_marker}")


Gate = Literal["low_gain", "interval", "cooldown", "duplicate"]
"""The gates a model-driven checkpoint passes (R-CMP-12)."""


class GateResult(FrozenModel):
    passed: bool
    gate: Gate | None = None
    reason: str = ""
    saved_tokens: int | None = None
    current_tokens: int | None = None


def check_gates(*, current_tokens: int, projected_tokens: int, current_batch: int,
                last_apply_batch: int | None, cooldown_until_batch: int | None,
                fingerprint: str, last_fingerprint: str | None) -> GateResult:
    """The R-CMP-12 gates in order: duplicate, interval, cooldown, low gain."""
    if last_fingerprint is not None and fingerprint == last_fingerprint:
        return GateResult(passed=False, gate="duplicate", reason="identical checkpoint request "
                          "with no new work since the last one")
    if last_apply_batch is not None and current_batch - last_apply_batch < MIN_INTERVAL_BATCHES:
        return GateResult(passed=False, gate="interval", reason=f"{current_batch - last_apply_batch}"
                          f" batch(es) since the last checkpoint, fewer than {MIN_INTERVAL_BATCHES}")
    if cooldown_until_batch is not None and current_batch < cooldown_until_batch:
        return GateResult(passed=False, gate="cooldown", reason=f"low-gain cooldown until batch "
                          f"{cooldown_until_batch}")
    saved = current_tokens - projected_tokens
    if saved < MIN_SAVED_TOKENS or saved < current_tokens * MIN_SAVED_SHARE:
        return GateResult(passed=False, gate="low_gain", reason=f"saving {saved:,} tokens is below "
                          f"{MIN_SAVED_TOKENS:,} or 10% of {current_tokens:,}",
                          saved_tokens=saved, current_tokens=current_tokens)
    return GateResult(passed=True, saved_tokens=saved, current_tokens=current_tokens)
