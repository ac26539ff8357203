"""The one Kubernetes quantity parser of the project (pack, stack config and preview alike).

Why our own: ``kubernetes.utils.quantity.parse_quantity`` is looser than the API server (it takes
``"12 "``, ``"1_000"``, full-width digits, ``"1e3m"`` as 1 and ``"1e+3Gi"``) and stricter in the
wrong place (``NaN``, ``1E+999999999`` and ``1e-300`` raise ``decimal`` errors from inside the
rules' arithmetic).  This module follows the Go implementation exactly instead:

* the grammar is ``parseQuantityString`` in kubernetes/apimachinery
  ``pkg/api/resource/quantity.go`` (tag v0.34.1): an optional sign, ASCII digits, an optional
  ``.`` and more digits, then a suffix made of the characters ``eEinumkKMGTP``, an optional sign
  and digits — nothing else (no spaces, no underscores, no other digits).  ``"+"``, ``"-"``,
  ``"."`` and ``"1."`` parse (as upstream does);
* the suffix is read by ``suffixHandler.interpret`` (``pkg/api/resource/suffix.go``): a decimal
  SI suffix (``n u m "" k M G T P E``), a binary one (``Ki Mi Gi Ti Pi Ei``) or ``e``/``E``
  followed by a base-10 integer (``strconv.ParseInt``, so ``e+3`` and ``e-3`` too);
* ``ParseQuantity`` then rounds a non-zero amount *up* to the nearest nano (``inf.RoundUp``: "if
  you want some resources, you should get some resources") and caps its magnitude at
  ``maxAllowed`` = 2^63 - 1 (the int64 limit it keeps amounts in), so ``1e308`` is stored as
  9223372036854775807 and ``1e-300`` as ``1n``.  This parser returns the same clamped amount.

One deliberate difference: upstream casts the decimal exponent to int32 (``int32(parsed)``), so an
exponent outside int32 wraps to an arbitrary one; here it is an out-of-range error.

Every amount returned is a finite ``Decimal`` with at most 19 integer and 9 fractional digits, so
sums, differences and products of a few of them stay exact within :data:`ARITHMETIC` and nothing
in a rule's arithmetic can raise ``InvalidOperation``/``Overflow``/``DivisionImpossible``.
"""

from __future__ import annotations

import math
import re
from decimal import ROUND_HALF_EVEN, ROUND_UP, Context, Decimal, DivisionByZero, InvalidOperation
from functools import lru_cache
from typing import Any

from .words import type_word

# ParseQuantity's cap (quantity.go ``maxAllowed = infDecAmount{inf.NewDec((1<<63)-1, 0)}``).
MAX_AMOUNT = Decimal(2**63 - 1)
# ParseQuantity rounds up to ``Nano`` (scale 9).
NANO = Decimal("1e-9")
_INT32 = 2**31

# The whole of parseQuantityString as one expression: sign, numerator, denominator, and the suffix
# loop (characters of "eEinumkKMGTP", then an optional sign, then digits).  [0-9] is ASCII only.
_GRAMMAR = re.compile(r"([+-]?)([0-9]*)(?:\.([0-9]*))?([eEinumkKMGTP]*[+-]?[0-9]*)")
_DECIMAL_SUFFIXES = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY_SUFFIXES = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_EXPONENT = re.compile(r"[eE]([+-]?[0-9]+)")

# The decimal context rules compute in (builders.py runs every rule inside it).  Amounts from
# this module need 28 digits; 40 leaves room for sums of thousands of them and for ratios.
# Division by zero and invalid operations stay trapped: they are bugs in a rule, and the rule
# guard reports them instead of returning a silent NaN or Infinity.
ARITHMETIC = Context(
    prec=40,
    rounding=ROUND_HALF_EVEN,
    Emax=999_999,
    Emin=-999_999,
    traps=[DivisionByZero, InvalidOperation],
)

SHOWN_CHARS = 40


class QuantityError(ValueError):
    """Not a quantity the API server accepts; the message says why in a few words."""


def shown(raw: Any) -> str:
    """``raw`` as a message quotes it: ``repr``, cut to :data:`SHOWN_CHARS` characters."""
    text = repr(raw)
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 3] + "..."


def _suffix(suffix: str) -> tuple[int, int]:
    """(base, exponent) of a suffix, as ``suffixHandler.interpret`` reads it."""
    if suffix in _DECIMAL_SUFFIXES:
        return 10, _DECIMAL_SUFFIXES[suffix]
    if suffix in _BINARY_SUFFIXES:
        return 2, _BINARY_SUFFIXES[suffix]
    match = _EXPONENT.fullmatch(suffix)
    if match is None:
        raise QuantityError(f"unknown suffix {suffix!r} (use m, k, M, G, T, P, E, Ki .. Ei or e<integer>)")
    exponent = int(match.group(1)) if len(match.group(1)) < 20 else _INT32  # huge: out of range below
    if not -_INT32 <= exponent < _INT32:
        raise QuantityError(f"exponent {match.group(1)} is out of range")
    return 10, exponent


def parse_quantity(text: str) -> Decimal:
    """The amount ``text`` stands for, clamped as the API server stores it; else QuantityError."""
    if not isinstance(text, str):
        raise QuantityError(f"expected a string, got a {type_word(text)}")
    return _parse(text)


@lru_cache(maxsize=4096)  # a plan repeats the same few spellings ("16Gi") thousands of times
def _parse(text: str) -> Decimal:
    if not text:
        raise QuantityError("empty")
    match = _GRAMMAR.fullmatch(text)
    if match is None:
        raise QuantityError(
            "not a Kubernetes quantity (sign, digits, optional fraction, suffix; nothing else)"
        )
    sign, num, denom, suffix = match.group(1), match.group(2), match.group(3) or "", match.group(4)
    base, exponent = _suffix(suffix)
    digits = (num + denom).lstrip("0")
    if not digits:
        return Decimal(0)
    exact = Context(prec=len(digits) + 40, rounding=ROUND_UP, Emax=999_999_999, Emin=-999_999_999, traps=[])
    if base == 10:
        shift = exponent - len(denom)
        integer_digits = len(digits) + shift  # the amount lies in [10^(n-1), 10^n)
        if integer_digits > 19:
            amount = MAX_AMOUNT
        elif integer_digits <= -9:
            amount = NANO
        else:
            amount = Decimal(digits).scaleb(shift, exact)
    else:
        amount = Decimal(digits).scaleb(-len(denom), exact) * Decimal(2**exponent)
    exponent_of = amount.as_tuple().exponent
    if isinstance(exponent_of, int) and exponent_of < -9:
        amount = amount.quantize(NANO, rounding=ROUND_UP, context=exact)
    elif isinstance(exponent_of, int) and exponent_of > 0:  # 1E+3 -> 1000, as a reader writes it
        amount = amount.quantize(Decimal(1), context=exact)
    amount = min(amount, MAX_AMOUNT)
    return -amount if sign == "-" else amount


def parse_int_or_string(raw: Any) -> Decimal:
    """An ``x-kubernetes-int-or-string`` quantity as it arrives on the wire (numbers are floats).

    A number must be an integer (the schema's ``integer``); its digits are then parsed like the
    string, as ``Quantity.UnmarshalJSON`` does.  NaN and infinities are no number at all.
    """
    if isinstance(raw, bool):
        raise QuantityError("expected a quantity, got a boolean")
    if isinstance(raw, int):
        return parse_quantity(str(raw))
    if isinstance(raw, float):
        if not math.isfinite(raw):
            raise QuantityError("not a finite number")
        if not raw.is_integer():
            raise QuantityError(
                "a number here must be an integer; write a fraction as a string such as '500m'"
            )
        return parse_quantity(f"{raw:.0f}")
    if isinstance(raw, str):
        return parse_quantity(raw)
    raise QuantityError(f"expected a quantity, got a {type_word(raw)}")


_DECIMAL_NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def parse_fraction(text: str) -> Decimal:
    """A plain decimal number such as KAI's ``gpu-fraction: "0.5"`` (NVIDIA/KAI-Scheduler
    ``docs/gpusharing/README.md`` at v0.17.0 writes fractions this way): digits, an optional
    fraction and exponent, no unit suffix; bounded and rounded like a quantity.  ``NaN``,
    ``inf`` and anything else is a QuantityError."""
    if not isinstance(text, str) or _DECIMAL_NUMBER.fullmatch(text) is None:
        raise QuantityError("not a decimal number such as '0.5'")
    return parse_quantity(text)
