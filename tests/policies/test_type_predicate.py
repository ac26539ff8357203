"""Every resource policy's type predicate says exactly when its ``validate`` can act.

The pack's patched ``Analyze`` (``runtime/sdk_speedups.py``) does not call a resource policy for a
type its predicate (``primitives/type_predicate.py``) refuses.  That gives the SDK's answer only if
``validate``, given such a resource, returns without reading a property and without reporting.
Checked for every resource policy in the registry, on one type token per branch of the view table
(``facts/model/__init__.py`` ``_view_factory``) plus tokens no branch knows; and each policy's
predicate accepts at least one of those tokens, so the list covers what the policies judge.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import pytest
from gpu_batch_policy.facts.model import _KUEUE_VIEWS, RAY_KINDS
from gpu_batch_policy.primitives.tokens import (
    GKE_CLUSTER,
    GKE_NODE_POOL,
    HELM_RELEASE,
    KAI_GROUP,
    KUEUE_GROUP,
    RAY_GROUP,
    type_token,
)
from gpu_batch_policy.primitives.type_predicate import type_predicate
from gpu_batch_policy.runtime.registry import ALL_POLICIES
from pulumi_policy import ResourceValidationArgs, ResourceValidationPolicy

TOKENS = [
    GKE_CLUSTER,
    GKE_NODE_POOL,
    HELM_RELEASE,
    "gcp:compute/network:Network",
    "pulumi:providers:kubernetes",
    *(type_token(f"{KUEUE_GROUP}/v1beta2", kind) for kind in _KUEUE_VIEWS),
    type_token(f"{KAI_GROUP}/v2", "Queue"),
    *(type_token(f"{RAY_GROUP}/v1", kind) for kind in RAY_KINDS),
    type_token("v1", "Namespace"),
    type_token("apps/v1", "Deployment"),
    type_token("batch/v1", "Job"),
    type_token("example.com/v1", "Widget"),
    "not-a-type-token",
]

RESOURCE_POLICIES = [p for p in ALL_POLICIES if isinstance(p, ResourceValidationPolicy)]


class _Untouchable(Mapping[str, Any]):
    """Properties that fail the test if a policy reads them."""

    def __getitem__(self, key: str) -> Any:
        raise AssertionError(f"read property {key!r}")

    def __iter__(self) -> Iterator[str]:
        raise AssertionError("listed the properties")

    def __len__(self) -> int:
        raise AssertionError("counted the properties")


def _refused(policy: ResourceValidationPolicy, token: str) -> None:
    no_options: Any = None  # never read for a refused type either
    urn = f"urn:pulumi:s::p::{token}::r"
    args = ResourceValidationArgs(token, _Untouchable(), urn, "r", no_options, None, {}, {})
    reports: list[Any] = []
    policy.validate(args, lambda *a, **k: reports.append((a, k)))
    assert not reports, f"{policy.name} reported on a {token} its predicate refuses"


def test_the_pack_marks_its_resource_policies() -> None:
    marked = [p for p in RESOURCE_POLICIES if type_predicate(p) is not None]
    assert len(marked) > len(RESOURCE_POLICIES) // 2  # the factory's policies: all of them today


@pytest.mark.parametrize("policy", [p for p in RESOURCE_POLICIES if type_predicate(p)], ids=lambda p: p.name)
def test_a_refused_type_is_neither_read_nor_reported(policy: ResourceValidationPolicy) -> None:
    predicate = type_predicate(policy)
    assert predicate is not None
    accepted = [t for t in TOKENS if predicate(t)]
    assert accepted, f"{policy.name}: no token in TOKENS is one it judges; add its view's token"
    for token in TOKENS:
        if not predicate(token):
            _refused(policy, token)
