"""KAI Scheduler queue arithmetic: quotas and limits where -1 means unlimited.

A ``scheduling.run.ai/v2`` Queue gives ``quota``, ``limit`` and ``overQuotaWeight`` per resource
(``cpu`` in millicores, ``memory`` in MB of 10^6 bytes, ``gpu`` in devices with fractions allowed;
CRD descriptions in ``queues.scheduling.run.ai``). Two sentinels make plain comparison wrong:

* ``-1`` is unlimited, for both quota and limit (``UnlimitedResourceQuantity`` in KAI's
  ``pkg/common/constants``), so a sum containing -1 is unlimited and a cap of -1 admits anything;
* an unset or ``0`` limit is *not* "no limit": the proportion plugin turns it into MaxAllowed 0 and
  rejects any non-zero request with ``OverLimit`` on the leaf and on every ancestor
  (``capacity_policy/max_allowed_check.go``). KAI's docs call it "No additional resources allowed".

Checked against kai-scheduler/KAI-Scheduler v0.17.0 (issue 11 item 6): ``limit`` is a plain
``float64`` with ``json:"limit"`` (``pkg/apis/scheduling/v2/resources.go`` L17-24), so unset reads
as 0; ``getQueueQuota`` copies it unchanged (``pkg/scheduler/api/queue_info/queue_info.go``
L82-92); the proportion plugin hands it to ``SetQuotaResources`` as MaxAllowed
(``pkg/scheduler/plugins/proportion/proportion.go`` L334-346; memory via ``max(-1, limit*MiB)``);
``isOverLimit`` skips only MaxAllowed == -1 and otherwise rejects ``MaxAllowed < allocated +
requested`` for any non-zero request (``capacity_policy/max_allowed_check.go`` L51-64).  An unset
quota is likewise 0: nothing guaranteed, over-quota share only.

The functions here are pure so the rules in :mod:`kai` stay about *which* queues to compare.
"""

from __future__ import annotations

from collections.abc import Iterable
from decimal import Decimal

UNLIMITED = Decimal(-1)
KAI_RESOURCES: tuple[str, ...] = ("cpu", "gpu", "memory")
"""The three resources a KAI Queue budgets (``QueueResources`` in ``queue_types.go``)."""


def is_unlimited(amount: Decimal) -> bool:
    """Whether a quota or limit is KAI's unlimited sentinel."""
    return amount == UNLIMITED


def total(amounts: Iterable[Decimal]) -> Decimal:
    """Σ amounts, unlimited as soon as one of them is."""
    out = Decimal(0)
    for amount in amounts:
        if is_unlimited(amount):
            return UNLIMITED
        out += amount
    return out


def fits(need: Decimal, cap: Decimal) -> bool:
    """Whether ``need`` (possibly unlimited) fits under ``cap`` (possibly unlimited)."""
    if is_unlimited(cap):
        return True
    if is_unlimited(need):
        return False
    return need <= cap


def limit_allows(limit: Decimal | None, need: Decimal) -> bool:
    """Whether a queue's limit lets a request of ``need`` through (unset means 0)."""
    if need <= 0:
        return True
    return fits(need, Decimal(0) if limit is None else limit)


def fmt(amount: Decimal) -> str:
    """Human form: ``unlimited`` for -1, otherwise the number without a trailing ``.0``."""
    if is_unlimited(amount):
        return "unlimited (-1)"
    normal = amount.normalize()
    return f"{normal:f}" if normal == normal.to_integral_value() else str(normal)


def cpu_to_kai(cores: Decimal) -> Decimal:
    """Kubernetes cores -> KAI millicores."""
    return cores * 1000


def memory_to_kai(num_bytes: Decimal) -> Decimal:
    """Kubernetes bytes -> KAI megabytes (10^6 bytes, not MiB)."""
    return num_bytes / Decimal(1_000_000)
