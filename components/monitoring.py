"""Scraping the operators with GKE's managed Prometheus (GMP): PodMonitorings and their credentials.

GMP's collectors (``gmp-system/collector``, a DaemonSet GKE runs when managed collection is on,
:func:`components.gke.monitoring_config`) scrape the pods a ``monitoring.googleapis.com/v1``
PodMonitoring selects, on a *container port* name or number of those pods -- not a Service port
(prometheus-engine ``charts/operator/crds/monitoring.googleapis.com_podmonitorings.yaml``,
``spec.endpoints[].port``: "Name or number of the port to scrape"; the pinned CRDs are in
``../shared/schemas/gmp``).

Kueue (kubernetes-sigs/kueue v0.19.2) serves ``/metrics`` over HTTPS on container port
``metrics`` (8443) of the controller pod (``charts/kueue/templates/manager/manager.yaml``), and
only to a caller allowed ``get`` on the non-resource URL ``/metrics``: the chart's ClusterRole
``<fullname>-metrics-reader`` (``templates/rbac/metrics_reader_role.yaml``).  GMP authenticates
with a bearer token read from a Secret in the PodMonitoring's namespace, which the collector may
read only when granted (prometheus-engine ``examples/instrumentation/go-synthetic/
go-synthetic-basic-auth.yaml`` @ 2ffde4ec: a Role with ``get``/``list``/``watch`` on that one
Secret by ``resourceNames``, bound to ServiceAccount ``gmp-system/collector``).  So
:class:`KueueMetricsScrape` declares exactly that chain:

    ServiceAccount -> token Secret (``kubernetes.io/service-account-token``) -> ClusterRoleBinding
    to ``<release>-metrics-reader`` -> Role + RoleBinding letting ``gmp-system/collector`` read that
    Secret only -> PodMonitoring with ``authorization.credentials`` naming it.

The controller's serving certificate is self-signed by controller-runtime (no cert-manager), so
the endpoint skips verification (``tls.insecureSkipVerify``); the bearer token still authenticates
the collector.  What tenants keep: the token grants only ``get /metrics`` and lives in
``kueue-system``, where teams have no access (components/tenancy.py grants only their namespace).

The KubeRay operator (ray-project/kuberay v1.7.0 ``helm-chart/kuberay-operator/templates/
deployment.yaml``) serves plain-HTTP ``/metrics`` on container port ``http`` (8080); no credentials.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final

import pulumi
import pulumi_kubernetes as k8s

from components.k8s_object import KubeObject

GMP_API_VERSION: Final = "monitoring.googleapis.com/v1"
# The ServiceAccount GKE's managed collectors run as (prometheus-engine example above).
GMP_COLLECTOR_NAMESPACE: Final = "gmp-system"
GMP_COLLECTOR_ACCOUNT: Final = "collector"
# The key the token controller writes into a service-account-token Secret (Kubernetes docs,
# "Manually create an API token for a ServiceAccount").
TOKEN_KEY: Final = "token"
SCRAPE_INTERVAL: Final = "30s"


@dataclass(frozen=True)
class ScrapeEndpoint:
    """One ``spec.endpoints[]`` entry: a *container* port of the selected pods."""

    port: str | int
    path: str = "/metrics"
    scheme: str = "http"
    interval: str = SCRAPE_INTERVAL
    # Name of a Secret (in the PodMonitoring's namespace) whose ``token`` is the bearer token.
    token_secret: str | None = None
    insecure_skip_verify: bool = False

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "port": self.port,
            "path": self.path,
            "scheme": self.scheme,
            "interval": self.interval,
        }
        if self.token_secret is not None:
            out["authorization"] = {
                "type": "Bearer",
                "credentials": {"secret": {"name": self.token_secret, "key": TOKEN_KEY}},
            }
        if self.insecure_skip_verify:
            out["tls"] = {"insecureSkipVerify": True}
        return out


@dataclass(frozen=True)
class PodScrape:
    """A PodMonitoring: pods matching ``selector`` in ``namespace``, scraped on ``endpoint``."""

    name: str
    namespace: str
    selector: Mapping[str, str]
    endpoint: ScrapeEndpoint
    labels: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))

    def spec(self) -> dict[str, Any]:
        return {
            "selector": {"matchLabels": dict(sorted(self.selector.items()))},
            "endpoints": [self.endpoint.to_dict()],
        }


def pod_monitoring(
    resource_name: str, scrape: PodScrape, opts: pulumi.ResourceOptions | None = None
) -> KubeObject:
    """The PodMonitoring object for ``scrape`` (its pods in ``scrape.namespace``)."""
    return _gmp_object("PodMonitoring", resource_name, scrape, {"namespace": scrape.namespace}, opts)


def _gmp_object(
    kind: str,
    resource_name: str,
    scrape: PodScrape,
    placement: Mapping[str, str],
    opts: pulumi.ResourceOptions | None,
) -> KubeObject:
    labels = {"labels": dict(scrape.labels)} if scrape.labels else {}
    return KubeObject(
        resource_name,
        api_version=GMP_API_VERSION,
        kind=kind,
        metadata={"name": scrape.name, **placement, **labels},
        spec=scrape.spec(),
        opts=opts,
    )


def kueue_controller_selector(release_name: str) -> dict[str, str]:
    """The controller pod's labels: ``kueue.selectorLabels`` (kueue v0.19.2
    ``charts/kueue/templates/_helpers.tpl``), scoped to this release."""
    return {
        "app.kubernetes.io/name": "kueue",
        "app.kubernetes.io/instance": release_name,
        "control-plane": "controller-manager",
    }


def kueue_fullname(release_name: str) -> str:
    """``kueue.fullname`` (kueue v0.19.2 ``_helpers.tpl``): the release name when it contains
    ``kueue``, else ``<release>-kueue``."""
    return release_name if "kueue" in release_name else f"{release_name}-kueue"


# Kueue's metrics container port (kueue v0.19.2 charts/kueue/templates/manager/manager.yaml).
KUEUE_METRICS_PORT_NAME: Final = "metrics"


@dataclass(frozen=True)
class KueueScrapeArgs:
    release_name: str
    namespace: str


class KueueMetricsScrape(pulumi.ComponentResource):
    """The credentials chain and PodMonitoring for Kueue's HTTPS metrics (see module docstring)."""

    pod_monitoring: KubeObject
    token_secret: k8s.core.v1.Secret

    def __init__(self, name: str, args: KueueScrapeArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("gpu-batch:monitoring:KueueScrape", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        ns = args.namespace
        reader = f"{args.release_name}-gmp-metrics-reader"
        token = f"{reader}-token"
        account = k8s.core.v1.ServiceAccount(
            f"{name}-account",
            metadata=k8s.meta.v1.ObjectMetaArgs(name=reader, namespace=ns),
            # Only the token Secret below carries its token; no pod runs as this account.
            automount_service_account_token=False,
            opts=child,
        )
        self.token_secret = k8s.core.v1.Secret(
            f"{name}-token",
            metadata=k8s.meta.v1.ObjectMetaArgs(
                name=token,
                namespace=ns,
                annotations={"kubernetes.io/service-account.name": reader},
            ),
            type="kubernetes.io/service-account-token",
            opts=child.merge(pulumi.ResourceOptions(depends_on=[account])),
        )
        k8s.rbac.v1.ClusterRoleBinding(
            f"{name}-metrics-reader",
            metadata=k8s.meta.v1.ObjectMetaArgs(name=reader),
            role_ref=k8s.rbac.v1.RoleRefArgs(
                api_group="rbac.authorization.k8s.io",
                kind="ClusterRole",
                name=f"{kueue_fullname(args.release_name)}-metrics-reader",
            ),
            subjects=[k8s.rbac.v1.SubjectArgs(kind="ServiceAccount", name=reader, namespace=ns)],
            opts=child,
        )
        role = k8s.rbac.v1.Role(
            f"{name}-secret-reader",
            metadata=k8s.meta.v1.ObjectMetaArgs(name=f"{reader}-secret", namespace=ns),
            rules=[
                k8s.rbac.v1.PolicyRuleArgs(
                    api_groups=[""],
                    resources=["secrets"],
                    resource_names=[token],
                    verbs=["get", "list", "watch"],
                )
            ],
            opts=child,
        )
        k8s.rbac.v1.RoleBinding(
            f"{name}-collector",
            metadata=k8s.meta.v1.ObjectMetaArgs(name=f"{reader}-secret", namespace=ns),
            role_ref=k8s.rbac.v1.RoleRefArgs(
                api_group="rbac.authorization.k8s.io", kind="Role", name=f"{reader}-secret"
            ),
            subjects=[
                k8s.rbac.v1.SubjectArgs(
                    kind="ServiceAccount", name=GMP_COLLECTOR_ACCOUNT, namespace=GMP_COLLECTOR_NAMESPACE
                )
            ],
            opts=child.merge(pulumi.ResourceOptions(depends_on=[role])),
        )
        self.pod_monitoring = pod_monitoring(
            f"{name}-pod-monitoring",
            PodScrape(
                name=args.release_name,
                namespace=ns,
                selector=kueue_controller_selector(args.release_name),
                endpoint=ScrapeEndpoint(
                    port=KUEUE_METRICS_PORT_NAME,
                    scheme="https",
                    token_secret=token,
                    insecure_skip_verify=True,
                ),
            ),
            opts=child.merge(pulumi.ResourceOptions(depends_on=[self.token_secret])),
        )
        self.register_outputs({"podMonitoring": self.pod_monitoring.urn})


def kuberay_operator_scrape(release_name: str, namespace: str) -> PodScrape:
    """KubeRay's operator pod (ray-project/kuberay v1.7.0 ``kuberay-operator`` chart: pod labels
    ``app.kubernetes.io/name``/``instance``; container port ``http`` 8080 serving ``/metrics``)."""
    return PodScrape(
        name=release_name,
        namespace=namespace,
        selector={"app.kubernetes.io/name": "kuberay-operator", "app.kubernetes.io/instance": release_name},
        endpoint=ScrapeEndpoint(port="http"),
    )


# The GPU Operator's exporter (NVIDIA/gpu-operator v26.7.0 assets/state-dcgm-exporter/
# 0800_daemonset.yaml: pod label ``app: nvidia-dcgm-exporter``, container port ``metrics`` 9400,
# plain-HTTP ``/metrics``), in the operator's namespace (the ClusterPolicy controller creates it
# there).  Scraped on GPU Operator pools, where GKE's managed DCGM is off (components/gke.py).
DCGM_EXPORTER_APP: Final = "nvidia-dcgm-exporter"


def dcgm_exporter_scrape(namespace: str) -> PodScrape:
    return PodScrape(
        name=DCGM_EXPORTER_APP,
        namespace=namespace,
        selector={"app": DCGM_EXPORTER_APP},
        endpoint=ScrapeEndpoint(port="metrics"),
    )


# KAI Scheduler v0.17.0: the operator's scheduler (``kai-scheduler-<shard>``) and queue-controller
# Deployments label their pods ``app: <deployment>`` and serve metrics on 8080 without declaring a
# container port (kai-scheduler/KAI-Scheduler v0.17.0 pkg/operator/operands/common/common.go
# ``DeploymentForKAIConfig``; apis/kai/v1/scheduler/scheduler.go and
# queue_controller/queue_controller.go port defaults), so they are scraped by number, which GMP
# accepts for an undeclared port (prometheus-engine pod_config.go ``endpointScrapeConfig``).
KAI_METRICS_PORT: Final = 8080
KAI_DEFAULT_SHARD: Final = "default"


def kai_scrapes(namespace: str, shards: tuple[str, ...] = (KAI_DEFAULT_SHARD,)) -> list[PodScrape]:
    apps = [f"kai-scheduler-{shard}" for shard in shards] + ["queue-controller"]
    return [
        PodScrape(
            name=app,
            namespace=namespace,
            selector={"app": app},
            endpoint=ScrapeEndpoint(port=KAI_METRICS_PORT),
        )
        for app in apps
    ]


# Ray's own metrics on every Ray pod: KubeRay v1.7.0 labels each ``ray.io/is-ray-node: yes`` and
# gives the Ray container a ``metrics`` port 8080 when it has none (ray-operator/controllers/ray/
# common/pod.go ``labelPod``, ``DefaultHeadPodTemplate``/``DefaultWorkerPodTemplate``; utils/
# constant.go).  Ray pods run in the teams' namespaces, so one ClusterPodMonitoring covers them.
RAY_POD_SELECTOR: Final = {"ray.io/is-ray-node": "yes"}


def ray_pods_scrape() -> PodScrape:
    return PodScrape(
        name="ray-pods", namespace="", selector=RAY_POD_SELECTOR, endpoint=ScrapeEndpoint(port="metrics")
    )


def cluster_pod_monitoring(
    resource_name: str, scrape: PodScrape, opts: pulumi.ResourceOptions | None = None
) -> KubeObject:
    """A ClusterPodMonitoring: ``scrape`` in every namespace (``scrape.namespace`` is ignored)."""
    return _gmp_object("ClusterPodMonitoring", resource_name, scrape, {}, opts)
