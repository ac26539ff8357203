"""What `pulumi up` would do to a running stack: two recorded plans compared, resource by resource.

Why: a reviewer reads the pull request before anything runs.  Resources are matched by URN, as
the engine matches them.  Only in the new plan: **create**; only in the old: **delete**; in both
with different inputs: **replace** when a changed input is ForceNew for its type
(:mod:`preview.replacements`, which also keeps the new registration's ``ignoreChanges`` out, as
the engine does) or a custom resource's CRD refuses the update with a transition rule (the
object must be deleted and created again; ``immutable_changes``), else **update**.  Values unknown until apply compare as their marker, so an
input that stays unknown is not reported as changed.

A replaced or deleted resource the new plan marks ``protect`` is **blocking**: the engine refuses
to delete a protected resource, so the real `pulumi up` would fail (Pulumi docs, resource
option ``protect``).  A replaced node pool, Helm release, CustomResourceDefinition or Kueue/KAI
queue object is flagged with what goes down with it -- unless the plan marks it
``retainOnDelete``: then the engine only forgets the old object and the cluster keeps it (Pulumi
docs, resource option ``retainOnDelete``), which the change says instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from preview.replacements import CRD, HELM_RELEASE, NODE_POOL, immutable_changes, replacing_paths

QUEUE_KINDS: Final = ("ClusterQueue", "LocalQueue", "Cohort", "ResourceFlavor", "AdmissionCheck", "Queue")
# Kueue puts ``kueue.x-k8s.io/resource-in-use`` on these (kueue v0.19.2 apis/kueue/v1beta2/
# constants.go ResourceInUseFinalizerName) and removes it from a deleted ClusterQueue only once
# no workload reserves quota in it (pkg/controller/core/clusterqueue_controller.go Reconcile:
# ``r.cache.ClusterQueueEmpty``): deleting one with admitted work waits until Pulumi times out.
DRAINED_KINDS: Final = ("ClusterQueue", "LocalQueue")
DRAIN_PROCEDURE: Final = "docs/runbook.md#remove-a-queue-drain-it-first"

Action = Literal["create", "update", "replace", "delete"]


@dataclass(frozen=True)
class Change:
    action: Action
    urn: str
    type: str
    name: str
    # ForceNew paths that changed (replace), or the top-level inputs that changed (update).
    paths: tuple[str, ...] = ()
    protected: bool = False
    # The old object stays in the cluster when deleted or replaced (``retainOnDelete``).
    retained: bool = False

    @property
    def blocking(self) -> bool:
        """The engine refuses this: a protected resource would be deleted."""
        return self.protected and self.action in ("replace", "delete")

    @property
    def needs_drain(self) -> bool:
        """Deleting (or replacing) a Kueue queue that may hold admitted work: drain it first."""
        kind = self.type.rsplit(":", 1)[-1]
        return (
            self.action in ("replace", "delete")
            and self.type.startswith("kubernetes:kueue.x-k8s.io/")
            and kind in DRAINED_KINDS
        )

    @property
    def takes_down(self) -> str | None:
        """What a replacement or deletion takes down with the resource, for the reviewer."""
        if self.action not in ("replace", "delete") or self.retained:
            return None
        if self.type == CRD:
            return "every custom resource of its kind (the API server deletes them with their definition)"
        if self.type == NODE_POOL:
            return "every node of the pool and the pods running on them"
        if self.type == HELM_RELEASE:
            return "every object the release installs (CRDs in its templates take their custom resources)"
        kind = self.type.rsplit(":", 1)[-1]
        if self.type.startswith("kubernetes:") and kind in QUEUE_KINDS:
            return f"the {kind}: workloads admitted through it lose their admission or stay pending"
        return None


def _resources(plan: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    return {r["urn"]: r for r in plan.get("resources", []) if isinstance(r, Mapping) and "urn" in r}


def _changed_keys(old: Mapping[str, Any], new: Mapping[str, Any]) -> tuple[str, ...]:
    return tuple(sorted(k for k in old.keys() | new.keys() if old.get(k) != new.get(k)))


def diff_plans(base: Mapping[str, Any], head: Mapping[str, Any]) -> list[Change]:
    """Every change from ``base`` to ``head`` (plan.json documents), in URN order."""
    old, new = _resources(base), _resources(head)
    changes: list[Change] = []
    for urn in sorted(old.keys() | new.keys()):
        before, after = old.get(urn), new.get(urn)
        if before is None and after is not None:
            changes.append(Change("create", urn, after["type"], after["name"]))
        elif after is None and before is not None:
            changes.append(
                Change(
                    "delete",
                    urn,
                    before["type"],
                    before["name"],
                    protected=bool(before.get("protect")),
                    retained=bool(before.get("retainOnDelete")),
                )
            )
        elif before is not None and after is not None:
            old_in, new_in = before.get("inputs") or {}, after.get("inputs") or {}
            if old_in == new_in:
                continue
            protected = bool(after.get("protect") or before.get("protect"))
            forced = replacing_paths(after["type"], old_in, new_in, after.get("ignoreChanges") or ())
            forced = forced or immutable_changes(old_in, new_in)
            if forced:
                retained = bool(before.get("retainOnDelete"))
                changes.append(
                    Change("replace", urn, after["type"], after["name"], tuple(forced), protected, retained)
                )
                continue
            ignored = set(after.get("ignoreChanges") or ())
            keys = tuple(k for k in _changed_keys(old_in, new_in) if k not in ignored)
            if keys:
                changes.append(Change("update", urn, after["type"], after["name"], keys, protected))
    return changes


def render_changes(changes: list[Change], ref: str) -> list[str]:
    """The Markdown section the report and the PR comment carry."""
    lines = [f"### Changes against `{ref}`", ""]
    if not changes:
        return [*lines, "No resource is created, updated, replaced or deleted.", ""]
    counts = {a: sum(c.action == a for c in changes) for a in ("create", "update", "replace", "delete")}
    lines.append(", ".join(f"{n} to {a}" for a, n in counts.items() if n) + ".")
    lines.append("")
    for change in changes:
        detail = f" ({', '.join(change.paths)})" if change.paths else ""
        line = f"- **{change.action}** `{change.type}` `{change.name}`{detail}"
        if change.takes_down:
            line += f"; takes down {change.takes_down}"
        if change.retained:
            line += "; `retainOnDelete`: the old object stays in the cluster, Pulumi only forgets it"
        if change.blocking:
            line += "; **refused: the resource is protected, so `pulumi up` fails**"
        if change.needs_drain:
            line += (
                "; **drain it first** (`stopPolicy: HoldAndDrain`, then wait for no admitted workloads:"
                f" [{DRAIN_PROCEDURE.split('#')[1]}]({DRAIN_PROCEDURE})), or the delete waits on Kueue's"
                " `resource-in-use` finalizer until `pulumi up` times out"
            )
        lines.append(line)
    lines.append("")
    return lines
