"""GPU pools whose driver and device plugin cannot give pods their GPUs (``gpu_stack`` has the facts).

- ``gpu-pool-driver-stack``: on a pool the NVIDIA GPU Operator manages, GKE must install no driver
  and run no device plugin, GKE's own sharing cannot apply, and NVIDIA's Driver Manager needs
  Ubuntu nodes; ``gpuSharingConfig`` has GKE's allowed values.  (A pool with GKE's driver or device
  plugin off and no operator is not judged here: another program may install its own; the stack
  config refuses it for this program, and the report shows the pool with no known source.)  The stack config runs the same checks (``stacks/checks/gpu_stack.py``).
- ``kai-fractions-need-gpu-operator``: a KAI fraction pod (``gpu-fraction`` / ``gpu-memory``)
  requests no ``nvidia.com/gpu``; KAI gives it its GPU only through ``NVIDIA_VISIBLE_DEVICES``
  (kai-scheduler/KAI-Scheduler ``pkg/admission/webhook/v1alpha2/gpusharing/gpu_sharing.go`` and
  ``pkg/binder/common/gpu_access.go`` @ v0.17.0), which only NVIDIA's container runtime reads.
  GKE's device plugin hands devices only to containers that request ``nvidia.com/gpu``
  (container-engine-accelerators ``pkg/gpu/nvidia/beta_plugin.go`` ``Allocate``), so on a
  GKE-managed pool the pod starts without a GPU (or is refused: no RuntimeClass ``nvidia``).
- ``gke-shared-gpu-one-per-container``: on a pool with GKE time-sharing or MPS, GKE's device plugin
  refuses a container that asks for more than one shared ``nvidia.com/gpu`` on a node with several
  physical GPUs ("invalid request for sharing GPU ... at most 1 nvidia.com/gpu can be requested on
  multi-GPU nodes": GoogleCloudPlatform/container-engine-accelerators
  ``pkg/gpu/nvidia/gpusharing/gpusharing.go`` ``ValidateRequest``; GKE how-to/timesharing-gpus
  "Limitations").  Single-GPU nodes are left alone: GKE's documentation and the plugin's history
  disagree on whether time-sharing refuses there too.
- ``gpu-operator-critical-quota``: the operator and its operands run at ``system-node-critical``;
  GKE admits pods of ``system-node-critical`` / ``system-cluster-critical`` outside
  ``kube-system`` only under a ResourceQuota whose ``scopeSelector`` names those classes, else
  "insufficient quota to match these scopes" (NVIDIA/cloud-native-docs ``gpu-operator/google-gke.rst``
  and ``manifests/input/google-gke-gpu-operator-quota.yaml``).  The mechanism is the API server's
  ResourceQuota admission configured with ``limitedResources`` ``matchScopes`` PriorityClass In
  [...]: a pod of a limited class is admitted only in a namespace with a quota whose
  ``scopeSelector`` covers it (kubernetes.io docs, concepts/policy/resource-quotas "Limit Priority
  Class consumption by default"); GKE configures it for the two critical classes.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from pulumi_policy import Policy

from ...facts.fit.placement import placement
from ...facts.gpu_stack import (
    DEVICE_PLUGIN_LABEL,
    SetupProblem,
    gpu_source,
    operator_driver_container,
    operator_installed,
    operator_manages,
    operator_problems,
    setup_of,
    sharing_problems,
)
from ...facts.model import NodePool, StackModel
from ...facts.model.helm import GPU_OPERATOR, HelmRelease
from ...facts.model.workloads import GPU_FRACTION_ANNOTATION, GPU_MEMORY_ANNOTATION, PodTemplate
from ...facts.open_world import World, world_schema
from ...facts.pod_templates import owned_templates
from ...primitives.values import Unknown, as_str, dig
from ..kit.builders import stack_policy
from ..kit.report import Reporter

KAI_FRACTION_ANNOTATIONS = (GPU_FRACTION_ANNOTATION, GPU_MEMORY_ANNOTATION)
CRITICAL_CLASSES = frozenset({"system-node-critical", "system-cluster-critical"})
_WIRE = {
    "driver": "nodeConfig.guestAccelerators[].gpuDriverInstallationConfig.gpuDriverVersion",
    "device-plugin-label": f"nodeConfig.labels.{DEVICE_PLUGIN_LABEL}",
    "sharing-strategy": "nodeConfig.guestAccelerators[].gpuSharingConfig.gpuSharingStrategy",
    "shared-clients": "nodeConfig.guestAccelerators[].gpuSharingConfig.maxSharedClientsPerGpu",
    "image-type": "nodeConfig.imageType",
}


def wire_key(problem: SetupProblem) -> str:
    return _WIRE[problem.setting]


def _gpu_pools(model: StackModel) -> list[NodePool]:
    return [p for p in model.node_pools() if p.gpus_per_node() != 0]


def check_pool_driver_stack(model: StackModel, reporter: Reporter, config: Mapping[str, Any]) -> None:
    if not model.gke_clusters():
        return
    installed = operator_installed(model, World.from_config(config))
    driver_container = operator_driver_container(model)
    for pool in _gpu_pools(model):
        setup = setup_of(pool)
        manages = operator_manages(setup, installed)
        if manages is None:
            reporter.cannot_check(
                pool, "whether the GPU Operator manages it (label nvidia.com/gpu.deploy.operands)"
            )
            continue
        for problem in operator_problems(setup, manages, driver_container):
            _report(reporter, pool, problem, " while the NVIDIA GPU Operator manages the pool")
        for problem in sharing_problems(setup):
            _report(reporter, pool, problem, "")


def _report(reporter: Reporter, pool: NodePool, problem: SetupProblem, context: str) -> None:
    shown = "unset" if problem.value is None else repr(problem.value)
    reporter.violation(pool, f"{wire_key(problem)} is {shown}{context}", f"expected {problem.expected}")


def _fraction_note(annotations: Mapping[str, str | Unknown]) -> str:
    key = next(k for k in KAI_FRACTION_ANNOTATIONS if k in annotations)
    value = annotations[key]
    return f"{key}: {'(unknown)' if isinstance(value, Unknown) else value}"


def is_fraction_template(annotations: Mapping[str, str | Unknown]) -> bool:
    return any(key in annotations for key in KAI_FRACTION_ANNOTATIONS)


def check_fractions(model: StackModel, reporter: Reporter, config: Mapping[str, Any]) -> None:
    if not model.gke_clusters():
        return
    installed = operator_installed(model, World.from_config(config))
    gpu_pools = _gpu_pools(model)
    if not gpu_pools:
        return  # no pool to judge; capacity rules speak about GPU pods with nowhere to run
    for owned in owned_templates(model):
        if not is_fraction_template(owned.template.annotations):
            continue
        gpu_ids = {id(p) for p in gpu_pools}
        possible = [p for p in placement(model, owned.template).possible if id(p) in gpu_ids] or gpu_pools
        sources = {
            p.name: gpu_source(setup_of(p), operator_manages(setup_of(p), installed)) for p in possible
        }
        if any(s != "gke" for s in sources.values()):
            continue  # only GKE's own driver + device plugin surely never serve a fraction
        names = ", ".join(f"'{n}' ({s})" for n, s in sorted(sources.items()))
        reporter.violation(
            owned.owner,
            f"pods of {owned.name} ask KAI for part of a GPU ({_fraction_note(owned.template.annotations)}), but the GPU "
            f"pools it can use ({names}) get their GPUs from GKE's driver and device plugin, which give "
            "devices only to containers requesting nvidia.com/gpu; KAI's NVIDIA_VISIBLE_DEVICES needs "
            "NVIDIA's runtime, so the pod never sees a GPU",
            "install the NVIDIA GPU Operator (chart gpu-operator) and give the pool "
            f"gpuDriverVersion INSTALLATION_DISABLED and the node label {DEVICE_PLUGIN_LABEL}=true "
            "(this project: gpuPools[].gpuStack: gpu-operator)",
        )


def _physical_gpus(pool: NodePool) -> int | None:
    counts = [a.count for a in pool.accelerators]
    if any(not isinstance(c, int) for c in counts):
        return None
    return sum(c for c in counts if isinstance(c, int))


def _container_gpus(template: PodTemplate) -> list[tuple[str, Decimal]]:
    """(container name, nvidia.com/gpu) of each container (init containers too)."""
    spec = dig(template.raw, "spec")
    out: list[tuple[str, Decimal]] = []
    for key in ("initContainers", "containers"):
        containers = dig(spec, key)
        for container in containers if isinstance(containers, list) else []:
            gpus = PodTemplate({"spec": {"containers": [container]}}, template.path).gpus()
            if not isinstance(gpus, Unknown):
                out.append((str(dig(container, "name")), gpus))
    return out


def check_shared_gpu_requests(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    if not model.gke_clusters():
        return
    gpu_pools = _gpu_pools(model)
    for owned in owned_templates(model):
        greedy = [(name, gpus) for name, gpus in _container_gpus(owned.template) if gpus > 1]
        if not greedy:
            continue
        ids = {id(p) for p in gpu_pools}
        possible = [p for p in placement(model, owned.template).possible if id(p) in ids]
        refusing = [
            p
            for p in possible
            if setup_of(p).shared
            and not isinstance(setup_of(p).sharing_strategy, Unknown)
            and (_physical_gpus(p) or 0) > 1
        ]
        if not possible or len(refusing) < len(possible):
            continue
        name, gpus = greedy[0]
        pools = ", ".join(f"'{p.name}'" for p in refusing)
        reporter.violation(
            owned.owner,
            f"{owned.name} container '{name}' requests {gpus:f} nvidia.com/gpu, but every GPU pool it can use "
            f"({pools}) shares its GPUs with GKE time-sharing/MPS on nodes with several GPUs, where GKE's device "
            "plugin refuses more than 1 nvidia.com/gpu per container (invalid request for sharing GPU)",
            "request at most 1 nvidia.com/gpu per container (run more pods instead), or use a pool without "
            "gpuSharingConfig",
        )


def _covers_critical(quota: Any) -> bool | None:
    """Whether a ResourceQuota's scopeSelector admits both critical priority classes."""
    expressions = dig(quota.props, "spec", "scopeSelector", "matchExpressions")
    if isinstance(expressions, Unknown):
        return None
    for expression in expressions if isinstance(expressions, list) else []:
        if as_str(dig(expression, "scopeName")) != "PriorityClass":
            continue
        operator = as_str(dig(expression, "operator"))
        values = dig(expression, "values")
        if isinstance(operator, Unknown) or isinstance(values, Unknown):
            return None
        if operator == "Exists":
            return True
        if isinstance(values, list) and any(isinstance(v, Unknown) for v in values):
            return None
        named = {v for v in values if isinstance(v, str)} if isinstance(values, list) else set()
        if operator == "In" and named >= CRITICAL_CLASSES:
            return True
    return False


def _release_namespace(release: HelmRelease) -> str | Unknown:
    namespace = release.namespace
    if isinstance(namespace, Unknown):
        return namespace
    return namespace if isinstance(namespace, str) and namespace else "default"


def check_critical_quota(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    if not model.gke_clusters():
        return
    for release in model.helm_releases(GPU_OPERATOR):
        namespace = _release_namespace(release)
        if isinstance(namespace, Unknown):
            reporter.cannot_check(release, "the release namespace is unknown until apply")
            continue
        if namespace == "kube-system":
            continue  # GKE lets critical pods run there without a quota
        quotas = [q for q in model.kube_objects("", "ResourceQuota") if q.namespace == namespace]
        verdicts = [_covers_critical(q) for q in quotas]
        if any(v is True for v in verdicts):
            continue
        if any(v is None for v in verdicts) or any(not q.identity_known for q in quotas):
            reporter.cannot_check(
                release, f"the ResourceQuotas of namespace '{namespace}' (unknown until apply)"
            )
            continue
        reporter.violation(
            release,
            f"namespace '{namespace}' has no ResourceQuota scoped to PriorityClass In "
            "[system-node-critical, system-cluster-critical]; the GPU Operator and its operands run at "
            "system-node-critical, and GKE refuses such pods outside kube-system without that quota "
            "(insufficient quota to match these scopes)",
            f"declare a v1 ResourceQuota in '{namespace}' with spec.hard.pods (e.g. 100) and "
            "scopeSelector.matchExpressions [{scopeName: PriorityClass, operator: In, values: "
            "[system-node-critical, system-cluster-critical]}] before the release",
        )


POLICIES: list[Policy] = [
    stack_policy(
        "gpu-pool-driver-stack",
        "A GPU pool's driver and device plugin come from exactly one of GKE or the NVIDIA GPU Operator "
        "(INSTALLATION_DISABLED + gke-no-default-nvidia-gpu-device-plugin=true under the operator; no "
        "GKE GPU sharing there), and gpuSharingConfig has GKE's allowed values.",
        check_pool_driver_stack,
        config_schema=world_schema(),
    ),
    stack_policy(
        "kai-fractions-need-gpu-operator",
        "KAI gpu-fraction / gpu-memory pods can only run on GPU pools the NVIDIA GPU Operator manages "
        "(GKE's device plugin never gives them a GPU).",
        check_fractions,
        config_schema=world_schema(),
    ),
    stack_policy(
        "gke-shared-gpu-one-per-container",
        "A container on a GKE time-sharing / MPS pool with several GPUs per node requests at most 1 "
        "nvidia.com/gpu (GKE's device plugin refuses more).",
        check_shared_gpu_requests,
    ),
    stack_policy(
        "gpu-operator-critical-quota",
        "On GKE the GPU Operator's namespace has a ResourceQuota scoped to the system-node-critical / "
        "system-cluster-critical priority classes (GKE refuses its pods otherwise).",
        check_critical_quota,
    ),
]
