"""Quantities as exact integers, the way Kueue's ``resources.Amount`` holds them.

Kueue converts every request and quota to int64 (``pkg/resources/requests.go``: CPU in milli-units,
other resources in units, rounded up).  Here every resource is held in milli-units, which keeps
CPU exact and the others exact up to 1/1000, and makes comparison identical.
"""

from __future__ import annotations

from decimal import ROUND_CEILING, Decimal

SCALE = 1000


def to_amount(value: Decimal) -> int:
    return int((value * SCALE).to_integral_value(rounding=ROUND_CEILING))


def to_decimal(amount: int) -> Decimal:
    return Decimal(amount) / SCALE


def figure(value: float) -> float | int:
    """A number as the JSON output writes it: a whole number as an int, else 3 decimals."""
    return int(value) if float(value).is_integer() else round(value, 3)


def fmt_amount(amount: int) -> str:
    value = to_decimal(amount).normalize()
    return f"{value:f}"
