"""Kueue, installed from its OCI Helm chart with a fully generated controller Configuration.

Public API (used by the queue/tenancy layer):

- :class:`KueueInstallArgs` -- ``configuration`` (:class:`~components.kueue_config.KueueConfiguration`:
  integrations such as ``pod``, strict tenancy, ``waitForPodsReady``, fair sharing),
  ``feature_gates`` and ``version``;
- :class:`KueueInstall` -- ``release`` is the Helm release every Kueue object (ResourceFlavor,
  ClusterQueue, LocalQueue, ...) should ``depends_on``: the CRDs and the conversion/validation
  webhooks exist only once it is up; ``namespace`` is ``kueue-system``.

Chart facts (kubernetes-sigs/kueue v0.19.2, reference/kueue.md §5): published at
``oci://registry.k8s.io/kueue/charts/kueue`` with a version *without* ``v``; the released chart
already points at ``registry.k8s.io/kueue/kueue:v0.19.2`` (the git ``values.yaml`` points at a
staging image, so never install from a checkout); the controller Deployment takes
``controllerManager.nodeSelector`` / ``controllerManager.tolerations``.

CRDs: the chart renders them from ``templates/crd/`` (no values switch turns them off, none adds
``helm.sh/resource-policy: keep``), so as release objects a replaced or uninstalled release would
delete them and with them every ClusterQueue, LocalQueue, ResourceFlavor, WorkloadPriorityClass
and Workload.  They are Pulumi resources of their own instead (``crds``, retained on delete, read
from the chart rendered with the release's own values, name and namespace: the conversion webhook
names the release's Service), and the release drops them with a post-renderer
(``DROP_CRDS_POSTRENDER``); see components/chart_crds.py.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Final

import pulumi
import pulumi_kubernetes as k8s

from components.chart_crds import chart_crds, crd_resources
from components.chart_lock import locked
from components.gke import SYSTEM_POOL_SELECTOR, SYSTEM_POOL_TOLERATIONS
from components.kueue_config import KueueConfiguration, feature_gate_values, gate_problems
from components.operator_release import (
    DROP_CRDS_POSTRENDER,
    ChartRef,
    depends_on_of,
    operator_namespace,
    operator_release,
)

KUEUE_CHART: Final = locked("kueue").source
KUEUE_VERSION: Final = locked("kueue").version
# The port the controller's webhook server listens on, which the control plane must reach
# (kueue v0.19.2 charts/kueue/values.yaml: webhookService targetPort 9443; manager.yaml
# containerPort 9443).
KUEUE_WEBHOOK_PORT: Final = 9443
# The visibility API server behind the chart's APIService (v1beta1/v1beta2.visibility.kueue.x-k8s.io),
# which the control plane calls like a webhook (kueue v0.19.2 charts/kueue/templates/visibility/
# service.yaml targetPort 8082; templates/manager/manager.yaml containerPort 8082).
KUEUE_VISIBILITY_PORT: Final = 8082


# How long Helm may wait for the release (see components.operator_release.operator_release):
# the manager Deployment must be ready, its webhook server up with the certificates its own
# cert controller writes into a Secret first; a fresh private cluster pulls registry.k8s.io through Cloud NAT.
KUEUE_RELEASE_TIMEOUT_SECONDS = 600


@dataclass(frozen=True)
class KueueInstallArgs:
    """Inputs of :class:`KueueInstall`."""

    configuration: KueueConfiguration = field(default_factory=KueueConfiguration)
    # controllerManager.featureGates; each must exist in 0.19.2 (see kueue_config.FEATURE_GATES).
    feature_gates: Mapping[str, bool] = field(default_factory=lambda: MappingProxyType({}))
    version: str = KUEUE_VERSION
    # Where the controller runs: the CPU system pool, never a GPU node.
    node_selector: Mapping[str, str] = field(default_factory=lambda: MappingProxyType(SYSTEM_POOL_SELECTOR))


class KueueInstall(pulumi.ComponentResource):
    """Namespace ``kueue-system``, the ``kueue.x-k8s.io`` CRDs and the ``kueue`` Helm release."""

    namespace: k8s.core.v1.Namespace
    crds: list[pulumi.CustomResource]
    release: k8s.helm.v3.Release
    # What the controller runs with (release name, namespace, metrics settings), for later layers.
    configuration: KueueConfiguration

    def __init__(
        self,
        name: str,
        args: KueueInstallArgs,
        opts: pulumi.ResourceOptions | None = None,
        *,
        retained_provider: pulumi.ProviderResource | None = None,
    ) -> None:
        """``retained_provider``: where the retained CRDs go (creates by upsert, see
        :func:`components.k8s_provider.cluster_provider` (``retained_objects``)); ``None``: ``opts``' provider."""
        # Refuse what would crash-loop the manager, before anything is registered.
        problems = [*args.configuration.problems(), *gate_problems(args.feature_gates)]
        if problems:
            raise ValueError(f"KueueInstall {name}: " + "; ".join(problems))
        super().__init__("gpu-batch:kueue:Install", name, None, opts)
        config = self.configuration = args.configuration
        chart = ChartRef(KUEUE_CHART, args.version)
        values = {
            "controllerManager": {
                "nodeSelector": dict(args.node_selector),
                # The system pool's taint (components.gke: SYSTEM_POOL_TOLERATIONS); chart 0.19.2
                # values.yaml ``controllerManager.tolerations`` -> templates/manager/manager.yaml.
                "tolerations": [dict(t) for t in SYSTEM_POOL_TOLERATIONS],
                "featureGates": feature_gate_values(args.feature_gates),
            },
            "managerConfig": {"controllerManagerConfigYaml": config.to_yaml()},
        }
        self.namespace = operator_namespace(f"{name}-namespace", config.namespace, parent=self)
        documents = chart_crds(
            chart,
            values=values,
            release_name=config.release_name,
            namespace=config.namespace,
            from_crds_dir=False,
        )
        self.crds = list(crd_resources(f"{name}-crd", documents, parent=self, provider=retained_provider))
        self.release = operator_release(
            f"{name}-release",
            release_name=config.release_name,
            chart=chart,
            namespace=self.namespace,
            values=values,
            parent=self,
            depends_on=[*depends_on_of(opts), *self.crds],
            timeout_seconds=KUEUE_RELEASE_TIMEOUT_SECONDS,
            postrender=DROP_CRDS_POSTRENDER,
        )
        self.register_outputs({"namespace": self.namespace.metadata.name, "release": self.release.name})
