"""Kubernetes resource quantities in stack config, parsed by the project's one quantity parser.

Why not plain strings: a quota such as ``10000Gi`` is compared (lendingLimit <= nominalQuota)
and summed, and a typo (``64GB``, ``1.5.3``, ``1_000``, ``1e3m``) must be a config error before
deploy, not a ClusterQueue the API server rejects after the operators are installed.  The parser
is the policy pack's (``policies/gpu_batch_policy/primitives/quantity.py``: the API server's own grammar,
with its clamping), so the program and the pack never disagree on what a quantity is.

Accepted in YAML: a string only (``"16"``, ``"500m"``, ``64Gi``), the way Kubernetes itself
prints quantities.  A bare YAML number is refused rather than converted: ``0.5`` is a float that
the Kueue CRDs' ``x-kubernetes-int-or-string`` fields do not accept (the Kubernetes spelling of
half a CPU is ``500m``), and one quoting rule for every quantity is easier to review than
"integers may be bare".  The string is kept exactly as written.
"""

from __future__ import annotations

import sys
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Any

from pydantic import PlainValidator, WithJsonSchema

POLICIES_DIR = Path(__file__).resolve().parents[1] / "policies"
if str(POLICIES_DIR) not in sys.path:  # the pack's package, as preview/report/ imports it
    sys.path.insert(0, str(POLICIES_DIR))

from gpu_batch_policy.primitives.quantity import QuantityError, parse_quantity  # noqa: E402


def _parse(value: Any) -> str:
    """The value as written if it is a valid, non-negative quantity string; else a ``ValueError``."""
    if not isinstance(value, str):
        shown = f"'{value}'" if isinstance(value, int) and not isinstance(value, bool) else "'500m'"
        raise ValueError(
            f"expected a Kubernetes quantity as a quoted string, e.g. {shown}, '500m', '64Gi' "
            "(half a CPU is '500m', not 0.5)"
        )
    if value != value.strip():
        raise ValueError("expected a Kubernetes quantity without surrounding spaces")
    try:
        amount = parse_quantity(value)
    except QuantityError:
        raise ValueError(
            "expected a Kubernetes quantity such as '16', '500m', '64Gi' or '1e3' "
            "(suffixes: m, k, M, G, T, P, E, Ki, Mi, Gi, Ti, Pi, Ei)"
        ) from None
    if amount < 0:
        raise ValueError("expected a non-negative quantity")
    return value


Quantity = Annotated[
    str,
    PlainValidator(_parse),
    WithJsonSchema({"type": "string", "description": "a Kubernetes quantity"}),
]
"""A non-negative Kubernetes quantity string, kept exactly as written (``"10000"``, ``"64Gi"``)."""


def amount(value: str) -> Decimal:
    """The exact amount of a validated quantity (``"500m"`` -> ``Decimal("0.5")``)."""
    return parse_quantity(value)


def times(value: str, factor: int) -> str:
    """``value`` x ``factor`` in ``value``'s own suffix (``"3000Gi"`` x 2 -> ``"6000Gi"``); exponent
    forms (``"1e3"``) become the plain amount.  Exact: quantities are decimals, never floats."""
    number = value.rstrip("kMGTPEimu")
    suffix = value[len(number) :]
    if suffix and all(c.isdigit() or c == "." for c in number) and number:
        product = Decimal(number) * factor
        return f"{product.normalize():f}{suffix}"
    return f"{(amount(value) * factor).normalize():f}"
