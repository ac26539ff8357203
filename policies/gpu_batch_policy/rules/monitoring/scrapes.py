"""Scrape configuration that cannot collect anything, caught before deploy.

``pod-monitoring-target``: a Google Cloud Managed Service for Prometheus ``PodMonitoring`` (or
``ClusterPodMonitoring``) scrapes the *pods* its ``spec.selector`` matches -- in its own namespace
for a PodMonitoring, in every namespace for a ClusterPodMonitoring -- on
``spec.endpoints[].port``, the "Name or number of the port to scrape" of the pod's containers
(GoogleCloudPlatform/prometheus-engine @ 2ffde4ec, ``charts/operator/crds/
monitoring.googleapis.com_podmonitorings.yaml``).  The scrape config the operator generates
(``pkg/operator/apis/monitoring/v1/pod_config.go`` ``endpointScrapeConfig``) keeps a target only
when ``__meta_kubernetes_pod_container_port_name`` fully matches a *named* port (a relabel
``keep`` regex), while a *numbered* port is scraped on every selected pod even when no container
declares it.  A Service port name (``https`` for Kueue's metrics Service, where the container
port is ``metrics``) therefore matches nothing, and the series never appear -- silently.  So a
named endpoint port must be a container port name of a matching pod of this stack (declared, or
rendered from its Helm releases), and a selector that matches no such pod is a finding too; a
numbered port is accepted as GMP accepts it.  Pods only the cluster creates later (operator
operands, Ray pods of a RayJob) are matched through the templates the stack declares for them.

``servicemonitor-without-crd``: a Prometheus-Operator ``ServiceMonitor``/``PodMonitor``
(``monitoring.coreos.com``; Kueue renders one with ``enablePrometheus: true``, kueue v0.19.2
``charts/kueue/templates/prometheus/monitor.yaml``) needs the Prometheus Operator's CRDs, which GKE
does not install (its managed collection uses ``monitoring.googleapis.com``).  Without them the
apply of that object -- for a chart, the whole release -- fails ("no matches for kind").

KAI Scheduler v0.17.0's operator creates the scheduler and queue-controller pods at run time, not
through Helm (kai-scheduler/KAI-Scheduler v0.17.0 ``pkg/operator/operands/common/common.go``
``DeploymentForKAIConfig``: pod label ``app: <deployment>``; scheduler deployment
``<global.schedulerName>-<shard>``, ``scheduler/resources_for_shard.go`` ``DeploymentName``, default
scheduler name ``kai-scheduler``; ``queue-controller``, ``queue_controller/resources.go``), in the
Config's ``spec.namespace`` -- the release namespace (chart ``_helpers.tpl`` ``kai-config``).  Their
containers declare no ports (metrics on 8080: ``apis/kai/v1/scheduler/scheduler.go``,
``queue_controller/queue_controller.go`` defaults), so they are scraped by port number.  This rule
counts those pods for each SchedulingShard the KAI release renders.

Both mandatory: the stack cannot collect (first) or cannot install (second) what it declares.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pulumi_policy import Policy

from ...facts.model import KubeObject, RayWorkload, StackModel
from ...facts.model.workloads import PodTemplate, RayGroup
from ...facts.pod_templates import OwnedTemplate, owned_templates
from ...facts.selectors import selector_matches
from ...primitives.values import Unknown, dig
from ..kit.builders import stack_policy
from ..kit.report import Reporter

GMP_GROUP = "monitoring.googleapis.com"
POD_MONITORING_KINDS = ("PodMonitoring", "ClusterPodMonitoring")
PROMETHEUS_OPERATOR_GROUP = "monitoring.coreos.com"
PROMETHEUS_OPERATOR_KINDS = ("ServiceMonitor", "PodMonitor")


def _owner_namespace(owned: OwnedTemplate) -> str:
    return owned.owner.namespace or ""


def container_ports(template_raw: Any) -> list[tuple[str | None, int | None]] | Unknown:
    """(name, containerPort) of every port of every container (init containers with
    ``restartPolicy: Always`` are sidecars and serve too)."""
    if isinstance(template_raw, Unknown):
        return template_raw
    found: list[tuple[str | None, int | None]] = []
    for key in ("containers", "initContainers"):
        containers = dig(template_raw, "spec", key)
        if isinstance(containers, Unknown):
            return containers
        for container in containers if isinstance(containers, list) else []:
            if key == "initContainers" and dig(container, "restartPolicy") != "Always":
                continue
            ports = dig(container, "ports")
            if isinstance(ports, Unknown):
                return ports
            for port in ports if isinstance(ports, list) else []:
                name, number = dig(port, "name"), dig(port, "containerPort")
                if isinstance(name, Unknown) or isinstance(number, Unknown):
                    return Unknown("ports")
                found.append(
                    (name if isinstance(name, str) else None, number if isinstance(number, int) else None)
                )
    return found


def _exposes(ports: list[tuple[str | None, int | None]], wanted: Any) -> bool:
    """Whether GMP keeps a target for ``wanted``: a number always (pod_config.go scrapes it on the
    pod's address), a name when it fully matches a container port name (Prometheus relabel
    regexes are anchored)."""
    if isinstance(wanted, bool):
        return False
    if isinstance(wanted, int) or (isinstance(wanted, float) and wanted.is_integer()):
        return True  # numbers arrive as doubles on the wire (protobuf Struct)
    if not isinstance(wanted, str):
        return False
    try:
        pattern = re.compile(wanted)
    except re.error:
        return any(name == wanted for name, _ in ports)
    return any(name is not None and pattern.fullmatch(name) is not None for name, _ in ports)


def _describe_ports(ports: list[tuple[str | None, int | None]]) -> str:
    shown = sorted({f"{name or '(unnamed)'}={number}" for name, number in ports})
    return ", ".join(shown) or "none"


KAI_SCHEDULER_NAME = "kai-scheduler"
KAI_QUEUE_CONTROLLER = "queue-controller"


@dataclass(frozen=True)
class Pod:
    """A pod template the stack leads to, where it runs, and who declares it (for messages)."""

    namespace: str
    owner: str
    template: PodTemplate


def kai_operator_pods(model: StackModel) -> list[Pod]:
    """The KAI operator's scheduler (one per rendered SchedulingShard) and queue-controller pods."""
    found: list[Pod] = []
    shards = model.kube_objects("kai.scheduler", "SchedulingShard")
    for release in model.kai_releases():
        namespace = release.namespace
        if not isinstance(namespace, str):
            continue
        names = sorted(s.name for s in shards if s.urn == release.urn)
        apps = [f"{KAI_SCHEDULER_NAME}-{n}" for n in names] + ([KAI_QUEUE_CONTROLLER] if names else [])
        for app in apps:
            raw = {"metadata": {"labels": {"app": app}}, "spec": {"containers": [{"name": app}]}}
            found.append(
                Pod(
                    namespace,
                    f"{release.describe()} (operator-created Deployment {app})",
                    PodTemplate(raw, ""),
                )
            )
    return found


# What KubeRay v1.7.0 adds to every Ray pod (ray-project/kuberay ray-operator/controllers/ray/
# common/pod.go ``labelPod``: ``ray.io/is-ray-node: yes``, ``ray.io/node-type``, ``ray.io/group``;
# ``DefaultHeadPodTemplate`` / ``DefaultWorkerPodTemplate``: a ``metrics`` container port 8080 on
# the Ray container when it has none, utils/constant.go ``MetricsPortName``/``DefaultMetricsPort``).
RAY_METRICS_PORT = {"name": "metrics", "containerPort": 8080}


def _ray_pod(template: PodTemplate, group: RayGroup) -> PodTemplate:
    if isinstance(template.raw, Unknown):
        return template
    raw = copy.deepcopy(template.raw)
    meta = raw.setdefault("metadata", {}) if isinstance(raw.get("metadata", {}), dict) else {}
    labels = meta.setdefault("labels", {}) if isinstance(meta.get("labels", {}), dict) else {}
    labels.update(
        {
            "ray.io/is-ray-node": "yes",
            "ray.io/node-type": "head" if group.is_head else "worker",
            "ray.io/group": group.name,
        }
    )
    containers = dig(raw, "spec", "containers")
    if isinstance(containers, list) and containers and isinstance(containers[0], dict):
        ports = containers[0].setdefault("ports", [])
        if isinstance(ports, list) and not any(dig(p, "name") == "metrics" for p in ports):
            ports.append(dict(RAY_METRICS_PORT))
    return PodTemplate(raw, template.path)


def stack_pods(model: StackModel) -> list[Pod]:
    # Ray groups are taken in the form KubeRay completes them to, below.
    declared = [
        Pod(_owner_namespace(o), o.owner.describe(), o.template)
        for o in owned_templates(model)
        if not isinstance(o.owner, RayWorkload)
    ]
    ray = [
        Pod(w.namespace, w.describe(), _ray_pod(g.template, g))
        for w in model.ray_workloads()
        if not isinstance(w.cluster_spec, Unknown) and w.workers_known
        for g in w.groups()
    ]
    return [*declared, *ray, *kai_operator_pods(model)]


def check_pod_monitoring_targets(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    pods = stack_pods(model)
    for monitor in model.kube_objects(GMP_GROUP):
        if monitor.kind not in POD_MONITORING_KINDS:
            continue
        _check_one(monitor, pods, reporter)


def _check_one(monitor: KubeObject, pods: list[Pod], reporter: Reporter) -> None:
    selector = dig(monitor.props, "spec", "selector")
    endpoints = dig(monitor.props, "spec", "endpoints")
    if (
        isinstance(selector, Unknown)
        or isinstance(endpoints, Unknown)
        or isinstance(monitor.namespace, Unknown)
    ):
        reporter.cannot_check(monitor, "its selector, endpoints or namespace is unknown until apply")
        return
    if not isinstance(selector, Mapping) or not isinstance(endpoints, list):
        reporter.violation(
            monitor,
            "has no spec.selector object or spec.endpoints list, so it scrapes nothing",
            "set spec.selector.matchLabels to the pod labels and spec.endpoints[].port to a container port",
        )
        return
    cluster_wide = monitor.kind == "ClusterPodMonitoring"
    where = "any namespace" if cluster_wide else f"namespace {monitor.namespace or '?'}"
    matched: list[Pod] = []
    undecided = False
    for pod in pods:
        if not cluster_wide and pod.namespace != (monitor.namespace or ""):
            continue
        verdict = selector_matches(selector, pod.template.labels, complete=True)
        if verdict is None:
            undecided = True
        elif verdict:
            matched.append(pod)
    if not matched:
        if undecided:
            reporter.cannot_check(monitor, "a selected pod's labels are unknown until apply")
            return
        reporter.violation(
            monitor,
            f"selects no pod this stack runs in {where} (selector {dict(selector)})",
            "match the labels of the pod template (not a Service's), e.g. the chart's selector labels",
        )
        return
    exposed: list[tuple[str | None, int | None]] = []
    for pod in matched:
        ports = container_ports(pod.template.raw)
        if isinstance(ports, Unknown):
            reporter.cannot_check(monitor, f"the container ports of {pod.owner} are unknown until apply")
            return
        exposed.extend(ports)
    owners = ", ".join(sorted({p.owner for p in matched}))
    for index, endpoint in enumerate(endpoints):
        port = dig(endpoint, "port")
        if isinstance(port, Unknown):
            reporter.cannot_check(monitor, f"spec.endpoints[{index}].port is unknown until apply")
            continue
        if not _exposes(exposed, port):
            reporter.violation(
                monitor,
                f"spec.endpoints[{index}].port {port!r} is not a container port of the pods it selects "
                f"({owners}: {_describe_ports(exposed)}); GMP scrapes container ports, not Service ports",
                "name a container port of the selected pods (for Kueue 0.19.2: 'metrics')",
            )


def check_prometheus_operator_kinds(
    model: StackModel, reporter: Reporter, _config: Mapping[str, Any]
) -> None:
    served: set[str] = set()
    for crd in model.kube_objects("apiextensions.k8s.io", "CustomResourceDefinition"):
        if dig(crd.props, "spec", "group") == PROMETHEUS_OPERATOR_GROUP:
            kind = dig(crd.props, "spec", "names", "kind")
            if isinstance(kind, str):
                served.add(kind)
    for obj in model.kube_objects(PROMETHEUS_OPERATOR_GROUP):
        if obj.kind not in PROMETHEUS_OPERATOR_KINDS or obj.kind in served:
            continue
        reporter.violation(
            obj,
            f"{obj.kind} {obj.qualified_name} needs the Prometheus Operator's {PROMETHEUS_OPERATOR_GROUP} CRDs, "
            "which neither this stack nor GKE installs: its apply (a chart's whole release) fails",
            "scrape with a monitoring.googleapis.com PodMonitoring instead (for Kueue: enablePrometheus: false), "
            "or install the Prometheus Operator's CRDs in this stack",
        )


POLICIES: list[Policy] = [
    stack_policy(
        "pod-monitoring-target",
        "Every PodMonitoring/ClusterPodMonitoring selects pods of the stack on a container port they expose.",
        check_pod_monitoring_targets,
    ),
    stack_policy(
        "servicemonitor-without-crd",
        "A Prometheus-Operator ServiceMonitor/PodMonitor needs its CRD, which GKE does not install.",
        check_prometheus_operator_kinds,
    ),
]
