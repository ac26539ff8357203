"""The dispatchers' nominations, ported from Kueue's own tests.

kubernetes-sigs/kueue@v0.19.2 ``pkg/controller/workloaddispatcher/incrementaldispatcher_test.go``
``TestIncrementalDispatcherNominateWorkers`` (each case's name is kept; "advanceRoundTime" is the
next round: the batch after the ones already nominated) and ``cmd/kueue/main.go`` (the default
dispatcher).
"""

from __future__ import annotations

import pytest

from whatif.errors import NotModelledError, WhatIfError
from whatif.multikueue.dispatch import (
    ALL_AT_ONCE,
    INCREMENTAL,
    ROUND_SECONDS,
    Dispatcher,
    dispatcher_of,
    next_nominated,
    rounds,
)

INC = Dispatcher(INCREMENTAL)


@pytest.mark.parametrize(
    ("case", "remotes", "nominated", "dispatcher", "want"),
    [
        ("one remote", ["A"], [], INC, ["A"]),
        ("two remotes", ["B", "A"], [], INC, ["B", "A"]),
        ("three remotes", ["C", "B", "A"], [], INC, ["C", "B", "A"]),
        ("fifteen remotes", list("ONMLKJIHGFEDCBA"), [], INC, ["O", "N", "M"]),
        ("all already nominated (3)", ["C", "B", "A"], ["C", "B", "A"], INC, []),
        ("round expired, next set nominated", list("FEDCBA"), ["F", "E", "D"], INC, ["C", "B", "A"]),
        ("round expired, nominate all", list("HGFEDCBA"), list("HGFEDC"), INC, ["B", "A"]),
        ("no remotes", [], [], INC, []),
        ("stepSize=2, five remotes", list("EDCBA"), [], Dispatcher(INCREMENTAL, 2), ["E", "D"]),
        ("stepSize=2, round expired", list("EDCBA"), ["E", "D"], Dispatcher(INCREMENTAL, 2), ["C", "B"]),
        (
            "ordering gate off: three remotes",
            ["C", "B", "A"],
            [],
            Dispatcher(INCREMENTAL, 3, False),
            ["A", "B", "C"],
        ),
        (
            "ordering gate off: prior nomination retained, remainder alphabetical",
            list("FEDCBA"),
            ["F", "E", "D"],
            Dispatcher(INCREMENTAL, 3, False),
            ["A", "B", "C"],
        ),
    ],
)
def test_incremental_next_nominated(
    case: str, remotes: list[str], nominated: list[str], dispatcher: Dispatcher, want: list[str]
) -> None:
    assert next_nominated(nominated, remotes, dispatcher) == want, case


def test_config_gate_disabled_ignores_step_size() -> None:
    """ "config gate disabled — ignores stepSize=10, uses default 3"."""
    config = {"multiKueue": {"dispatcherName": INCREMENTAL, "incrementalDispatcherConfig": {"stepSize": 10}}}
    assert dispatcher_of(config, {"MultiKueueIncrementalDispatcherConfig": False}).step_size == 3
    assert dispatcher_of(config, {}).step_size == 10


def test_rounds_add_a_batch_every_five_minutes_and_all_at_once_is_one_round() -> None:
    assert rounds(list("EDCBA"), Dispatcher(INCREMENTAL, 2)) == [
        (0.0, ["E", "D"]),
        (ROUND_SECONDS, ["C", "B"]),
        (2 * ROUND_SECONDS, ["A"]),
    ]
    assert rounds(list("EDCBA"), Dispatcher()) == [(0.0, list("EDCBA"))]


def test_default_is_all_at_once_and_external_or_bad_settings_are_one_line() -> None:
    assert dispatcher_of(None, {}).name == ALL_AT_ONCE
    with pytest.raises(NotModelledError, match="external dispatcher"):
        dispatcher_of({"multiKueue": {"dispatcherName": "example.com/mine"}}, {})
    bad = {"multiKueue": {"dispatcherName": INCREMENTAL, "incrementalDispatcherConfig": {"stepSize": 0}}}
    with pytest.raises(WhatIfError, match=r"stepSize: got 0, expected an integer >= 1"):
        dispatcher_of(bad, {})
