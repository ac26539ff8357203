"""Issue 40 part 4, queues live: each team submits each stack's workload templates to the stack's
live deployment, and real Kueue (v0.19.2) admits or holds each as the what-if says.

Templates and expected verdicts: :mod:`tests.live.queue_templates` (the load profile's shapes as
every team with that queue, the report's *largest gang* and one pod more; the what-if simulating
that one workload).  Submitting and playing GKE: :mod:`tests.live.queue_live`.

- admitted: QuotaReserved in the ClusterQueue with the flavors the what-if names (per pod set and
  resource, CPU-only pod sets included); where a ProvisioningRequest check applies, the test plays
  GKE (``Provisioned``), the check becomes Ready, the Workload Admitted and the job unsuspended with
  the flavor's node labels and tolerations (Kueue v0.19.2 ``pkg/podset`` ``FromAssignment``, merged
  into the job on start, ``pkg/controller/jobframework/reconciler.go`` ``startJob``) and the check's
  podSetUpdates (annotations and node selector); those select the node pool the stack declares
  behind the flavor and tolerate every taint of it (the pack's ``pools.pool_matches`` and
  ``fit.placement.pool_taints``/``tolerates``, read from the stack's program, not re-typed);
- held: never Admitted for a few seconds, the job still suspended; Kueue's QuotaReserved False
  message, or quota reserved with the ProvisioningRequest left unprovisioned (GKE cannot bring up
  more nodes than the pool's maximum: the report's *largest gang*, one pool per request);
- a MultiKueue manager (multiregion): the quota decision is the manager's, admission the worker's:
  the test asserts the reservation and that the MultiKueue check holds it (no worker connected);
- held for the TAS match (gpudirect: a GPU template without a topology request on a queue that also
  has the plain ``cpu`` flavor): the what-if's reason, in Kueue's words from the shared decision
  (``facts.tas.flavor_match``: 'Flavor "h100-mega" supports only TopologyAwareScheduling'), is in
  Kueue's message (kueue v0.19.2 ``tas_flavorassigner.go`` ``checkPodSetAndFlavorMatchForTAS``);
- topology-aware templates (:mod:`tests.live.queue_tas`: ``podset-required-topology`` as a gpudirect
  user submits them, a gang one domain holds and one it does not), judged by the pack
  (``kueue-flavor-eligible``, ``kueue-tas-gang-fits-domain``) since the what-if does not place by
  topology (and says so).  The test plays GKE's Nodes from the stack's model of each pool
  (:mod:`tests.live.tas_nodes`): the static A3 Mega reservation pool's from the start; for the
  queued A3 Ultra pool, Kueue reserves quota with a *delayed* topology request
  (``podSetTopologyRequest``: ``DelayedTopologyRequest`` Pending while the ProvisioningRequest check
  is), the test creates the request's nodes in one block and answers it, and Kueue's second pass
  (``workload.NeedsSecondPass``) assigns the topology over them.  Admitted: a topology assignment
  of every pod on those Nodes, in one domain of the required level, the job started with the
  ``kueue.x-k8s.io/topology`` scheduling gate (Kueue ungates each pod onto its assigned node) and
  the check's podSetUpdates.  Held: TAS's own refusal (``notFitMessage``) as the QuotaReserved
  message, or, behind the check, as the ``SecondPassFailed`` event after the nodes came up.  The
  Nodes are deleted after each template (provisioned ones) and before the deployment stops.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from gpu_batch_policy.facts import pools
from gpu_batch_policy.facts.fit.placement import pool_taints, tolerates
from gpu_batch_policy.facts.tas.levels import HOSTNAME
from gpu_batch_policy.primitives.values import Unknown

from preview.report import flavor_pools
from preview.report.training import GANG_FITS_RULE
from tests.live.cluster import Cluster, ControlPlane
from tests.live.conftest import SHARED_STACK
from tests.live.queue_live import (
    CLASS_ANNOTATION,
    CONSUME_ANNOTATION,
    checks_for_admission,
    class_details,
    connect_workers,
    decided,
    declared,
    member,
    pod_templates,
    provision,
    provisioning_checks,
    remove,
    request_of,
    still_held,
    submission,
    submit,
    with_checks,
    workload_of,
)
from tests.live.queue_tas import (
    assigned_domains,
    provisioned_nodes,
    second_pass_failure,
    static_nodes,
    tas_templates,
    tas_verdict,
    topology_problems,
)
from tests.live.queue_templates import Template, Verdict, expected, first_cluster_model, templates
from tests.live.stacks import ClusterObjects, Deployment, stack_clusters
from tests.live.tas_nodes import create_nodes, delete_nodes
from tests.live.test_kueue_admission import admitted, condition

# every stack with Kueue queues but kai (KAI Scheduler judges its queues, not here)
STACKS = ("dev", "prod", "skypilot", "gpudirect", "multiregion")
MULTIKUEUE_CONTROLLER = "kueue.x-k8s.io/multikueue"
# MultiKueueCluster name -> the worker's cluster and objects
Workers = dict[str, tuple[Cluster, ClusterObjects]]


def _assignment_flavors(wl: dict[str, Any]) -> dict[str, dict[str, str]]:
    return {a["name"]: dict(a.get("flavors") or {}) for a in wl["status"]["admission"]["podSetAssignments"]}


def _check_states(wl: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["name"]: c for c in (wl.get("status") or {}).get("admissionChecks") or []}


def _controllers(objects: ClusterObjects) -> dict[str, str]:
    return {
        c["metadata"]["name"]: str((c.get("spec") or {}).get("controllerName"))
        for c in declared(objects, "AdmissionCheck")
    }


def _placement(stack: str, objects: ClusterObjects, obj: dict[str, Any], wl: dict[str, Any]) -> list[str]:
    """What is wrong with the started job's pod templates against the flavor and its pool."""
    problems: list[str] = []
    model = first_cluster_model(stack)
    templates_of = pod_templates(obj)
    checks = {c["name"]: c for c in wl["status"].get("admissionChecks") or []}
    for name, flavors in _assignment_flavors(wl).items():
        spec = (templates_of.get(name) or {}).get("spec") or {}
        annotations = ((templates_of.get(name) or {}).get("metadata") or {}).get("annotations") or {}
        selector = dict(spec.get("nodeSelector") or {})
        tolerations = list(spec.get("tolerations") or [])
        update_keys: set[str] = set()
        for check in checks.values():
            for update in check.get("podSetUpdates") or []:
                if update.get("name") != name:
                    continue
                update_keys |= set(update.get("nodeSelector") or {})
                for key, value in (update.get("nodeSelector") or {}).items():
                    if selector.get(key) != value:
                        problems.append(f"{name}: podSetUpdates nodeSelector {key}={value} not on the job")
                for key, value in (update.get("annotations") or {}).items():
                    if annotations.get(key) != value:
                        problems.append(f"{name}: podSetUpdates annotation {key}={value} not on the job")
        for flavor_name in sorted(set(flavors.values())):
            (flavor,) = declared(objects, "ResourceFlavor", flavor_name)
            fspec = flavor.get("spec") or {}
            for key, value in (fspec.get("nodeLabels") or {}).items():
                if selector.get(key) != value:
                    problems.append(f"{name}: flavor {flavor_name}'s node label {key}={value} not selected")
            for toleration in fspec.get("tolerations") or []:
                if toleration not in tolerations:
                    problems.append(f"{name}: flavor {flavor_name}'s toleration {toleration} missing")
            behind = flavor_pools(model, flavor_name)
            pool_selector = {k: v for k, v in selector.items() if k not in update_keys}
            for capacity in behind:
                pool = capacity.pool
                if pools.pool_matches(pool, pool_selector) is not True:
                    problems.append(f"{name}: node selector {pool_selector} does not select pool {pool.name}")
                taints = pool_taints(model, pool)
                assert not isinstance(taints, Unknown), taints
                for taint in taints:
                    if tolerates(tolerations, taint) is not True:
                        problems.append(f"{name}: pool {pool.name}'s taint {taint.describe()} not tolerated")
    return problems


def _dispatched(manager: Cluster, obj: dict[str, Any], wl: dict[str, Any], verdict: Verdict) -> str:
    """A MultiKueue manager's Workload: the quota decision is the manager's (checked by the
    caller); admission is a worker's.  Dispatch is not asserted here: with the workers connected
    (``connect_workers``) the manager's copies reached a worker in one run and not within 60 s in
    the next (tests/live/README.md), so only the manager's side is judged: reserved as the
    what-if says, and never Admitted before a worker admits."""
    still_held(manager, obj)
    cq = wl["status"]["admission"]["clusterQueue"]
    ran = f", the what-if runs it on {verdict.worker}" if verdict.admitted else ", the what-if: on no worker"
    return f"quota reserved on the manager in {cq}, waiting for a worker{ran}"


def _request(cluster: Cluster, wl: dict[str, Any], check: str) -> Callable[[], dict[str, Any] | None]:
    return lambda: request_of(cluster, wl, check)


def _played_nodes(cluster: Cluster) -> dict[str, dict[str, str]]:
    return {n["metadata"]["name"]: n["metadata"]["labels"] for n in cluster.list("v1", "Node")}


def _hosts(wl: dict[str, Any]) -> list[str]:
    return sorted(
        str(values.get(HOSTNAME))
        for psa in wl["status"]["admission"]["podSetAssignments"]
        for values, _ in assigned_domains(psa.get("topologyAssignment") or {})
    )


def _play_gke(
    stack: str,
    cluster: Cluster,
    template: Template,
    wl: dict[str, Any],
    config: dict[str, Any],
    pr: dict[str, Any],
) -> None:
    """GKE's answer to a request; for a TAS flavor, first the nodes it provisioned (Kueue then
    assigns the delayed topology over them: ``tas_flavorassigner.go`` ``podSetTopologyRequest``
    defers TAS while the check is pending, ``workload.NeedsSecondPass`` runs it once Ready)."""
    details = class_details(config, pr)
    if template.flavor:
        for psa in wl["status"]["admission"]["podSetAssignments"]:
            assert psa.get("delayedTopologyRequest") == "Pending" and "topologyAssignment" not in psa, psa
        create_nodes(cluster, provisioned_nodes(stack, template.flavor, pr, config, details, template.name))
    provision(cluster, pr, details)


def _tas_held_after_provisioning(
    stack: str,
    cluster: Cluster,
    objects: ClusterObjects,
    obj: dict[str, Any],
    template: Template,
    wl: dict[str, Any],
    verdict: Verdict,
) -> tuple[list[str], str]:
    configs = provisioning_checks(objects)
    for name in _check_states(wl):
        pr = cluster.wait_for(_request(cluster, wl, name), 30, f"{name}'s request")
        _play_gke(stack, cluster, template, wl, configs[name], pr)
    note = cluster.wait_for(lambda: second_pass_failure(cluster, wl), 60, f"{template.name}'s second pass")
    still_held(cluster, obj)
    return _held_as_said(note, verdict), f"quota reserved, nodes provisioned, second pass failed: {note}"


def _held_as_said(message: str, verdict: Verdict) -> list[str]:
    """Kueue's message says what the expected side says: the what-if's TAS-match reasons in
    Kueue's words (``facts.tas.flavor_match``), or, for a gang no topology domain holds (the pack's
    ``kueue-tas-gang-fits-domain``), TAS's own refusal (``tas_flavor_snapshot.go``
    ``notFitMessage``: 'topology "<name>" ... fit ...')."""
    said = [r for r in (verdict.reason or "").split("; ") if r.startswith('Flavor "')]
    wrong = [f"Kueue's message {message!r} lacks the what-if's {r!r}" for r in said if r not in message]
    if any(f.startswith(GANG_FITS_RULE) for f in verdict.pack) and not (
        "topology" in message and "fit" in message
    ):
        wrong.append(f"Kueue's message {message!r} is not TAS's refusal; the pack: {verdict.pack}")
    return wrong


def _judge(
    stack: str,
    cluster: Cluster,
    objects: ClusterObjects,
    plane: ControlPlane,
    template: Template,
    verdict: Verdict,
    workers: Workers,
) -> tuple[list[str], str]:
    """Submit ``template`` alone as its team; (disagreements, what live Kueue did)."""
    obj = submission(objects, template)
    submit(cluster, member(plane, objects, template.namespace), obj)
    try:
        wl = decided(cluster, obj)
        reserved = condition(wl, "QuotaReserved") or {}
        controllers = _controllers(objects)
        configs = provisioning_checks(objects)
        if reserved.get("status") == "True":
            live_cq = wl["status"]["admission"]["clusterQueue"]
            live_flavors = _assignment_flavors(wl)
            if verdict.admitted and (live_cq, live_flavors) != (
                verdict.cluster_queue,
                verdict.flavor_map(obj["kind"]),
            ):
                return [f"reserved in {live_cq} {live_flavors}, the what-if: {verdict}"], "reserved"
            # the checks the flavors bring come in an update after the reservation: wait for them
            used = {f for flavors in live_flavors.values() for f in flavors.values()}
            wl = with_checks(cluster, obj, checks_for_admission(first_cluster_model(stack), live_cq, used))
            states = _check_states(wl)
            multikueue = [n for n in states if controllers.get(n) == MULTIKUEUE_CONTROLLER]
            if multikueue:
                return [], _dispatched(cluster, obj, wl, verdict)
            if not verdict.admitted and template.flavor:
                # a TAS gang no domain holds, behind a ProvisioningRequest (delayed topology
                # request): GKE brings the nodes up, Kueue's second pass cannot place the gang
                return _tas_held_after_provisioning(stack, cluster, objects, obj, template, wl, verdict)
            if not verdict.admitted:
                # quota is there, nodes are not: GKE leaves the request unprovisioned
                pending = [n for n in states if n in configs]
                assert pending, f"{template.name}: quota reserved with no check to hold it: {wl}"
                for name in pending:
                    cluster.wait_for(_request(cluster, wl, name), 30, f"{name}'s request")
                still_held(cluster, obj)
                return [], f"quota reserved in {live_cq}, ProvisioningRequest not provisioned"
            requests = {n: cluster.wait_for(_request(cluster, wl, n), 30, f"{n}'s request") for n in states}
            for name, pr in requests.items():
                _play_gke(stack, cluster, template, wl, configs[name], pr)

            def done() -> dict[str, Any] | None:
                current = workload_of(cluster, obj)
                return current if admitted(current) else None

            try:
                wl = cluster.wait_for(done, 60, f"{template.name} to be admitted")
            except TimeoutError:
                failed = second_pass_failure(cluster, wl) if template.flavor else None
                if failed is None:
                    raise
                return [f"never admitted after GKE's answer and its nodes: {failed}"], "held"
            assert all(s["state"] == "Ready" for s in _check_states(wl).values()), wl
            meta = obj["metadata"]

            def unsuspended() -> dict[str, Any] | None:
                stored = cluster.get(obj["apiVersion"], obj["kind"], meta["name"], meta["namespace"])
                # RayJob's ``suspend`` is a bool with omitempty: false is not stored
                return stored if stored and not stored["spec"].get("suspend") else None

            started = cluster.wait_for(unsuspended, 30, f"Kueue to unsuspend {template.name}")
            usage = {
                a["name"]: set(a.get("resourceUsage") or {})
                for a in wl["status"]["admission"]["podSetAssignments"]
            }
            for name, state in _check_states(wl).items():
                # only the pod sets using a managed resource are in the request (controller.go
                # ``requiredPodSets``): a CPU-only pod set gets no podSetUpdate
                managed = set(configs[name]["spec"].get("managedResources") or [])
                covered = {u["name"] for u in state.get("podSetUpdates") or []}
                assert covered == {p for p, used in usage.items() if not managed or used & managed}, state
                # every pod set the request covers consumes it (its name) in its class
                pr_name = str((request_of(cluster, wl, name) or {})["metadata"]["name"])
                updates = [u.get("annotations") or {} for u in state.get("podSetUpdates") or []]
                klass = configs[name]["spec"]["provisioningClassName"]
                assert updates and all(
                    a.get(CONSUME_ANNOTATION) == pr_name and a.get(CLASS_ANNOTATION) == klass for a in updates
                ), state
            problems = _placement(stack, objects, started, wl)
            if template.flavor:
                problems += topology_problems(template, wl, pod_templates(started), _played_nodes(cluster))
                return problems, f"admitted in {live_cq} {live_flavors} on {_hosts(wl)}"
            return problems, f"admitted in {live_cq} {live_flavors}"
        message = str(reserved.get("message"))
        still_held(cluster, obj)
        if verdict.not_modelled:  # nothing to compare with: a template no side judges is a gap
            return [f"held ({message}), and no expected side: {verdict.not_modelled}"], "held"
        if verdict.admitted:
            return [f"held ({message}), the expected side admits it in {verdict.cluster_queue}"], "held"
        return _held_as_said(message, verdict), f"held: {message}"
    finally:
        remove(cluster, obj)
        delete_nodes(cluster, template.name)
        for worker, _ in workers.values():
            # MultiKueue's copies: the same names on each worker
            remove(worker, obj)


@pytest.mark.parametrize("stack", STACKS)
def test_templates_are_admitted_or_held_as_the_what_if_says(
    control_plane: ControlPlane, stack: str, request: pytest.FixtureRequest
) -> None:
    sections = stack_clusters(stack)
    # the deployments test_stacks_apply made (it runs just before: conftest.follow_stack_apply)
    deployments: list[Deployment] = (
        [request.getfixturevalue("shared_stack")]
        if stack == SHARED_STACK
        else request.getfixturevalue("stack_deployments").get(stack)
    )
    assert not any(d.refused for d in deployments), [d.refused for d in deployments]
    objects, cluster = sections[0], deployments[0].cluster
    workers: Workers = {}
    for mkc in declared(objects, "MultiKueueCluster"):
        name = mkc["metadata"]["name"]
        (n,) = [i for i, section in enumerate(sections) if f"-{name}-" in section.title]
        workers[name] = (deployments[n].cluster, sections[n])
    if workers:
        connect_workers(cluster, objects, workers)
    verdicts = [(t, expected(stack, t)) for t in templates(stack)]
    verdicts += [
        (t, tas_verdict(stack, t, submission(objects, t), expected(stack, t))) for t in tas_templates(stack)
    ]
    # every stack has a template its report says cannot fit
    assert any(not v.admitted for _, v in verdicts), verdicts
    disagreements: list[str] = []
    outcomes: list[str] = []
    try:
        # GKE's nodes that exist from the start behind a TAS flavor (a static pool's minimum)
        create_nodes(cluster, static_nodes(stack))
        for template, verdict in verdicts:
            wrong, outcome = _judge(stack, cluster, objects, control_plane, template, verdict, workers)
            outcomes.append(f"{template.source}: {outcome}")
            disagreements += [f"{template.source}: {w}" for w in wrong]
    finally:
        if stack != SHARED_STACK:
            # the stack's last user; its played Nodes go first (StackDeployments.stop)
            request.getfixturevalue("stack_deployments").stop()
        else:
            delete_nodes(cluster)
    print("\n".join(outcomes))
    assert not disagreements, "\n".join(disagreements)
