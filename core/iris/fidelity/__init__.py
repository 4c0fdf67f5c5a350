"""What a compaction lost (R-FID-1): the facts of the span a compaction replaced, whether the
checkpoint or the retained messages kept them, and whether the rest of the session needed them.

:func:`extract_facts` finds the facts (paths, commands, identifiers, errors, URLs, numbers with
units, user instructions); :func:`loss_record` matches them against the checkpoint and the later
messages; :func:`recorded_loss_records` does it for every compaction the agent recorded.
docs/fidelity.md explains the definitions and their limits.
"""

from __future__ import annotations

from .facts import FACT_KINDS, Fact, FactKind, command_parts, extract_facts
from .record import (
    FactFate,
    KindRecall,
    LossRecord,
    applied_loss_record,
    loss_record,
    recorded_loss_records,
)

__all__ = ["FACT_KINDS", "Fact", "FactFate", "FactKind", "KindRecall", "LossRecord",
           "applied_loss_record", "command_parts", "extract_facts", "loss_record",
           "recorded_loss_records"]
