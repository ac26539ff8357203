"""MultiKueue rules: a manager that cannot reach its workers, or workers that cannot admit what it dispatches.

Every rule starts from kubernetes-sigs/kueue v0.19.2:

* ``multikueue-worker-kubeconfig`` -- ``pkg/controller/admissionchecks/multikueue/multikueuecluster.go``
  ``loadClientConfig``/``getKubeConfigFromSecret``/``validateKubeconfig``: the Secret named by a
  ``MultiKueueCluster`` (key ``kubeconfig``, in Kueue's namespace) must hold a kubeconfig Kueue
  accepts; otherwise the cluster is inactive (reason ``BadKubeConfig``/``InsecureKubeConfig``) and
  nothing is ever dispatched to it.  One finding per reason, in Kueue's words
  (:mod:`..multikueue.kubeconfig`).  A ``clusterProfileRef`` source is not judged here: Kueue
  allows exec plugins for it.  What is known before apply is judged (the reference, the Secret in
  Kueue's namespace of the same cluster, its key); a kubeconfig text unknown until apply is
  "cannot check yet", and that is right, not a gap of the offline mocks: a program that builds it
  from a cluster created in the same deploy (the multiregion stack: ``components.multikueue``
  ``token_kubeconfig``, the worker's GKE endpoint and its token Secret's ``data``) has it unknown
  in a real first ``pulumi preview`` too, since an ``apply`` over an unknown input is wholly
  unknown; once the workers exist their state is known and the text is judged.
* ``multikueue-kubeconfig-path`` (advisory) -- same file, ``validateKubeConfigPath`` and the
  ``DeprecatedPathUsage`` event: ``locationType: Path`` outside ``/etc/multikueue/kubeconfigs``
  works at 0.19 only while the alpha ``MultiKueueKubeConfigPathValidation`` gate is off (its
  default, ``pkg/features/kube_features.go``) and is "deprecated and will be removed".
* ``multikueue-v1beta1`` (advisory) -- the v0.19.2 CRDs (``charts/kueue/templates/crd/
  kueue.x-k8s.io_multikueueclusters.yaml``) mark v1beta1 ``deprecated: true``, "Use v1beta2
  instead"; the v1beta1 shape ``spec.kubeConfig`` is ``spec.clusterSource.kubeConfig`` in v1beta2
  (``apis/kueue/v1beta2/multikueue_types.go``).  It still works at 0.19.2, hence advisory.
* A ProvisioningRequest check next to the MultiKueue check on a manager ClusterQueue is
  ``kueue-clusterqueue-references``' finding (``rules/kueue_refs.py``, after
  ``pkg/cache/scheduler/clusterqueue.go``: the queue goes inactive,
  ``MultiKueueWithProvisioningRequest``); it is not repeated here.
* ``multikueue-worker-mirror`` -- same page, "the worker cluster acts like a standalone Kueue
  cluster": the manager creates the job and its Workload in the worker under the same namespace
  and ``kueue.x-k8s.io/queue-name``; a worker without that namespace or LocalQueue cannot create
  or admit it.
* ``multikueue-worker-coverage`` -- a resource the manager's dispatching ClusterQueue covers and
  the worker's mirrored ClusterQueue does not: Kueue's flavor assigner finds no flavor for it on
  that worker, so the worker never admits such a workload.  Advisory per worker; the same gap
  on every worker is mandatory-grade and reported as such in the message.
* ``multikueue-gang-fits-a-worker`` -- kubernetes-sigs/kueue#8602: the manager reserves quota
  for a gang from its own ClusterQueue, which may hold more than any one worker; each worker
  admits the copy only within its own quota, so a gang larger than every worker's queue (per
  flavor: nominal, plus the borrowing limit in a cohort) is dispatched and never admitted.
  A gang some worker's quota holds is judged on pools too: on each such worker, the
  single-cluster ``kueue-gang-fits-queue`` logic (``capacity.gang_vs_queued_pool``: the flavor's
  node labels select the pools, a ProvisioningRequest scales ONE queued pool, GPUs per node x
  max nodes) runs over that worker's objects and its GKE cluster's pools
  (``multikueue.clusters.cluster_model``); when every worker's pools refuse it, each worker's
  ProvisioningRequest fails and the gang never runs.
* ``multikueue-manager-quota`` (advisory) -- the concept page: "Ideally, the quota in the manager
  cluster should equal the total quota available in all worker clusters"; below the largest
  worker's, workers stay underutilised; above the sum, the manager dispatches work the workers
  are unlikely to admit.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from pulumi_policy import EnforcementLevel, Policy, PolicyConfigSchema

from ...facts.demand import CannotTellError, pod_request, total
from ...facts.kueue_install import INSTALL_PROPERTIES, feature_gate, kueue_install
from ...facts.model import AdmissionCheck, ClusterQueue, KubeObject, LocalQueue, StackModel
from ...facts.model.helm import KUEUE
from ...facts.multikueue.clusters import (
    KueueCluster,
    Topology,
    cluster_model,
    clusters,
    dispatched_local_queues,
    objects_model,
    provider_urn,
    topologies,
)
from ...facts.multikueue.kubeconfig import BAD, INSECURE, rejections
from ...facts.workload_kinds import kueue_gangs
from ...facts.workload_kinds.base import at_minimum
from ...facts.workload_kinds.queue_names import kueue_queue_name
from ...primitives.tokens import CORE_GROUP, KUEUE_GROUP
from ...primitives.values import Unknown, dig, fmt_num
from ..kit.builders import stack_policy
from ..kit.report import Reporter
from ..kueue.capacity import gang_vs_queued_pool

GPU = "nvidia.com/gpu"

SECRET_KEY = "kubeconfig"  # MultiKueueConfigSecretKey
PATH_PREFIX = "/etc/multikueue/kubeconfigs"  # defaultKubeConfigPathPrefix
DEFAULT_KUEUE_NAMESPACE = "kueue-system"
# Namespaces every cluster has (kubernetes.io/docs/concepts/overview/working-with-objects/namespaces,
# "Initial namespaces"): a worker needs no declaration for these.
INITIAL_NAMESPACES = frozenset({"default", "kube-system", "kube-public", "kube-node-lease"})


def _kubeconfig_ref(obj: KubeObject) -> Any:
    """``spec.clusterSource.kubeConfig`` (v1beta2) or ``spec.kubeConfig`` (v1beta1)."""
    if obj.version == "v1beta1":
        return dig(obj.spec, "kubeConfig")
    return dig(obj.spec, "clusterSource", "kubeConfig")


def _kueue_namespace(model: StackModel, cluster: KueueCluster) -> str:
    """Where Kueue reads worker Secrets: its own namespace (the release's), else kueue-system."""
    for release in model.helm_releases(KUEUE):
        ns = release.namespace
        if isinstance(ns, str) and ns and provider_urn(model, release.res) == cluster.provider:
            return ns
    return DEFAULT_KUEUE_NAMESPACE


def _secret_text(secret: KubeObject) -> str | Unknown | None:
    """The Secret's ``kubeconfig`` value: ``stringData`` wins over ``data`` as the API server merges."""
    text = dig(secret.props, "stringData", SECRET_KEY)
    if isinstance(text, (str, Unknown)):
        return text
    encoded = dig(secret.props, "data", SECRET_KEY)
    if isinstance(encoded, Unknown):
        return encoded
    if not isinstance(encoded, str):
        return None
    try:
        return base64.b64decode(encoded, validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        raise ValueError(f"data.{SECRET_KEY} is not base64 of UTF-8 text") from None


def check_worker_kubeconfig(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    for cluster in clusters(model):
        namespace = _kueue_namespace(model, cluster)
        for mkc in sorted(cluster.of(KUEUE_GROUP, "MultiKueueCluster"), key=lambda o: o.urn):
            ref = _kubeconfig_ref(mkc)
            if isinstance(ref, Unknown):
                reporter.cannot_check(mkc, "its kubeConfig is unknown until apply")
                continue
            if not isinstance(ref, Mapping):
                continue  # a clusterProfileRef source, or nothing (the CRD requires a source)
            kind, location = ref.get("locationType", "Secret"), ref.get("location")
            if kind != "Secret":
                continue
            if isinstance(location, Unknown) or isinstance(kind, Unknown):
                reporter.cannot_check(mkc, "its kubeConfig location is unknown until apply")
                continue
            secret = cluster.find(CORE_GROUP, "Secret", str(location), namespace)
            if secret is None:
                reporter.not_in_stack(mkc, f"Secret '{namespace}/{location}' holding the worker kubeconfig")
                continue
            try:
                text = _secret_text(secret)
            except ValueError as bad:
                reporter.violation(
                    mkc,
                    f"its kubeconfig Secret {namespace}/{location} cannot be read: {bad} (the API server "
                    "refuses such a Secret)",
                    f"set `stringData.{SECRET_KEY}` to the kubeconfig text, or `data.{SECRET_KEY}` to its base64",
                )
                continue
            if isinstance(text, Unknown):
                reporter.cannot_check(
                    mkc, f"Secret '{namespace}/{location}' key {SECRET_KEY} is unknown until apply"
                )
                continue
            if text is None:
                reporter.violation(
                    mkc,
                    f'Kueue marks it inactive (reason {BAD}): key "{SECRET_KEY}" not found in secret "{location}"',
                    f"store the worker kubeconfig under key `{SECRET_KEY}` of Secret {namespace}/{location}",
                )
                continue
            for reason in rejections(text):
                reporter.violation(
                    mkc,
                    f"Kueue marks it inactive (reason {INSECURE}) and dispatches nothing to it: {reason} "
                    f"(kubeconfig in Secret {namespace}/{location})",
                    "give the worker a token kubeconfig: a ServiceAccount token, certificate-authority-data "
                    "and an https server, no exec plugin or file paths (Kueue's create-multikueue-kubeconfig.sh)",
                )


def _path_problem(location: str) -> str | None:
    """Kueue ``validateKubeConfigPath`` (the gate on), without touching this machine's files."""
    parts = location.split("/")
    if ".." in parts:
        return 'path contains ".."'
    if not location.startswith("/"):
        return "path must be absolute"
    cleaned = "/" + "/".join(p for p in parts if p not in ("", "."))
    if not (cleaned + "/").startswith(PATH_PREFIX + "/"):
        return f'"{cleaned}" is not under "{PATH_PREFIX}"'
    return None


def check_kubeconfig_path(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    for mkc in model.kube_objects(KUEUE_GROUP, "MultiKueueCluster"):
        ref = _kubeconfig_ref(mkc)
        if not isinstance(ref, Mapping) or ref.get("locationType") != "Path":
            continue
        location = ref.get("location")
        if isinstance(location, Unknown):
            reporter.cannot_check(mkc, "its kubeConfig location is unknown until apply")
            continue
        problem = _path_problem(str(location or ""))
        if problem is not None:
            reporter.violation(
                mkc,
                f"locationType Path at {location!r}: {problem}; Kueue 0.19 accepts it only while the "
                "MultiKueueKubeConfigPathValidation gate is off and warns it is deprecated and will be removed",
                f"use locationType Secret, or mount the kubeconfig under {PATH_PREFIX}/",
            )


def check_v1beta1(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    for obj in model.kube_objects(KUEUE_GROUP):
        if obj.version != "v1beta1" or obj.rendered_from is not None:
            continue
        if obj.kind == "AdmissionCheck":
            check: AdmissionCheck = model.view(obj)
            if check.controller_name != "kueue.x-k8s.io/multikueue":
                continue
        elif obj.kind not in ("MultiKueueCluster", "MultiKueueConfig"):
            continue
        shape = (
            " (and `spec.kubeConfig` becomes `spec.clusterSource.kubeConfig`)"
            if obj.kind == "MultiKueueCluster"
            else ""
        )
        reporter.violation(
            obj,
            "MultiKueue object in kueue.x-k8s.io/v1beta1, which Kueue 0.19.2's CRD marks deprecated "
            '("Use v1beta2 instead")',
            f"write it as kueue.x-k8s.io/v1beta2{shape}",
        )


def _worker_cq(model: StackModel, worker: KueueCluster, lq: LocalQueue) -> ClusterQueue | None:
    mirror = worker.find(KUEUE_GROUP, "LocalQueue", lq.name, lq.namespace)
    if mirror is None:
        return None
    target = model.view(mirror).cluster_queue
    found = worker.find(KUEUE_GROUP, "ClusterQueue", target) if isinstance(target, str) else None
    return model.view(found) if found is not None else None


def check_worker_mirror(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    for topo in topologies(model):
        for lq in dispatched_local_queues(model, topo.manager):
            for worker in topo.workers:
                ns = lq.namespace
                if ns not in INITIAL_NAMESPACES and worker.find(CORE_GROUP, "Namespace", ns) is None:
                    reporter.violation(
                        lq,
                        f"namespace '{ns}' is not declared on worker cluster of {worker.label}, so the manager "
                        "cannot create the dispatched job there",
                        f"declare Namespace {ns} on every worker",
                    )
                if worker.find(KUEUE_GROUP, "LocalQueue", lq.name, ns) is None:
                    reporter.violation(
                        lq,
                        f"no LocalQueue {ns}/{lq.name} on worker cluster of {worker.label}: the dispatched "
                        "Workload names a queue that does not exist there and is never admitted",
                        f"declare LocalQueue {ns}/{lq.name} on every worker",
                    )


def _manager_cq(model: StackModel, topo: Topology, lq: LocalQueue) -> ClusterQueue | None:
    """The manager's ClusterQueue behind ``lq``, in the manager's cluster (workers reuse the name)."""
    target = lq.cluster_queue
    found = topo.manager.find(KUEUE_GROUP, "ClusterQueue", target) if isinstance(target, str) else None
    return model.view(found) if found is not None else None


def _covered(cq: ClusterQueue) -> set[str]:
    return {r for g in cq.resource_groups for r in g.covered_resources if isinstance(r, str)}


def check_worker_coverage(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    for topo in topologies(model):
        for lq in dispatched_local_queues(model, topo.manager):
            manager_cq = _manager_cq(model, topo, lq)
            if manager_cq is None:
                continue
            wanted = _covered(manager_cq)
            gaps: dict[str, set[str]] = {}
            for worker in topo.workers:
                worker_cq = _worker_cq(model, worker, lq)
                if worker_cq is not None:
                    gaps[worker.label] = wanted - _covered(worker_cq)
            for label, missing in gaps.items():
                for resource in sorted(missing):
                    everywhere = all(resource in m for m in gaps.values())
                    reporter.violation(
                        lq,
                        f"the manager covers {resource} but the worker ClusterQueue behind this queue on "
                        f"{label} does not, so that worker never admits a workload asking for it"
                        + (
                            "; no worker covers it, so such workloads are never admitted"
                            if everywhere
                            else ""
                        ),
                        f"cover {resource} in the worker's ClusterQueue (as on the manager)",
                    )


def _nominal(cq: ClusterQueue, resource: str) -> Decimal | None:
    total = Decimal(0)
    for _flavor, quota in cq.quotas(resource):
        if quota.nominal_quota.value is None:
            return None
        total += quota.nominal_quota.value
    return total


def _quota_findings(model: StackModel, topo: Topology, lq: LocalQueue, reporter: Reporter) -> None:
    manager_cq = _manager_cq(model, topo, lq)
    if manager_cq is None:
        return
    worker_cqs = [_worker_cq(model, w, lq) for w in topo.workers]
    if not worker_cqs or None in worker_cqs:
        return  # a worker without the mirrored queue: multikueue-worker-mirror reports it
    # A resource some worker does not cover is multikueue-worker-coverage's finding.
    for resource in sorted(
        set.intersection(_covered(manager_cq), *(_covered(cq) for cq in worker_cqs if cq))
    ):
        manager = _nominal(manager_cq, resource)
        workers = [_nominal(cq, resource) for cq in worker_cqs if cq is not None]
        if manager is None or any(w is None for w in workers):
            reporter.cannot_check(manager_cq, f"a {resource} nominalQuota is not known until apply")
            continue
        known = [w for w in workers if w is not None]
        largest, total = max(known), sum(known, Decimal(0))
        if manager < largest:
            reporter.violation(
                manager_cq,
                f"{resource} quota {fmt_num(manager)} on the manager is below the largest worker's "
                f"{fmt_num(largest)}: workers stay underutilised (Kueue's MultiKueue concept page)",
                f"set the manager's {resource} nominalQuota to the workers' total, {fmt_num(total)}",
            )
        elif manager > total:
            reporter.violation(
                manager_cq,
                f"{resource} quota {fmt_num(manager)} on the manager is above the workers' total "
                f"{fmt_num(total)}: it dispatches work the workers are unlikely to admit",
                f"set the manager's {resource} nominalQuota to the workers' total, {fmt_num(total)}",
            )


def check_manager_quota(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    for topo in topologies(model):
        seen: set[str] = set()
        for lq in dispatched_local_queues(model, topo.manager):
            if isinstance(lq.cluster_queue, str) and lq.cluster_queue not in seen:
                seen.add(lq.cluster_queue)
                _quota_findings(model, topo, lq, reporter)


def _flavor_caps(cq: ClusterQueue, resource: str) -> list[Decimal] | None:
    """Per flavor, the most ``resource`` one workload can be admitted with: nominal, plus the
    borrowing limit when the queue is in a cohort (unlimited borrowing counts as the nominal:
    what the cohort lends is not known from one queue).  None: a quota not known until apply."""
    caps: list[Decimal] = []
    for _flavor, quota in cq.quotas(resource):
        nominal = quota.nominal_quota.value
        if nominal is None:
            return None
        borrow = quota.borrowing_limit.value if quota.borrowing_limit is not None else None
        caps.append(nominal + (borrow if borrow is not None and cq.cohort else Decimal(0)))
    return caps


def _gang_gpus(pod_sets: Any) -> Decimal:
    return total(pod_sets, lambda template: pod_request(template, GPU))


def _pool_refusal(model: StackModel, worker: KueueCluster, cq: ClusterQueue, gang: Any) -> str | None:
    """Why none of ``worker``'s queued-provisioning pools can hold ``gang`` (None: one can, or it
    cannot be told).  The single-cluster rule's own logic (``capacity.gang_vs_queued_pool``: the
    flavors' node labels -> the pools, GPUs per node x max nodes, ONE pool per
    ProvisioningRequest) run on the worker's objects and its GKE cluster's pools alone."""
    sub = cluster_model(model, worker)
    if sub is None or not sub.node_pools():
        return None
    found: list[str] = []
    gang_vs_queued_pool(
        sub,
        cq,
        sub.view(cq.obj),
        list(at_minimum(gang.pod_sets)),
        Reporter(lambda m, _u: found.append(m), stack=True),
    )
    if not found:
        return None
    problem = found[0].split(": ", 1)[-1].split(". Fix: ", 1)[0]
    return f"{worker.label}: {problem}"


def check_gang_fits_a_worker(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    for topo in topologies(model):
        queues = {(lq.namespace, lq.name): lq for lq in dispatched_local_queues(model, topo.manager)}
        manager_objects = {id(o) for o in topo.manager.objects}
        for counted in kueue_gangs(model):
            if id(counted.obj) not in manager_objects or counted.error is not None:
                continue
            label = kueue_queue_name(counted.obj)
            lq = queues.get((counted.obj.namespace or "default", label)) if isinstance(label, str) else None
            if lq is None:
                continue
            manager_cq = _manager_cq(model, topo, lq)
            workers = [_worker_cq(model, w, lq) for w in topo.workers]
            if manager_cq is None or not workers or None in workers:
                continue  # an unmirrored queue is multikueue-worker-mirror's finding
            manager_caps = _flavor_caps(manager_cq, GPU)
            worker_caps = [_flavor_caps(cq, GPU) for cq in workers if cq is not None]
            if manager_caps is None or any(c is None for c in worker_caps):
                reporter.cannot_check(lq, "a GPU nominalQuota is not known until apply")
                continue
            best = max((c for caps in worker_caps if caps for c in caps), default=Decimal(0))
            for gang in counted.gangs:
                try:
                    # A worker's Kueue may admit a Job shrunk to its min-parallelism (PartialAdmission,
                    # on by default): the smallest gang is what must fit.
                    need = _gang_gpus(list(at_minimum(gang.pod_sets)))
                except CannotTellError as why:
                    reporter.cannot_check(gang.subject, why.what)
                    continue
                if not any(need <= c for c in manager_caps):
                    continue  # already too big for the manager (its own rule's finding)
                if need > best:
                    reporter.violation(
                        gang.subject,
                        f"the gang needs {fmt_num(need)} GPUs: the manager's {manager_cq.name} admits it, but no "
                        f"worker's ClusterQueue can (largest: {fmt_num(best)}), so it is dispatched and never "
                        "admitted on any worker (kueue#8602)",
                        "raise the workers' quota (and pools) to hold the gang, or split it",
                    )
                    continue
                by_quota = [
                    (w, cq)
                    for w, cq, caps in zip(topo.workers, workers, worker_caps, strict=True)
                    if cq is not None and caps and any(need <= c for c in caps)
                ]
                refusals = [
                    r for w, cq in by_quota if cq is not None and (r := _pool_refusal(model, w, cq, gang))
                ]
                if refusals and len(refusals) == len(by_quota):
                    reporter.violation(
                        gang.subject,
                        f"the gang needs {fmt_num(need)} GPUs: the manager's {manager_cq.name} admits it and the "
                        "workers' quota holds it, but no worker's node pools can ("
                        + "; ".join(refusals)
                        + "), so "
                        "every worker's ProvisioningRequest fails and the gang is never admitted (kueue#8602)",
                        "give a worker a queued-provisioning pool that holds the whole gang (GPUs per node x max "
                        "nodes), or split the gang",
                    )


CLUSTER_PROFILE_GATE = "MultiKueueClusterProfile"  # kube_features.go: Alpha since 0.15, off by default
CLUSTER_PROFILE_FIX = (
    "enable the MultiKueueClusterProfile feature gate in the manager's Kueue (Configuration featureGates "
    "or the chart's controllerManager.featureGates) and set multiKueue.clusterProfile.accessProviders "
    "(an exec plugin such as GKE's gcp-auth-plugin, mounted into kueue-controller-manager), as "
    "gke-fleet-management's multikueue-clusterprofile does"
)


def _access_providers(configs: Any) -> list[Any] | Unknown | None:
    """``multiKueue.clusterProfile.accessProviders`` (else the deprecated ``credentialsProviders``,
    ``controllers.go`` ``SetupControllers``); None when the Configuration has no ``clusterProfile``."""
    for config in configs:
        profile = dig(config, "multiKueue", "clusterProfile")
        if isinstance(profile, Unknown):
            return profile
        if isinstance(profile, dict):
            providers = profile.get("accessProviders") or profile.get("credentialsProviders")
            if isinstance(providers, Unknown):
                return providers
            return list(providers) if isinstance(providers, list) else []
    return None


def check_cluster_profile_access(model: StackModel, reporter: Reporter, config: Mapping[str, Any]) -> None:
    """A MultiKueueCluster whose source is a ClusterProfile reaches its worker only when the
    manager's Kueue has the ``MultiKueueClusterProfile`` gate on and an access provider
    (kubernetes-sigs/kueue v0.19.2 ``pkg/controller/admissionchecks/multikueue/multikueuecluster.go``
    ``loadClientConfig``: gate off -> inactive, reason ``MultiKueueClusterProfileFeatureDisabled``;
    ``controllers.go`` ``SetupControllers``: no ``accessProviders`` -> the no-op provider, whose
    ``BuildConfigFromCP`` fails "no access provider configured", reason ``BadClusterProfile``)."""
    for topo in topologies(model):
        profiled = [
            o
            for o in topo.manager.of(KUEUE_GROUP, "MultiKueueCluster")
            if dig(o.props, "spec", "clusterSource", "clusterProfileRef") is not None
        ]
        if not profiled:
            continue
        sub = objects_model(model, topo.manager)
        gate = feature_gate(sub, config, CLUSTER_PROFILE_GATE)
        install = kueue_install(sub, config)
        assumed = f" ({install.assumption})" if install.assumption else ""
        for obj in profiled:
            if isinstance(gate, Unknown) or install.unknown is not None:
                reporter.cannot_check(obj, "the manager's Kueue feature gates or Configuration")
                continue
            if gate is not True:
                reporter.violation(
                    obj,
                    "its clusterSource is a ClusterProfile, but the manager's Kueue runs without the "
                    f"{CLUSTER_PROFILE_GATE} feature gate (alpha, off by default in Kueue 0.19.2){assumed}: "
                    "Kueue marks the MultiKueueCluster inactive (MultiKueueClusterProfileFeatureDisabled) "
                    "and never reaches the worker",
                    CLUSTER_PROFILE_FIX,
                )
                continue
            providers = _access_providers(install.configs)
            if isinstance(providers, Unknown):
                reporter.cannot_check(obj, "the manager's multiKueue.clusterProfile access providers")
            elif not providers:
                reporter.violation(
                    obj,
                    "its clusterSource is a ClusterProfile, but the manager's Kueue Configuration sets no "
                    f"multiKueue.clusterProfile.accessProviders{assumed}: Kueue builds no credentials for it "
                    "(BadClusterProfile: no access provider configured) and never reaches the worker",
                    CLUSTER_PROFILE_FIX,
                )


POLICIES: list[Policy] = [
    stack_policy(
        "multikueue-worker-kubeconfig",
        "A MultiKueueCluster's kubeconfig Secret must hold a kubeconfig Kueue accepts (no exec plugin, token "
        "file, insecure TLS, CA file path, basic auth or missing server).",
        check_worker_kubeconfig,
    ),
    stack_policy(
        "multikueue-clusterprofile-access",
        "A MultiKueueCluster whose clusterSource is a ClusterProfile needs the manager's Kueue "
        "MultiKueueClusterProfile feature gate and a multiKueue.clusterProfile access provider.",
        check_cluster_profile_access,
        config_schema=PolicyConfigSchema(properties=INSTALL_PROPERTIES),
    ),
    stack_policy(
        "multikueue-kubeconfig-path",
        "A MultiKueueCluster with locationType Path should point under /etc/multikueue/kubeconfigs/.",
        check_kubeconfig_path,
        enforcement_level=EnforcementLevel.ADVISORY,
    ),
    stack_policy(
        "multikueue-v1beta1",
        "MultiKueue objects should use kueue.x-k8s.io/v1beta2 (v1beta1 is deprecated).",
        check_v1beta1,
        enforcement_level=EnforcementLevel.ADVISORY,
    ),
    stack_policy(
        "multikueue-worker-mirror",
        "Every namespace and LocalQueue the MultiKueue manager dispatches from must exist on every worker.",
        check_worker_mirror,
    ),
    stack_policy(
        "multikueue-worker-coverage",
        "A worker's ClusterQueue should cover every resource the manager's dispatching ClusterQueue covers.",
        check_worker_coverage,
        enforcement_level=EnforcementLevel.ADVISORY,
    ),
    stack_policy(
        "multikueue-gang-fits-a-worker",
        "A gang the MultiKueue manager admits must fit at least one worker's ClusterQueue (kueue#8602).",
        check_gang_fits_a_worker,
    ),
    stack_policy(
        "multikueue-manager-quota",
        "The MultiKueue manager's quota should equal the workers' total (Kueue's MultiKueue concept page).",
        check_manager_quota,
        enforcement_level=EnforcementLevel.ADVISORY,
    ),
]
