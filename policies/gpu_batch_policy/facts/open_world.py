"""Open world for references: a stack may hold only part of a platform.

Platform teams split one cluster over several Pulumi stacks (a cluster stack, a tenants stack,
workloads from CI), and charts create objects the program never declares.  So a reference to an
object this stack does not hold is judged in three ways (issue 11):

* the stack holds **no** object of the referenced kind: it lives elsewhere; the finding is the
  advisory "cannot check: not in this stack", naming the object and the config key to declare it;
* the stack holds objects of that kind, but not the one named: most likely a typo, so the finding
  stays a violation, with a "did you mean" hint;
* the object is listed in the rule's ``externalObjects`` config: it exists (with unknown quota).

``closedWorld: true`` restores "everything must be declared here" (this repository's own stacks,
``policies/config.<stack>.json``).  Objects a chart renders into the model count as held: every
lookup here goes through ``StackModel``, which holds declared and rendered objects alike.

Pulumi policy config is per policy (``--policy-pack-config`` maps a policy name to its
properties), so every rule that resolves references accepts the same two properties, from the
one schema below; a split-stack user pastes the same block under each of those rules.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from pulumi_policy import PolicyConfigSchema

# Kinds a rule of the pack resolves by name; "Release" is a Helm install, named by its chart.
EXTERNAL_KINDS = (
    "ClusterQueue",
    "Cohort",
    "LocalQueue",
    "ResourceFlavor",
    "Topology",
    "AdmissionCheck",
    "ProvisioningRequestConfig",
    "WorkloadPriorityClass",
    "PriorityClass",
    "Queue",
    "Release",
    # Network objects another team owns (Shared VPC, organisation-managed networks): a Cloud NAT
    # (gcp.compute.RouterNat) and a firewall rule (gcp.compute.Firewall), by their GCP names.
    "RouterNat",
    "Firewall",
    # GKE multi-networking: a Network's parameters object (another stack may own the networks).
    "GKENetworkParamSet",
)
CONFIG_HINT = "policies/config.<stack>.json"

WORLD_PROPERTIES: dict[str, dict[str, Any]] = {
    "closedWorld": {
        "type": "boolean",
        "default": False,
        "description": "Every referenced object must be declared in this stack (no 'not in this stack').",
    },
    "externalObjects": {
        "type": "array",
        "default": [],
        "description": "Objects another stack (or an install outside Pulumi) owns; they count as existing.",
        "items": {
            "type": "object",
            "properties": {
                "kind": {"type": "string", "enum": list(EXTERNAL_KINDS)},
                "name": {"type": "string", "minLength": 1},
                "namespace": {"type": "string"},
            },
            "required": ["kind", "name"],
            "additionalProperties": False,
        },
    },
}


def world_schema(
    extra: Mapping[str, dict[str, Any]] | None = None, *, closed_world: bool = True
) -> PolicyConfigSchema:
    """The config schema of a rule that resolves references (plus its own ``extra`` properties).
    ``closed_world=False`` for a rule on which ``closedWorld`` would mean nothing, so the schema
    rejects it instead of silently ignoring it."""
    properties = dict(WORLD_PROPERTIES)
    if not closed_world:
        del properties["closedWorld"]
    return PolicyConfigSchema(properties={**properties, **(extra or {})})


@dataclass(frozen=True)
class World:
    """What one rule run may assume about objects outside the stack."""

    closed: bool = False
    external: frozenset[tuple[str, str, str]] = frozenset()  # (kind, namespace or "", name)

    @classmethod
    def from_config(cls, config: Mapping[str, Any] | None) -> World:
        """Read the two keys; entries the schema would reject are ignored here (the engine and
        the offline preview validate the config against the schema before any rule runs)."""
        config = config or {}
        entries = config.get("externalObjects") or []
        external: set[tuple[str, str, str]] = set()
        if isinstance(entries, Iterable) and not isinstance(entries, (str, bytes, Mapping)):
            for entry in entries:
                if isinstance(entry, Mapping) and isinstance(entry.get("kind"), str):
                    name = entry.get("name")
                    namespace = entry.get("namespace") or ""
                    if isinstance(name, str) and isinstance(namespace, str):
                        external.add((entry["kind"], namespace, name))
        return cls(closed=config.get("closedWorld") is True, external=frozenset(external))

    def is_external(self, kind: str, name: str, namespace: str | None = None) -> bool:
        """Listed in ``externalObjects`` (a namespaced kind matches its namespace, or an entry
        without one)."""
        return (kind, namespace or "", name) in self.external or (kind, "", name) in self.external

    def has_kind(self, kind: str) -> bool:
        """Any ``externalObjects`` entry of ``kind`` (for objects matched by what they do, not by
        a name a resource refers to: a NAT or firewall rule owned by the network's team)."""
        return any(entry[0] == kind for entry in self.external)

    def has_install(self, chart: str) -> bool:
        """A Helm install of ``chart`` that another stack owns (``{kind: Release, name: <chart>}``)."""
        return self.is_external("Release", chart)


def external_entry(kind: str, name: str, namespace: str | None = None) -> str:
    """The ``externalObjects`` entry that declares this object as living elsewhere."""
    where = f', "namespace": "{namespace}"' if namespace else ""
    return f'{{"kind": "{kind}"{where}, "name": "{name}"}}'
