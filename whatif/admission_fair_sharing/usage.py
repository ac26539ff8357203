"""LocalQueue usage arithmetic, ported from Kueue v0.19.2 ``pkg/util/admissionfairsharing``.

Upstream (kubernetes-sigs/kueue@v0.19.2, ``pkg/util/admissionfairsharing/
admission_fair_sharing.go``):
- ``calculateAlphaRate(sampling, halfLifeTime)``: ``1 - 0.5^(sampling/halfLifeTime)``, 0 when the
  half-life is 0;
- ``CalculateEntryPenalty``: the workload's total requests times ``alpha(usageSamplingInterval,
  usageHalfLifeTime)``;
- ``CalculateDecayedConsumed(old, new, elapsed, halfLifeTime)``: ``old*(1-alpha) + new*alpha``
  with ``alpha = alpha(elapsed, halfLifeTime)``: the exponentially decayed consumed resources;
- ``CalculateUsage(consumed, penalty, lqWeight, resWeights)``: the sum over resources of
  ``weight * (consumed + penalty)`` (weight 1 when the resource has none), divided by the
  LocalQueue's weight; ``+Inf`` when that weight is not positive (sorted last, never NaN).

Quantities are decimals in the resource's base unit (cores, bytes, GPUs), as Kueue's
``resource.Quantity`` holds them.  ``pkg/util/resource/resource.go`` ``MulByFloat`` multiplies
by the float's shortest decimal form (``strconv.FormatFloat(f, 'f', -1, 64)``) and rounds down
to 9 decimal places (``mulByFloatScale``), so decayed usage reaches 0 and sub-milli
contributions accumulate; :func:`mul_by_float` does exactly that.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from decimal import ROUND_DOWN, Context, Decimal

Resources = dict[str, Decimal]  # resource name -> quantity in its base unit (a corev1.ResourceList)

_SCALE = Decimal("1e-9")  # mulByFloatScale = 9
_EXACT = Context(prec=80)  # inf.Dec multiplies exactly; 80 digits hold any product seen here


def alpha_rate(sampling: float, half_life: float) -> float:
    """``calculateAlphaRate``."""
    if half_life == 0:
        return 0.0
    return 1.0 - math.pow(0.5, sampling / half_life)


def mul_by_float(resources: Mapping[str, Decimal], factor: float) -> Resources:
    """``MulByFloat``: exact decimal product, rounded down to 9 decimal places."""
    if not math.isfinite(factor):
        raise ValueError(f"MulByFloat called with a non-finite factor: {factor}")
    f = Decimal(repr(factor))  # Python's repr is the shortest round-trip form, as Go's 'f', -1
    return {k: _EXACT.multiply(v, f).quantize(_SCALE, rounding=ROUND_DOWN) for k, v in resources.items()}


def merge_keep_sum(a: Mapping[str, Decimal], b: Mapping[str, Decimal]) -> Resources:
    """``MergeResourceListKeepSum``."""
    out = dict(a)
    for k, v in b.items():
        out[k] = out[k] + v if k in out else v
    return out


def entry_penalty(total_requests: Mapping[str, Decimal], sampling: float, half_life: float) -> Resources:
    """``CalculateEntryPenalty``."""
    return mul_by_float(total_requests, alpha_rate(sampling, half_life))


def decayed_consumed(
    old: Mapping[str, Decimal], new: Mapping[str, Decimal], elapsed: float, half_life: float
) -> Resources:
    """``CalculateDecayedConsumed``."""
    alpha = alpha_rate(elapsed, half_life)
    return merge_keep_sum(mul_by_float(old, 1 - alpha), mul_by_float(new, alpha))


def lq_usage(
    consumed: Mapping[str, Decimal],
    penalty: Mapping[str, Decimal],
    lq_weight: float,
    resource_weights: Mapping[str, float],
) -> float:
    """``CalculateUsage`` (resources in sorted order, as upstream, for a deterministic sum)."""
    merged = merge_keep_sum(consumed, penalty)
    usage = 0.0
    for name in sorted(merged):
        usage += resource_weights.get(name, 1.0) * float(merged[name])
    if lq_weight <= 0:
        return math.inf
    return usage / lq_weight
