"""Removal that finishes (issue 28, item 4).

Kueue keeps ``kueue.x-k8s.io/resource-in-use`` on ClusterQueues, LocalQueues and admitted
Workloads (kueue v0.19.2 ``apis/kueue/v1beta2/constants.go`` ``ResourceInUseFinalizerName``) and
removes it from a deleted ClusterQueue only when no workload reserves quota in it
(``pkg/controller/core/clusterqueue_controller.go`` ``Reconcile``: ``ClusterQueueEmpty``).  So:

* the plan diff tells the reviewer to drain a ClusterQueue or LocalQueue a change deletes, and
  links the runbook's procedure;
* on ``pulumi destroy`` the controllers outlive the objects whose finalizers they remove: the
  engine deletes a resource only after every resource that depends on it (directly, through a
  property, or as its child), so on the recorded dependency graph every Kueue queue object and
  every team namespace must reach the Kueue (and KAI, KubeRay) release.
"""

from __future__ import annotations

import copy
import re
from functools import cache
from pathlib import Path

import pytest

from preview.harness import RunResult
from preview.plan import plan_document
from preview.plan_diff import DRAIN_PROCEDURE, diff_plans, render_changes
from preview.records import RecordedResource
from tests.stack_runner import ROOT, config_value, run_stack, unedited_run

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

STACKS = sorted(
    p.name.removeprefix("Pulumi.").removesuffix(".yaml") for p in Path(ROOT).glob("Pulumi.*.yaml")
)
RELEASE = "kubernetes:helm.sh/v3:Release"
NAMESPACE = "kubernetes:core/v1:Namespace"
TEAM = "gpu-batch:tenancy:Team"
CONTROLLER_COMPONENTS = ("gpu-batch:kueue:Install", "gpu-batch:kai:Install", "gpu-batch:kuberay:Operator")


@cache
def stack(name: str) -> RunResult:
    return unedited_run(name)


def depends_on(result: RunResult, record: RecordedResource) -> set[str]:
    """Everything ``record`` waits for on create -- so everything deleted after it on destroy."""
    by_urn = {r.urn: r for r in result.resources}
    seen: set[str] = set()
    todo = [record.urn]
    while todo:
        current = by_urn[todo.pop()]
        edges = [*current.dependencies, *(u for us in current.property_dependencies.values() for u in us)]
        edges += [current.parent] if current.parent in by_urn else []
        for urn in edges:
            if urn in by_urn and urn not in seen:
                seen.add(urn)
                todo.append(urn)
    return seen


def controller_releases(result: RunResult) -> dict[tuple[str, str], str]:
    """{(component type, Kubernetes provider): release URN} of the controllers the stack installs.

    Keyed by provider as well: a MultiKueue stack installs Kueue on every cluster, and a queue
    object only ever waits for the controller of its own cluster."""
    out: dict[tuple[str, str], str] = {}
    for record in result.resources:
        owner = record.urn.split("::")[2].split("$")
        if record.type == RELEASE and len(owner) > 1 and owner[-2] in CONTROLLER_COMPONENTS:
            out[owner[-2], record.provider] = record.urn
    return out


@pytest.mark.parametrize("name", STACKS)
def test_on_destroy_the_controllers_outlive_queues_and_team_namespaces(name: str) -> None:
    result = stack(name)
    releases = controller_releases(result)
    queues = [r for r in result.resources if r.type.startswith("kubernetes:kueue.x-k8s.io/")]
    for queue in queues:
        kueue = releases.get(("gpu-batch:kueue:Install", queue.provider))
        assert kueue is not None, queue.urn
        assert kueue in depends_on(result, queue), queue.urn
    team_namespaces = [r for r in result.resources if r.type == NAMESPACE and f"{TEAM}$" in r.urn]
    for namespace in team_namespaces:
        same_cluster = {urn for (_, provider), urn in releases.items() if provider == namespace.provider}
        assert same_cluster, namespace.urn
        missing = same_cluster - depends_on(result, namespace)
        assert not missing, (namespace.urn, missing)


def test_prod_has_team_namespaces_and_its_controllers() -> None:
    """The check above is not vacuous where it matters."""
    result = stack("prod")
    assert {kind for kind, _ in controller_releases(result)} == {
        "gpu-batch:kueue:Install",
        "gpu-batch:kuberay:Operator",
    }
    assert len([r for r in result.resources if r.type == NAMESPACE and f"{TEAM}$" in r.urn]) == 2


def _plan(result: RunResult) -> dict[str, object]:
    return plan_document("gpu-batch", "prod", result.resources, result.outputs)


def test_removing_a_cluster_queue_says_drain_it_first() -> None:
    queues = copy.deepcopy(config_value("prod", "gpu-batch:kueueQueues"))
    queues["clusterQueues"] = [q for q in queues["clusterQueues"] if q["name"] != "research-h100"]
    teams = copy.deepcopy(config_value("prod", "gpu-batch:teams"))
    (research,) = [t for t in teams if t["name"] == "research"]
    del research["gpuQueues"]["h100"]
    after = run_stack("prod", {"gpu-batch:kueueQueues": queues, "gpu-batch:teams": teams})
    changes = diff_plans(_plan(stack("prod")), _plan(after))
    drained = {c.name for c in changes if c.needs_drain}
    assert "clusterqueue-research-h100" in drained
    assert all(c.action in ("delete", "replace") for c in changes if c.needs_drain)
    # A change that keeps the queues asks for nothing.
    assert not any(c.needs_drain for c in diff_plans(_plan(stack("prod")), _plan(stack("prod"))))
    text = "\n".join(render_changes(changes, "main"))
    line = next(x for x in text.splitlines() if "clusterqueue-research-h100" in x)
    assert "drain it first" in line and "HoldAndDrain" in line and DRAIN_PROCEDURE in line


def test_the_drain_link_points_at_a_runbook_heading() -> None:
    path, anchor = DRAIN_PROCEDURE.split("#")
    headings = [
        re.sub(r"[^a-z0-9 -]", "", h.lower()).replace(" ", "-")
        for h in re.findall(r"^#+ (.+)$", (Path(ROOT) / path).read_text(), flags=re.M)
    ]
    assert anchor in headings
