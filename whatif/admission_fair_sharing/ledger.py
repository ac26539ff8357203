"""The per-LocalQueue usage ledger, ported from Kueue v0.19.2 ``pkg/cache/queue/afs``.

Upstream (kubernetes-sigs/kueue@v0.19.2):
- ``usage_ledger.go`` ``UsageLedgerEntry``: the decayed consumed history (``Resources``), its
  ``LastUpdate``, and the entry penalties not yet settled -- one record per workload
  (``penaltyRecords``) and their aggregate (``pendingPenalty``); ``withPenalty`` replaces a
  workload's record (a re-assumed workload cannot stack a second penalty), ``WithoutPenalty``
  removes exactly the recorded amount and drops zero aggregates;
- ``entry_penalties.go``: ``PushPenalty`` (stamps ``LastUpdate`` only when it creates the entry),
  ``SubPenalty`` (a no-op without a record; never creates an entry), ``PeekPenalty``,
  ``HasPendingPenalty`` (tests the aggregate's amounts, not the entry's presence).

The ledger is the simulator's own, so the copy-on-write of upstream (maps shared with readers
under a lock) is not needed: every reader here runs between writes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal

from whatif.admission_fair_sharing.usage import Resources, merge_keep_sum

LocalQueueKey = str  # "namespace/name" (utilqueue.LocalQueueReference)


@dataclass
class Entry:
    """``UsageLedgerEntry``."""

    resources: Resources = field(default_factory=dict)
    last_update: float = 0.0
    pending: Resources = field(default_factory=dict)
    records: dict[str, Resources] = field(default_factory=dict)

    def with_penalty(self, workload: str, penalty: Mapping[str, Decimal]) -> None:
        """``withPenalty``: replace the workload's record, keep the aggregate in sync."""
        self.without_penalty(workload)
        self.records[workload] = dict(penalty)
        self.pending = merge_keep_sum(self.pending, penalty)

    def without_penalty(self, workload: str) -> Resources | None:
        """``WithoutPenalty``: remove the record, subtract it, drop zeros; the removed amount."""
        recorded = self.records.pop(workload, None)
        if recorded is None:
            return None
        aggregate = merge_keep_sum(self.pending, {k: -v for k, v in recorded.items()})
        self.pending = {k: v for k, v in aggregate.items() if v != 0}
        return recorded


class Ledger:
    """``AfsUsageLedger``."""

    def __init__(self) -> None:
        self.entries: dict[LocalQueueKey, Entry] = {}

    def set(self, lq: LocalQueueKey, resources: Mapping[str, Decimal], last_update: float) -> None:
        """``SetForTest`` / the LocalQueue reconciler's first write: a fresh entry."""
        self.entries[lq] = Entry(dict(resources), last_update)

    def get(self, lq: LocalQueueKey) -> Entry | None:
        return self.entries.get(lq)

    def push_penalty(
        self, lq: LocalQueueKey, workload: str, penalty: Mapping[str, Decimal], now: float
    ) -> None:
        """``PushPenalty``."""
        entry = self.entries.get(lq)
        if entry is None:
            entry = self.entries[lq] = Entry(last_update=now)
        entry.with_penalty(workload, penalty)

    def sub_penalty(self, lq: LocalQueueKey, workload: str) -> Resources | None:
        """``SubPenalty``."""
        entry = self.entries.get(lq)
        return None if entry is None else entry.without_penalty(workload)

    def peek_penalty(self, lq: LocalQueueKey) -> Resources:
        """``PeekPenalty``."""
        entry = self.entries.get(lq)
        return {} if entry is None else entry.pending

    def has_pending_penalty(self, lq: LocalQueueKey) -> bool:
        """``HasPendingPenalty``."""
        return any(v != 0 for v in self.peek_penalty(lq).values())
