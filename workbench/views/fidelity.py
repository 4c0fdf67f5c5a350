"""What each compaction lost, as tables and words (R-FID-2): the recall of needed-later facts by
kind per compaction, and the list of facts the session needed again but the checkpoint dropped,
each linked to the step that needed it (docs/fidelity.md)."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
from iris.fidelity import FACT_KINDS, Fact, FactFate, LossRecord

from ..analysis.fidelity import recall_means
from .failures import step_link

__all__ = [
    "LOST_COLUMNS",
    "compaction_label",
    "corpus_fidelity_table",
    "fidelity_sentence",
    "loss_side_by_side",
    "lost_by_either",
    "lost_table",
    "pair_table",
    "recall_table",
    "runs_recall_table",
]

LOST_COLUMNS = ["needed at step", "kind", "fact", "stated at message", "recovered at step",
                "recovered by", "recovery tokens", "open"]


def compaction_label(record: LossRecord) -> str:
    """``agent #1 · step 71`` or ``replay #2 · step 120``."""
    who = "agent" if record.source == "recorded" else "replay"
    return f"{who} #{record.n} · step {record.step}"


def _pct(kept: int, needed: int) -> str:
    return f"{kept}/{needed} ({kept / needed:.0%})" if needed else "—"


def _shown(fact: Fact) -> str:
    """A fact as a table shows it: a path relative to the workspace (its key), else as written."""
    return fact.key if fact.kind == "paths" else fact.text


def recall_table(records: Sequence[LossRecord]) -> pd.DataFrame:
    """One row per compaction: needed-later facts kept over needed, overall and by kind."""
    rows = []
    for r in records:
        row: dict[str, object] = {"compaction": compaction_label(r),
                                  "facts": len(r.fates),
                                  "needed later": r.needed_later,
                                  "kept of needed": _pct(r.needed_later_kept, r.needed_later),
                                  "lost": r.needed_later - r.needed_later_kept}
        for kind, counts in r.kinds().items():
            row[kind] = _pct(counts.needed_later_kept, counts.needed_later)
        rows.append(row)
    return pd.DataFrame(rows, columns=["compaction", "facts", "needed later", "kept of needed",
                                       "lost", *FACT_KINDS])


def lost_table(record: LossRecord, *, session_id: str | None = None,
               replay_id: str | None = None) -> pd.DataFrame:
    """The needed-later facts ``record`` lost, the never-recovered ones first, then in the order
    they were needed, each with when, how and at what token cost the session got it back; with a
    session and a replay, ``open`` links to the Step-through page at the step that needed it."""
    rows = []
    for f in record.lost(never_recovered_first=True):
        link = (step_link(session_id, replay_id, f.needed_step)
                if session_id and replay_id and f.needed_step is not None else None)
        back = f.recovery
        rows.append({"needed at step": f.needed_step, "kind": f.fact.kind, "fact": _shown(f.fact),
                     "stated at message": f.fact.message,
                     "recovered at step": back.step if back else None,
                     "recovered by": back.how if back else "never",
                     "recovery tokens": back.tokens if back else None, "open": link})
    return pd.DataFrame(rows, columns=LOST_COLUMNS)


def fidelity_sentence(record: LossRecord) -> str:
    """The headline of one compaction's loss record, in words."""
    who = "the agent's summary" if record.source == "recorded" else "the checkpoint"
    if not record.needed_later:
        return (f"{compaction_label(record)}: {len(record.fates)} facts in the replaced span; the "
                "rest of the session mentioned none of them again.")
    lost = record.needed_later - record.needed_later_kept
    return (f"{compaction_label(record)}: the session needed {record.needed_later} of the "
            f"{len(record.fates)} facts of the replaced span again; {who} kept "
            f"{record.needed_later_kept} ({record.needed_later_kept / record.needed_later:.0%}), "
            f"{lost} lost" + (f": {record.never_recovered} never recovered, getting the others "
                              f"back cost {record.recovery_tokens:,} tokens." if lost else "."))


def pair_table(a: Sequence[LossRecord], b: Sequence[LossRecord], *, labels: tuple[str, str]
               ) -> pd.DataFrame:
    """A and B side by side, compaction by compaction (in order): needed later, kept, recall of
    paths and commands, and lost facts, for a template or configuration comparison."""
    rows = []
    for i in range(max(len(a), len(b))):
        row: dict[str, object] = {"compaction": i + 1}
        for label, records in zip(labels, (a, b), strict=True):
            r = records[i] if i < len(records) else None
            row[f"{label} step"] = r.step if r else None
            row[f"{label} kept of needed"] = _pct(r.needed_later_kept, r.needed_later) if r else "—"
            pc = r.recall_of("paths", "commands") if r else None
            row[f"{label} paths+commands"] = f"{pc:.0%}" if pc is not None else "—"
            row[f"{label} lost"] = (r.needed_later - r.needed_later_kept) if r else None
        rows.append(row)
    return pd.DataFrame(rows)


def loss_side_by_side(a: LossRecord | None, b: LossRecord | None, *,
                      labels: tuple[str, str]) -> pd.DataFrame:
    """Two checkpoints of one compaction (e.g. original and edited templates): needed-later facts
    kept of needed, overall and by kind, one column each ("—" for a side that committed none)."""
    rows: list[dict[str, object]] = []
    for kind in ("all", *FACT_KINDS):
        row: dict[str, object] = {"facts": kind}
        for label, r in zip(labels, (a, b), strict=True):
            if r is None:
                row[label] = "—"
            elif kind == "all":
                row[label] = _pct(r.needed_later_kept, r.needed_later)
            else:
                counts = r.kinds()[kind]
                row[label] = _pct(counts.needed_later_kept, counts.needed_later)
        rows.append(row)
    return pd.DataFrame(rows, columns=["facts", *labels])


def lost_by_either(a: LossRecord | None, b: LossRecord | None, *,
                   labels: tuple[str, str]) -> pd.DataFrame:
    """The needed-later facts that either checkpoint lost, with whether each side kept it: what a
    template edit fixed or broke."""
    fates = {label: {(f.fact.kind, f.fact.key): f for f in r.fates}
             for label, r in zip(labels, (a, b), strict=True) if r is not None}
    keys: dict[tuple[str, str], FactFate] = {}
    for side in fates.values():
        for key, fate in side.items():
            if fate.needed_later and not fate.kept:
                keys.setdefault(key, fate)
    rows = []
    for key, fate in keys.items():
        row: dict[str, object] = {"kind": key[0], "fact": _shown(fate.fact),
                                  "needed at step": fate.needed_step}
        for label in labels:
            mine = fates.get(label, {}).get(key)
            row[f"{label} kept"] = None if mine is None else mine.kept
        rows.append(row)
    rows.sort(key=lambda r: (int(str(r["needed at step"] or 0)), str(r["kind"])))
    return pd.DataFrame(rows, columns=["kind", "fact", "needed at step",
                                       *(f"{label} kept" for label in labels)])


def runs_recall_table(named: Sequence[tuple[str, Sequence[LossRecord]]]) -> pd.DataFrame:
    """:func:`recall_table` of several runs (e.g. configuration A, B and the agent), one after
    the other, with the run's name in a leading ``run`` column."""
    frames = [recall_table(records).assign(run=name) for name, records in named if records]
    columns = ["run", *recall_table(()).columns]
    if not frames:
        return pd.DataFrame(columns=columns)
    return pd.concat(frames, ignore_index=True).reindex(columns=columns)


def corpus_fidelity_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Per configuration of a batch's ``fidelity`` table, the replay's compactions and the
    agent's own: how many, the mean recall of needed-later facts and the recall of needed-later
    paths and commands (percentages; "—" when nothing was needed later)."""
    def pct(value: float | None) -> str:
        return "—" if value is None else f"{value:.0%}"

    rows = [{"configuration": m["configuration"],
             "compactions of": "agent (recorded)" if m["source"] == "recorded" else "replay",
             "compactions": m["compactions"],
             "mean recall, needed later": pct(m["mean_recall_needed_later"]),
             "paths and commands": pct(m["recall_paths_commands"])}
            for m in recall_means(frame)]
    return pd.DataFrame(rows, columns=["configuration", "compactions of", "compactions",
                                       "mean recall, needed later", "paths and commands"])
