"""A reference the stack does not resolve, judged by the open world (``facts/open_world.py``).

Listed as external: fine.  A closed world, or a kind the stack holds: a violation with a "did you
mean".  Otherwise the advisory "cannot check: not in this stack", naming the config entry that
declares the object as living elsewhere (issue 11).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

from ...facts.model.base import Subject
from ...facts.open_world import CONFIG_HINT, World, external_entry
from .report import Reporter


def did_you_mean(name: str, candidates: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for the closest declared name, or nothing."""
    close = difflib.get_close_matches(name, sorted(set(candidates)), n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


def unresolved(
    world: World,
    reporter: Reporter,
    subject: Subject,
    ref: tuple[str, str, str | None],
    *,
    declared: Iterable[str],
    problem: str,
    fix: str,
) -> None:
    """Judge a reference the stack does not resolve: ``ref`` is (kind, name, namespace) and
    ``declared`` the names of the objects of that kind the stack holds (in the namespace that
    matters, for namespaced kinds).  Listed external: fine.  Closed world, or a kind the stack
    holds: a violation (with a "did you mean").  Otherwise: advisory "not in this stack"."""
    kind, name, namespace = ref
    if world.is_external(kind, name, namespace):
        return
    names = list(declared)
    if world.closed or names:
        reporter.violation(subject, problem + did_you_mean(name, names), fix)
        return
    shown = f"{namespace}/{name}" if namespace else name
    reporter.not_in_stack(
        subject,
        f"{kind} '{shown}' (this stack declares no {kind}; declare it here, or list "
        f"{external_entry(kind, name, namespace)} under externalObjects in {CONFIG_HINT})",
    )
