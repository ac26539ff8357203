"""The one Go-duration parser against cases of Go's own ``time.ParseDuration`` tests
(golang/go ``src/time/time_test.go``: ``parseDurationTests`` and ``parseDurationErrorTests``)."""

from __future__ import annotations

import pytest
from gpu_batch_policy.primitives.go_duration import parse_go_duration


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("0", 0.0),  # simple
        ("5s", 5.0),
        ("1478s", 1478.0),
        ("-5s", -5.0),  # sign
        ("+5s", 5.0),
        ("-0", 0.0),
        ("5.0s", 5.0),  # decimal
        ("5.6s", 5.6),
        ("5.s", 5.0),
        (".5s", 0.5),
        ("10ns", 10e-9),  # units
        ("11us", 11e-6),
        ("12\u00b5s", 12e-6),
        ("12\u03bcs", 12e-6),
        ("13ms", 13e-3),
        ("15m", 900.0),
        ("16h", 57600.0),
        ("3h30m", 12600.0),  # composite
        ("10.5s4m", 250.5),
        ("-2m3.4s", -123.4),
        ("1h2m3s4ms5us6ns", 3723.004005006),
        ("39h9m14.425s", 140954.425),
    ],
)
def test_what_go_parses(text: str, seconds: float) -> None:
    assert parse_go_duration(text) == pytest.approx(seconds, abs=1e-12)


@pytest.mark.parametrize("text", ["", "3", "-", "s", ".", "-.", ".s", "+.s", "1d", "1h 30m", "1.5.s"])
def test_what_go_refuses(text: str) -> None:
    assert parse_go_duration(text) is None


def test_only_strings_are_durations() -> None:
    assert parse_go_duration(5) is None and parse_go_duration(None) is None
