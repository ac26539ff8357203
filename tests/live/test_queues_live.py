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
- a MultiKueue manager (multiregion): the quota decision is the manager's, admission a worker's:
  the copies reach every worker, the test plays GKE on the worker the what-if runs it on, that
  worker's Kueue admits it, the manager's Workload is Admitted there (``clusterName``), the other
  copies are deleted and the job runs on the worker's pool (:func:`_dispatched`);
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

import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from gpu_batch_policy.facts import pools
from gpu_batch_policy.facts.fit.placement import pool_taints, tolerates
from gpu_batch_policy.facts.model import StackModel
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
from tests.live.queue_templates import Template, Verdict, cluster_model, expected, templates
from tests.live.stacks import ClusterObjects, Deployment, stack_clusters
from tests.live.tas_nodes import create_nodes, delete_nodes
from tests.live.test_kueue_admission import KUEUE, admitted, condition

# every stack with Kueue queues but kai: KAI Scheduler judges its queues, and the module proxy
# refuses KAI v0.17.0's module (403), so it cannot run here (tests/live/README.md "Not here")
STACKS = ("dev", "prod", "skypilot", "gpudirect", "multiregion")
MULTIKUEUE_CONTROLLER = "kueue.x-k8s.io/multikueue"


@dataclass(frozen=True)
class Worker:
    """A MultiKueue worker's live cluster, its objects and the report's model of it."""

    cluster: Cluster
    objects: ClusterObjects
    model: StackModel


# MultiKueueCluster name -> the worker
Workers = dict[str, Worker]


def _assignment_flavors(wl: dict[str, Any]) -> dict[str, dict[str, str]]:
    return {a["name"]: dict(a.get("flavors") or {}) for a in wl["status"]["admission"]["podSetAssignments"]}


def _check_states(wl: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["name"]: c for c in (wl.get("status") or {}).get("admissionChecks") or []}


def _controllers(objects: ClusterObjects) -> dict[str, str]:
    return {
        c["metadata"]["name"]: str((c.get("spec") or {}).get("controllerName"))
        for c in declared(objects, "AdmissionCheck")
    }


def _placement(
    model: StackModel, objects: ClusterObjects, obj: dict[str, Any], wl: dict[str, Any]
) -> list[str]:
    """What is wrong with the started job's pod templates against the flavor and its pool."""
    problems: list[str] = []
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


def _dispatched(
    manager: Cluster, obj: dict[str, Any], wl: dict[str, Any], verdict: Verdict, workers: Workers
) -> tuple[list[str], str]:
    """A MultiKueue manager's reserved Workload, dispatched to the workers (kueue v0.19.2
    ``pkg/controller/admissionchecks/multikueue/workload.go`` ``reconcileGroup``):

    - ``AllAtOnce`` (step 8, ``nominateAndSynchronizeWorkers``): a copy of the Workload, same
      name, on every worker, through the worker's kubeconfig (its MultiKueue ServiceAccount);
    - each worker's own Kueue reserves it in the worker's ClusterQueue and asks its GKE for nodes
      (the worker's ProvisioningRequest check).  The test answers as GKE only on the worker the
      what-if runs it on (``ranOn``): that region has the capacity first;
    - step 6b: the first copy Admitted wins: the manager deletes the other copies, creates the
      job on that worker (``SyncJob``; the worker's Kueue starts it on its admitted Workload with
      the flavor's node labels and the request's podSetUpdates) and sets its own check Ready
      (``syncAdmittingRemoteState``): the manager's Workload is Admitted with ``clusterName``.

    Never admitted by the what-if: no worker gets an answer, and the manager holds it."""
    cq = wl["status"]["admission"]["clusterQueue"]
    name, ns = wl["metadata"]["name"], obj["metadata"]["namespace"]
    copies = {w: _named(worker.cluster, name, ns) for w, worker in workers.items()}
    for w, worker in workers.items():
        worker.cluster.wait_for(copies[w], 60, f"{name}'s copy on worker {w}")
    if not verdict.admitted or verdict.worker is None:
        # GKE answers nowhere: every worker holds its copy, so the manager holds the Workload
        still_held(manager, obj)
        said = {w: (condition(copies[w](), "QuotaReserved") or {}).get("message") for w in workers}
        wrong = [
            f"its copy on {w} is Admitted, the what-if: on no worker"
            for w in workers
            if admitted(copies[w]())
        ]
        return wrong, f"quota reserved on the manager in {cq}, held by every worker {said}"
    chosen, copy = workers[verdict.worker], copies[verdict.worker]
    where = f"{name} on worker {verdict.worker}"
    reserved = chosen.cluster.wait_for(_reserved(copy), 60, f"{where} reserved")
    used = {f for flavors in _assignment_flavors(reserved).values() for f in flavors.values()}
    names = checks_for_admission(chosen.model, reserved["status"]["admission"]["clusterQueue"], used)
    remote = with_checks(chosen.cluster, copy, names, where)
    configs = provisioning_checks(chosen.objects)
    for check in _check_states(remote):
        pr = chosen.cluster.wait_for(
            _request(chosen.cluster, remote, check), 30, f"{check}'s request on {where}"
        )
        provision(chosen.cluster, pr, class_details(configs[check], pr))

    local = manager.wait_for(
        _admitted(lambda: workload_of(manager, obj)), 60, f"{name} admitted on the manager"
    )
    problems = []
    if local["status"].get("clusterName") != verdict.worker:
        problems.append(f"ran on {local['status'].get('clusterName')}, the what-if: on {verdict.worker}")
    remote = chosen.cluster.wait_for(_admitted(copy), 30, f"{where} Admitted")
    started = _unsuspended(chosen.cluster, obj)
    problems += _update_problems(chosen.cluster, remote, configs)
    problems += _placement(chosen.model, chosen.objects, started, remote)
    for w, worker in workers.items():
        if w != verdict.worker:
            worker.cluster.wait_for(_gone(copies[w]), 30, f"{name}'s copy on {w} deleted")
    return problems, f"admitted on the manager in {cq}, run on worker {verdict.worker}"


def _named(cluster: Cluster, name: str, namespace: str) -> Callable[[], dict[str, Any] | None]:
    return lambda: cluster.get(KUEUE, "Workload", name, namespace)


def _reserved(current: Callable[[], dict[str, Any] | None]) -> Callable[[], dict[str, Any] | None]:
    def check() -> dict[str, Any] | None:
        wl = current()
        return wl if (condition(wl, "QuotaReserved") or {}).get("status") == "True" else None

    return check


def _admitted(current: Callable[[], dict[str, Any] | None]) -> Callable[[], dict[str, Any] | None]:
    def check() -> dict[str, Any] | None:
        wl = current()
        return wl if admitted(wl) else None

    return check


def _gone(current: Callable[[], dict[str, Any] | None]) -> Callable[[], bool]:
    return lambda: current() is None


def _unsuspended(cluster: Cluster, obj: dict[str, Any]) -> dict[str, Any]:
    """The job as Kueue started it on ``cluster`` (created there by MultiKueue on a worker)."""
    meta = obj["metadata"]

    def check() -> dict[str, Any] | None:
        stored = cluster.get(obj["apiVersion"], obj["kind"], meta["name"], meta["namespace"])
        # RayJob's ``suspend`` is a bool with omitempty: false is not stored
        return stored if stored and not stored["spec"].get("suspend") else None

    return cluster.wait_for(check, 30, f"Kueue to unsuspend {meta['name']}")


def _update_problems(cluster: Cluster, wl: dict[str, Any], configs: dict[str, dict[str, Any]]) -> list[str]:
    """What is wrong with the admitted Workload's podSetUpdates: only the pod sets using a
    managed resource are in a request (controller.go ``requiredPodSets``: a CPU-only pod set
    gets no podSetUpdate), and each covered pod set consumes the request (its name) in its class
    (controller.go ``podSetUpdates``)."""
    problems = []
    usage = {
        a["name"]: set(a.get("resourceUsage") or {}) for a in wl["status"]["admission"]["podSetAssignments"]
    }
    for check, state in _check_states(wl).items():
        if check not in configs:
            continue
        managed = set(configs[check]["spec"].get("managedResources") or [])
        covered = {u["name"] for u in state.get("podSetUpdates") or []}
        wanted = {p for p, used in usage.items() if not managed or used & managed}
        if covered != wanted:
            problems.append(
                f"{check}: podSetUpdates for {sorted(covered)}, the pod sets using it: {sorted(wanted)}"
            )
        pr_name = str((request_of(cluster, wl, check) or {})["metadata"]["name"])
        klass = configs[check]["spec"]["provisioningClassName"]
        for update in state.get("podSetUpdates") or []:
            annotations = update.get("annotations") or {}
            if annotations.get(CONSUME_ANNOTATION) != pr_name or annotations.get(CLASS_ANNOTATION) != klass:
                problems.append(
                    f"{check}: podSetUpdate {update.get('name')} does not consume {pr_name} ({klass})"
                )
        if not state.get("podSetUpdates"):
            problems.append(f"{check}: no podSetUpdates")
    return problems


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


def _until_active(cluster: Cluster, name: str) -> None:
    """Wait (up to 60 s) for Kueue to call ClusterQueue ``name`` Active, as a team would before
    it submits: a Workload submitted while the ClusterQueue's flavors or admission checks are
    still being reconciled is held "ClusterQueue <name> is inactive" (kueue v0.19.2
    ``pkg/controller/core/workload_controller.go`` ``getQueueBlocker``, from the cache's
    ``ClusterQueueActive``, which the ClusterQueue's ``Active`` condition reports).  The deploy
    leaves Kueue reconciling, and on a loaded machine the first template raced it.  A queue that
    never turns Active is judged as it is: the template is then held, and the test says so."""

    def active() -> bool | None:
        state = condition(cluster.get(KUEUE, "ClusterQueue", name), "Active") or {}
        return True if state.get("status") == "True" else None

    with contextlib.suppress(TimeoutError):
        cluster.wait_for(active, 60, f"ClusterQueue {name} to be Active")


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
    if verdict.admitted and verdict.cluster_queue:
        _until_active(cluster, verdict.cluster_queue)
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
            wl = with_checks(
                cluster,
                lambda: workload_of(cluster, obj),
                checks_for_admission(cluster_model(stack, 0), live_cq, used),
                f"{template.name}'s Workload",
            )
            states = _check_states(wl)
            if any(controllers.get(n) == MULTIKUEUE_CONTROLLER for n in states):
                return _dispatched(cluster, obj, wl, verdict, workers)
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

            try:
                wl = cluster.wait_for(
                    _admitted(lambda: workload_of(cluster, obj)), 60, f"{template.name} to be admitted"
                )
            except TimeoutError:
                failed = second_pass_failure(cluster, wl) if template.flavor else None
                if failed is None:
                    raise
                return [f"never admitted after GKE's answer and its nodes: {failed}"], "held"
            assert all(s["state"] == "Ready" for s in _check_states(wl).values()), wl
            started = _unsuspended(cluster, obj)
            problems = _update_problems(cluster, wl, configs)
            problems += _placement(cluster_model(stack, 0), objects, started, wl)
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
        for worker in workers.values():
            # MultiKueue's copies: the same names on each worker
            remove(worker.cluster, obj)


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
        workers[name] = Worker(deployments[n].cluster, sections[n], cluster_model(stack, n))
    if workers:
        connect_workers(cluster, objects, {n: (w.cluster, w.objects) for n, w in workers.items()})
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
