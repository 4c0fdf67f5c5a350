"""Seeded generators of large, realistic sessions for the benchmarks and the property tests.

`synth_session(responses=2000, seed=7)` builds a native :class:`iris.session.Session` of a coding
agent working on a Python project: numbered file reads (some re-read, some later edited), greps,
globs, shell runs (failing test runs with tracebacks, passing runs, read-only commands), diffs,
JSON API answers, error results and parallel calls, with Anthropic-style usage that grows and
falls like an agent that compacts its own context. `write_claude_code_transcript(path, megabytes)`
writes a Claude Code JSONL transcript of about that size with the real envelope structure (split
assistant lines, `parentUuid` chains, tool results forking off their call).
"""

from __future__ import annotations

import json
import random
import uuid
from pathlib import Path

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

MODULES = ["billing/invoice.py", "billing/tax.py", "api/routes.py", "api/auth.py", "core/models.py",
           "core/cache.py", "utils/dates.py", "utils/money.py", "workers/queue.py", "cli/main.py"]
WORDS = ["total", "amount", "customer", "invoice", "line", "tax", "rate", "currency", "round", "cache", "key", "expiry", "token", "user", "session", "route", "handler", "request", "response", "payload", "retry", "queue", "worker", "job", "status"]


def _code_line(rng: random.Random, n: int) -> str:
    indent = "    " * rng.randint(0, 2)
    kind = rng.random()
    if kind < 0.15:
        return f"{indent}def {rng.choice(WORDS)}_{rng.choice(WORDS)}(self, {rng.choice(WORDS)}):"
    if kind < 0.3:
        return f"{indent}return {rng.choice(WORDS)}.{rng.choice(WORDS)}({rng.choice(WORDS)})"
    if kind < 0.4:
        return f"{indent}# {' '.join(rng.choices(WORDS, k=6))}"
    return f"{indent}{rng.choice(WORDS)} = {rng.choice(WORDS)}_{n % 7} + {rng.randint(0, 99)}"


def _read_output(rng: random.Random, path: str, start: int, count: int) -> str:
    return "\n".join(f"{i:>6}\t{_code_line(rng, i)}" for i in range(start, start + count))


def _grep_output(rng: random.Random, pattern: str, hits: int) -> str:
    return "\n".join(f"src/{rng.choice(MODULES)}:{rng.randint(1, 400)}:    {pattern}"
                     f"({rng.choice(WORDS)}, {rng.choice(WORDS)})" for _ in range(hits))


def _pytest_output(rng: random.Random, failing: bool, tests: int) -> str:
    lines = ["============================= test session starts ==============================",
             "platform linux -- Python 3.11.7, pytest-8.3.2, pluggy-1.5.0", f"collected {tests} items", ""]
    for m in MODULES[: rng.randint(3, 8)]:
        lines.append(f"tests/test_{Path(m).stem}.py " + "." * rng.randint(5, 40) + " [ 42%]")
    if failing:
        lines += ["", "=================================== FAILURES ===================================",
                  "___________________________ test_invoice_total_rounding ___________________________",
                  "Traceback (most recent call last):"]
        for _ in range(rng.randint(6, 20)):
            m = rng.choice(MODULES)
            lines += [f'  File "src/{m}", line {rng.randint(1, 300)}, in {rng.choice(WORDS)}',
                      f"    {_code_line(rng, 3).strip()}"]
        lines += ["AssertionError: assert Decimal('10.01') == Decimal('10.00')",
                  "FAILED tests/test_invoice.py::test_invoice_total_rounding - AssertionError",
                  f"========================= 1 failed, {tests - 1} passed in 2.31s ========================="]
    else:
        lines.append(f"============================== {tests} passed in 2.05s ===============================")
    return "\n".join(lines)


def _diff_output(rng: random.Random, files: int) -> str:
    out = []
    for _ in range(files):
        m = rng.choice(MODULES)
        out += [f"diff --git a/src/{m} b/src/{m}", "index 3f2a1c9..8b7d4e2 100644",
                f"--- a/src/{m}", f"+++ b/src/{m}"]
        for _ in range(rng.randint(1, 4)):
            a = rng.randint(1, 300)
            out.append(f"@@ -{a},7 +{a},8 @@ def {rng.choice(WORDS)}(self):")
            out += [f" {_code_line(rng, a)}" for _ in range(3)]
            out += [f"-{_code_line(rng, a)}", f"+{_code_line(rng, a)}", f"+{_code_line(rng, a)}"]
            out += [f" {_code_line(rng, a)}" for _ in range(2)]
    return "\n".join(out)


def _json_output(rng: random.Random, items: int) -> str:
    return json.dumps({"object": "list", "has_more": rng.random() < 0.5,
                       "data": [{"id": f"inv_{rng.randint(10**6, 10**7)}", "amount": rng.randint(100, 99999),
                                 "currency": "eur", "status": rng.choice(["paid", "open", "void"]),
                                 "customer": {"id": f"cus_{i}", "email": f"user{i}@example.com"}}
                                for i in range(items)]}, indent=2)


def _tool_call(rng: random.Random, step: int, files_read: list[str]) -> tuple[str, dict, str, bool]:
    """One (name, arguments, output, is_error) drawn from a realistic mix."""
    r = rng.random()
    if r < 0.30:
        path = rng.choice(files_read) if files_read and rng.random() < 0.3 else f"/work/app/src/{rng.choice(MODULES)}"
        files_read.append(path)
        start = rng.choice([1, 1, 120, 240])
        count = rng.randint(40, 260)
        return "Read", {"file_path": path, "offset": start, "limit": count}, _read_output(rng, path, start, count), False
    if r < 0.42:
        path = rng.choice(files_read) if files_read else f"/work/app/src/{rng.choice(MODULES)}"
        return ("Edit", {"file_path": path, "old_string": _code_line(rng, 1), "new_string": _code_line(rng, 2)},
                f"The file {path} has been updated successfully.", False)
    if r < 0.55:
        pat = rng.choice(WORDS)
        return "Grep", {"pattern": pat, "path": "src", "-n": True}, _grep_output(rng, pat, rng.randint(5, 120)), False
    if r < 0.60:
        return "Glob", {"pattern": "src/**/*.py"}, "\n".join(f"/work/app/src/{m}" for m in MODULES), False
    if r < 0.75:
        failing = rng.random() < 0.4
        return ("Bash", {"command": "python -m pytest -x -q tests"}, _pytest_output(rng, failing, rng.randint(40, 400)),
                False)
    if r < 0.82:
        return "Bash", {"command": "git diff"}, _diff_output(rng, rng.randint(1, 5)), False
    if r < 0.90:
        return ("Bash", {"command": "curl -s localhost:8000/api/invoices"}, _json_output(rng, rng.randint(3, 40)),
                False)
    if r < 0.95:
        return "Bash", {"command": "ls -la src"}, "\n".join(f"-rw-r--r-- 1 dev dev {rng.randint(100, 9999)} {m}"
                                                            for m in MODULES), False
    return ("Bash", {"command": "python -m billing.cli recalc --all"},
            (f"Error: Traceback (most recent call last):\n  File \"src/cli/main.py\", line {step % 97}, in main\n"
             "PermissionError: [Errno 13] Permission denied: '/var/lib/billing/lock'"), True)


def synth_session(responses: int = 2000, seed: int = 7, *, session_id: str = "bench-synth") -> Session:
    """A native session with `responses` assistant responses (≈1,000 tool-output tokens each)."""
    rng = random.Random(seed)
    msgs: list[Message] = [Message(role="system", content=(TextBlock(text="You are a careful coding agent."),)),
                           Message(role="user", content=(TextBlock(
                               text="Invoice totals are off by a cent for some currencies. Find and fix the "
                                    "rounding bug, keep the public API unchanged, and make the test suite pass."),))]
    files_read: list[str] = []
    prompt = 3000
    for step in range(responses):
        calls = [_tool_call(rng, step, files_read) for _ in range(1 if rng.random() < 0.8 else rng.randint(2, 3))]
        ids = [f"toolu_{seed:02d}{step:05d}{i}" for i in range(len(calls))]
        prompt = 30000 if prompt > 160000 else prompt + rng.randint(600, 1800)
        usage = None if rng.random() < 0.03 else Usage(input_tokens=rng.randint(3, 40), cache_read_tokens=prompt - 500,
                                                         cache_write_tokens=500, output_tokens=rng.randint(40, 600),
                                                         model="claude-sonnet-4-5")
        thought = TextBlock(text=f"Step {step}: checking {rng.choice(WORDS)} handling in {rng.choice(MODULES)}.")
        msgs.append(Message(role="assistant", usage=usage, model="claude-sonnet-4-5",
                            content=(thought, *(ToolCallBlock(id=i, name=c[0], arguments=c[1])
                                               for i, c in zip(ids, calls)))))
        msgs.append(Message(role="tool", content=tuple(ToolResultBlock(call_id=i, text=c[2], is_error=c[3])
                                                       for i, c in zip(ids, calls))))
        if rng.random() < 0.04:
            msgs.append(Message(role="user", content=(TextBlock(text=rng.choice(
                ["Also keep the CSV export working.", "Don't touch the migrations folder.",
                 "Please run the whole test suite before you finish."])),)))
    msgs.append(Message(role="assistant", content=(TextBlock(text="The rounding bug is fixed and all tests pass."),),
                        usage=Usage(input_tokens=20, cache_read_tokens=prompt, output_tokens=80)))
    header = SessionHeader(session_id=session_id, title="Synthetic bench session", model="claude-sonnet-4-5",
                           limits=ModelLimits(context=200000, output=64000), workspace_root="/work/app")
    return Session(header=header, messages=tuple(msgs))


def write_claude_code_transcript(path: Path, megabytes: float = 50, seed: int = 11) -> int:
    """Write a Claude Code transcript of about `megabytes` MB; returns the number of lines."""
    rng = random.Random(seed)
    sid = str(uuid.UUID(int=rng.getrandbits(128)))
    target = int(megabytes * 1024 * 1024)
    written = lines = 0
    parent: str | None = None
    files_read: list[str] = []
    env = {"sessionId": sid, "cwd": "/home/USER/app", "version": "2.1.38", "gitBranch": "main",
           "userType": "external", "isSidechain": False}

    def emit(fh, obj) -> None:
        nonlocal written, lines, parent
        text = json.dumps(obj, ensure_ascii=False) + "\n"
        fh.write(text)
        written += len(text.encode())
        lines += 1
        parent = obj.get("uuid", parent)

    def uid() -> str:
        return str(uuid.UUID(int=rng.getrandbits(128)))

    with path.open("w", encoding="utf-8") as fh:
        emit(fh, {**env, "type": "user", "uuid": uid(), "parentUuid": None, "timestamp": "2026-01-01T10:00:00Z",
                  "message": {"role": "user", "content": "Fix the invoice rounding bug and make the tests pass."}})
        step = 0
        while written < target:
            msg_id = f"msg_{step:08d}"
            name, args, output, is_error = _tool_call(rng, step, files_read)
            call_id = f"toolu_{step:08d}"
            usage = {"input_tokens": 4, "cache_creation_input_tokens": 300, "cache_read_input_tokens": 20000 + step,
                     "output_tokens": 1}
            base = {**env, "type": "assistant", "requestId": f"req_{step}", "timestamp": "2026-01-01T10:00:01Z"}
            text_uuid = uid()
            emit(fh, {**base, "uuid": text_uuid, "parentUuid": parent, "message": {
                "id": msg_id, "model": "claude-sonnet-4-5", "role": "assistant", "type": "message",
                "content": [{"type": "text", "text": f"Looking at step {step}."}], "usage": usage}})
            call_uuid = uid()
            emit(fh, {**base, "uuid": call_uuid, "parentUuid": text_uuid, "message": {
                "id": msg_id, "model": "claude-sonnet-4-5", "role": "assistant", "type": "message",
                "content": [{"type": "tool_use", "id": call_id, "name": name, "input": args}],
                "usage": {**usage, "output_tokens": 120}}})
            emit(fh, {**env, "type": "user", "uuid": uid(), "parentUuid": call_uuid,
                      "sourceToolAssistantUUID": call_uuid, "timestamp": "2026-01-01T10:00:02Z",
                      "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call_id,
                                                               "content": output, "is_error": is_error}]},
                      "toolUseResult": {"stdout": output[:200], "stderr": "", "interrupted": False}})
            step += 1
    return lines
