"""Types named in the user's words (YAML/JSON), at the places findings name them."""

from __future__ import annotations

from decimal import Decimal

import pytest
from gpu_batch_policy.facts.model.helm import parse_yaml_value
from gpu_batch_policy.primitives.quantity import QuantityError, parse_quantity
from gpu_batch_policy.primitives.values import Unknown
from gpu_batch_policy.primitives.words import type_word


def test_type_words() -> None:
    values = [None, True, 3, 2.5, Decimal("1"), "x", {"a": 1}, [1], (1,), Unknown("spec"), object()]
    assert [type_word(v) for v in values] == [
        "null",
        "boolean",
        "number",
        "number",
        "number",
        "string",
        "mapping",
        "list",
        "list",
        "value unknown until apply",
        "value",
    ]


def test_a_values_yaml_that_is_not_a_string_is_named_in_yaml_words() -> None:
    assert parse_yaml_value(42).error == "expected a YAML string, got a number"
    assert parse_yaml_value(["a"]).error == "expected a YAML string, got a list"


def test_a_quantity_of_the_wrong_type_is_named_in_yaml_words() -> None:
    with pytest.raises(QuantityError, match="got a null"):
        parse_quantity(None)  # type: ignore[arg-type]  # what a program may send
