"""Classification of one tool result for one request (R-RED-3…6, R-RED-9).

:func:`describe` computes, once per result content, everything the rules look at (kind, facts,
size, detected shapes); :func:`classify` then applies the rules in the reference's order (first
match wins) for the result's age and returns a :class:`Verdict` naming the rule that decided and
the numbers behind it. The verdict is the decision; nothing is recomputed for display.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any, Literal

from . import detect
from .config import ReductionConfig
from .facts import ToolFacts
from .models import Action, Category
from .summaries import skill_has_body, skill_summary
from .validity import Validity

__all__ = ["Category", "Renderer", "ResultInfo", "SummaryRenderer", "Verdict", "classify", "describe",
           "input_key"]

SummaryRenderer = Literal["stale_read", "repeat", "confirmation", "error", "diagnostics", "diff",
                          "search", "json", "read_like", "shell_log", "shell_success", "skill",
                          "generic"]
"""The summaries and markers :func:`iris.reduction.render.render_base` writes."""
Renderer = SummaryRenderer | Literal["trim"]
"""What makes a reduced result's text: a summary, or the trim stage's preview (``trim``)."""
_REFETCH_KINDS = ("read", "search", "glob", "web_fetch")


@dataclass(frozen=True)
class ResultInfo:
    """Content-derived facts of one tool result; computed once per (call id, content)."""

    call_id: str
    tool_name: str
    arguments: dict[str, Any]
    facts: ToolFacts
    text: str
    bytes: int
    input_key: str
    digest: str
    reducible: bool
    has_artifact: bool
    high_risk: bool
    diff: bool
    confirmation: bool
    build_log: bool
    search: bool
    numbered: bool
    json_doc: bool
    ndjson: bool
    skill: bool
    read_only_shell: bool
    diagnostics: bool
    shape: Category = "generic"
    """The category the content belongs to, whatever the age (set by :func:`describe`)."""

    @property
    def kind(self) -> str:
        return self.facts.kind

    @property
    def refetchable(self) -> bool:
        """Re-running it fetches content again (recall protection applies), not a state change."""
        return self.kind in _REFETCH_KINDS or (self.kind == "shell" and self.read_only_shell)

    def derived_shape(self) -> Category:
        """The content category of this result, from its facts (stored as ``shape``)."""
        if self.facts.is_error:
            return "error"
        if self.diagnostics:
            return "diagnostics"
        if self.diff:
            return "diff"
        if self.skill:
            return "skill"
        if self.kind == "read":
            return "read"
        if self.kind in ("search", "glob") or self.search:
            return "search"
        if self.kind == "web_fetch":  # read-like is decided before JSON (keeps the URL)
            return "web_fetch"
        if self.json_doc or self.ndjson:  # NDJSON belongs to the JSON/structured category
            return "json"
        if self.confirmation:
            return "confirmation"
        if self.build_log and self.kind in ("shell", "edit"):
            return "shell_log"
        if self.kind == "shell":
            return "shell_success"
        return "generic"


def input_key(tool_name: str, arguments: dict[str, Any]) -> str:
    """Tool name plus canonical JSON arguments: what makes two calls "the same call"."""
    return f"{tool_name}\x00{json.dumps(arguments, sort_keys=True, ensure_ascii=False, default=str)}"


def describe(call_id: str, tool_name: str, arguments: dict[str, Any], facts: ToolFacts, text: str,
             *, reducible: bool = True, has_artifact: bool = False) -> ResultInfo:
    shell = facts.kind == "shell"
    diff = detect.is_diff(text)
    info = ResultInfo(
        call_id=call_id, tool_name=tool_name, arguments=arguments, facts=facts, text=text,
        bytes=len(text.encode()), input_key=input_key(tool_name, arguments),
        digest=hashlib.sha256(text.encode()).hexdigest(), reducible=reducible, has_artifact=has_artifact,
        high_risk=diff or detect.is_high_risk(text, shell=shell, diff=diff), diff=diff,
        confirmation=detect.is_confirmation(text),
        build_log=facts.kind in ("shell", "edit", "write") and detect.is_build_log(text),
        search=detect.is_search_content(text), numbered=detect.is_numbered_source(text),
        json_doc=detect.is_json_document(text), ndjson=detect.is_ndjson(text),
        skill=not facts.is_error and detect.is_skill(text),
        read_only_shell=shell and detect.is_read_only_shell(facts.command),
        diagnostics=facts.kind in ("edit", "write") and "diagnostics:" in text.lower(),
    )
    object.__setattr__(info, "shape", info.derived_shape())
    return info


@dataclass(frozen=True)
class Verdict:
    """What the rules decided for one result in one request."""

    action: Action
    rule: str
    category: Category
    reason: str
    """Plain words with the numbers; ``{age}`` stands for the age (filled per request, so a verdict can
    be reused while the age crosses no gate)."""
    render: Renderer | None = None
    """Which summary renders the reduced text (None for kept)."""
    why: str | None = None
    """Stale-read note: ``modified``, ``replaced`` or ``superseded``."""


@dataclass(frozen=True)
class Context:
    """Per-request facts about one result that depend on the rest of the conversation."""

    age: int
    validity: Validity | None
    repeated: bool
    recalled: bool
    tool_results: int


def _kept(info: ResultInfo, rule: str, reason: str) -> Verdict:
    return Verdict("kept", rule, info.shape, reason)


def _b(n: int) -> str:
    return f"{n:,} B"


def classify(info: ResultInfo, ctx: Context, cfg: ReductionConfig) -> Verdict:
    """Apply the rules in order; the first that matches decides."""
    age, size, shape = ctx.age, info.bytes, info.shape
    if not info.reducible:
        return _kept(info, "not_reducible", "marked not reducible → kept whole")
    if ctx.validity is not None:
        state, why = ctx.validity
        text = {"modified": "a later edit changed the lines it shows",
                "replaced": "the file was later replaced or deleted",
                "superseded": "a later read covers the same range"}[why]
        return Verdict(state, "read_validity", "read", f"{text} → truncated={state} (any age)",
                       render="stale_read", why=why)
    if ctx.repeated and age >= 1:
        return Verdict("repeat", "repeated_output", shape,
                       "an identical call with identical output appears later → repeated marker",
                       render="repeat")
    if ctx.recalled:
        return _kept(info, "recalled_input_protect",
                     "the model re-issued this call after its output was reduced → kept for the session")
    if info.high_risk and age < cfg.high_risk_protect_age_turns:
        return _kept(info, "high_risk_protect", f"high-risk output at age {{age}} < "
                     f"high_risk_protect_age_turns {cfg.high_risk_protect_age_turns} → kept whole")
    if info.kind == "read" and not info.facts.is_error and info.facts.path:
        return _kept(info, "current_read", "read is still the current view of its file → never reduced")
    return _by_category(info, ctx, cfg, age, size, shape)


def _by_category(info: ResultInfo, ctx: Context, cfg: ReductionConfig, age: int, size: int,
                 shape: Category) -> Verdict:
    if info.facts.is_error:
        if age < cfg.error_age_turns:
            return _kept(info, "error_result", f"error at age {{age}} < error_age_turns {cfg.error_age_turns} → kept")
        return Verdict("reduced", "error_age_turns", "error", f"error {_b(size)} at age {{age}} ≥ "
                       f"error_age_turns {cfg.error_age_turns} → error marker", render="error")
    if info.diagnostics:
        if age < cfg.error_age_turns:
            return _kept(info, "diagnostics_protect", f"diagnostics at age {{age}} < error_age_turns "
                         f"{cfg.error_age_turns} → kept")
        return Verdict("reduced", "diagnostics_age", "diagnostics", f"diagnostics at age {{age}} ≥ "
                       f"error_age_turns {cfg.error_age_turns} → diagnostics summary", render="diagnostics")
    if info.read_only_shell and age < cfg.shell_read_only_age_turns:
        return _kept(info, "shell_read_only_age_turns", f"read-only command at age {{age}} < "
                     f"shell_read_only_age_turns {cfg.shell_read_only_age_turns} → kept")
    if info.diff:
        if age < cfg.diff_protect_age_turns:
            return _kept(info, "diff_protect", f"diff at age {{age}} < diff_protect_age_turns "
                         f"{cfg.diff_protect_age_turns} → kept whole")
        if size > cfg.shell_success_bytes:
            return Verdict("reduced", "diff_protect_age_turns", "diff", f"diff {_b(size)} at age {{age}} ≥ "
                           f"diff_protect_age_turns {cfg.diff_protect_age_turns} and > "
                           f"{cfg.shell_success_bytes} → diff summary", render="diff")
    if info.confirmation and age >= cfg.confirm_age_turns:
        return Verdict("reduced", "confirm_age_turns", "confirmation", f"confirmation at age {{age}} ≥ "
                       f"confirm_age_turns {cfg.confirm_age_turns} → [Confirmed]", render="confirmation")
    if info.kind == "shell" and age >= cfg.shell_success_age_turns and size > cfg.shell_success_bytes:
        verdict = _shaped(info, age, cfg, "shell_success_age_turns",
                          f"shell output {_b(size)} at age {{age}} ≥ shell_success_age_turns "
                          f"{cfg.shell_success_age_turns} and > shell_success_bytes {cfg.shell_success_bytes}",
                          fallback="shell_log" if info.build_log else "shell_success")
        if verdict:
            return verdict
    if (not info.skill and age >= cfg.read_like_age_turns
            and size > cfg.read_like_output_bytes):
        verdict = _shaped(info, age, cfg, "read_like_age_turns",
                          f"{info.kind} output {_b(size)} at age {{age}} ≥ read_like_age_turns "
                          f"{cfg.read_like_age_turns} and > read_like_output_bytes {cfg.read_like_output_bytes}",
                          fallback=None)
        if verdict:
            return verdict
    if _category_gates(info) is not None:  # a category's own gates decide, never the generic rule
        return _kept(info, "below_gates", _below(info, age, size, cfg))
    return _generic(info, ctx, cfg, age, size)


def _shaped(info: ResultInfo, age: int, cfg: ReductionConfig, rule: str, why: str,
            fallback: Literal["shell_log", "shell_success"] | None) -> Verdict | None:
    """The first matching summary shape (search, JSON, read-like, numbered source, build log)."""
    if info.kind in ("search", "glob") or info.search:
        return Verdict("reduced", rule, "search", f"{why} → search summary", render="search")
    if info.kind in ("read", "web_fetch"):  # read-like before JSON: a fetched JSON keeps its URL
        category: Category = "web_fetch" if info.kind == "web_fetch" else "read"
        return Verdict("reduced", rule, category, f"{why} → read summary", render="read_like")
    if info.ndjson:  # JSON lines: the JSON category, at the age of the rule that reached it
        return Verdict("reduced", rule, "json", f"{why} → NDJSON summary", render="json")
    if info.json_doc:
        if age < cfg.stale_age_turns:
            return _kept(info, "stale_age_turns", f"JSON document at age {{age}} < stale_age_turns "
                         f"{cfg.stale_age_turns} → kept")
        return Verdict("reduced", rule, "json", f"{why} → JSON summary", render="json")
    if info.numbered:
        return Verdict("reduced", rule, "read", f"{why} → read summary", render="read_like")
    if info.build_log:
        return Verdict("reduced", rule, "shell_log", f"{why} → log summary", render="shell_log")
    if fallback:
        return Verdict("reduced", rule, fallback, f"{why} → shell summary", render=fallback)
    return None


def _generic(info: ResultInfo, ctx: Context, cfg: ReductionConfig, age: int, size: int) -> Verdict:
    if age >= cfg.stale_age_turns and size > cfg.stale_output_bytes:
        if ctx.tool_results < cfg.min_tool_results_prune:
            return _kept(info, "min_tool_results_prune", f"only {ctx.tool_results} tool results < "
                         f"min_tool_results_prune {cfg.min_tool_results_prune} → generic rule not active")
        why = (f"{info.kind} output {_b(size)} at age {{age}} ≥ stale_age_turns {cfg.stale_age_turns} and > "
               f"stale_output_bytes {cfg.stale_output_bytes}")
        if info.skill:
            if not skill_has_body(info.text) or skill_summary(info.text) is None:
                return _kept(info, "skill_not_smaller", "skill envelope whose outline would not be "
                             "smaller (no body to summarise) → kept")
            return Verdict("reduced", "stale_age_turns", "skill", f"{why} → skill outline", render="skill")
        shaped = _shaped(info, age, cfg, "stale_age_turns", why, fallback=None)
        return shaped or Verdict("reduced", "stale_age_turns", "generic", f"{why} → generic summary",
                                 render="generic")
    return _kept(info, "below_gates", _below(info, age, size, cfg))


def _category_gates(info: ResultInfo) -> tuple[str, str] | None:
    """The age and size fields of the category ``info`` belongs to (R-RED-3): shell success and
    logs (read-only commands with their own age), reads and searches, diffs (summarised only above
    the shell size); None outside the categories, where the generic rule applies (skills share
    the generic gates). A ``*_bytes`` field is the category's minimum size: a smaller output stays
    whole whatever its age (seed 002, 年龄参数说明). Web fetches are not one of seed 002's sized
    categories (its read-like row is reads and file previews): a fetch over
    ``read_like_output_bytes`` is summarised read-like at ``read_like_age_turns`` by the
    any-tool rule, and a smaller one meets the generic gates, whose shapes keep its URL."""
    if info.skill:
        return None
    if info.diff:
        return "diff_protect_age_turns", "shell_success_bytes"
    if info.kind == "shell":
        return ("shell_read_only_age_turns" if info.read_only_shell else "shell_success_age_turns",
                "shell_success_bytes")
    if info.kind in ("read", "search", "glob"):
        return "read_like_age_turns", "read_like_output_bytes"
    return None


def _below(info: ResultInfo, age: int, size: int, cfg: ReductionConfig) -> str:
    gates = _category_gates(info) or ("stale_age_turns", "stale_output_bytes")
    age_gate, byte_gate = getattr(cfg, gates[0]), getattr(cfg, gates[1])
    if age < age_gate:
        return f"{_b(size)} at age {{age}} < {gates[0]} {age_gate} → kept"
    return f"{_b(size)} ≤ {gates[1]} {byte_gate} at age {{age}} → kept"
