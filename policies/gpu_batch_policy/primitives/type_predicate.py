"""A resource policy's type predicate: which resource types its ``validate`` can report on.

Why: pulumi-policy's servicer calls every resource policy with every resource, though most
policies judge a few types and return at once for the rest.  A policy built by
``rules/kit/builders.py`` ``resource_policy`` carries the same predicate its ``validate`` tests
first, and the pack's patched ``Analyze`` (``runtime/sdk_speedups.py``) skips the calls it
refuses.  Kept here, below both, so the rules layer need not import the runtime.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

_Policy = TypeVar("_Policy")
TypePredicate = Callable[[str], bool]

# The attribute the predicate is kept in, on the pulumi-policy policy object.
_ATTRIBUTE = "gpu_batch_judges_type"


def judges_only(policy: _Policy, judges_type: TypePredicate) -> _Policy:
    """Mark ``policy``, whose ``validate`` returns, reading and reporting nothing, for every
    resource type ``judges_type`` refuses; returns the policy."""
    setattr(policy, _ATTRIBUTE, judges_type)
    return policy


def type_predicate(policy: object) -> TypePredicate | None:
    """The predicate :func:`judges_only` marked ``policy`` with, if any."""
    predicate: TypePredicate | None = getattr(policy, _ATTRIBUTE, None)
    return predicate
