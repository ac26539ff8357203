"""The KubeRay operator, installed from the KubeRay Helm repository.

Public API: :class:`KubeRayOperatorArgs`, :class:`KubeRayOperator` (``release`` is what RayJob /
RayCluster objects depend on; it waits for ``crds``, the ``ray.io`` CRDs).

CRDs: the chart ships them in ``crds/``, which Helm installs once and never upgrades, so they are
Pulumi resources of their own, read from the pinned chart's ``crds/`` at run time and applied
server-side (components/chart_crds.py), and the release is installed with ``skipCrds`` -- the
split KubeRay itself documents (``helm-chart/kuberay-operator/README.md`` @ v1.7.0, "Install
KubeRay operator without installing CRDs": ``--skip-crds``; "CRDs too long" for client-side apply).

Chart facts (ray-project/kuberay v1.7.0, reference/kai-kuberay-skypilot.md §2.2-2.3): chart
``kuberay-operator`` from ``https://ray-project.github.io/kuberay-helm/``, version ``1.7.0`` (no
``v``); the Deployment takes top-level ``nodeSelector`` / ``tolerations``.

``batchScheduler``: only ``batchScheduler.name`` is ever set, and only to ``kai-scheduler`` when
KAI schedules Ray pods.  ``batchScheduler.enabled`` is the deprecated Volcano switch, and the
operator refuses to start when both are set.  The KAI plugin exists from KubeRay 1.5.0 (RayCluster
only); RayJob/RayService with KAI need 1.6.0 and a ``submissionMode`` other than the default
``K8sJobMode``.  Kueue needs no batch scheduler: it integrates through ``spec.suspend`` and the
queue-name label.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final, Literal

import pulumi
import pulumi_kubernetes as k8s

from components.chart_crds import chart_crds, crd_resources
from components.chart_lock import locked
from components.gke import SYSTEM_POOL_SELECTOR, SYSTEM_POOL_TOLERATIONS
from components.operator_release import ChartRef, depends_on_of, operator_namespace, operator_release

KUBERAY_REPOSITORY: Final = locked("kuberay-operator").source
KUBERAY_CHART: Final = locked("kuberay-operator").name
KUBERAY_VERSION: Final = locked("kuberay-operator").version
KUBERAY_NAMESPACE: Final = "kuberay-system"
KUBERAY_RELEASE_NAME: Final = "kuberay-operator"
# First releases with the KAI plugin, and with KAI support for RayJob (kuberay #3886, #4418).
KUBERAY_MIN_FOR_KAI: Final = "1.5.0"
KUBERAY_MIN_FOR_KAI_RAYJOB: Final = "1.6.0"


# How long Helm may wait for the release (see components.operator_release.operator_release):
# one operator Deployment (one image pull, no webhook by default): Helm's default is enough.
KUBERAY_RELEASE_TIMEOUT_SECONDS = 300


@dataclass(frozen=True)
class KubeRayOperatorArgs:
    """Inputs of :class:`KubeRayOperator`."""

    # None: Ray pods go to the default scheduler (and to Kueue, if it manages Ray kinds).
    batch_scheduler: Literal["kai-scheduler"] | None = None
    version: str = KUBERAY_VERSION
    node_selector: Mapping[str, str] = field(default_factory=lambda: MappingProxyType(SYSTEM_POOL_SELECTOR))


class KubeRayOperator(pulumi.ComponentResource):
    """Namespace ``kuberay-system``, the ``ray.io`` CRDs and the ``kuberay-operator`` Helm release."""

    namespace: k8s.core.v1.Namespace
    crds: list[pulumi.CustomResource]
    release: k8s.helm.v3.Release

    def __init__(
        self,
        name: str,
        args: KubeRayOperatorArgs,
        opts: pulumi.ResourceOptions | None = None,
        *,
        retained_provider: pulumi.ProviderResource | None = None,
    ) -> None:
        """``retained_provider``: where the retained CRDs go (creates by upsert, see
        :func:`components.k8s_provider.cluster_provider` (``retained_objects``)); ``None``: ``opts``' provider."""
        super().__init__("gpu-batch:kuberay:Operator", name, None, opts)
        # Top-level ``tolerations`` (chart 1.7.0 values.yaml -> templates/deployment.yaml): the
        # system pool's taint (components.gke: SYSTEM_POOL_TOLERATIONS).
        values: dict[str, Any] = {
            "nodeSelector": dict(args.node_selector),
            "tolerations": [dict(t) for t in SYSTEM_POOL_TOLERATIONS],
        }
        if args.batch_scheduler is not None:
            values["batchScheduler"] = {"name": args.batch_scheduler}
        chart = ChartRef(KUBERAY_CHART, args.version, repository=KUBERAY_REPOSITORY)
        self.namespace = operator_namespace(f"{name}-namespace", KUBERAY_NAMESPACE, parent=self)
        documents = chart_crds(
            chart,
            values=values,
            release_name=KUBERAY_RELEASE_NAME,
            namespace=KUBERAY_NAMESPACE,
            from_crds_dir=True,
        )
        self.crds = list(crd_resources(f"{name}-crd", documents, parent=self, provider=retained_provider))
        self.release = operator_release(
            f"{name}-release",
            release_name=KUBERAY_RELEASE_NAME,
            chart=chart,
            namespace=self.namespace,
            values=values,
            parent=self,
            depends_on=[*depends_on_of(opts), *self.crds],
            timeout_seconds=KUBERAY_RELEASE_TIMEOUT_SECONDS,
            skip_crds=True,
        )
        self.register_outputs({"namespace": self.namespace.metadata.name, "release": self.release.name})
