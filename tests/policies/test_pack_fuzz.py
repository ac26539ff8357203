"""Seeded hostile mutations through the real pack process (issue 12's bar): every kind, every value.

``make fuzz`` runs the same driver with thousands (``tests/policies/pack_fuzz.py``, the kinds in
turn).  The suite runs :func:`covering_sample` instead of 30 random mutations of each kind: each
kind's hostile values are sent in turn, so the sample sends every kind and every hostile value of
it at least once (~60 mutations; the 240 random ones took 371 s on CI, two thirds of it in the 3,000
resource-group ClusterQueues).  What the sample gives up is the number of resources each value is
tried on; ``make fuzz`` keeps that.  The first test fails if the sample stops covering a kind or
a value, the second asserts that the pack really received each of them.
"""

from __future__ import annotations

from collections import Counter

from tests.policies.pack_fuzz import (
    CALL_DEADLINE_S,
    HOSTILE_CHART_VERSIONS,
    INVALID_FRACTIONS,
    INVALID_QUANTITIES,
    INVALID_VALUES_YAML,
    Mutator,
    covering_sample,
    manifest_seeds,
    plan_seeds,
    run,
)

SUITE_SEED = 12
EVERY_VALUE = {kind: set(range(len(values))) for kind, values in Mutator.VALUES.items()}


def test_the_suite_sample_holds_every_kind_as_often_as_it_has_hostile_values() -> None:
    sample = Counter(covering_sample())
    assert set(Mutator.VALUES) == set(Mutator.KINDS)
    assert set(sample) == set(Mutator.KINDS)
    assert all(sample[kind] >= len(Mutator.VALUES[kind]) for kind in Mutator.KINDS), sample


def test_hostile_mutations_never_crash_hang_or_pass_unnoticed() -> None:
    sample = covering_sample()
    figures = run(sample, SUITE_SEED, manifest_seeds() + plan_seeds())
    print(figures.summary())
    # Each kind was sent as planned (none fell back to `leaf` for want of a target), with every
    # one of its hostile values.
    assert figures.by_kind == Counter(sample)
    assert figures.values_by_kind == EVERY_VALUE
    assert not figures.crashes, figures.crashes
    assert not figures.hangs and figures.max_call_s < CALL_DEADLINE_S, figures.hangs
    # Every invalid quantity, fraction, values YAML and chart version got a finding on its resource.
    every_invalid = len(INVALID_QUANTITIES) + len(INVALID_FRACTIONS) + len(INVALID_VALUES_YAML)
    assert figures.invalid >= every_invalid + len(HOSTILE_CHART_VERSIONS) and not figures.missed, (
        figures.missed
    )
    assert figures.invalid_found == figures.invalid
    assert not figures.leaked, figures.leaked
    assert not figures.internal_errors, figures.internal_errors
    # Findings in the user's words: YAML/JSON type names, no Python type or exception names.
    assert not figures.python_words, sorted(set(figures.python_words))[:10]
