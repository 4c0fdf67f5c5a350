"""The small Python projects the sample sessions work on.

``TALLY_FILES``: a household-expense ledger whose monthly report drops the last day of a month
(``Ledger.total`` treats the end date as exclusive while ``month_range`` returns the last day).
``long_module_source(name, rng)``: modules of a larger ingestion service ("harbor"), generated from
a seeded random source so the long session can read many different, plausible files.
"""

from __future__ import annotations

import random

TALLY_FILES: dict[str, str] = {
    "pyproject.toml": '''[project]
name = "tally"
version = "0.4.2"
description = "Household expense ledger with monthly reports"
requires-python = ">=3.10"
dependencies = ["click>=8.1"]

[project.scripts]
tally = "tally.cli:main"

[tool.pytest.ini_options]
testpaths = ["tests"]
''',
    "README.md": '''# tally

Keeps a CSV ledger of household expenses and prints monthly reports.

    tally add 2025-03-31 groceries 86.75 --note "market"
    tally report --month 2025-03 [--json]

Amounts are stored in cents; categories are free text.
''',
    "tally/__init__.py": '''"""tally: a household expense ledger."""

__version__ = "0.4.2"
''',
    "tally/periods.py": '''"""Calendar helpers for reports."""

from __future__ import annotations

import calendar
from datetime import date


def month_range(year: int, month: int) -> tuple[date, date]:
    """First and last day of a month (both inclusive)."""
    last = calendar.monthrange(year, month)[1]
    return date(year, month, 1), date(year, month, last)


def parse_month(text: str) -> tuple[int, int]:
    """Parse ``YYYY-MM``."""
    try:
        year, month = (int(p) for p in text.split("-"))
    except ValueError:
        raise ValueError(f"expected YYYY-MM, got {text!r}") from None
    if not 1 <= month <= 12:
        raise ValueError(f"month out of range in {text!r}")
    return year, month
''',
    "tally/ledger.py": '''"""The ledger: entries read from CSV and the totals reports need."""

from __future__ import annotations

import csv
from collections import defaultdict
from dataclasses import dataclass
from datetime import date
from pathlib import Path


@dataclass(frozen=True)
class Entry:
    day: date
    category: str
    cents: int
    note: str = ""


class Ledger:
    def __init__(self, entries: list[Entry] | None = None) -> None:
        self.entries = sorted(entries or [], key=lambda e: e.day)

    @classmethod
    def load(cls, path: Path) -> "Ledger":
        with path.open(newline="") as fh:
            rows = list(csv.DictReader(fh))
        return cls([
            Entry(date.fromisoformat(r["date"]), r["category"], int(r["cents"]), r.get("note", ""))
            for r in rows
        ])

    def between(self, start: date, end: date) -> list[Entry]:
        return [e for e in self.entries if start <= e.day < end]

    def total(self, start: date, end: date) -> int:
        return sum(e.cents for e in self.between(start, end))

    def by_category(self, start: date, end: date) -> dict[str, int]:
        totals: dict[str, int] = defaultdict(int)
        for e in self.between(start, end):
            totals[e.category] += e.cents
        return dict(sorted(totals.items()))
''',
    "tally/report.py": '''"""Monthly reports as text or JSON."""

from __future__ import annotations

import json

from .ledger import Ledger
from .periods import month_range


def monthly(ledger: Ledger, year: int, month: int) -> dict:
    start, end = month_range(year, month)
    cats = ledger.by_category(start, end)
    return {
        "month": f"{year:04d}-{month:02d}",
        "from": start.isoformat(),
        "to": end.isoformat(),
        "total_cents": ledger.total(start, end),
        "categories": cats,
        "entries": len(ledger.between(start, end)),
    }


def render_text(report: dict) -> str:
    lines = [f"Report {report['month']} ({report['from']} .. {report['to']})"]
    for name, cents in report["categories"].items():
        lines.append(f"  {name:<14} {cents / 100:>10,.2f}")
    lines.append(f"  {'total':<14} {report['total_cents'] / 100:>10,.2f}")
    return "\\n".join(lines)


def render_json(report: dict) -> str:
    return json.dumps(report, indent=2, sort_keys=True)
''',
    "tally/cli.py": '''"""Command line entry point."""

from __future__ import annotations

from pathlib import Path

import click

from . import report as reports
from .ledger import Ledger
from .periods import parse_month

DEFAULT_LEDGER = Path("ledger.csv")


@click.group()
def main() -> None:
    """Household expense ledger."""


@main.command()
@click.option("--month", required=True, help="YYYY-MM")
@click.option("--ledger", "ledger_path", type=click.Path(path_type=Path), default=DEFAULT_LEDGER)
@click.option("--json", "as_json", is_flag=True)
def report(month: str, ledger_path: Path, as_json: bool) -> None:
    year, mon = parse_month(month)
    data = reports.monthly(Ledger.load(ledger_path), year, mon)
    click.echo(reports.render_json(data) if as_json else reports.render_text(data))
''',
    "tally/budget.py": '''"""Budgets per category and how much of them a month used."""

from __future__ import annotations

from .ledger import Ledger
from .periods import month_range

BUDGETS_CENTS = {"groceries": 60000, "transport": 15000, "household": 20000}


def usage(ledger: Ledger, year: int, month: int) -> dict[str, float]:
    start, end = month_range(year, month)
    spent = ledger.by_category(start, end)
    return {cat: spent.get(cat, 0) / limit for cat, limit in BUDGETS_CENTS.items()}
''',
    "tests/conftest.py": '''from datetime import date

import pytest

from tally.ledger import Entry, Ledger


@pytest.fixture
def march() -> Ledger:
    return Ledger([
        Entry(date(2025, 3, 1), "groceries", 4210),
        Entry(date(2025, 3, 14), "transport", 2900),
        Entry(date(2025, 3, 30), "household", 12999),
        Entry(date(2025, 3, 31), "groceries", 8675, "market"),
        Entry(date(2025, 4, 1), "groceries", 1550),
    ])
''',
    "tests/test_ledger.py": '''from datetime import date

from tally.ledger import Ledger


def test_between_orders_by_day(march: Ledger) -> None:
    days = [e.day.day for e in march.between(date(2025, 3, 1), date(2025, 4, 1))]
    assert days == [1, 14, 30, 31]


def test_by_category(march: Ledger) -> None:
    cats = march.by_category(date(2025, 3, 1), date(2025, 3, 15))
    assert cats == {"groceries": 4210, "transport": 2900}
''',
    "tests/test_periods.py": '''import pytest

from tally.periods import month_range, parse_month


def test_month_range_february_leap_year() -> None:
    start, end = month_range(2024, 2)
    assert (start.day, end.day) == (1, 29)


def test_parse_month_rejects_13() -> None:
    with pytest.raises(ValueError, match="out of range"):
        parse_month("2025-13")
''',
}

_VERBS = ["load", "parse", "validate", "normalise", "merge", "split", "route", "flush", "retry", "score",
          "index", "compact", "resolve", "render", "encode", "decode", "partition", "schedule"]
_NOUNS = ["batch", "record", "manifest", "cursor", "checkpoint", "segment", "payload", "schema", "offset",
          "watermark", "partition", "envelope", "ticket", "frame", "snapshot", "lease"]
LONG_MODULES = ["ingest", "schema_registry", "router", "checkpointing", "retry_policy", "sinks/s3",
                "sinks/postgres", "sinks/kafka", "transforms/dedupe", "transforms/enrich", "transforms/mask",
                "scheduler", "leases", "metrics", "backfill", "compactor", "watermarks", "api/handlers",
                "api/auth", "cli", "config", "storage/segments", "storage/index", "storage/gc"]


def _function(rng: random.Random) -> str:
    verb, noun = rng.choice(_VERBS), rng.choice(_NOUNS)
    other = rng.choice(_NOUNS)
    limit = rng.choice([8, 16, 64, 256, 1024])
    body = [
        f"def {verb}_{noun}({noun}: {noun.title()}, *, {other}s: list[{other.title()}] | None = None,",
        f"        limit: int = {limit}) -> {noun.title()}:",
        f'    """{verb.title()} one {noun}, consulting up to {limit} {other}s."""',
        f"    {other}s = list({other}s or [])[:limit]",
        f"    if not {noun}.id:",
        f'        raise HarborError(f"{noun} without id in {{{noun}.source!r}}")',
        "    seen: set[str] = set()",
        f"    for item in {other}s:",
        "        if item.key in seen:",
        f'            log.debug("skip duplicate %s for %s", item.key, {noun}.id)',
        "            continue",
        "        seen.add(item.key)",
        f"        {noun} = {noun}.with_{other}(item)",
    ]
    if rng.random() < 0.5:
        body += [f"    metrics.incr(\"{verb}_{noun}.{other}s\", len(seen))"]
    body += [f"    return {noun}"]
    return "\n".join(body)


def long_module_source(name: str, rng: random.Random) -> str:
    """A plausible module of the harbor service (80-200 lines)."""
    header = [f'"""harbor.{name.replace("/", ".")}: part of the ingestion pipeline."""', "",
              "from __future__ import annotations", "", "import logging", "from dataclasses import dataclass",
              "", "from harbor import metrics", "from harbor.errors import HarborError",
              "from harbor.model import " + ", ".join(sorted({n.title() for n in rng.sample(_NOUNS, 6)})),
              "", "log = logging.getLogger(__name__)", ""]
    parts = ["\n".join(header)]
    for _ in range(rng.randint(5, 12)):
        parts.append(_function(rng))
    return "\n\n\n".join(parts) + "\n"
