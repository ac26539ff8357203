"""What a GPUDirect node needs inside the cluster: Networks, their param sets, Google's DaemonSets.

- One ``networking.gke.io/v1`` ``GKENetworkParamSet`` (``vpc``, ``vpcSubnet``, ``deviceMode``) and
  one ``Network`` (``type: Device``, ``parametersRef`` to it) per extra NIC, named as cluster-toolkit
  names them (``modules/scheduler/gke-cluster/templates/gke-network-paramset.yaml.tftpl`` and
  ``network-object.yaml.tftpl``, v1.95.0).  Pods reach the NICs through these names
  (``networking.gke.io/interfaces`` annotation); GKE installs the CRDs on multi-networking clusters.
- The NCCL installer DaemonSet of each profile in use and, for TCPX/TCPXO, the NRI device injector:
  Google's manifests exactly as published at the commit ``charts.lock.yaml`` pins (resolved by
  ``gpu_batch_policy.facts.charts.manifests``; cluster-toolkit ``gke-node-pool/gpu_direct.tf`` applies the
  same files by raw URL).  Each object is declared as is (``KubeObject``: every field kept), so what
  reaches the cluster is byte for byte what Google publishes.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pulumi

from components.gpudirect import POLICIES_DIR
from components.gpudirect.vpcs import NetworkAttachment
from components.k8s_object import KubeObject

assert POLICIES_DIR

from gpu_batch_policy.facts.charts.manifests import load_documents  # noqa: E402
from gpu_batch_policy.facts.gpudirect.profiles import GPUDIRECT_MANIFESTS  # noqa: E402

NETWORKING_API = "networking.gke.io/v1"


class GpuDirectClusterObjects(pulumi.ComponentResource):
    """The Network objects of ``attachments`` and the DaemonSets of ``manifests``."""

    def __init__(
        self,
        name: str,
        attachments: Iterable[NetworkAttachment],
        manifests: Iterable[str],
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("gpu-batch:gpudirect:ClusterObjects", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        self.objects: list[KubeObject] = []
        for nic in attachments:
            params = KubeObject(
                f"{name}-{nic.k8s_name}-params",
                api_version=NETWORKING_API,
                kind="GKENetworkParamSet",
                metadata={"name": nic.k8s_name},
                spec={"vpc": nic.network, "vpcSubnet": nic.subnetwork, "deviceMode": nic.device_mode},
                opts=child,
            )
            network = KubeObject(
                f"{name}-{nic.k8s_name}",
                api_version=NETWORKING_API,
                kind="Network",
                metadata={"name": nic.k8s_name},
                spec={
                    "type": "Device",
                    "parametersRef": {
                        "group": "networking.gke.io",
                        "kind": "GKENetworkParamSet",
                        "name": nic.k8s_name,
                    },
                },
                opts=child.merge(pulumi.ResourceOptions(depends_on=[params])),
            )
            self.objects += [params, network]
        for path in dict.fromkeys(manifests):
            for doc in load_documents(GPUDIRECT_MANIFESTS, path):
                self.objects.append(_declared(name, doc, child))
        self.register_outputs({"objects": len(self.objects)})


def _declared(prefix: str, doc: dict[str, Any], opts: pulumi.ResourceOptions) -> KubeObject:
    """One published object, every field as published."""
    meta = doc.get("metadata") or {}
    rest = {k: v for k, v in doc.items() if k not in ("apiVersion", "kind", "metadata", "spec")}
    return KubeObject(
        f"{prefix}-{str(doc['kind']).lower()}-{meta.get('name')}",
        api_version=str(doc["apiVersion"]),
        kind=str(doc["kind"]),
        metadata=meta,
        spec=doc.get("spec"),
        fields=rest,
        opts=opts,
    )
