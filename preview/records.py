"""What the offline preview records about each resource registration.

The recorded form is deliberately the *wire* form the Pulumi engine itself sees: property maps
are the protobuf ``Struct`` a ``RegisterResource`` call carries, turned into plain JSON-like
Python values.  Unknown values therefore stay the engine's sentinel strings and secrets stay
wrapped in the engine's secret signature.  Keeping that form means the same records can be
replayed, unchanged, to a policy pack over the analyzer protocol (exactly what
``pulumi preview --policy-pack`` sends) and only the human-facing outputs (plan.json, the
rendered manifests, the console tree) decide how to display unknowns and secrets.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from gpu_batch_policy.facts.schema.markers import SECRET_DISPLAY, UNKNOWN_DISPLAY
from gpu_batch_policy.primitives.bounded import BoundedCache
from pulumi.runtime import rpc

# The engine's sentinel for "a value not known until the resource is created".  The SDK uses
# this one string for every unknown it serialises; the analyzer protocol has typed variants
# (number, bool, ...) but accepts this one for all of them.
UNKNOWN_SENTINEL: str = rpc.UNKNOWN
# The key and value that mark a secret in a wire property map: {SIG_KEY: SECRET_SIG, "value": v}.
SIG_KEY: str = rpc._special_sig_key
SECRET_SIG: str = rpc._special_secret_sig


@dataclass(frozen=True)
class RecordedResource:
    """One ``RegisterResource`` call as the engine would have received it."""

    urn: str
    type: str
    name: str
    parent: str
    # Provider reference "<provider urn>::<id>", or "" for the default provider.
    provider: str
    custom: bool
    inputs: dict[str, Any]
    # The state the mocks returned: the planned outputs AnalyzeStack sees.
    outputs: dict[str, Any]
    dependencies: list[str] = field(default_factory=list)
    property_dependencies: dict[str, list[str]] = field(default_factory=dict)
    # The `protect` resource option: the engine refuses to delete a protected resource.
    protect: bool = False
    # The `retainOnDelete` resource option: deleting (or replacing) the resource leaves the object
    # in the cluster; the engine only forgets it (Pulumi docs, resource option ``retainOnDelete``).
    retain_on_delete: bool = False
    # The `ignoreChanges` resource option: input paths the engine keeps from the old state on an
    # update, so a change there neither updates nor replaces the resource.
    ignore_changes: list[str] = field(default_factory=list)
    # The `replaceOnChanges` / `deleteBeforeReplace` resource options: a change under one of these
    # paths replaces the resource, deleting the old object first.
    replace_on_changes: list[str] = field(default_factory=list)
    delete_before_replace: bool = False
    # The serialised protobuf ``Struct``s the registration carried (inputs) and the mocks answered
    # (outputs), when recorded from a program: the analyzer sends them as they are instead of
    # converting ``inputs``/``outputs`` back (the same values; ``json_format.ParseDict`` was most of
    # the client's work).  Empty for records built by hand.
    wire_inputs: bytes = field(default=b"", compare=False, repr=False)
    wire_outputs: bytes = field(default=b"", compare=False, repr=False)


def is_secret(value: Any) -> bool:
    """Whether ``value`` is a wire-form secret wrapper."""
    return isinstance(value, Mapping) and value.get(SIG_KEY) == SECRET_SIG


def is_unknown(value: Any) -> bool:
    """Whether ``value`` is the engine's unknown sentinel."""
    return isinstance(value, str) and value == UNKNOWN_SENTINEL


def for_display(value: Any) -> Any:
    """Turn a wire value into what humans read: unknowns and secrets as fixed markers.

    Integral floats (protobuf has only doubles) are shown as ints so ``10`` stays ``10``.
    """
    if is_unknown(value):
        return UNKNOWN_DISPLAY
    if is_secret(value):
        return SECRET_DISPLAY
    if isinstance(value, Mapping):
        return {str(k): for_display(v) for k, v in value.items()}
    if isinstance(value, list):
        return [for_display(v) for v in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def sorted_maps(value: Any) -> Any:
    """``value`` with every mapping's keys sorted; lists keep their order.

    The wire form's key order is not stable (protobuf ``Struct`` maps), so every file the
    preview writes sorts maps to stay byte-identical from run to run."""
    if isinstance(value, Mapping):
        return {key: sorted_maps(value[key]) for key in sorted(value)}
    if isinstance(value, list):
        return [sorted_maps(item) for item in value]
    return value


# id(record) -> (record, its shown inputs); the record is kept so a reused id is never mistaken for it.
_SHOWN: BoundedCache[int, tuple[RecordedResource, dict[str, Any]]] = BoundedCache(16384)


def shown_inputs(resource: RecordedResource) -> dict[str, Any]:
    """``sorted_maps(for_display(resource.inputs))``, computed once per record.

    ``plan.json`` and ``manifests.yaml`` (three times: as written, with patches applied, and to
    find standalone patches) each showed every input afresh: four walks over a one-team stack's
    ~2 MB of CRD schemas.  The result is shared, so callers must not change it (those here copy
    what they change: ``preview.ssa_patches.merge``)."""
    known = _SHOWN.get(id(resource))
    if known is not None and known[0] is resource:
        return known[1]
    shown: dict[str, Any] = sorted_maps(for_display(resource.inputs))
    _SHOWN.put(id(resource), (resource, shown))
    return shown


def by_urn(resources: Iterable[RecordedResource]) -> list[RecordedResource]:
    """``resources`` in URN order: registration order depends on how the program's outputs
    resolve and which SDK executor thread registers first, a URN does not."""
    return sorted(resources, key=lambda r: r.urn)
