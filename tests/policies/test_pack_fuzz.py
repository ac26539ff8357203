"""A few hundred seeded hostile mutations through the real pack process (issue 12's bar).

``make fuzz`` runs the same driver with thousands (``tests/policies/pack_fuzz.py``).
"""

from __future__ import annotations

from tests.policies.pack_fuzz import CALL_DEADLINE_S, Mutator, manifest_seeds, plan_seeds, run

SUITE_MUTATIONS = 30 * len(Mutator.KINDS)
SUITE_SEED = 12


def test_hostile_mutations_never_crash_hang_or_pass_unnoticed() -> None:
    figures = run(SUITE_MUTATIONS, SUITE_SEED, manifest_seeds() + plan_seeds())
    print(figures.summary())
    assert figures.by_kind == {kind: 30 for kind in Mutator.KINDS}
    assert not figures.crashes, figures.crashes
    assert not figures.hangs and figures.max_call_s < CALL_DEADLINE_S, figures.hangs
    assert figures.invalid > 50 and not figures.missed, figures.missed
    assert not figures.leaked, figures.leaked
    assert not figures.internal_errors, figures.internal_errors
    # Findings in the user's words: YAML/JSON type names, no Python type or exception names.
    assert not figures.python_words, sorted(set(figures.python_words))[:10]
