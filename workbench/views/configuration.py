"""Pure helpers behind the Configuration page (R-UI-6): validation and the common-fields form kept
in sync with the YAML text (the named presets are ``workbench.services.presets``).

The YAML text is the source of truth; the form shows a few common fields of the *validated*
configuration (effective values, after Chord-style fallbacks) and a form edit is written back into
the text in place, so comments and every field the form does not show survive (only the edited
value's span changes, or one line is added or removed). Validation never raises: it returns the
configuration, or the error with its field path, line and reason, plus the fallback warnings.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, cast

import yaml
from iris.config import ContextConfig, config_hash, parse_config
from iris.errors import ConfigError
from iris.frozen import FrozenModel
from iris.yaml_errors import read_yaml
from pydantic import ConfigDict

from ..analysis.compared_run import ComparedRun
from ..analysis.words import counted
from .markup import code_span, one_line, plain
from .recorded import budget_label

__all__ = ["FORM_FIELDS", "ConfigCheck", "FieldKind", "FormField", "apply_form", "check_config",
           "form_edit", "form_state", "form_values", "number_options", "saved_replay_line",
           "set_yaml_value", "validity_line", "widget_key"]


class _Frozen(FrozenModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)  # frozen, extra="forbid" from FrozenModel


FieldKind = Literal["int", "optional_int", "float", "bool"]


class FormField(_Frozen):
    """One field of the common-fields form and where it lives in the YAML."""

    key: str
    section: str
    name: str
    label: str
    kind: FieldKind
    minimum: float | None = None
    maximum: float | None = None
    step: float | None = None
    help: str = ""


def _f(key: str, section: str, label: str, kind: FieldKind, lo: float | None = None,
       hi: float | None = None, step: float | None = None, help: str = "",
       name: str | None = None) -> FormField:
    return FormField(key=key, section=section, name=name or key, label=label, kind=kind,
                     minimum=lo, maximum=hi, step=step, help=help)


#: The common fields, in form order.
FORM_FIELDS: tuple[FormField, ...] = (
    _f("input_budget_tokens", "compaction", "Input budget (tokens)", "optional_int", 1, None, 1000,
       "Empty: derived from the model limits, else 96000 (R-CMP-3)."),
    _f("threshold", "compaction", "Threshold", "float", 0.0, 1.0, 0.05,
       "Share of the usable budget that starts compaction; 0 disables it."),
    _f("reserved", "compaction", "Reserved (tokens)", "int", 0, None, 1000,
       "Fixed headroom subtracted from the budget before the threshold."),
    _f("reminder", "compaction", "Reminder", "float", -1.0, 1.0, 0.05,
       "0 derives min(0.60, threshold × 0.90); -1 disables the reminder."),
    _f("keep_recent_ratio", "compaction", "Keep recent ratio", "float", 0.01, 0.99, 0.01,
       "Soft target for recent original text kept raw after a compaction."),
    _f("reduction_enabled", "reduction", "Reduction on", "bool", name="enabled",
       help="Per-request pruning of old tool outputs (§8)."),
    _f("shell_success_bytes", "reduction", "Shell output bytes", "int", 1, None, 500),
    _f("shell_success_age_turns", "reduction", "Shell output age (batches)", "int", 1, None, 1),
    _f("read_like_output_bytes", "reduction", "Read output bytes", "int", 1, None, 500),
    _f("read_like_age_turns", "reduction", "Read output age (batches)", "int", 1, None, 1),
    _f("stale_output_bytes", "reduction", "Other output bytes", "int", 1, None, 500),
    _f("stale_age_turns", "reduction", "Other output age (batches)", "int", 1, None, 1),
    _f("error_age_turns", "reduction", "Error age (batches)", "int", 1, None, 1),
)


class ConfigCheck(_Frozen):
    """The outcome of validating the editor's text."""

    config: ContextConfig | None = None
    error: str | None = None
    """The whole message: file, line, field path and reason."""
    field: str | None = None
    line: int | None = None
    reason: str | None = None
    warnings: tuple[str, ...] = ()
    """Chord-style fallbacks applied (each names its field path)."""

    @property
    def ok(self) -> bool:
        return self.config is not None


def check_config(text: str, *, source: str = "<editor>") -> ConfigCheck:
    """Validate YAML text; never raises for bad input."""
    try:
        config = parse_config(text, source=source)
    except ConfigError as exc:
        return ConfigCheck(error=str(exc), field=exc.field, line=exc.line, reason=exc.problem)
    return ConfigCheck(config=config, warnings=config.warnings)


def form_values(config: ContextConfig) -> dict[str, Any]:
    """The effective value of every form field."""
    return {f.key: getattr(getattr(config, f.section), f.name) for f in FORM_FIELDS}


def _scalar(value: Any) -> str:
    """One YAML scalar as PyYAML writes it (``0.7``, ``1.0e-05``, ``true``, ``null``)."""
    return yaml.safe_dump(value, default_flow_style=True).splitlines()[0]


def _find(mapping: yaml.MappingNode, key: str) -> tuple[yaml.Node, yaml.Node] | None:
    return next(((k, v) for k, v in mapping.value
                 if isinstance(k, yaml.ScalarNode) and k.value == key), None)


def _line_start(text: str, index: int) -> int:
    return text.rfind("\n", 0, index) + 1


def _set_in_section(text: str, section: yaml.MappingNode, name: str, value: Any) -> str:
    found = _find(section, name)
    if found is not None and isinstance(found[1], yaml.ScalarNode):
        key, node = found
        if value is None:  # unset: remove the whole line (the field's default applies)
            start, end = _line_start(text, key.start_mark.index), text.find("\n", node.end_mark.index)
            return text[:start] + (text[end + 1:] if end >= 0 else "")
        return text[:node.start_mark.index] + _scalar(value) + text[node.end_mark.index:]
    if found is not None or value is None:
        return text if value is None else ""  # a non-scalar value: let the caller re-dump
    first = section.value[0][0]
    start = _line_start(text, first.start_mark.index)
    indent = " " * first.start_mark.column
    return text[:start] + f"{indent}{name}: {_scalar(value)}\n" + text[start:]


def set_yaml_value(text: str, section: str, name: str, value: Any) -> str:
    """``text`` with ``section.name`` set to ``value`` (None removes it), comments preserved.

    Returns "" when the text cannot be edited in place (the caller then re-dumps the mapping).
    """
    root = read_yaml(text, None)[1] if text.strip() else None
    if not isinstance(root, yaml.MappingNode) or root.flow_style:
        return ""
    found = _find(root, section)
    if found is None:
        if value is None:
            return text
        return text.rstrip("\n") + f"\n\n{section}:\n  {name}: {_scalar(value)}\n"
    key, node = found
    if isinstance(node, yaml.MappingNode) and node.value and not node.flow_style:
        return _set_in_section(text, node, name, value)
    if isinstance(node, yaml.ScalarNode) and section == "reduction":
        # ``reduction: true/false/null`` becomes a mapping that keeps its on/off meaning
        enabled = read_yaml(node.value, None)[0] is not False if node.value else True
        if name == "enabled":
            return text[:node.start_mark.index] + _scalar(bool(value)) + text[node.end_mark.index:]
        if value is None:
            return text
        block = f"\n  enabled: {_scalar(enabled)}\n  {name}: {_scalar(value)}"
        return text[:key.end_mark.index] + ":" + block + text[node.end_mark.index:]
    return ""


def _redump(text: str, changes: Mapping[tuple[str, str], Any]) -> str:
    parsed = read_yaml(text, None)[0] if text.strip() else {}
    data: dict[str, Any] = dict(cast("Mapping[str, Any]", parsed or {}))
    for (section, name), value in changes.items():
        part = data.get(section)
        if section == "reduction" and not isinstance(part, Mapping):
            part = {"enabled": part is not False}
        part = dict(part or {})
        if value is None:
            part.pop(name, None)
        else:
            part[name] = value
        data[section] = part
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True)


def apply_form(text: str, values: Mapping[str, Any]) -> str:
    """Write the form's values that differ from the text's effective ones back into the text.

    Raises :class:`ConfigError` when the text itself is not a valid configuration (the form is
    only editable over a valid one).
    """
    current = form_values(parse_config(text, source="<editor>"))
    changes = {(f.section, f.name): values[f.key] for f in FORM_FIELDS
               if f.key in values and values[f.key] != current[f.key]}
    out = text
    for (section, name), value in changes.items():
        edited = set_yaml_value(out, section, name, value)
        if not edited:
            return _redump(text, changes)
        out = edited
    check = check_config(out)
    if check.config is None or any(form_values(check.config)[f.key] != values[f.key]
                                   for f in FORM_FIELDS if f.key in values):
        return _redump(text, changes)  # the in-place edit did not say what the form says
    return out


def widget_key(field: FormField) -> str:
    """The session-state key of a form field's widget (``cfg_f_<key>``)."""
    return f"cfg_f_{field.key}"


def form_state(text: str) -> dict[str, Any]:
    """Widget key → effective value of every form field for valid ``text``; nothing for invalid
    text (the form keeps what it shows and is locked)."""
    check = check_config(text)
    if check.config is None:
        return {}
    values = form_values(check.config)
    return {widget_key(f): values[f.key] for f in FORM_FIELDS}


def form_edit(text: str, state: Mapping[str, Any]) -> str:
    """``text`` with the form's widget values (``state`` keyed by :func:`widget_key`; a missing
    one is None) written back into it (see :func:`apply_form`)."""
    return apply_form(text, {f.key: state.get(widget_key(f)) for f in FORM_FIELDS})


def number_options(field: FormField) -> dict[str, Any]:
    """The number box options of a numeric field: bounds, step and format (two decimals for a
    ratio; whole numbers, with a "derived" placeholder when the field may be empty)."""
    if field.kind == "float":
        return {"min_value": field.minimum, "max_value": field.maximum, "step": field.step,
                "format": "%.2f"}
    return {"min_value": int(field.minimum) if field.minimum is not None else None,
            "max_value": None, "step": int(field.step or 1),
            "placeholder": "derived" if field.kind == "optional_int" else None}


def validity_line(check: ConfigCheck) -> str:
    """The editor's verdict: the configuration's hash when valid, else where and why not."""
    if check.config is not None:
        return f"Valid · configuration `{config_hash(check.config)[:19]}…`"
    where = " · ".join(part for part in (
        f"field {code_span(check.field)}" if check.field else "",
        f"line {check.line}" if check.line else "") if part)
    return f"{where or 'Invalid'}: {plain(check.reason)}"


def saved_replay_line(name: str, run: ComparedRun) -> str:
    """What "Replay and save" saved: its compactions and steps, budget and pressure line."""
    steps = ", ".join(str(c.step) for c in run.compactions) or "none"
    return (f"Replay **{one_line(name)}** saved: **{counted(len(run.compactions), 'compaction')}** "
            f"(steps {steps}) over {counted(len(run.steps), 'step')}; budget "
            f"{plain(budget_label(run.input_budget, run.budget_source, run.budget_detail))}, pressure "
            f"line {run.pressure_line:,}. Pick it in the sidebar to step through it.")
