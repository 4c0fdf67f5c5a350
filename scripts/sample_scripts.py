"""The scripts of the three sample sessions: what the user asks, what the agent does, and the
command outputs that cannot be computed from the in-memory files (test runs, git, the CLI)."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime

from iris.session import ModelLimits, ModelSwitch, RecordedContribution, Session, StepSnapshot
from sample_projects import LONG_MODULES, TALLY_FILES, long_module_source
from sample_recorder import Recorder

SONNET = "claude-sonnet-4-5-20250929"
SONNET_4 = "claude-sonnet-4-20250514"
LIMITS = ModelLimits(context=200_000, output=64_000)
SYSTEM = ("You are Claude Code, Anthropic's official CLI for Claude. You are an interactive CLI tool that "
          "helps users with software engineering tasks. Use the tools available to you to read, search "
          "and edit files and to run commands. Prefer small, verifiable steps; run the tests after edits.")
TALLY = "/home/dev/tally"

PYTEST_FAIL = """============================= test session starts ==============================
platform linux -- Python 3.12.3, pytest-8.3.4, pluggy-1.5.0
rootdir: /home/dev/tally
configfile: pyproject.toml
collected 5 items

tests/test_ledger.py ..F                                                 [ 60%]
tests/test_periods.py ..                                                 [100%]

=================================== FAILURES ===================================
_____________________ test_monthly_total_includes_last_day _____________________

march = <tally.ledger.Ledger object at 0x7f3a2c1d9e50>

    def test_monthly_total_includes_last_day(march: Ledger) -> None:
        start, end = month_range(2025, 3)
>       assert march.total(start, end) == 4210 + 2900 + 12999 + 8675
E       assert 20109 == 28784
E        +  where 20109 = total(datetime.date(2025, 3, 1), datetime.date(2025, 3, 31))
E        +    where total = <tally.ledger.Ledger object at 0x7f3a2c1d9e50>.total

tests/test_ledger.py:19: AssertionError
=========================== short test summary info ============================
FAILED tests/test_ledger.py::test_monthly_total_includes_last_day - assert 20109 == 28784
========================= 1 failed, 4 passed in 0.07s =========================="""

PYTEST_PASS = """============================= test session starts ==============================
platform linux -- Python 3.12.3, pytest-8.3.4, pluggy-1.5.0
rootdir: /home/dev/tally
configfile: pyproject.toml
collected 6 items

tests/test_ledger.py ....                                                [ 66%]
tests/test_periods.py ..                                                 [100%]

============================== 6 passed in 0.05s ==============================="""

GIT_DIFF = """diff --git a/tally/ledger.py b/tally/ledger.py
index 3b1f0c2..9e4d7a1 100644
--- a/tally/ledger.py
+++ b/tally/ledger.py
@@ -29,7 +29,8 @@ class Ledger:
         ])

     def between(self, start: date, end: date) -> list[Entry]:
-        return [e for e in self.entries if start <= e.day < end]
+        \"\"\"Entries from ``start`` to ``end``, both inclusive (as month_range returns them).\"\"\"
+        return [e for e in self.entries if start <= e.day <= end]

     def total(self, start: date, end: date) -> int:
         return sum(e.cents for e in self.between(start, end))
diff --git a/tests/test_ledger.py b/tests/test_ledger.py
index 51c0e88..a2d93f4 100644
--- a/tests/test_ledger.py
+++ b/tests/test_ledger.py
@@ -1,11 +1,22 @@
 from datetime import date

 from tally.ledger import Ledger
+from tally.periods import month_range


 def test_between_orders_by_day(march: Ledger) -> None:
-    days = [e.day.day for e in march.between(date(2025, 3, 1), date(2025, 4, 1))]
+    days = [e.day.day for e in march.between(date(2025, 3, 1), date(2025, 3, 31))]
     assert days == [1, 14, 30, 31]"""

REPORT_JSON = {"categories": {"groceries": 12885, "household": 12999, "transport": 2900}, "entries": 4,
               "from": "2025-03-01", "month": "2025-03", "to": "2025-03-31", "total_cents": 28784}

NEW_TEST = '''

def test_monthly_total_includes_last_day(march: Ledger) -> None:
    start, end = month_range(2025, 3)
    assert march.total(start, end) == 4210 + 2900 + 12999 + 8675
'''


def _ok(text: str) -> tuple[str, bool]:
    return text, False


def _err(text: str) -> tuple[str, bool]:
    return text, True


def _path(rel: str) -> str:
    return f"{TALLY}/{rel}"


def _todos(*items: tuple[str, str]) -> tuple[str, dict]:
    return ("TodoWrite", {"todos": [{"content": c, "status": s, "activeForm": c} for c, s in items]})


def _bash(command: str, description: str) -> tuple[str, dict]:
    return ("Bash", {"command": command, "description": description})


def bugfix_session() -> Session:
    r = Recorder(11, datetime(2025, 4, 2, 9, 14, 3, tzinfo=UTC), SONNET, files=TALLY_FILES, root=TALLY)
    r.system(SYSTEM)
    r.user("The March report is missing money. `tally report --month 2025-03` says 201.09 but my "
           "spreadsheet says 287.84 — the market run on the 31st isn't counted. Can you find and fix it? "
           "Tests must pass afterwards.")
    _explore(r)
    _reproduce(r)
    _fix(r)
    _verify_and_commit(r)
    return r.session("bugfix-tally-march", "Fix: monthly report drops the last day of the month", LIMITS)


def _explore(r: Recorder) -> None:
    r.assistant("I'll look at how the report selects the month's entries.", _todos(
        ("Find where the monthly total is computed", "in_progress"),
        ("Reproduce with a failing test", "pending"), ("Fix and run the suite", "pending")))
    r.run_tools()
    r.assistant("", ("Glob", {"pattern": "**/*.py"}))
    r.run_tools()
    r.assistant("", ("Read", {"file_path": _path("tally/cli.py")}), ("Read", {"file_path": _path("tally/report.py")}))
    r.run_tools()
    r.assistant("`monthly` takes its bounds from `month_range`. Let me see both sides.",
                ("Read", {"file_path": _path("tally/periods.py")}), ("Read", {"file_path": _path("tally/ledger.py")}))
    r.run_tools()
    r.assistant("", ("Grep", {"pattern": r"month_range|\.between\(|\.total\(", "output_mode": "content", "-n": True}))
    r.run_tools()
    r.assistant("", ("Read", {"file_path": _path("tally/budget.py")}))
    r.run_tools()
    r.assistant("", ("Read", {"file_path": _path("tests/conftest.py")}),
                ("Read", {"file_path": _path("tests/test_ledger.py")}), ("Glob", {"pattern": "tests/*.py"}))
    r.run_tools()
    r.assistant("", ("Read", {"file_path": _path("README.md")}), ("Read", {"file_path": _path("pyproject.toml")}))
    r.run_tools()
    r.assistant("", ("Read", {"file_path": _path("tests/test_periods.py")}),
                ("Grep", {"pattern": "def test_", "glob": "*.py", "output_mode": "content", "-n": True}))
    r.run_tools()
    r.assistant("", _bash("git log --oneline -6", "Recent commits"))
    r.run_tools(_ok("a41c9d2 report: add --json output\n7e0b513 ledger: store amounts in cents\n"
                 "c02f8aa budget: usage per category\n5d1e7c4 periods: month_range returns last day\n"
                 "9b8a610 cli: click group\n1f3e2d9 initial ledger"))
    r.assistant("`5d1e7c4` changed `month_range` to return the last day, but `Ledger.between` still treats "
                "`end` as exclusive (`start <= e.day < end`). So the 31st is cut off.",
                _bash("git show 5d1e7c4 --stat", "What the month_range change touched"))
    r.run_tools(_ok("commit 5d1e7c4b9f7a0d8e1c2b3a4f5e6d7c8b9a0f1e2d\nAuthor: Dana Whit <dana@example.org>\n"
                 "Date:   Tue Feb 18 21:40:12 2025 +0100\n\n    periods: month_range returns last day\n\n"
                 " tally/periods.py        | 6 +++---\n tests/test_periods.py   | 4 ++--\n"
                 " 2 files changed, 5 insertions(+), 5 deletions(-)"))
    r.assistant("", _bash("python -m pytest -q", "Run the current suite"))
    r.run_tools(_ok("....                                                                     [100%]\n"
                 "4 passed in 0.04s"))


def _reproduce(r: Recorder) -> None:
    r.assistant("The suite passes, so nothing covers a whole month. I'll add a test first.", _todos(
        ("Find where the monthly total is computed", "completed"),
        ("Reproduce with a failing test", "in_progress"), ("Fix and run the suite", "pending")))
    r.run_tools()
    r.assistant("", ("Edit", {"file_path": _path("tests/test_ledger.py"),
                              "old_string": "from tally.ledger import Ledger\n",
                              "new_string": "from tally.ledger import Ledger\nfrom tally.periods import month_range\n"}))
    r.run_tools()
    test = r.files["tests/test_ledger.py"]
    r.assistant("", ("Write", {"file_path": _path("tests/test_ledger.py"), "content": test + NEW_TEST}))
    r.run_tools()
    r.assistant("", _bash("python -m pytest -q tests/test_ledger.py", "Run the new test"))
    r.run_tools(_err(PYTEST_FAIL.replace("collected 5 items", "collected 3 items")))
    r.assistant("", _bash("python -m pytest", "Full run with the failing test"))
    r.run_tools(_err(PYTEST_FAIL))


def _fix(r: Recorder) -> None:
    r.assistant("Reproduced: 20109 instead of 28784, exactly the 86.75 from the 31st. Fixing `between`.",
                _todos(("Find where the monthly total is computed", "completed"),
                       ("Reproduce with a failing test", "completed"), ("Fix and run the suite", "in_progress")))
    r.run_tools()
    r.assistant("", ("Edit", {"file_path": _path("tally/ledger.py"),
                              "old_string": "return [e for e in self.entries if start <= e.day < end ]",
                              "new_string": "return [e for e in self.entries if start <= e.day <= end]"}))
    r.run_tools()  # the stray space makes the Edit fail: an error result
    r.assistant("The match failed on whitespace; re-reading the exact lines.",
                ("Read", {"file_path": _path("tally/ledger.py"), "offset": 28, "limit": 10}))
    r.run_tools()
    r.assistant("", ("Edit", {"file_path": _path("tally/ledger.py"),
                              "old_string": "        return [e for e in self.entries if start <= e.day < end]",
                              "new_string": '        """Entries from ``start`` to ``end``, both inclusive (as '
                                            'month_range returns them)."""\n'
                                            "        return [e for e in self.entries if start <= e.day <= end]"}))
    r.run_tools()
    r.assistant("`test_between_orders_by_day` passed April 1st as an exclusive end; with inclusive bounds "
                "it must stop at March 31st.",
                ("Edit", {"file_path": _path("tests/test_ledger.py"),
                          "old_string": "date(2025, 3, 1), date(2025, 4, 1)",
                          "new_string": "date(2025, 3, 1), date(2025, 3, 31)"}))
    r.run_tools()
    r.assistant("", ("Grep", {"pattern": r"between\(|\.total\(", "glob": "*.py", "output_mode": "content", "-n": True}),
                ("Read", {"file_path": _path("tally/ledger.py")}))
    r.run_tools()
    r.assistant("", _bash("python -m pytest", "Run the suite after the fix"))
    r.run_tools(_ok(PYTEST_PASS))
    r.assistant("Green. Re-reading the test file to make sure the new test reads well.",
                ("Read", {"file_path": _path("tests/test_ledger.py")}))
    r.run_tools()


def _verify_and_commit(r: Recorder) -> None:
    r.assistant("", _bash("git diff", "Review the change"))
    r.run_tools(_ok(GIT_DIFF))
    r.assistant("", _bash("printf 'date,category,cents,note\\n2025-03-01,groceries,4210,\\n2025-03-14,transport,2900,\\n"
                          "2025-03-30,household,12999,\\n2025-03-31,groceries,8675,market\\n' > /tmp/march.csv && "
                          "python -m tally.cli report --month 2025-03 --ledger /tmp/march.csv --json",
                          "Check the JSON report on March data"))
    r.run_tools(_ok(json.dumps(REPORT_JSON, indent=2, sort_keys=True)))
    r.assistant("", _bash("python -m tally.cli report --month 2025-02 --ledger /tmp/march.csv", "Empty month"))
    r.run_tools(_ok("Report 2025-02 (2025-02-01 .. 2025-02-28)\n  total                0.00"))
    r.assistant("", _bash("ruff check tally tests", "Lint"))
    r.run_tools(_ok("All checks passed!"))
    r.assistant("The report now totals 287.84. `budget.usage` shares `between`, so budgets for the last day "
                "are fixed too. Shall I commit this on `main` as \"ledger: month bounds are inclusive\"?",
                _todos(("Find where the monthly total is computed", "completed"),
                       ("Reproduce with a failing test", "completed"), ("Fix and run the suite", "completed"),
                       ("Commit after confirmation", "in_progress")))
    r.run_tools()
    r.user("yes, commit it")
    r.assistant("", _bash("git add tally/ledger.py tests/test_ledger.py && git commit -m "
                          "\"ledger: month bounds are inclusive\"", "Commit the fix"))
    r.run_tools(_ok("[main 8c4f1a7] ledger: month bounds are inclusive\n 2 files changed, 9 insertions(+), "
                 "2 deletions(-)"))
    r.assistant("", _bash("git push", "Push to origin"))
    r.run_tools(_err("Permission to use Bash with command git push has been denied."))
    r.assistant("Committed as `8c4f1a7`. I didn't push: the push wasn't approved. Run `git push` when ready.",
                _todos(("Commit after confirmation", "completed")))
    r.run_tools()
    for question, answer in _FOLLOW_UPS:
        r.user(question)
        r.assistant(answer)


_FOLLOW_UPS = (
    ("does the budget page have the same problem?",
     ("It did: `budget.usage` calls `by_category`, which goes through `between`, so it now includes the "
      "last day too. No separate change needed.")),
    ("and February in a leap year?",
     ("`month_range(2024, 2)` returns the 29th (covered by `test_month_range_february_leap_year`), and "
      "`between` now includes it.")),
    ("thanks", "You're welcome. The fix is in commit 8c4f1a7, not pushed yet."),
)


def unanswered_session() -> Session:
    r = Recorder(23, datetime(2025, 4, 3, 16, 2, 41, tzinfo=UTC), SONNET, files=TALLY_FILES, root=TALLY)
    r.system(SYSTEM)
    r.user("Run the full test suite with coverage and tell me which lines of tally/ are not covered.")
    r.assistant("", ("Read", {"file_path": _path("pyproject.toml")}))
    r.run_tools()
    r.assistant("I'll run pytest with coverage for the package.",
                _bash("python -m pytest --cov=tally --cov-report=term-missing", "Tests with coverage"))
    # The session ended here (interrupted): the last call never got its result.
    return r.session("unanswered-coverage", "Coverage run interrupted before its result", LIMITS)


def long_session() -> Session:
    """A long refactor of the harbor service: > 300k tokens of tool output."""
    rng = random.Random(97)
    files = {f"harbor/{m}.py": long_module_source(m, rng) for m in LONG_MODULES}
    r = Recorder(41, datetime(2025, 3, 10, 8, 30, 0, tzinfo=UTC), SONNET_4, files=files, root="/srv/harbor")
    r.system(SYSTEM)
    r.user("We're moving harbor from per-record retries to batch-level retry policies. Go through every "
           "module, find the per-record retry code paths, and write me a migration plan; then start with "
           "the sinks. Run the tests as you go.")
    switch_at, snapshots, turn = None, [], 0
    while r.tool_output_tokens < 330_000:
        turn += 1
        if switch_at is None and r.tool_output_tokens > 150_000:
            switch_at = len(r.messages)
            r.model = SONNET
            r.user("Switching you to Sonnet 4.5 for the rest — carry on with the sinks.")
        _long_turn(r, rng, turn)
        if turn in (5, 50):
            snapshots.append(_snapshot(len([m for m in r.messages if m.role == "assistant"]), turn))
    r.assistant("Plan written to docs/retry-migration.md; sinks migrated, 3 modules left (see the plan).")
    if switch_at is None:
        raise RuntimeError("the long sample never reached 150,000 tool-output tokens: no model switch")
    return r.session("long-harbor-retries", "Harbor: migrate per-record retries to batch policies",
                     ModelLimits(context=1_000_000, output=64_000),
                     model_switches=(ModelSwitch(at_message=switch_at, model=SONNET,
                                                 limits=ModelLimits(context=1_000_000, output=64_000)),),
                     context_snapshots=tuple(snapshots))


def _long_turn(r: Recorder, rng: random.Random, turn: int) -> None:
    module = LONG_MODULES[turn % len(LONG_MODULES)]
    usage = turn % 9 != 4  # some responses carry no usage (R-TOK-4)
    kind = turn % 5
    if kind == 0:
        r.assistant(f"Reading `{module}` for retry paths.", ("Read", {"file_path": f"/srv/harbor/harbor/{module}.py"}),
                    usage=usage)
        r.run_tools()
    elif kind == 1:
        r.assistant("", ("Grep", {"pattern": r"retry|for item in|raise HarborError", "output_mode": "content",
                                  "-n": True}), usage=usage)
        r.run_tools()
    elif kind == 2:
        r.assistant("", _bash("python -m pytest tests/ -v -x -p no:cacheprovider", "Run the test suite"), usage=usage)
        r.run_tools(_ok(_pytest_verbose(rng, turn)))
    elif kind == 3:
        other = LONG_MODULES[(turn * 7) % len(LONG_MODULES)]
        r.assistant("", ("Read", {"file_path": f"/srv/harbor/harbor/{module}.py"}),
                    ("Read", {"file_path": f"/srv/harbor/harbor/{other}.py"}), usage=usage)
        r.run_tools()
    else:
        r.assistant("", _bash("curl -s localhost:8080/admin/retries?limit=120 | python -m json.tool",
                              "Current retry counters"), usage=usage)
        r.run_tools(_ok(_retry_json(rng)))


def _pytest_verbose(rng: random.Random, turn: int) -> str:
    lines = ["============================= test session starts ==============================",
             "platform linux -- Python 3.11.9, pytest-8.2.2, pluggy-1.5.0 -- /srv/harbor/.venv/bin/python",
             "rootdir: /srv/harbor", "collecting ... collected 168 items", ""]
    for i in range(168):
        mod = LONG_MODULES[i % len(LONG_MODULES)].replace("/", "_")
        lines.append(f"tests/test_{mod}.py::test_case_{i:03d}_{rng.choice(['batch', 'retry', 'flush', 'lease'])} "
                     f"PASSED [{(i + 1) * 100 // 168:>3}%]")
    lines.append(f"============================= 168 passed in {rng.uniform(8, 20):.2f}s =============================")
    return "\n".join(lines)


def _retry_json(rng: random.Random) -> str:
    rows = [{"sink": rng.choice(["s3", "postgres", "kafka"]), "partition": rng.randrange(64),
             "record_retries": rng.randrange(0, 900), "batch_retries": rng.randrange(0, 40),
             "last_error": rng.choice([None, "ConnectionResetError", "TimeoutError", "SerializationFailure"]),
             "lease": f"lease-{rng.randrange(16**6):06x}"} for _ in range(120)]
    return json.dumps({"generated_at": "2025-03-10T09:00:00Z", "rows": rows}, indent=2)


def _snapshot(step: int, turn: int) -> StepSnapshot:
    return StepSnapshot(step_index=step, contributions=(
        RecordedContribution(key="git_status", text=f"On branch retry-batches\n{turn} files changed", required=True),
        RecordedContribution(key="open_plan", text="docs/retry-migration.md (draft, 4 sections)",
                             required=False, priority=50),
        RecordedContribution(key="ci_status", text="last CI run: green", required=False, priority=10),
    ))
