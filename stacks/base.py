"""The base of every stack-config model: camelCase keys, unknown keys refused, no coercion.

Stack files are YAML that users write by hand, so a typo (``maxNode``) must be an error rather
than a silently ignored key, and ``"10"`` where a number belongs must be reported rather than
quietly converted: nothing a user wrote is dropped or "fixed".
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints
from pydantic.alias_generators import to_camel

from stacks.errors import pattern

NonEmptyStr = Annotated[str, StringConstraints(min_length=1)]
# Kubernetes object names (RFC 1123 label): what namespaces, queues and pools are called.
DnsLabel = Annotated[
    str,
    StringConstraints(
        min_length=1,
        max_length=63,
        pattern=pattern(
            r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$",
            "a lowercase DNS label (a-z, 0-9 and '-', starting and ending alphanumeric)",
        ),
    ),
]
# Every count and number of seconds the stack writes into a Kubernetes object is an int32 there
# (replicas, ttlSecondsAfterFinished, Kueue backoffLimitCount/backoffBaseSeconds, KAI and Kueue
# priorities: kueue.md §3-§5, kai-kuberay-skypilot.md §1.1), so a larger value is refused here
# instead of by the API server after the operators are installed.
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
Int32 = Annotated[int, Field(ge=INT32_MIN, le=INT32_MAX)]
PositiveInt = Annotated[int, Field(ge=1, le=INT32_MAX)]
NonNegativeInt = Annotated[int, Field(ge=0, le=INT32_MAX)]
# GKE's node limit per cluster (65,000 nodes for the largest supported clusters; "Plan for large
# GKE clusters", https://cloud.google.com/kubernetes-engine/docs/concepts/planning-large-clusters):
# no pool, and no pool's autoscaling bound, can be larger.
GKE_MAX_NODES = 65_000
NodeCount = Annotated[int, Field(ge=0, le=GKE_MAX_NODES)]
PositiveNodeCount = Annotated[int, Field(ge=1, le=GKE_MAX_NODES)]


class ConfigModel(BaseModel):
    """Strict, frozen, camelCase-keyed model."""

    model_config = ConfigDict(
        extra="forbid",
        strict=True,
        frozen=True,
        alias_generator=to_camel,
        populate_by_name=False,
        # YAML's .nan and .inf are floats too; no quota, weight or fraction means them.
        allow_inf_nan=False,
    )


def known_keys(model: type[BaseModel]) -> list[str]:
    """The keys a model accepts, as users write them."""
    return [field.alias or name for name, field in model.model_fields.items()]
