"""KubeRay v1.7.0's own validation of RayCluster, RayJob and RayService, before deploy.

The KubeRay operator runs these checks on every Ray object it reconciles (and its optional
admission webhooks, ``ray-operator/pkg/webhooks/v1/{raycluster,rayjob,rayservice}_webhook.go``,
run the same functions at admission).  An object that fails them is never reconciled: a RayJob
ends ``ValidationFailed``, a RayCluster or RayService gets an ``InvalidRayClusterSpec`` /
``InvalidRayServiceSpec`` event and no pods.  So each finding below means "this cannot run".

All from ray-project/kuberay v1.7.0 ``ray-operator/controllers/ray/utils/validation.go``:

* ``kuberay-replica-bounds`` -- ``ValidateRayClusterSpec``: each pod template has at least one
  container; per worker group ``minReplicas``/``maxReplicas`` are not negative and
  ``minReplicas <= maxReplicas``.  The CRD defaults an unset ``minReplicas`` to 0 and
  ``maxReplicas`` to 2147483647 (``ray.io_rayclusters.yaml``), so the "must set both" check never
  fires on an applied manifest and is not repeated here.
* ``kuberay-name`` -- ``ValidateRayClusterMetadata`` / ``ValidateRayJobMetadata`` /
  ``ValidateRayServiceMetadata``: the name is a DNS-1035 label of at most
  ``MaxRayClusterNameLength`` = 53 characters (RayJob and RayService: 53 - 6 = 47, room for the
  suffix of the cluster they create; ``utils/constant.go``).  Objects Pulumi auto-names are not
  judged (the suffix is random).
* ``kuberay-autoscaling`` -- ``ValidateRayClusterSpec`` and ``validateWorkerGroupIdleTimeout``:
  a worker group's ``idleTimeoutSeconds`` is >= 0 and needs autoscaler v2
  (``autoscalerOptions.version: v2``, or ``RAY_enable_autoscaler_v2`` = "1"/"true" on the head's
  Ray container); ``autoscalerOptions.idleTimeoutSeconds`` >= 0; a worker group is ``suspend``-ed
  only without in-tree autoscaling (the ``RayJobDeletionPolicy`` gate it also needs is Beta, on
  by default: ``pkg/features/features.go``); ``RAY_enable_autoscaler_v2`` = "1"/"true" only with
  ``enableInTreeAutoscaling: true``, and never together with ``autoscalerOptions.version``; with
  autoscaler v2 every pod template's ``restartPolicy`` is ``Never`` or unset;
  ``rayStartParams['labels']`` is refused (use the group's ``labels``; ``validateRayGroupLabels``);
  ``num-cpus``/``num-gpus``/``memory``/``resources`` in ``rayStartParams`` together with the
  group's ``resources`` field is refused (``validateRayGroupResources``).
* ``kuberay-rayjob-spec`` -- ``ValidateRayJobSpec`` and ``validateDeletionConfiguration``:
  ``suspend`` needs ``shutdownAfterJobFinishes``; ``ttlSecondsAfterFinished`` >= 0 and only with
  ``shutdownAfterJobFinishes``; ``rayClusterSpec`` or ``clusterSelector``; a ``clusterSelector``
  names ``ray.io/cluster``, is not used with ``suspend``, ``SidecarMode`` or ``backoffLimit`` > 0;
  ``InteractiveMode`` has no ``backoffLimit`` > 0; ``SidecarMode`` has no ``submitterPodTemplate``
  or ``submitterConfig`` and a head ``restartPolicy`` of ``Never`` or unset;
  ``activeDeadlineSeconds`` and ``preRunningDeadlineSeconds`` > 0; ``backoffLimit`` >= 0.
* ``kuberay-rayservice-spec`` -- ``ValidateRayServiceSpec``, ``ValidateClusterUpgradeOptions`` and
  ``validateInitializingTimeout``: no ``headService.metadata.name``; ``upgradeStrategy.type`` is
  ``NewClusterWithIncrementalUpgrade``, ``NewCluster`` or ``None``; ``rayClusterDeletionDelaySeconds``
  >= 0; annotation ``ray.io/initializing-timeout`` a positive Go duration or integer seconds; an
  incremental upgrade (gate ``RayServiceIncrementalUpgrade``, Beta, on by default) needs in-tree
  autoscaling and ``clusterUpgradeOptions`` with ``maxSurgePercent`` (default 100) and
  ``stepSizePercent`` in 0..100, step <= surge, ``intervalSeconds`` > 0 and a ``gatewayClassName``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pulumi_policy import Policy

from ...facts.demand import CannotTellError
from ...facts.model import RayWorkload, StackModel
from ...facts.model.workloads import RayGroup
from ...primitives.go_duration import parse_go_duration
from ...primitives.k8s_names import (
    dns1035_label_error,
    go_atoi,
    has_placeholder,
    label_value_error,
    qualified_name_error,
)
from ...primitives.values import Unknown, as_bool, as_int, as_str, dig
from ..kit.builders import stack_policy
from ..kit.report import Reporter

MAX_INT32 = 2147483647
MAX_RAYCLUSTER_NAME = 53
MAX_NAME = {
    "RayCluster": MAX_RAYCLUSTER_NAME,
    "RayJob": MAX_RAYCLUSTER_NAME - 6,
    "RayService": MAX_RAYCLUSTER_NAME - 6,
}
AUTOSCALER_V2_ENV = "RAY_enable_autoscaler_v2"
CLUSTER_SELECTOR_KEY = "ray.io/cluster"
RAY_START_RESOURCE_PARAMS = ("num-cpus", "num-gpus", "memory", "resources")
ENABLED_ENV_VALUES = ("1", "true")

Problem = tuple[str, str]  # (problem, fix)


def _known(value: Any, what: str) -> Any:
    if isinstance(value, Unknown):
        raise CannotTellError(what)
    return value


def _judge(model: StackModel, reporter: Reporter, judge: Callable[[RayWorkload], list[Problem]]) -> None:
    """Run ``judge`` on every Ray workload; an unknown input is "cannot check", never a pass."""
    for workload in model.ray_workloads():
        try:
            problems = judge(workload)
        except CannotTellError as why:
            reporter.cannot_check(workload, why.what)
            continue
        for problem, fix in problems:
            reporter.violation(workload, problem, fix)


# --- kuberay-replica-bounds ---------------------------------------------------------------------
def check_kuberay_replica_bounds(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    for workload in model.ray_workloads():
        if not workload.workers_known:
            continue
        for group in workload.groups():
            containers = dig(group.template.raw, "spec", "containers")
            if isinstance(containers, list) and not containers:
                reporter.violation(
                    workload,
                    f"{group.path}.template has no containers; the KubeRay operator rejects the cluster",
                    "add the Ray container to the pod template",
                )
            if group.is_head:
                continue
            low, high = group.min_replicas, group.max_replicas
            if isinstance(low, Unknown) or isinstance(high, Unknown):
                reporter.cannot_check(workload, f"{group.path} replica bounds")
                continue
            low = 0 if low is None else low
            high = MAX_INT32 if high is None else high
            if low < 0 or high < 0:
                reporter.violation(
                    workload,
                    f"{group.path} has a negative replica bound (minReplicas {low}, maxReplicas {high}); "
                    "the KubeRay operator rejects the cluster",
                    "use bounds >= 0",
                )
            elif low > high:
                reporter.violation(
                    workload,
                    f"{group.path} has minReplicas {low} greater than maxReplicas {high}; the KubeRay "
                    "operator rejects the cluster",
                    f"raise maxReplicas to at least {low} or lower minReplicas",
                )


# --- kuberay-name -------------------------------------------------------------------------------
def check_kuberay_name(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    for workload in model.ray_workloads():
        obj = workload.obj
        if obj.auto_named or obj.kind not in MAX_NAME:
            continue
        if not obj.identity_known:
            reporter.cannot_check(workload, "metadata.name")
            continue
        if has_placeholder(obj.name):
            reporter.cannot_check(
                workload, f"metadata.name '{obj.name}' (an unsubstituted template placeholder)"
            )
            continue
        limit = MAX_NAME[obj.kind]
        if len(obj.name) > limit:
            why = f"is {len(obj.name)} characters long; KubeRay accepts a {obj.kind} name of at most {limit}"
        else:
            error = dns1035_label_error(obj.name)
            if error is None:
                continue
            why = f"{error} (KubeRay requires a DNS-1035 label)"
        reporter.violation(
            workload,
            f"metadata.name '{obj.name}' {why}, so the KubeRay operator never reconciles it",
            f"rename it to at most {limit} lowercase letters, digits or '-', starting with a letter",
        )


# --- kuberay-autoscaling ------------------------------------------------------------------------
def _head_env(workload: RayWorkload) -> dict[str, Any]:
    """Env of the head's Ray container (``RayContainerIndex`` = 0), by name."""
    head = workload.head
    containers = _known(dig(head.template.raw, "spec", "containers"), "head containers") if head else None
    first = containers[0] if isinstance(containers, list) and containers else None
    env = _known(dig(first, "env"), "head container env")
    out: dict[str, Any] = {}
    for item in env if isinstance(env, list) else []:
        name = dig(item, "name")
        if isinstance(name, str):
            out[name] = _known(dig(item, "value"), f"head env {name}")
    return out


def _group_problems(
    group: RayGroup, raw: Any, autoscaling: bool, v2_idle: bool, v2_restart: bool
) -> list[Problem]:
    problems: list[Problem] = []
    start = _known(dig(raw, "rayStartParams"), f"{group.path}.rayStartParams")
    start = start if isinstance(start, dict) else {}
    if "labels" in start:
        problems.append(
            (
                f"{group.path}.rayStartParams sets 'labels', which KubeRay refuses",
                f"move the labels to {group.path}.labels",
            )
        )
    labels = _known(dig(raw, "labels"), f"{group.path}.labels")
    for key, value in (labels if isinstance(labels, dict) else {}).items():
        if isinstance(value, Unknown):
            continue
        error = qualified_name_error(str(key)) or label_value_error(str(value))
        if error is not None:
            problems.append(
                (
                    f"{group.path}.labels has '{key}: {value}', which KubeRay refuses: {error}",
                    "use a Kubernetes label key and value",
                )
            )
    resources = _known(dig(raw, "resources"), f"{group.path}.resources")
    in_start = [p for p in RAY_START_RESOURCE_PARAMS if start.get(p) not in (None, "")]
    if in_start and isinstance(resources, dict) and resources:
        problems.append(
            (
                f"{group.path} sets resources both in rayStartParams ({', '.join(in_start)}) and in "
                "resources, which KubeRay refuses",
                "declare them in one place only",
            )
        )
    restart = as_str(_known(dig(group.template.raw, "spec", "restartPolicy"), f"{group.path} restartPolicy"))
    if v2_restart and restart not in (None, "", "Never"):
        problems.append(
            (
                f"{group.path}.template has restartPolicy {restart}; with autoscaler v2 KubeRay accepts only "
                "Never or unset",
                "set restartPolicy: Never or remove it",
            )
        )
    if group.is_head:
        return problems
    suspend = _known(group.suspend, f"{group.path}.suspend")
    if suspend is True and autoscaling:
        problems.append(
            (
                f"{group.path} is suspended while in-tree autoscaling is on; KubeRay refuses it",
                "drop suspend: true or turn enableInTreeAutoscaling off",
            )
        )
    idle = _known(as_int(dig(raw, "idleTimeoutSeconds")), f"{group.path}.idleTimeoutSeconds")
    if isinstance(idle, int) and idle < 0:
        problems.append(
            (
                f"{group.path}.idleTimeoutSeconds is {idle}; KubeRay requires >= 0",
                "use a non-negative timeout",
            )
        )
    elif isinstance(idle, int) and not v2_idle:
        problems.append(
            (
                f"{group.path}.idleTimeoutSeconds is set but autoscaler v2 is not enabled; KubeRay refuses it",
                "set autoscalerOptions.version: v2 (with enableInTreeAutoscaling: true) or drop idleTimeoutSeconds",
            )
        )
    return problems


def kuberay_autoscaling_problems(workload: RayWorkload) -> list[Problem]:
    cluster = _known(workload.cluster_spec, "the Ray cluster spec")
    if not isinstance(cluster, dict) or workload.head is None:
        return []
    _known(None if workload.workers_known else Unknown("workers"), "workerGroupSpecs")
    autoscaling = _known(as_bool(dig(cluster, "enableInTreeAutoscaling")), "enableInTreeAutoscaling") is True
    options = _known(dig(cluster, "autoscalerOptions"), "autoscalerOptions")
    version = _known(dig(options, "version"), "autoscalerOptions.version")
    env = _head_env(workload)
    env_v2 = AUTOSCALER_V2_ENV in env
    env_v2_on = str(env.get(AUTOSCALER_V2_ENV)) in ENABLED_ENV_VALUES
    problems: list[Problem] = []
    if env_v2_on and not autoscaling:
        problems.append(
            (
                f"sets {AUTOSCALER_V2_ENV}={env[AUTOSCALER_V2_ENV]} on the head while enableInTreeAutoscaling is "
                "not true; KubeRay refuses it",
                "set enableInTreeAutoscaling: true (and autoscalerOptions.version: v2) or drop the variable",
            )
        )
    if autoscaling and version is not None and env_v2:
        problems.append(
            (
                f"sets both autoscalerOptions.version and the head env var {AUTOSCALER_V2_ENV}; KubeRay refuses it",
                f"keep autoscalerOptions.version and drop {AUTOSCALER_V2_ENV}",
            )
        )
    idle = _known(as_int(dig(options, "idleTimeoutSeconds")), "autoscalerOptions.idleTimeoutSeconds")
    if isinstance(idle, int) and idle < 0:
        problems.append(
            (
                f"autoscalerOptions.idleTimeoutSeconds is {idle}; KubeRay requires >= 0",
                "use a non-negative timeout",
            )
        )
    # idleTimeoutSeconds accepts either v2 switch (validateWorkerGroupIdleTimeout); restartPolicy is
    # checked only with autoscaling on and autoscalerOptions.version v2 (IsAutoscalingV2Enabled).
    v2_idle = version == "v2" or env_v2_on
    v2_restart = autoscaling and version == "v2"
    raws = dig(cluster, "workerGroupSpecs")
    # model.workloads.ray_workload builds ``workers`` from this same list, in order.
    pairs = [
        (workload.head, dig(cluster, "headGroupSpec")),
        *zip(workload.workers, raws if isinstance(raws, list) else [], strict=False),
    ]
    for group, raw in pairs:
        problems.extend(_group_problems(group, raw, autoscaling, v2_idle, v2_restart))
    return problems


def check_kuberay_autoscaling(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    _judge(model, reporter, kuberay_autoscaling_problems)


# --- kuberay-rayjob-spec ------------------------------------------------------------------------
def rayjob_problems(workload: RayWorkload) -> list[Problem]:
    if workload.kind != "RayJob":
        return []
    spec = _known(workload.obj.spec, "spec")
    if not isinstance(spec, dict):
        return []

    def get(key: str) -> Any:
        return _known(dig(spec, key), f"spec.{key}")

    suspend = as_bool(get("suspend")) is True
    shutdown = as_bool(get("shutdownAfterJobFinishes")) is True
    ttl = as_int(get("ttlSecondsAfterFinished"))
    selector = get("clusterSelector")
    selector_mode = isinstance(selector, dict) and bool(selector)
    mode = as_str(get("submissionMode")) or "K8sJobMode"
    backoff = as_int(get("backoffLimit"))
    problems: list[Problem] = []

    def refuse(problem: str, fix: str) -> None:
        problems.append((f"{problem}; KubeRay marks the RayJob ValidationFailed and never runs it", fix))

    if suspend and not shutdown:
        refuse("is suspended with shutdownAfterJobFinishes false", "set spec.shutdownAfterJobFinishes: true")
    if isinstance(ttl, int) and ttl < 0:
        refuse(f"has ttlSecondsAfterFinished {ttl}", "use a non-negative ttlSecondsAfterFinished")
    elif isinstance(ttl, int) and ttl > 0 and not shutdown:
        refuse(
            f"has ttlSecondsAfterFinished {ttl} with shutdownAfterJobFinishes false",
            "set spec.shutdownAfterJobFinishes: true or drop ttlSecondsAfterFinished",
        )
    if suspend and selector_mode:
        refuse(
            "is suspended but runs on an existing cluster (clusterSelector)",
            "drop suspend or clusterSelector",
        )
    if get("rayClusterSpec") is None and not selector_mode:
        refuse("has neither spec.rayClusterSpec nor spec.clusterSelector", "add spec.rayClusterSpec")
    if selector_mode:
        if not _known(selector.get(CLUSTER_SELECTOR_KEY), f"clusterSelector {CLUSTER_SELECTOR_KEY}"):
            refuse(
                f"has a clusterSelector without a '{CLUSTER_SELECTOR_KEY}' cluster name",
                f"set clusterSelector['{CLUSTER_SELECTOR_KEY}'] to the RayCluster's name",
            )
        if mode == "SidecarMode":
            refuse("uses clusterSelector in SidecarMode", "use K8sJobMode or HTTPMode with a clusterSelector")
        if isinstance(backoff, int) and backoff > 0:
            refuse(f"has backoffLimit {backoff} with a clusterSelector", "drop backoffLimit")
    if mode == "InteractiveMode" and isinstance(backoff, int) and backoff > 0:
        refuse(f"has backoffLimit {backoff} in InteractiveMode", "drop backoffLimit")
    if mode == "SidecarMode":
        for key in ("submitterPodTemplate", "submitterConfig"):
            if get(key) is not None:
                refuse(f"sets spec.{key} in SidecarMode, which does not support it", f"drop spec.{key}")
        head = workload.head.template.raw if workload.head else None
        restart = as_str(_known(dig(head, "spec", "restartPolicy"), "head restartPolicy"))
        if restart not in (None, "", "Never"):
            refuse(
                f"has head restartPolicy {restart} in SidecarMode", "set the head's restartPolicy to Never"
            )
    for key in ("activeDeadlineSeconds", "preRunningDeadlineSeconds"):
        value = as_int(get(key))
        if isinstance(value, int) and value <= 0:
            refuse(f"has {key} {value}", f"set spec.{key} > 0 or drop it")
    if isinstance(backoff, int) and backoff < 0:
        refuse(f"has backoffLimit {backoff}", "use a backoffLimit >= 0")
    return problems


def check_rayjob_spec(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    _judge(model, reporter, rayjob_problems)


# --- kuberay-rayservice-spec --------------------------------------------------------------------
UPGRADE_TYPES = ("NewClusterWithIncrementalUpgrade", "NewCluster", "None")
INITIALIZING_TIMEOUT = "ray.io/initializing-timeout"


def go_duration_positive(text: str) -> bool | None:
    """Go ``time.ParseDuration``: None when it fails to parse, else whether the duration is > 0."""
    seconds = parse_go_duration(text)
    return None if seconds is None else seconds > 0


def rayservice_problems(workload: RayWorkload) -> list[Problem]:
    if workload.kind != "RayService":
        return []
    spec = _known(workload.obj.spec, "spec")
    if not isinstance(spec, dict):
        return []
    problems: list[Problem] = []

    def refuse(problem: str, fix: str) -> None:
        problems.append((f"{problem}; KubeRay refuses the RayService and never reconciles it", fix))

    head_service_name = _known(
        dig(spec, "rayClusterConfig", "headGroupSpec", "headService", "metadata", "name"), "headService name"
    )
    if head_service_name:
        refuse(
            "sets rayClusterConfig.headGroupSpec.headService.metadata.name", "drop the head service's name"
        )
    kind = _known(dig(spec, "upgradeStrategy", "type"), "spec.upgradeStrategy.type")
    if isinstance(kind, str) and kind not in UPGRADE_TYPES:
        refuse(f"has upgradeStrategy.type '{kind}'", f"use one of {', '.join(UPGRADE_TYPES)}")
    delay = as_int(_known(dig(spec, "rayClusterDeletionDelaySeconds"), "spec.rayClusterDeletionDelaySeconds"))
    if isinstance(delay, int) and delay < 0:
        refuse(f"has rayClusterDeletionDelaySeconds {delay}", "use a delay >= 0")
    timeout = _known(workload.obj.annotations.get(INITIALIZING_TIMEOUT), f"annotation {INITIALIZING_TIMEOUT}")
    if isinstance(timeout, str) and timeout:
        positive = go_duration_positive(timeout)
        if positive is None:
            seconds = go_atoi(timeout)
            positive = None if seconds is None else seconds > 0
        if not positive:
            refuse(
                f"has annotation {INITIALIZING_TIMEOUT}='{timeout}', not a positive duration or integer seconds",
                "use a duration such as 10m, or a whole number of seconds > 0",
            )
    if kind == "NewClusterWithIncrementalUpgrade":
        _check_incremental_upgrade(spec, refuse)
    return problems


def _check_incremental_upgrade(spec: dict[str, Any], refuse: Callable[[str, str], None]) -> None:
    """``ValidateClusterUpgradeOptions``: the first failing check, as upstream returns it."""
    autoscaling = as_bool(
        _known(dig(spec, "rayClusterConfig", "enableInTreeAutoscaling"), "enableInTreeAutoscaling")
    )
    if autoscaling is not True:
        refuse(
            "uses NewClusterWithIncrementalUpgrade without in-tree autoscaling",
            "set enableInTreeAutoscaling: true",
        )
        return
    options = _known(dig(spec, "upgradeStrategy", "clusterUpgradeOptions"), "clusterUpgradeOptions")
    if not isinstance(options, dict):
        refuse(
            "uses NewClusterWithIncrementalUpgrade without clusterUpgradeOptions",
            "add upgradeStrategy.clusterUpgradeOptions",
        )
        return

    def number(key: str) -> int | None:
        value = as_int(_known(options.get(key), f"clusterUpgradeOptions.{key}"))
        return value if isinstance(value, int) else None

    surge = number("maxSurgePercent")
    surge = 100 if surge is None else surge
    step, interval = number("stepSizePercent"), number("intervalSeconds")
    if not 0 <= surge <= 100:
        refuse(f"has maxSurgePercent {surge}", "use 0..100")
    elif step is None or not 0 <= step <= 100:
        refuse(
            f"has stepSizePercent {step if step is not None else 'unset'}", "set stepSizePercent to 0..100"
        )
    elif step > surge:
        refuse(f"has stepSizePercent {step} above maxSurgePercent {surge}", "lower stepSizePercent")
    elif interval is None or interval <= 0:
        refuse(
            f"has intervalSeconds {interval if interval is not None else 'unset'}", "set intervalSeconds > 0"
        )
    elif not _known(options.get("gatewayClassName"), "clusterUpgradeOptions.gatewayClassName"):
        refuse(
            "uses NewClusterWithIncrementalUpgrade without a gatewayClassName",
            "set clusterUpgradeOptions.gatewayClassName",
        )


def check_rayservice_spec(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    _judge(model, reporter, rayservice_problems)


POLICIES: list[Policy] = [
    stack_policy(
        "kuberay-replica-bounds",
        "Ray worker groups have non-negative minReplicas <= maxReplicas and every pod template has a "
        "container (KubeRay's ValidateRayClusterSpec).",
        check_kuberay_replica_bounds,
    ),
    stack_policy(
        "kuberay-name",
        "A RayCluster's name is a DNS-1035 label of <= 53 characters, a RayJob's or RayService's of <= 47 "
        "(KubeRay's Validate*Metadata).",
        check_kuberay_name,
    ),
    stack_policy(
        "kuberay-autoscaling",
        "Ray autoscaling settings KubeRay accepts: idleTimeoutSeconds >= 0 and only with autoscaler v2, no "
        "suspended worker group under autoscaling, RAY_enable_autoscaler_v2 only with autoscaling, "
        "restartPolicy Never under v2, no rayStartParams labels, resources in one place.",
        check_kuberay_autoscaling,
    ),
    stack_policy(
        "kuberay-rayjob-spec",
        "A RayJob passes KubeRay's ValidateRayJobSpec: suspend and ttl need shutdownAfterJobFinishes, a "
        "cluster spec or selector, selector and submission-mode limits, positive deadlines.",
        check_rayjob_spec,
    ),
    stack_policy(
        "kuberay-rayservice-spec",
        "A RayService passes KubeRay's ValidateRayServiceSpec: no head service name, a known upgrade type, "
        "non-negative deletion delay, a positive initializing timeout, complete incremental-upgrade options.",
        check_rayservice_spec,
    ),
]
