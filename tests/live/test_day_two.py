"""Day two, live (issue 40 #5): what the plan diff calls an update, the API server accepts as one;
what it calls a replacement for an immutable field, the API server refuses as an update.

BASE is the ``prod`` stack as committed (its program run as the live tier runs it,
:func:`tests.live.stacks.stack_run`); HEAD is the same program run on the stack's config with
the edits a platform team makes in a pull request (:func:`head_config`): a team's GPU quota, a
cohort's fair-sharing weight, a flavor's node labels, a priority's value, a team allowed one
more priority class (its ValidatingAdmissionPolicy), a team added, and a team moved to another
ClusterQueue.  The two plans are compared by the preview's own :func:`preview.plan_diff.diff_plans`
(what ``make preview BASE=<ref>`` prints); the test never decides update or replace itself.

BASE is deployed to a cluster of its own with Kueue's manager serving (its webhooks judge every
Kueue object), then:

* every Kubernetes object the diff calls **update** is sent as HEAD by server-side apply, with
  the field manager BASE was applied with (as pulumi-kubernetes updates an object); the server
  accepts each and stores HEAD's values; objects the diff **creates** are accepted too;
* every object the diff calls **replace** because a field is immutable is sent as HEAD in place
  first: the server refuses it with the immutable-field message the replacement facts name; then
  deleted and created, which is accepted.

The LocalQueue's ``spec.clusterQueue`` is immutable by a CEL transition rule of Kueue's CRD
(kueue v0.19.2 ``apis/kueue/v1beta2/localqueue_types.go`` ``LocalQueueSpec.ClusterQueue``:
``+kubebuilder:validation:XValidation:rule="self == oldSelf", message="field is immutable"``),
which the API server evaluates on update (k8s.io/apiextensions-apiserver v0.37.2, the staging
module of kubernetes v1.37.2, ``pkg/apiserver/schema/cel/validation.go`` ``Validator.Validate``
with ``oldObj``).  pulumi-kubernetes would send that very update: its replace table
(``provider/pkg/provider/diff.go`` ``forceNewProperties``) knows built-in kinds only, so the
program registers the field with ``replaceOnChanges`` (``components/k8s_object.py``) and the
engine replaces, as the preview's "replace" says.  A replaced object that
keeps its name is deleted first (``provider.go`` ``kubeProvider.Diff``: ``deleteBeforeReplace``;
read at v4.32.0, the newest tag mirrored; the pin is 4.34.2).
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

import pytest

from preview.harness import RunResult
from preview.plan import plan_document
from preview.plan_diff import Change, diff_plans
from preview.replacements import HELM_RELEASE, K8S_PROVIDER
from tests.live.cluster import FIELD_MANAGER, Cluster, ControlPlane
from tests.live.stacks import ClusterObjects, Deployment, clusters_of, deploy, stack_run, stand_ins
from tests.stack_runner import config_value, run_stack

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

STACK = "prod"
QUEUES = "gpu-batch:kueueQueues"
TEAMS = "gpu-batch:teams"
# every kind of queue, quota, cohort, flavor and policy object the edits must reach as updates
UPDATED_KINDS = frozenset(
    {"ClusterQueue", "Cohort", "ResourceFlavor", "WorkloadPriorityClass", "ValidatingAdmissionPolicy"}
)


def _named(items: list[dict[str, Any]], name: str) -> dict[str, Any]:
    (item,) = [i for i in items if i["name"] == name]
    return item


def head_config() -> dict[str, Any]:
    """The stack's queue and team config with a pull request's edits, as a user writes them."""
    queues = copy.deepcopy(config_value(STACK, QUEUES))
    teams = copy.deepcopy(config_value(STACK, TEAMS))
    # a quota: research gets 4 more L4 GPUs
    research_l4 = _named(queues["clusterQueues"], "research-l4")
    _named(research_l4["resourceGroups"][0]["flavors"], "l4")["resources"]["nvidia.com/gpu"][
        "nominalQuota"
    ] = "16"
    # a cohort: the ml cohort's fair-sharing weight
    _named(queues["cohorts"], "ml")["fairSharingWeight"] = "2"
    # a flavor's node labels: the CPU flavor also selects a machine family
    _named(queues["resourceFlavors"], "cpu")["nodeLabels"] = {"cloud.google.com/machine-family": "n2"}
    # a priority's value
    _named(queues["priorityClasses"], "prod-priority")["value"] = 2000
    # a policy: research may now run prod-priority work (its admission policy's allowed list)
    _named(teams, "research")["priorityClasses"] = ["dev-priority", "prod-priority"]
    # a team moved to another ClusterQueue: its LocalQueue's spec.clusterQueue (immutable)
    _named(teams, "applied")["clusterQueue"] = "applied-h100"
    # a team added, on research's queues
    teams.append(
        {
            "name": "vision",
            "members": {"groups": ["ml-vision@example.com"]},
            "localQueue": "default",
            "clusterQueue": "research-l4",
            "gpuQueues": {"l4": "research-l4", "h100": "research-h100"},
            "priorityClasses": ["dev-priority"],
        }
    )
    return {QUEUES: queues, TEAMS: teams}


@dataclass(frozen=True)
class Side:
    """One side of the diff: its plan (as ``plan.json`` holds it) and its objects by URN."""

    plan: dict[str, Any]
    objects: ClusterObjects

    def object(self, urn: str) -> dict[str, Any]:
        (index,) = [i for i, u in enumerate(self.objects.urns) if u == urn]
        out, _ = stand_ins(self.objects.declared[index])
        assert isinstance(out, dict)
        return out

    def field_manager(self, urn: str) -> str:
        """The manager :func:`deploy` applies the object with (a patch has its own)."""
        (index,) = [i for i, u in enumerate(self.objects.urns) if u == urn]
        return f"{FIELD_MANAGER}-patch-{index}" if index in self.objects.patches else FIELD_MANAGER


def side(result: RunResult) -> Side:
    (objects,) = clusters_of(result, STACK)
    return Side(plan_document("gpu-batch", STACK, result.resources, result.outputs), objects)


@dataclass(frozen=True)
class DayTwo:
    base: Side
    head: Side
    changes: tuple[Change, ...]  # the Kubernetes objects' changes, as the plan diff calls them
    deployment: Deployment

    @property
    def cluster(self) -> Cluster:
        return self.deployment.cluster

    def of(self, action: str) -> list[Change]:
        return [c for c in self.changes if c.action == action]


def is_object(change: Change) -> bool:
    """A Kubernetes object (not a Helm release or a provider, whose diffs are not objects)."""
    return change.type.startswith("kubernetes:") and change.type not in (HELM_RELEASE, K8S_PROVIDER)


def kind_of(change: Change) -> str:
    return change.type.rsplit(":", 1)[-1]


@pytest.fixture(scope="module")
def day_two(control_plane: ControlPlane) -> Iterator[DayTwo]:
    base = side(stack_run(STACK))
    head = side(run_stack(STACK, head_config()))
    changes = tuple(c for c in diff_plans(base.plan, head.plan) if is_object(c))
    # BASE deployed with Kueue's release only: the KubeRay operator's release is not edited here
    kueue_only = ClusterObjects(
        base.objects.title,
        base.objects.declared,
        base.objects.patches,
        tuple(r for r in base.objects.releases if r.chart == "kueue"),
        base.objects.urns,
    )
    deployment = deploy(control_plane, kueue_only, name="day-two")
    try:
        assert not deployment.refused, "\n".join(map(str, deployment.refused))
        yield DayTwo(base, head, changes, deployment)
    finally:
        deployment.cluster.stop()


def holds(stored: Any, wanted: Any, path: str = "") -> list[str]:
    """Where ``stored`` differs from ``wanted``: every value ``wanted`` sets must be stored as is
    (the server may add defaults and metadata, never change a value it accepted)."""
    if isinstance(wanted, Mapping):
        if not isinstance(stored, Mapping):
            return [f"{path}: {stored!r} is not an object"]
        return [d for k, v in wanted.items() for d in holds(stored.get(k), v, f"{path}.{k}")]
    if isinstance(wanted, list):
        if not isinstance(stored, list) or len(stored) != len(wanted):
            return [f"{path}: stored {stored!r}, wanted {wanted!r}"]
        return [
            d
            for i, (s, w) in enumerate(zip(stored, wanted, strict=True))
            for d in holds(s, w, f"{path}[{i}]")
        ]
    return [] if stored == wanted else [f"{path}: stored {stored!r}, wanted {wanted!r}"]


def stored(cluster: Cluster, obj: Mapping[str, Any]) -> dict[str, Any] | None:
    meta = obj["metadata"]
    return cluster.get(obj["apiVersion"], obj["kind"], meta["name"], meta.get("namespace"))


def gone(cluster: Cluster, obj: Mapping[str, Any]) -> bool:
    return stored(cluster, obj) is None


def test_the_edits_reach_every_kind_of_queue_and_policy_object(day_two: DayTwo) -> None:
    """The diff (not the test) classifies: each edited kind is an update, the moved team's
    LocalQueue a replacement for its immutable ``spec.clusterQueue``, the new team's objects
    creations; nothing else of the stack is touched."""
    updated = {kind_of(c) for c in day_two.of("update")}
    assert updated >= UPDATED_KINDS, sorted(UPDATED_KINDS - updated)
    replaced = {
        (kind_of(c), day_two.head.object(c.urn)["metadata"].get("namespace"), c.paths)
        for c in day_two.of("replace")
    }
    assert replaced == {("LocalQueue", "applied", ("spec.clusterQueue: field is immutable",))}, replaced
    created = day_two.of("create")
    assert created and all("vision" in c.name for c in created), [c.name for c in created]
    assert not day_two.of("delete")


def test_every_update_is_accepted_in_place(day_two: DayTwo) -> None:
    """HEAD over BASE by server-side apply, Kueue's webhooks serving: every object the diff
    calls an update is accepted and stores HEAD's values (and every creation is accepted)."""
    cluster = day_two.cluster
    for change in day_two.of("update"):
        obj = day_two.head.object(change.urn)
        before = stored(cluster, obj)
        assert before is not None, f"{change.name}: BASE is not on the server"
        assert holds(before, day_two.base.object(change.urn)) == []
        assert holds(before, obj) != [], f"{change.name}: BASE already holds HEAD's values"
        (answer,) = cluster.apply([obj], field_manager=day_two.head.field_manager(change.urn))
        assert answer.accepted, f"{change.type} {change.name} ({', '.join(change.paths)}): {answer}"
        after = stored(cluster, obj)
        assert after is not None and holds(after, obj) == [], (change.name, holds(after, obj))
    # in HEAD's registration order (a namespace before what it holds), as the engine creates them
    urns = {c.urn for c in day_two.of("create")}
    created = [day_two.head.object(u) for u in day_two.head.objects.urns if u in urns]
    assert len(created) == len(urns)
    refused = [a for a in cluster.apply(created) if not a.accepted]
    assert not refused, "\n".join(map(str, refused))


def test_an_immutable_field_is_refused_in_place_and_replacing_is_accepted(day_two: DayTwo) -> None:
    """What the diff calls a replacement for an immutable field: the in-place update is refused
    with the message the replacement facts name (Kueue's CEL rule, 422 Invalid); deleting the
    object and creating HEAD's, as the engine's replacement does, is accepted."""
    cluster = day_two.cluster
    replaced = day_two.of("replace")
    assert replaced
    for change in replaced:
        obj = day_two.head.object(change.urn)
        meta = obj["metadata"]
        (answer,) = cluster.apply([obj], field_manager=day_two.head.field_manager(change.urn))
        assert not answer.accepted, f"{change.name}: the server accepted what the diff replaces"
        assert answer.status == 422 and answer.reason == "Invalid", answer
        for path in change.paths:
            field, _, message = path.partition(": ")
            assert field in answer.message and message in answer.message, (path, answer.message)
        before = stored(cluster, obj)
        assert before is not None and holds(before, day_two.base.object(change.urn)) == []
        status = cluster.delete(obj["apiVersion"], obj["kind"], meta["name"], meta.get("namespace"))
        assert status in (200, 202), status
        cluster.wait_for(partial(gone, cluster, obj), 30, f"{change.name} to be deleted")
        (created,) = cluster.apply([obj], field_manager=day_two.head.field_manager(change.urn))
        assert created.accepted, str(created)
        after = stored(cluster, obj)
        assert after is not None and holds(after, obj) == []
