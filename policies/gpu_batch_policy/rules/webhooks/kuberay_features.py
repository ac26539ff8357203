"""The rest of KubeRay v1.7.0's validation: what :mod:`.kuberay` did not port (issue 42, item 1).

The stack installs KubeRay v1.7.0 (``charts.lock.yaml``), so that is the version judged.  Source:
ray-project/kuberay v1.7.0 ``ray-operator/controllers/ray/utils/validation.go``; the operator runs
it on every reconcile and its webhooks (``ray-operator/pkg/webhooks/v1``) at admission, so a
refused object never runs.  Feature gates at their v1.7.0 defaults (``pkg/features/features.go``),
unless a kuberay-operator release of the stack lists the gate in ``featureGates`` (the chart passes
that list to ``--feature-gates``).

``kuberay-cluster-features`` (``ValidateRayClusterSpec`` for RayCluster, RayJob's ``rayClusterSpec``
and RayService's ``rayClusterConfig``, with the owner's annotations):

* GCS fault tolerance: not both the ``ray.io/ft-enabled`` annotation and ``gcsFaultToleranceOptions``;
  ``RAY_REDIS_ADDRESS`` on the head only with fault tolerance; with ``gcsFaultToleranceOptions`` no
  ``redis-password`` start parameter, no ``REDIS_PASSWORD``/``RAY_REDIS_ADDRESS`` head env, no
  ``ray.io/external-storage-namespace`` annotation, and ``validateGcsFaultToleranceBackend``
  (``rocksdb`` needs gate ``GCSFaultToleranceEmbeddedStorage`` (Alpha, off) and no redis fields;
  ``redis`` takes no ``storage``); never a ``redis-username`` start parameter or ``REDIS_USERNAME``;
* ``autoscalerOptions.env`` without ``KUBERAY_GEN_AUTOSCALER_START_CMD``;
* ``historyServerOptions`` needs gate ``RayClusterHistoryServer`` (Alpha, off) (its
  ``validateCollectorOptions`` is then reached only with the gate on, and is not ported);
* ``authOptions``: mode ``token`` needs ``rayVersion`` >= 2.52.0 (``version.ParseGeneric``);
  ``enableK8sTokenAuth`` needs mode ``token``, ``rayVersion`` >= 2.55.0 and no ``secretName``, and is
  refused on RayJob and RayService (``ValidateRayJobSpec``, ``ValidateRayServiceSpec``);
* ``networkPolicy`` needs gate ``RayClusterNetworkPolicy`` (Alpha, off), then ``validateNetworkPolicy``;
  ``tlsOptions`` needs gate ``RayClusterMTLS`` (Alpha, off), then ``validateTLSOptions``;
* ``validateWorkerGroupPriority``: a non-zero worker ``priority`` needs ``rayVersion`` >= 2.56.0 and
  autoscaler v2;
* ``ValidateRayClusterUpgradeOptions`` (RayCluster): ``upgradeStrategy.type`` is ``Recreate`` or
  ``None``, and is not set on a RayCluster labelled as created by a RayJob or RayService.

``kuberay-rayjob-deletion`` (``validateDeletionConfiguration`` after the TTL check ported in
:mod:`.kuberay`): ``deletionStrategy`` needs gate ``RayJobDeletionPolicy`` (Beta, on); rules exclude
``shutdownAfterJobFinishes`` and the legacy ``onSuccess``/``onFailure``; one of the two forms is
given; ``validateLegacyDeletionPolicies`` and ``validateDeletionRules`` (``validateDeletionCondition``,
duplicates, ``validateTTLConsistency``: Workers <= Cluster <= Self).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping
from typing import Any

from pulumi_policy import Policy

from ...facts.demand import CannotTellError
from ...facts.model import RayWorkload, StackModel
from ...primitives.k8s_names import dns1123_label_error
from ...primitives.values import Unknown
from ..kit.builders import stack_policy
from ..kit.report import Reporter
from .port import CANNOT, NOT_A_CHECK, Problem, Upstream, get, items, known, mapping, number, text

UPSTREAM = Upstream(
    project="KubeRay",
    repo="ray-project/kuberay",
    ref="v1.7.0",
    version="v1.7.0",
    why="the version the stack installs",
    files=("ray-operator/controllers/ray/utils/validation.go",),
)
GATE_DEFAULTS = {
    "RayJobDeletionPolicy": True,
    "RayClusterNetworkPolicy": False,
    "GCSFaultToleranceEmbeddedStorage": False,
    "RayClusterMTLS": False,
    "RayClusterHistoryServer": False,
}
FT_ANNOTATION = "ray.io/ft-enabled"
EXTERNAL_STORAGE_ANNOTATION = "ray.io/external-storage-namespace"
CREATOR_LABEL = "ray.io/originated-from-crd"
TLS_ENV = ("RAY_USE_TLS", "RAY_TLS_SERVER_CERT", "RAY_TLS_SERVER_KEY", "RAY_TLS_CA_CERT")
TLS_VOLUME, TLS_PATH = "ray-tls", "/etc/ray/tls"
GCS_VOLUME, GCS_PATH = "gcs-storage", "/data/gcs"
GENERIC_VERSION = re.compile(r"\s*v?((?:0|[1-9][0-9]*)(?:\.[0-9]+)+)")


class Gates:
    """KubeRay feature gates: a kuberay-operator release's ``featureGates`` entries, else v1.7.0's defaults."""

    def __init__(self, model: StackModel) -> None:
        self.listed: dict[str, bool | Unknown] = {}
        for release in model.kuberay_releases():
            entries = release.value("featureGates")
            if isinstance(entries, Unknown):
                self.listed = {name: entries for name in GATE_DEFAULTS}
                return
            for entry in entries if isinstance(entries, list) else []:
                name, on = (
                    (entry.get("name"), entry.get("enabled")) if isinstance(entry, dict) else (None, None)
                )
                if isinstance(name, str):
                    self.listed[name] = on if isinstance(on, (bool, Unknown)) else False

    def on(self, name: str) -> bool:
        return bool(known(self.listed.get(name, GATE_DEFAULTS[name]), f"KubeRay feature gate {name}"))


def ray_version_below(text_version: str, minimum: tuple[int, ...]) -> bool | None:
    """``version.ParseGeneric(v).LessThan(minimum)``; None when ParseGeneric fails."""
    match = GENERIC_VERSION.match(text_version)
    if match is None:
        return None
    parts = tuple(int(p) for p in match.group(1).split("."))
    width = max(len(parts), len(minimum))
    return parts + (0,) * (width - len(parts)) < minimum + (0,) * (width - len(minimum))


def _env_names(container: Any) -> set[str]:
    return {text(e, "name") or "" for e in items(container, "env")}


def _head_container(cluster: Any) -> Any:
    containers = items(cluster, "headGroupSpec", "template", "spec", "containers")
    return containers[0] if containers else {}


def gcs_problems(cluster: Any, annotations: Mapping[str, Any], gates: Gates) -> list[Problem]:
    """The GCS fault-tolerance part of ``ValidateRayClusterSpec`` and ``validateGcsFaultToleranceBackend``."""
    options = get(cluster, "gcsFaultToleranceOptions")
    head = _head_container(cluster)
    env = _env_names(head)
    start = mapping(cluster, "headGroupSpec", "rayStartParams")
    ft_annotation = known(annotations.get(FT_ANNOTATION), f"annotation {FT_ANNOTATION}")
    problems: list[Problem] = []
    if ft_annotation and options is not None:
        problems.append(
            (
                f"sets both the {FT_ANNOTATION} annotation and gcsFaultToleranceOptions",
                "keep gcsFaultToleranceOptions only",
            )
        )
    ft_on = (isinstance(ft_annotation, str) and ft_annotation.lower() == "true") or options is not None
    if not ft_on and "RAY_REDIS_ADDRESS" in env:
        problems.append(
            (
                "sets RAY_REDIS_ADDRESS on the head without GCS fault tolerance",
                "configure gcsFaultToleranceOptions instead",
            )
        )
    if isinstance(options, dict):
        if start.get("redis-password"):
            problems.append(
                (
                    "sets rayStartParams redis-password with gcsFaultToleranceOptions",
                    "use gcsFaultToleranceOptions.redisPassword",
                )
            )
        for name, field in (("REDIS_PASSWORD", "redisPassword"), ("RAY_REDIS_ADDRESS", "redisAddress")):
            if name in env:
                problems.append(
                    (
                        f"sets the head env var {name} with gcsFaultToleranceOptions",
                        f"use gcsFaultToleranceOptions.{field}",
                    )
                )
        if known(annotations.get(EXTERNAL_STORAGE_ANNOTATION), EXTERNAL_STORAGE_ANNOTATION):
            problems.append(
                (
                    f"sets the {EXTERNAL_STORAGE_ANNOTATION} annotation with gcsFaultToleranceOptions",
                    "use gcsFaultToleranceOptions.externalStorageNamespace",
                )
            )
        problems += _gcs_backend_problems(
            options, head, items(cluster, "headGroupSpec", "template", "spec", "volumes"), gates
        )
    if start.get("redis-username") or "REDIS_USERNAME" in env:
        problems.append(
            (
                "sets a redis username in rayStartParams or REDIS_USERNAME",
                "use gcsFaultToleranceOptions.redisUsername",
            )
        )
    return problems


def _gcs_backend_problems(
    options: dict[str, Any], head: Any, volumes: list[Any], gates: Gates
) -> list[Problem]:
    """``validateGcsFaultToleranceBackend``."""
    if (text(options, "backend") or "redis") != "rocksdb":
        if get(options, "storage") is not None:
            return [
                (
                    "sets gcsFaultToleranceOptions.storage with the redis backend",
                    "drop storage or use backend rocksdb",
                )
            ]
        return []
    if not gates.on("GCSFaultToleranceEmbeddedStorage"):
        return [
            (
                "uses the rocksdb GCS backend without the GCSFaultToleranceEmbeddedStorage feature gate (Alpha, off)",
                "use the redis backend or enable the gate",
            )
        ]
    for key in ("redisAddress", "redisUsername", "redisPassword", "externalStorageNamespace"):
        if get(options, key) not in (None, ""):
            return [(f"sets gcsFaultToleranceOptions.{key} with the rocksdb backend", f"drop {key}")]
    storage = mapping(options, "storage")
    if text(storage, "claimName") and any(
        get(storage, k) not in (None, []) for k in ("size", "storageClassName", "accessModes")
    ):
        return [
            ("sets storage.claimName together with size, storageClassName or accessModes", "use one of them")
        ]
    if _env_names(head) & {"RAY_gcs_storage", "RAY_gcs_storage_path"}:
        return [
            (
                "sets RAY_gcs_storage or RAY_gcs_storage_path on the head with the rocksdb backend",
                "drop them; KubeRay manages them",
            )
        ]
    if any(
        text(m, "mountPath") == GCS_PATH or text(m, "name") == GCS_VOLUME for m in items(head, "volumeMounts")
    ):
        return [
            (f"mounts '{GCS_VOLUME}' or {GCS_PATH} in the head with the rocksdb backend", "drop that mount")
        ]
    if any(text(v, "name") == GCS_VOLUME for v in volumes):
        return [(f"declares a head volume '{GCS_VOLUME}' with the rocksdb backend", "rename it")]
    return []


def auth_problems(cluster: Any, kind: str) -> list[Problem]:
    """``authOptions`` in ``ValidateRayClusterSpec``, and the RayJob/RayService refusal of k8s token auth."""
    auth = get(cluster, "authOptions")
    if not isinstance(auth, dict):
        return []
    k8s_auth = get(auth, "enableK8sTokenAuth") is True
    problems: list[Problem] = []
    if k8s_auth and kind in ("RayJob", "RayService"):
        problems.append(
            (
                f"enables authOptions.enableK8sTokenAuth, which a {kind} does not support",
                "drop enableK8sTokenAuth",
            )
        )
    if text(auth, "mode") != "token":
        if k8s_auth:
            problems.append(
                ("enables authOptions.enableK8sTokenAuth without mode 'token'", "set authOptions.mode: token")
            )
        return problems
    ray_version = text(cluster, "rayVersion") or ""
    below = ray_version_below(ray_version, (2, 52, 0)) if ray_version else None
    if not ray_version:
        problems.append(
            ("uses authOptions.mode token without rayVersion (2.52.0 or later is required)", "set rayVersion")
        )
    elif below is None:
        problems.append(
            (
                f"uses authOptions.mode token with an unparsable rayVersion '{ray_version}'",
                "set rayVersion like 2.52.0",
            )
        )
    elif below:
        problems.append(
            (
                f"uses authOptions.mode token with rayVersion {ray_version}, below 2.52.0",
                "use Ray 2.52.0 or later",
            )
        )
    elif k8s_auth:
        if ray_version_below(ray_version, (2, 55, 0)):
            problems.append(
                (
                    f"enables authOptions.enableK8sTokenAuth with rayVersion {ray_version}, below 2.55.0",
                    "use Ray 2.55.0 or later",
                )
            )
        elif text(auth, "secretName"):
            problems.append(
                ("enables authOptions.enableK8sTokenAuth and sets authOptions.secretName", "drop secretName")
            )
    return problems


def _rules_against_mode(where: str, rules: Any, mode: str) -> list[Problem]:
    if mode == "DenyAllEgress" and items(rules, "ingressRules"):
        return [
            (
                f"networkPolicy.{where}.ingressRules are set while mode {mode} does not restrict ingress",
                "drop them or change mode",
            )
        ]
    if mode == "DenyAllIngress" and items(rules, "egressRules"):
        return [
            (
                f"networkPolicy.{where}.egressRules are set while mode {mode} does not restrict egress",
                "drop them or change mode",
            )
        ]
    return []


def network_policy_problems(cluster: Any, gates: Gates) -> list[Problem]:
    """The ``networkPolicy`` gate and ``validateNetworkPolicy``."""
    policy = get(cluster, "networkPolicy")
    if not isinstance(policy, dict):
        return []
    if not gates.on("RayClusterNetworkPolicy"):
        return [
            (
                "sets spec.networkPolicy, which needs the RayClusterNetworkPolicy feature gate (Alpha, off)",
                "drop networkPolicy or enable the gate",
            )
        ]
    mode = text(policy, "mode") or "DenyAll"
    problems = _rules_against_mode("head", mapping(policy, "head"), mode) + _rules_against_mode(
        "worker", mapping(policy, "worker"), mode
    )
    names: set[str] = set()
    for group in items(cluster, "workerGroupSpecs"):
        name = text(group, "groupName") or ""
        error = dns1123_label_error(name)
        if error is not None:
            problems.append(
                (
                    f"worker group name '{name}' {error}; with networkPolicy it names a NetworkPolicy",
                    "use a DNS-1123 label",
                )
            )
        names.add(name)
    for entry in items(policy, "workerGroups"):
        name = text(entry, "groupName") or ""
        problems += _rules_against_mode(f"workerGroups['{name}']", entry, mode)
        if name not in names:
            problems.append(
                (
                    f"networkPolicy.workerGroups['{name}'] names no worker group",
                    "name a group of workerGroupSpecs",
                )
            )
    return problems


def _tls_container_problems(container: Any, where: str) -> list[Problem]:
    problems: list[Problem] = []
    for name in TLS_ENV:
        if name in _env_names(container):
            problems.append(
                (f"sets {name} in {where} while tlsOptions is set", "drop it; KubeRay manages TLS")
            )
    for mount in items(container, "volumeMounts"):
        if text(mount, "name") == TLS_VOLUME or text(mount, "mountPath") == TLS_PATH:
            problems.append(
                (f"mounts '{TLS_VOLUME}' or {TLS_PATH} in {where} while tlsOptions is set", "drop that mount")
            )
    return problems


def tls_problems(cluster: Any, gates: Gates) -> list[Problem]:
    """The ``tlsOptions`` gate and ``validateTLSOptions`` (which acts only with ``enabled: true``)."""
    options = get(cluster, "tlsOptions")
    if options is None:
        return []
    if not gates.on("RayClusterMTLS"):
        return [
            (
                "sets spec.tlsOptions, which needs the RayClusterMTLS feature gate (Alpha, off)",
                "drop tlsOptions or enable the gate",
            )
        ]
    if get(options, "enabled") is not True:
        return []
    problems = _tls_container_problems(_head_container(cluster), "the head Pod")
    for group in items(cluster, "workerGroupSpecs"):
        containers = items(group, "template", "spec", "containers")
        if containers:
            problems += _tls_container_problems(containers[0], f"worker group '{text(group, 'groupName')}'")
    auto = mapping(cluster, "autoscalerOptions")
    if auto:
        problems += _tls_container_problems(auto, "autoscalerOptions")
    return problems


def _autoscaler_v2(cluster: Any) -> bool:
    if text(cluster, "autoscalerOptions", "version") == "v2":
        return True
    for item in items(_head_container(cluster), "env"):
        if text(item, "name") == "RAY_enable_autoscaler_v2" and text(item, "value") in ("1", "true"):
            return True
    return False


def priority_problems(cluster: Any) -> list[Problem]:
    """``validateWorkerGroupPriority``."""
    problems: list[Problem] = []
    ray_version = text(cluster, "rayVersion") or ""
    for group in items(cluster, "workerGroupSpecs"):
        priority = number(group, "priority")
        if not priority:
            continue
        name = text(group, "groupName")
        below = ray_version_below(ray_version, (2, 56, 0)) if ray_version else None
        if not ray_version or below is None or below:
            problems.append(
                (
                    f"worker group {name} sets priority, which needs rayVersion 2.56.0 or later (got '{ray_version}')",
                    "set rayVersion >= 2.56.0",
                )
            )
        elif not _autoscaler_v2(cluster):
            problems.append(
                (
                    f"worker group {name} sets priority {priority} without autoscaler v2",
                    "set autoscalerOptions.version: v2",
                )
            )
    return problems


def cluster_feature_problems(workload: RayWorkload, gates: Gates) -> list[Problem]:
    """``ValidateRayClusterSpec``'s parts that :mod:`.kuberay` does not port, for any Ray kind."""
    cluster = known(workload.cluster_spec, "the Ray cluster spec")
    if not isinstance(cluster, dict) or not items(cluster, "headGroupSpec", "template", "spec", "containers"):
        return []
    annotations = workload.obj.annotations
    problems = gcs_problems(cluster, annotations, gates)
    if "KUBERAY_GEN_AUTOSCALER_START_CMD" in _env_names(mapping(cluster, "autoscalerOptions")):
        problems.append(
            ("sets KUBERAY_GEN_AUTOSCALER_START_CMD in autoscalerOptions.env", "drop it; KubeRay injects it")
        )
    if get(cluster, "historyServerOptions") is not None and not gates.on("RayClusterHistoryServer"):
        problems.append(
            (
                "sets historyServerOptions, which needs the RayClusterHistoryServer feature gate (Alpha, off)",
                "drop it or enable the gate",
            )
        )
    problems += auth_problems(cluster, workload.kind)
    problems += network_policy_problems(cluster, gates)
    problems += tls_problems(cluster, gates)
    problems += priority_problems(cluster)
    if workload.kind == "RayCluster":
        problems += upgrade_strategy_problems(workload)
    return problems


def upgrade_strategy_problems(workload: RayWorkload) -> list[Problem]:
    """``ValidateRayClusterUpgradeOptions``."""
    kind = text(workload.obj.props, "spec", "upgradeStrategy", "type")
    if kind is None:
        return []
    if kind not in ("Recreate", "None"):
        return [(f"has upgradeStrategy.type '{kind}'", "use Recreate or None")]
    creator = known(workload.obj.labels.get(CREATOR_LABEL), f"label {CREATOR_LABEL}")
    if creator in ("RayJob", "RayService"):
        return [(f"sets upgradeStrategy on a RayCluster created by a {creator}", "drop upgradeStrategy")]
    return []


DELETE_ORDER = ("DeleteWorkers", "DeleteCluster", "DeleteSelf")


def _deletion_rule_problems(rules: list[Any], selector: bool, autoscaling: bool) -> list[Problem]:
    """``validateDeletionRules`` with ``validateDeletionCondition`` and ``validateTTLConsistency``."""
    problems: list[Problem] = []
    groups: dict[tuple[str, str], dict[str, int]] = {}
    fix = "fix spec.deletionStrategy.deletionRules"
    for index, rule in enumerate(rules):
        job, deployment = get(rule, "condition", "jobStatus"), get(rule, "condition", "jobDeploymentStatus")
        ttl = number(rule, "condition", "ttlSeconds", default=0) or 0
        policy = text(rule, "policy") or ""
        where = f"deletionRules[{index}]"
        if (job is None) == (deployment is None):
            problems.append((f"{where} must set exactly one of jobStatus and jobDeploymentStatus", fix))
            continue
        if ttl < 0:
            problems.append((f"{where} has a negative ttlSeconds", fix))
            continue
        if selector and policy in ("DeleteCluster", "DeleteWorkers"):
            problems.append((f"{where} uses {policy} with a clusterSelector", fix))
            continue
        if autoscaling and policy == "DeleteWorkers":
            problems.append((f"{where} uses DeleteWorkers with autoscaling enabled", fix))
            continue
        key = ("JobStatus", str(job)) if job is not None else ("JobDeploymentStatus", str(deployment))
        if policy in groups.setdefault(key, {}):
            problems.append((f"{where} repeats the rule for {policy} and {key[0]} '{key[1]}'", fix))
            continue
        groups[key][policy] = ttl
    for (kind, value), ttls in groups.items():
        seen = [(p, ttls[p]) for p in DELETE_ORDER if p in ttls]
        for (before, low), (after, high) in itertools.pairwise(seen):
            if high < low:
                problems.append(
                    (f"for {kind} '{value}' the {after} TTL ({high}) is below the {before} TTL ({low})", fix)
                )
    return problems


def deletion_problems(workload: RayWorkload, gates: Gates) -> list[Problem]:
    """``validateDeletionConfiguration`` past its TTL check, and ``validateLegacyDeletionPolicies``."""
    if workload.kind != "RayJob":
        return []
    spec = get(workload.obj.props, "spec")
    strategy = get(spec, "deletionStrategy")
    if not isinstance(strategy, dict):
        return []
    if not gates.on("RayJobDeletionPolicy"):
        return [
            (
                "sets deletionStrategy without the RayJobDeletionPolicy feature gate",
                "enable the gate or drop deletionStrategy",
            )
        ]
    shutdown = get(spec, "shutdownAfterJobFinishes") is True
    selector = bool(mapping(spec, "clusterSelector"))
    autoscaling = get(spec, "rayClusterSpec", "enableInTreeAutoscaling") is True
    on_success, on_failure = get(strategy, "onSuccess"), get(strategy, "onFailure")
    legacy = on_success is not None or on_failure is not None
    rules = items(strategy, "deletionRules")
    if rules and shutdown:
        return [("sets both shutdownAfterJobFinishes and deletionStrategy.deletionRules", "use one of them")]
    if rules and legacy:
        return [("mixes deletionStrategy onSuccess/onFailure with deletionRules", "use one form")]
    if rules:
        return _deletion_rule_problems(rules, selector, autoscaling)
    if not legacy:
        return [
            (
                "sets deletionStrategy with neither both onSuccess and onFailure nor deletionRules",
                "complete deletionStrategy",
            )
        ]
    if on_success is None or on_failure is None:
        return [("sets only one of deletionStrategy.onSuccess and onFailure", "set both")]
    policies = (text(on_success, "policy"), text(on_failure, "policy"))
    if None in policies:
        return [("leaves the policy of deletionStrategy.onSuccess or onFailure unset", "set both policies")]
    if selector and any(p in ("DeleteCluster", "DeleteWorkers") for p in policies):
        return [(f"uses deletion policies {policies} with a clusterSelector", "use DeleteSelf or DeleteNone")]
    if "DeleteWorkers" in policies and autoscaling:
        return [("uses DeleteWorkers with autoscaling enabled", "use DeleteCluster")]
    if shutdown and "DeleteNone" in policies:
        return [
            (
                "sets shutdownAfterJobFinishes with a DeleteNone deletion policy",
                "drop shutdownAfterJobFinishes or the DeleteNone policy",
            )
        ]
    return []


def _judge(model: StackModel, reporter: Reporter, judge: Any) -> None:
    gates = Gates(model)
    for workload in model.ray_workloads():
        try:
            problems = judge(workload, gates)
        except CannotTellError as why:
            reporter.cannot_check(workload, f"KubeRay validation needs {why.what}")
            continue
        for found, fix in problems:
            reporter.violation(
                workload, f"{UPSTREAM.refuses('controllers/ray/utils/validation.go')}: {found}", fix
            )


def check_cluster_features(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    _judge(model, reporter, cluster_feature_problems)


def check_rayjob_deletion(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    _judge(model, reporter, deletion_problems)


COVERAGE: Mapping[str, str] = {
    "ValidateRayClusterStatus": CANNOT + "judges status conditions the operator writes, not the manifest",
    "ValidateRayClusterMetadata": "check_kuberay_name",
    "ValidateRayClusterUpgradeOptions": "upgrade_strategy_problems",
    "validateRayGroupResources": "kuberay_autoscaling_problems",
    "validateRayGroupLabels": "kuberay_autoscaling_problems",
    "ValidateRayClusterSpec": "cluster_feature_problems",
    "validateGcsFaultToleranceBackend": "_gcs_backend_problems",
    "validateNetworkPolicy": "network_policy_problems",
    "validateTLSOptions": "tls_problems",
    "validateNoConflictingTLSVolumeMount": "_tls_container_problems",
    "ValidateRayJobStatus": CANNOT + "judges status the operator writes, not the manifest",
    "ValidateRayJobMetadata": "check_kuberay_name",
    "ValidateRayJobSpec": "rayjob_problems",
    "ValidateRayServiceMetadata": "check_kuberay_name",
    "validateInitializingTimeout": "rayservice_problems",
    "ValidateRayServiceSpec": "rayservice_problems",
    "ValidateClusterUpgradeOptions": "check_rayservice_spec",
    "validateDeletionConfiguration": "deletion_problems",
    "validateDeletionRules": "_deletion_rule_problems",
    "validateDeletionCondition": "_deletion_rule_problems",
    "validateTTLConsistency": "_deletion_rule_problems",
    "validateLegacyDeletionPolicies": "deletion_problems",
    "ValidateRayCronJobSpec": CANNOT
    + "RayCronJob needs gate RayCronJob (Alpha, off in v1.7.0): its CRD is not served by default; not ported",
    "validateWorkerGroupIdleTimeout": "check_kuberay_autoscaling",
    "validateCollectorOptions": NOT_A_CHECK
    + "reached only with gate RayClusterHistoryServer (Alpha, off), refused before it; not ported",
    "validateWorkerGroupPriority": "priority_problems",
}
"""Every function of ``validation.go`` at v1.7.0, ported in :mod:`.kuberay` or in this module.  The minReplicas/maxReplicas "must set both" check of
``ValidateRayClusterSpec`` never fires on an applied manifest (the CRD defaults both); the
``RuntimeEnvYAML`` parse of ``ValidateRayJobSpec`` is not ported."""
ALSO_IN = ("kuberay",)
"""Sibling modules whose functions ``COVERAGE`` names."""

POLICIES: list[Policy] = [
    stack_policy(
        "kuberay-cluster-features",
        "Ray cluster specs pass the rest of KubeRay v1.7.0's ValidateRayClusterSpec: GCS fault tolerance, "
        "auth, network policy, TLS, history server, worker priority and upgrade strategy settings.",
        check_cluster_features,
    ),
    stack_policy(
        "kuberay-rayjob-deletion",
        "A RayJob's deletionStrategy passes KubeRay v1.7.0's validateDeletionConfiguration: one form, "
        "complete, no clusterSelector/autoscaling conflicts, ordered TTLs.",
        check_rayjob_deletion,
    ),
]
