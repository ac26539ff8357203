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
PositiveInt = Annotated[int, Field(ge=1)]
NonNegativeInt = Annotated[int, Field(ge=0)]


class ConfigModel(BaseModel):
    """Strict, frozen, camelCase-keyed model."""

    model_config = ConfigDict(
        extra="forbid",
        strict=True,
        frozen=True,
        alias_generator=to_camel,
        populate_by_name=False,
    )


def known_keys(model: type[BaseModel]) -> list[str]:
    """The keys a model accepts, as users write them."""
    return [field.alias or name for name, field in model.model_fields.items()]
