"""The quantity parser follows kubernetes/apimachinery ``pkg/api/resource/quantity.go`` exactly."""

from __future__ import annotations

from decimal import Decimal

import pytest
from gpu_batch_policy.primitives.quantity import (
    MAX_AMOUNT,
    NANO,
    QuantityError,
    parse_fraction,
    parse_int_or_string,
    parse_quantity,
)

from stacks.quantity import amount


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("0", "0"),
        ("16", "16"),
        ("500m", "0.5"),
        ("1.5Gi", "1610612736"),
        ("64Gi", "68719476736"),
        ("1e3", "1000"),
        ("1E+3", "1000"),
        ("1e-3", "0.001"),
        ("1k", "1000"),
        ("10Ki", "10240"),
        ("-5m", "-0.005"),
        ("+", "0"),  # upstream's Zeroes loop reads a lone sign as zero
        (".", "0"),
        ("1.", "1"),
        (".5", "0.5"),
        ("100n", "0.0000001"),
    ],
)
def test_valid_quantities_have_the_api_servers_amount(text: str, expected: str) -> None:
    assert parse_quantity(text) == Decimal(expected)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1e308", MAX_AMOUNT),  # ParseQuantity caps at maxAllowed (2^63 - 1)
        ("1E+999999999", MAX_AMOUNT),
        ("99999999999999999999", MAX_AMOUNT),
        ("8Ei", MAX_AMOUNT),
        ("-1e308", -MAX_AMOUNT),
        ("1e-300", NANO),  # non-zero amounts round *up* to one nano
        ("0.0001n", NANO),
        ("1" + "0" * 5000, MAX_AMOUNT),  # more digits than int() may parse: no ValueError
    ],
)
def test_out_of_range_amounts_are_clamped_like_the_api_server(text: str, expected: Decimal) -> None:
    assert parse_quantity(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "",
        "12 ",
        " 12",
        "1_000",
        "１２",
        "1e3m",
        "1e+3Gi",
        "NaN",
        "sNaN",
        "inf",
        "Infinity",
        "1e",
        "1Ee3",
        "1.2.3",
        "0x10",
        "64GB",
        "1mi",
        "1e99999999999",
        "1e+",
    ],
)
def test_anything_outside_the_grammar_is_an_error(text: str) -> None:
    with pytest.raises(QuantityError):
        parse_quantity(text)


@pytest.mark.parametrize("raw", [0.5, float("nan"), float("inf"), True, None, [1]])
def test_int_or_string_refuses_non_integer_numbers_and_other_types(raw: object) -> None:
    with pytest.raises(QuantityError):
        parse_int_or_string(raw)


def test_int_or_string_reads_integral_floats_and_clamps_huge_ones() -> None:
    assert parse_int_or_string(10.0) == 10
    assert parse_int_or_string(1e308) == MAX_AMOUNT


def test_arithmetic_on_extreme_valid_amounts_never_raises() -> None:
    big, tiny = parse_quantity("1e308"), parse_quantity("1e-300")
    assert big // tiny > 0 and (big + big) > big and big * 2 / tiny > 0


@pytest.mark.parametrize("text", ["NaN", "500m", "0.5Gi", " 0.5", "inf", ""])
def test_fractions_are_plain_decimal_numbers(text: str) -> None:
    with pytest.raises(QuantityError):
        parse_fraction(text)
    assert parse_fraction("0.5") == Decimal("0.5") and parse_fraction("5e-1") == Decimal("0.5")


def test_stack_config_uses_the_same_parser() -> None:
    assert amount("500m") == Decimal("0.5")
    with pytest.raises(QuantityError):
        amount("1e3m")
