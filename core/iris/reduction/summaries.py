"""Category summaries (R-RED-4): each keeps the structure that matters for its kind of output.

Marker texts follow the reference implementation (tool names in lowercase). Every function is pure:
text in, marker text out; the engine appends the ``Full output saved to <path>`` line and the
read-back hint.
"""

from __future__ import annotations

import json
import re
from typing import Any, cast

from .detect import search_hits

__all__ = [
    "CONFIRMED", "SEARCH_BUDGET_BYTES", "confirmation_marker", "diagnostics_summary", "diff_summary",
    "error_summary", "generic_summary", "json_summary", "log_summary", "read_like_summary",
    "repeated_marker", "search_summary", "shell_success_summary", "skill_has_body", "skill_summary",
    "stale_read_marker",
]

CONFIRMED = "[Confirmed]"
SEARCH_BUDGET_BYTES = 1400
"""Byte budget of the path:line list of a search summary (the reference's figure)."""
LINE_CAP = 200
_STRONG = re.compile(r"\b(pass(ed)?|ok|done|success(ful(ly)?)?|coverage)\b", re.IGNORECASE)
_WEAK = re.compile(r"\b(created|updated|completed|wrote|written|installed|added|removed|saved)\b", re.IGNORECASE)
_HEADING = re.compile(r"^#{1,6}\s+\S")
_STALE_NOTES = {
    "modified": "[File modified after this read; the content above may be outdated. "
                "Re-read before relying on it.]",
    "replaced": "[File replaced after this read; re-reading returns the current content, "
                "not the version above.]",
    "superseded": "[A newer read of this range appears later in this conversation; prefer that output.]",
}


def _cap(line: str) -> str:
    return line if len(line) <= LINE_CAP else line[:LINE_CAP] + "…"


def _size(text: str) -> str:
    return f"bytes={len(text.encode())} lines={len(text.splitlines())}"


def _tail(lines: list[str], shown: int, n: int = 3) -> list[str]:
    omitted = len(lines) - shown - n
    out = [f"- ... ({omitted} lines omitted) ..."] if omitted > 0 else []
    return out + [_cap(ln) for ln in lines[-n:]] if lines else out


def confirmation_marker() -> str:
    return CONFIRMED


def repeated_marker(tool: str) -> str:
    return f"[Repeated {tool.lower()} output omitted; an identical call appears later.]"


_LOCATION = re.compile(r"(?:^|[\s(\"'])(?:[\w./\\-]+\.\w+|[\w./\\-]*/[\w.-]+)[:(]\d+(?:[:,]\d+)?\)?"
                       r"|\bFile \"[^\"]+\", line \d+")
_ERROR_LINE = re.compile(r"\w(Error|Exception)\b|\b(error|errors|exception|traceback|panic|fatal|failed|failure|"
                         r"assert(ion)?|denied|not found|undefined|cannot|expected)\b|^E\s", re.IGNORECASE)
ERROR_EVIDENCE_LINES = 8


def error_summary(tool: str, text: str) -> str:
    """The first line, then the failing locations (``file:line[:col]``) and the first error lines
    (up to :data:`ERROR_EVIDENCE_LINES`, in order) and how many more there were."""
    lines = [ln.rstrip() for ln in text.splitlines() if ln.strip()]
    head = (f"[Older {tool.lower()} error summarized for this request to save context; {_size(text)}; "
            f"locations={sum(bool(_LOCATION.search(ln)) for ln in lines)}]")
    if not lines:
        return head
    evidence = [ln for ln in lines[1:] if _LOCATION.search(ln) or _ERROR_LINE.search(ln)]
    out = [head, _cap(lines[0].strip()), *(_cap(ln.strip()) for ln in evidence[:ERROR_EVIDENCE_LINES])]
    if len(evidence) > ERROR_EVIDENCE_LINES:
        out.append(f"- ... (+{len(evidence) - ERROR_EVIDENCE_LINES} more error lines omitted) ...")
    return "\n".join(out)


def diagnostics_summary(tool: str, text: str) -> str:
    lines = text.splitlines()
    at = next((i for i, ln in enumerate(lines) if "diagnostics:" in ln.lower()), 0)
    diag = [ln for ln in lines[at + 1:] if ln.strip()]
    head = f"[Older {tool.lower()} diagnostics summarized for this request; diagnostics={len(diag)}]"
    return "\n".join([head, _cap(lines[0]) if lines else "", *(_cap(d) for d in diag[:3])]).rstrip()


SIGNAL_LINES = 8
_GO_OK = re.compile(r"^ok\s+\S+")
_GO_NO_TESTS = re.compile(r"^\?\s+\S+\s+\[no test files\]")


def _go_test_counts(lines: list[str]) -> str:
    """`` packages_ok= cached= no_test_files= coverage_reports=`` for plain ``go test`` output."""
    ok = [ln for ln in lines if _GO_OK.match(ln)]
    none = sum(bool(_GO_NO_TESTS.match(ln)) for ln in lines)
    if not ok and not none:
        return ""
    cached = sum("(cached)" in ln for ln in ok)
    coverage = sum("coverage:" in ln for ln in lines)
    return (f" packages_ok={len(ok)} cached={cached} no_test_files={none} "
            f"coverage_reports={coverage}")


def shell_success_summary(text: str) -> str:
    """Strong signal lines (pass, ok, done, success, coverage), else weak ones (created, updated…),
    with their count; the last lines only when there is no signal line at all."""
    lines = text.splitlines()
    signal = [ln for ln in lines if _STRONG.search(ln)] or [ln for ln in lines if _WEAK.search(ln)]
    out = [(f"[Older shell success summarized for this request to save context; {_size(text)}"
            f"{_go_test_counts(lines)}{f' signal_lines={len(signal)}' if signal else ''}]")]
    if not signal:
        return "\n".join(out + _tail(lines, 0))
    if len(signal) > SIGNAL_LINES:  # the first and the last signal lines: summaries come last
        half = SIGNAL_LINES // 2
        out += [_cap(ln) for ln in signal[:half]]
        out.append(f"- ... ({len(signal) - SIGNAL_LINES} more signal lines omitted) ...")
        out += [_cap(ln) for ln in signal[-half:]]
    else:
        out += [_cap(ln) for ln in signal]
    return "\n".join(out)


def log_summary(text: str) -> str:
    lines = text.splitlines()
    low = [ln.lower() for ln in lines]
    errors = sum("error" in ln for ln in low)
    warnings = sum("warn" in ln for ln in low)
    failed = sum("fail" in ln or "panic" in ln or "traceback" in ln for ln in low)
    marked = [lines[i] for i, ln in enumerate(low)
              if any(w in ln for w in ("error", "warn", "fail", "panic", "traceback", "exception"))]
    out = [(f"[Older shell log summarized for this request to save context; lines={len(lines)} "
            f"errors={errors} warnings={warnings} failed={failed}]")]
    out += [_cap(ln) for ln in marked[:6]]
    if len(lines) > len(marked[:6]):
        out.append(f"- ... ({len(lines) - len(marked[:6])} more lines omitted) ...")
    return "\n".join(out)


def search_summary(tool: str, text: str, args: dict[str, Any]) -> str:
    """Every ``path: line, line`` within :data:`SEARCH_BUDGET_BYTES`, snippets for the first files."""
    hits = search_hits(text)
    pattern = str(args.get("pattern", args.get("query", args.get("regex", ""))))
    paths = str(args.get("path", "."))
    includes = str(args.get("glob", args.get("include", args.get("includes", ""))))
    by_file: dict[str, list[tuple[int, str]]] = {}
    for path, line, snippet in hits:
        by_file.setdefault(path, []).append((line, snippet))
    if not by_file:  # glob / files-only output: one path per line
        for ln in text.splitlines():
            if ln.strip():
                by_file.setdefault(ln.strip(), [])
    total = len(hits) or len(by_file)
    out = [(f'[Older {tool.lower()} results summarized for this request to save context; '
            f'pattern="{pattern}" paths="{paths}" includes="{includes}"; matches={total}]')]
    files = list(by_file.items())
    entries: list[str] = []
    for n, (path, found) in enumerate(files):
        nums = ", ".join(str(line) for line, _ in found)
        entry = _cap(f"- {path}: {nums}" if found else f"- {path}")
        if n < 3 and found and found[0][1]:
            entry += f" — {found[0][1][:80]}"
        entries.append(entry)
    return "\n".join(out + _within_budget(entries, files))


def _within_budget(entries: list[str], files: list[tuple[str, list[tuple[int, str]]]]) -> list[str]:
    """The leading entries that fit :data:`SEARCH_BUDGET_BYTES` together with the omission line
    naming what was left out (the budget includes that line)."""
    sizes = [len(e.encode()) + 1 for e in entries]
    if sum(sizes) <= SEARCH_BUDGET_BYTES:
        return entries
    for keep in range(len(entries) - 1, -1, -1):
        rest = files[keep:]
        omission = f"- ... (+{len(rest)} files, {sum(len(f) for _, f in rest)} matches omitted) ..."
        if sum(sizes[:keep]) + len(omission.encode()) + 1 <= SEARCH_BUDGET_BYTES:
            return [*entries[:keep], omission]
    return []


_DIFF_START = re.compile(r"^(?:diff --git a/(.+?) b/(.+)|\*\*\* (Update|Add|Delete) File: (.+)|"
                         r"\+\+\+ (?:b/)?(\S+))$")


def _diff_kind(f: dict[str, Any]) -> str:
    """binary, mode, rename, copy, added, deleted or modified (several may combine)."""
    kinds = [f"rename from {f['from']}" if k == "rename" and "from" in f else k
             for k in ("added", "deleted", "rename", "copy", "binary") if f["flags"].get(k)]
    if f["flags"].get("mode"):
        kinds.append(f"mode {f['flags']['mode']}")
    if f["hunks"] and not {"added", "deleted"} & set(kinds):
        kinds.append("modified")
    return ", ".join(kinds) or ("modified" if f["hunks"] else "unknown")


def _diff_meta(f: dict[str, Any], line: str, old_mode: list[str]) -> bool:
    """Record a git metadata line of file ``f``; False when ``line`` is not metadata."""
    flags = f["flags"]
    if line.startswith("new file mode"):
        flags["added"] = True
    elif line.startswith("deleted file mode"):
        flags["deleted"] = True
    elif line.startswith(("rename from ", "rename to ", "similarity index")):
        flags["rename"] = True
        if line.startswith("rename from "):
            f["from"] = line[len("rename from "):]
    elif line.startswith(("copy from ", "copy to ")):
        flags["copy"] = True
    elif line.startswith("old mode "):
        old_mode[:] = [line[len("old mode "):]]
    elif line.startswith("new mode "):
        flags["mode"] = f"{old_mode[0] if old_mode else '?'}→{line[len('new mode '):]}"
    elif line.startswith(("Binary files ", "GIT binary patch")):
        flags["binary"] = True
    else:
        return False
    return True


def _diff_files(text: str) -> list[dict[str, Any]]:
    files: list[dict[str, Any]] = []
    old_mode: list[str] = []
    for line in text.splitlines():
        m = _DIFF_START.match(line)
        if m and not line.startswith("+++ /dev/null"):
            name = m.group(2) or m.group(4) or m.group(5)
            if files and files[-1]["file"] == name:
                continue
            flags: dict[str, Any] = {"added": m.group(3) == "Add", "deleted": m.group(3) == "Delete"}
            files.append({"file": name, "hunks": 0, "add": 0, "del": 0, "flags": flags, "shown": []})
            old_mode = []
        elif not files or _diff_meta(files[-1], line, old_mode):
            continue
        elif line.startswith("@@"):
            files[-1]["hunks"] += 1
        elif line.startswith(("+", "-")) and not line.startswith(("+++", "---")):
            files[-1]["add" if line[0] == "+" else "del"] += 1
            if len(files[-1]["shown"]) < 2 and line[1:].strip():
                files[-1]["shown"].append(line[:80])
    return files


def diff_summary(tool: str, text: str) -> str:
    """Per file: hunks, change counts, the kind of change (binary, mode, rename, modified…) and
    up to two representative lines; git diffs use the ``[Older git diff …]`` marker."""
    what = "git diff" if "diff --git " in text[:65536] else f"{tool.lower()} diff"
    out = [f"[Older {what} summarized for this request; {_size(text)}]"]
    files = _diff_files(text)
    for f in files[:40]:
        kind = _diff_kind(f)
        line = f"- {f['file']}: "
        if f["hunks"] or f["add"] or f["del"]:
            line += f"hunks={f['hunks']} changes=+{f['add']}/-{f['del']}; "
        line += f"kind={kind}"
        if f["shown"]:
            line += "; shown: " + " | ".join(f["shown"])
        out.append(line)
    if len(files) > 40:
        out.append(f"- ... (+{len(files) - 40} files omitted) ...")
    return "\n".join(out)


def _brief(value: Any) -> str:
    if isinstance(value, dict):
        mapping = cast(dict[str, Any], value)
        keys = ", ".join(json.dumps(k) for k in list(mapping)[:6])
        return "{" + keys + (", …" if len(mapping) > 6 else "") + "}"
    if isinstance(value, list):
        return f"[{len(cast(list[Any], value))} items]"
    return _cap(json.dumps(value, ensure_ascii=False))


def _ndjson_summary(tool: str, text: str) -> str:
    """JSON lines: record count, the keys seen (first records) and the first record."""
    records: list[Any] = []
    bad = 0
    for ln in text.splitlines():
        if ln.strip():
            try:
                records.append(json.loads(ln))
            except ValueError:
                bad += 1
    keys: dict[str, int] = {}
    for r in records:
        if isinstance(r, dict):
            for k in cast(dict[str, Any], r):
                keys[k] = keys.get(k, 0) + 1
    out = [(f"[Older {tool.lower()} NDJSON summarized to save context; records={len(records)}"
            f"{f' unparsed_lines={bad}' if bad else ''} keys={len(keys)}]")]
    out += [f"- {json.dumps(k)}: in {n} records" for k, n in list(keys.items())[:8]]
    if len(keys) > 8:
        out.append(f"- ... ({len(keys) - 8} more keys omitted) ...")
    if records:
        out.append(f"- first record: {_cap(json.dumps(records[0], ensure_ascii=False))}")
        out.append(f"- last record: {_cap(json.dumps(records[-1], ensure_ascii=False))}")
    return "\n".join(out)


def json_summary(tool: str, text: str) -> str:
    """Top-level keys (scalars kept, nested shown as key sets / item counts) or array counts;
    JSON lines (NDJSON) get a record count and their keys."""
    try:
        data = json.loads(text)
    except ValueError:
        return _ndjson_summary(tool, text)
    if isinstance(data, dict):
        obj = cast(dict[str, Any], data)
        out = [f"[Older {tool.lower()} JSON object summarized to save context; keys={len(obj)}]"]
        out += [f"- {json.dumps(k)}: {_brief(v)}" for k, v in list(obj.items())[:8]]
        if len(obj) > 8:
            out.append(f"- ... ({len(obj) - 8} more keys omitted) ...")
        return "\n".join(out)
    out = [f"[Older {tool.lower()} JSON array summarized to save context; items={len(data)}]"]
    if data:
        out.append(f"- first item: {_brief(data[0])}")
    return "\n".join(out)


def generic_summary(tool: str, text: str) -> str:
    lines = text.splitlines()
    out = [f"[Older {tool.lower()} output summarized for this request to save context; {_size(text)}]"]
    if len(lines) <= 4:
        return "\n".join(out + [_cap(ln) for ln in lines])
    out += [_cap(ln) for ln in lines[:2]]
    out.append(f"- ... ({len(lines) - 4} lines omitted) ...")
    out += [_cap(ln) for ln in lines[-2:]]
    return "\n".join(out)


def read_like_summary(tool: str, text: str, *, path: str | None, read_range: tuple[int, int] | None) -> str:
    """Reads and fetches keep their path (or URL) and line range."""
    where = f" path={path}" if path else ""
    if read_range:
        where += f" lines={read_range[0]}-{read_range[1]}"
    lines = text.splitlines()
    out = [f"[Older {tool.lower()} output summarized for this request to save context;{where} {_size(text)}]"]
    out += [_cap(ln) for ln in lines[:2]]
    out += _tail(lines, 2, 2)
    return "\n".join(out)


def stale_read_marker(text: str, *, read_range: tuple[int, int] | None, total: int | None,
                      why: str) -> str:
    """``READ_RESULT … truncated=stale|superseded``, about 500 chars of leading lines, and a note.

    ``why`` is ``modified``, ``replaced`` (both stale) or ``superseded``.
    """
    start, end = read_range or (1, len(text.splitlines()))
    state = "superseded" if why == "superseded" else "stale"
    head: list[str] = []
    used = 0
    for ln in text.splitlines():
        if used + len(ln) > 500:
            break
        head.append(ln)
        used += len(ln) + 1
    total_s = str(total) if total is not None else "?"
    end_s = str(end) if end < 10**9 else "end"
    return "\n".join([f"READ_RESULT lines={start}-{end_s} total={total_s} truncated={state}", *head,
                      _STALE_NOTES[why]])


_ANCHOR = re.compile(r"<(name|path|root|relative_paths_base)>.*?</\1>", re.DOTALL)


def skill_has_body(text: str) -> bool:
    """True when the envelope holds more than its anchors (something to outline)."""
    return bool(_ANCHOR.sub("", text).strip())


def skill_summary(text: str) -> str | None:
    """Anchors and a section outline; None when that would not be smaller than the original."""
    anchors = [m.group(0) for tag in ("name", "path", "root", "relative_paths_base")
               for m in [re.search(rf"<{tag}>.*?</{tag}>", text, re.DOTALL)] if m]
    headings: list[str] = []
    used, fenced = 0, False
    for ln in text.splitlines():
        if ln.lstrip().startswith(("```", "~~~")):
            fenced = not fenced  # headings inside fenced code are not headings
            continue
        if not fenced and _HEADING.match(ln.strip()) and len(headings) < 20 and used + len(ln) <= 600:
            headings.append(ln.strip())
            used += len(ln.strip())
    header = ("[Older skill output summarized for this request; the full text stays readable "
              "at the address below]")
    out = "\n".join([header, *anchors, "Workflow headings:", *(f"- {h}" for h in headings)])
    return out if len(out) < len(text) else None
