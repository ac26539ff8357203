"""The alert evaluator's ``rate`` / ``increase`` against Prometheus' own expectations.

Every case is an ``eval instant`` of prometheus/prometheus
``promql/promqltest/testdata/functions.test`` (@ 0043f1e4), its ``load`` written as samples; the
expected numbers are upstream's.  They pin the parts of ``extrapolatedRate`` an alert depends on:
the left-open range, counter resets, extrapolation to the range boundaries, the half-interval
cap for a series that starts or ends inside the range, and the zero cut-off on the left.
"""

from __future__ import annotations

import pytest

from tests.alerts.promql_eval import Evaluator, Series

MINUTE = 60.0


def load(name: str, labels: dict[str, str], values: list[float], step_minutes: float = 5) -> Series:
    """One ``load <step>`` line: ``values`` at 0, step, 2*step, ..."""
    step = step_minutes * MINUTE
    return Series({"__name__": name, **labels}, [(i * step, v) for i, v in enumerate(values)])


def expand(start: float, inc: float, times: int) -> list[float]:
    """promqltest's ``a+bxN``: N + 1 values."""
    return [start + inc * i for i in range(times + 1)]


def result(evaluator: Evaluator, query: str, minutes: float) -> dict[str, float]:
    out = evaluator.instant(query, minutes * MINUTE)
    assert isinstance(out, dict)
    return {",".join(f"{k}={v}" for k, v in labels): value for labels, value in out.items()}


INCREASE = Evaluator(
    [
        load("http_requests_total", {"path": "/foo"}, expand(0, 10, 10)),
        load("http_requests_total", {"path": "/bar"}, expand(0, 18, 5) + expand(0, 18, 5)),
        load("http_requests_total", {"path": "/dings"}, expand(10, 10, 10)),
        load("http_requests_total", {"path": "/bumms"}, expand(1, 10, 10)),
    ]
)


@pytest.mark.parametrize(
    ("window", "expected"),
    [
        ("50m", {"/foo": 100, "/bar": 160, "/dings": 100, "/bumms": 100}),
        # The range reaches before the first sample: extrapolate by half an interval, but never
        # below a counter's zero ("dings" would reach 0 at -5m, "bumms" at -30s).
        ("100m", {"/foo": 100, "/bar": 162, "/dings": 105, "/bumms": 101}),
    ],
)
def test_increase_extrapolates_like_prometheus(window: str, expected: dict[str, float]) -> None:
    got = result(INCREASE, f"increase(http_requests_total[{window}])", 50)
    assert got == pytest.approx({f"path={k}": v for k, v in expected.items()})


def test_a_counter_reset_counts_from_zero() -> None:
    evaluator = Evaluator([load("http_requests_total", {"path": "/foo"}, [0, 1, 2, 3, 2, 3, 4])])
    assert result(evaluator, "increase(http_requests_total[30m])", 30) == pytest.approx({"path=/foo": 7})


def test_rate_over_a_reset_in_the_middle_and_at_the_end() -> None:
    evaluator = Evaluator(
        [
            load("testcounter_reset_middle_total", {}, expand(0, 27, 4) + expand(0, 27, 5)),
            load("testcounter_reset_end_total", {}, [*expand(0, 10, 9), 0, 10]),
        ]
    )
    assert result(evaluator, "rate(testcounter_reset_middle_total[50m])", 50) == pytest.approx({"": 0.08})
    # One sample in (45m, 50m]: no output; two across the reset: 0.
    assert result(evaluator, "rate(testcounter_reset_end_total[5m])", 50) == {}
    assert result(evaluator, "rate(testcounter_reset_end_total[6m])", 50) == pytest.approx({"": 0})


def test_rate_is_per_second() -> None:
    evaluator = Evaluator([load("calculate_rate_window_total", {}, expand(0, 80, 10))])
    got = result(evaluator, "rate(calculate_rate_window_total[50m])", 50)
    assert got == pytest.approx({"": 0.26666666666666666})


@pytest.mark.parametrize(
    ("minutes", "expected"),
    [
        # Zero cut-off on the left until half a sampling interval (2m), then half an interval.
        (10, {"0m": 0.5, "1m": 0.55, "2m": 0.6, "3m": 0.6, "4m": 0.6, "5m": 0.6}),
        (50, {"0m": 0.6, "1m": 0.6, "2m": 0.6, "3m": 0.6, "4m": 0.6, "5m": 0.6}),
    ],
)
def test_zero_cutoff_of_the_left_extrapolation(minutes: float, expected: dict[str, float]) -> None:
    evaluator = Evaluator(
        [
            load("testcounter_zero_cutoff_total", {"start": f"{m}m"}, expand(60 * m, 240, 10), step_minutes=4)
            for m in range(6)
        ]
    )
    got = result(evaluator, "rate(testcounter_zero_cutoff_total[20m])", minutes)
    assert got == pytest.approx({f"start={k}": v for k, v in expected.items()})


def test_offset_is_not_evaluated_rather_than_evaluated_wrongly() -> None:
    with pytest.raises(NotImplementedError):
        INCREASE.instant("rate(http_requests_total[10m] offset 5m)", 50 * MINUTE)
