"""cluster-toolkit GKE GPU blueprints as the resources their modules create, for the pack.

The blueprints are pinned in ``charts.lock.yaml`` (``manifests.cluster-toolkit-examples``) and
resolved like every pinned file (cache, mirror, upstream).  Each module becomes the wire form of
what its Terraform declares (GoogleCloudPlatform/cluster-toolkit @ 1047080375af):

- ``modules/network/vpc``: a ``google_compute_network`` (``network_name``, ``mtu``) and its subnets;
- ``modules/network/multivpc``: ``network_count`` networks ``<network_name_prefix>-<i>`` with
  subnets ``<...>-<i>-subnet`` (``main.tf`` ``network_name`` / ``subnetwork_name``), ``mtu``;
- ``modules/network/gpu-rdma-vpc``: one network with ``network_profile`` and
  ``subnetworks_template.count`` subnets ``<name_prefix>-<i>``;
- ``modules/scheduler/gke-cluster``: the cluster (multi-networking and Dataplane V2 derived from
  ``additional_networks``, ``main.tf`` locals) and, per additional network, a GKENetworkParamSet and a
  Network named by ``k8s_network_names`` (``templates/*.tftpl``);
- ``modules/compute/gke-node-pool``: the node pool (``main.tf``: ``location_policy = "ANY"``,
  ``node_count = static_node_count``, ``queued_provisioning``, ``reservation_affinity``,
  ``additional_node_network_configs`` from ``additional_networks`` or a ``multivpc`` it uses);
- the example's ``kueue-configuration.yaml.tftpl`` rendered with its template vars.

Values a deployment file supplies (project, region, zone, reservation, node count) get fixed
test values.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml
from gpu_batch_policy.facts.charts.manifests import resolve_manifest

from tests.policies.pack_harness import Res

KEY = "cluster-toolkit-examples"
DEPLOYMENT = {
    "project_id": "ct-project",
    "region": "us-central1",
    "zone": "us-central1-a",
    "reservation": "ct-reservation",
    "static_node_count": 2,
    "authorized_cidr": "203.0.113.0/32",
    "enable_flex_start": True,
    "enable_queued_provisioning": True,
}
_VAR = re.compile(r"\$\(vars\.([A-Za-z0-9_]+)\)")
_MODULE_REF = re.compile(
    r"([A-Za-z][A-Za-z0-9_-]*)\.(instance_additional_networks|subnetwork_interfaces_gke|network_name)"
)


def _subst(value: Any, variables: dict[str, Any]) -> Any:
    if isinstance(value, str):
        whole = _VAR.fullmatch(value.strip())
        if whole:
            return variables.get(whole.group(1))
        return _VAR.sub(lambda m: str(variables.get(m.group(1), "")), value)
    if isinstance(value, list):
        return [_subst(v, variables) for v in value]
    if isinstance(value, dict):
        return {k: _subst(v, variables) for k, v in value.items()}
    return value


def _k8s(kind: str, name: str, spec: dict[str, Any], api: str = "networking.gke.io/v1") -> Res:
    return Res(
        f"kubernetes:{api}:{kind}",
        name,
        {"apiVersion": api, "kind": kind, "metadata": {"name": name}, "spec": spec},
    )


class Blueprint:
    """One blueprint's resources."""

    def __init__(self, path: str, kueue_template: str | None, template_vars: dict[str, Any]) -> None:
        doc = yaml.safe_load(Path(resolve_manifest(KEY, path)).read_text())
        self.variables = {**doc.get("vars", {}), **DEPLOYMENT}
        self.variables["deployment_name"] = "ct"
        self.modules = {m["id"]: m for g in doc["deployment_groups"] for m in g["modules"]}
        self.networks: dict[str, list[tuple[str, str, str]]] = {}  # module id -> [(vpc, subnet, nic type)]
        self.resources: list[Res] = []
        for module_id, module in self.modules.items():
            self._module(module_id, module)
        if kueue_template is not None:
            text = Path(resolve_manifest(KEY, kueue_template)).read_text()
            for name, value in template_vars.items():
                text = text.replace("${" + name + "}", str(_subst(value, self.variables)))
            for obj in yaml.safe_load_all(text):
                if isinstance(obj, dict):
                    group, version = obj["apiVersion"].split("/")
                    self.resources.append(
                        Res(f"kubernetes:{group}/{version}:{obj['kind']}", obj["metadata"]["name"], obj)
                    )

    def _settings(self, module: dict[str, Any]) -> dict[str, Any]:
        settings: dict[str, Any] = _subst(module.get("settings") or {}, self.variables)
        return settings

    def _network(self, name: str, subnets: list[str], mtu: Any = None, profile: str | None = None) -> None:
        props: dict[str, Any] = {
            "name": name,
            "project": DEPLOYMENT["project_id"],
            "autoCreateSubnetworks": False,
        }
        if mtu:
            props["mtu"] = float(mtu)
        if profile:
            props["networkProfile"] = profile
        self.resources.append(Res("gcp:compute/network:Network", name, props))
        for subnet in subnets:
            self.resources.append(
                Res(
                    "gcp:compute/subnetwork:Subnetwork",
                    subnet,
                    {"name": subnet, "network": name, "region": DEPLOYMENT["region"]},
                )
            )

    def _module(self, module_id: str, module: dict[str, Any]) -> None:
        source, s = module["source"], self._settings(module)
        if source == "modules/network/vpc":
            name = s.get("network_name") or f"{self.variables['deployment_name']}-net"
            subnets = [x.get("subnet_name") for x in s.get("subnetworks") or []] or [
                s.get("subnetwork_name") or f"{name}-subnet"
            ]
            self._network(name, subnets, s.get("mtu"))
            self.networks[module_id] = [(name, subnets[0], "GVNIC")]
        elif source == "modules/network/multivpc":
            prefix = s["network_name_prefix"]
            found = [
                (f"{prefix}-{i}", f"{prefix}-{i}-subnet", "GVNIC") for i in range(int(s["network_count"]))
            ]
            for vpc, subnet, _ in found:
                self._network(vpc, [subnet], s.get("mtu"))
            self.networks[module_id] = found
        elif source == "modules/network/gpu-rdma-vpc":
            template = s["subnetworks_template"]
            subnets = [f"{template['name_prefix']}-{i}" for i in range(int(template["count"]))]
            self._network(s["network_name"], subnets, profile=s.get("network_profile"))
            self.networks[module_id] = [(s["network_name"], x, "RDMA") for x in subnets]
        elif source == "modules/scheduler/gke-cluster":
            self._cluster(module, s)
        elif source == "modules/compute/gke-node-pool":
            self._pool(module_id, module, s)

    def _additional(self, module: dict[str, Any], settings: dict[str, Any]) -> list[tuple[str, str, str]]:
        raw = (module.get("settings") or {}).get("additional_networks")
        refs: list[str] = []
        if isinstance(raw, str):
            refs = list(dict.fromkeys(m.group(1) for m in _MODULE_REF.finditer(raw)))
        else:
            refs = [
                u
                for u in module.get("use", [])
                if self.modules.get(u, {}).get("source") == "modules/network/multivpc"
            ]
        return [n for ref in refs for n in self.networks.get(ref, [])]

    def _cluster(self, module: dict[str, Any], s: dict[str, Any]) -> None:
        extra = self._additional(module, s)
        names: dict[str, Any] = {
            "gvnic_prefix": "gvnic-",
            "gvnic_start_index": 1,
            "rdma_prefix": "rdma-",
            "rdma_start_index": 0,
        }
        names.update(s.get("k8s_network_names") or {})
        props: dict[str, Any] = {
            "name": self.variables["deployment_name"],
            "location": DEPLOYMENT["region"],
            "minMasterVersion": str(s.get("version_prefix") or "1.33.").rstrip("."),
            "enableMultiNetworking": bool(extra),
            "datapathProvider": "ADVANCED_DATAPATH" if extra else "LEGACY_DATAPATH",
        }
        if s.get("master_authorized_networks"):
            props["masterAuthorizedNetworksConfig"] = {
                "cidrBlocks": [{"cidrBlock": n["cidr_block"]} for n in s["master_authorized_networks"]],
                "gcpPublicCidrsAccessEnabled": bool(s.get("gcp_public_cidrs_access_enabled")),
            }
        self.resources.append(Res("gcp:container/cluster:Cluster", props["name"], props))
        gvnic = [n for n in extra if n[2] == "GVNIC"]
        rdma = [n for n in extra if n[2] == "RDMA"]
        for kind, items, prefix, start in (
            ("NetDevice", gvnic, names["gvnic_prefix"], int(names["gvnic_start_index"])),
            ("RDMA", rdma, names["rdma_prefix"], int(names["rdma_start_index"])),
        ):
            for index, (vpc, subnet, _) in enumerate(items):
                name = f"{prefix}{index + start}"
                self.resources.append(
                    _k8s("GKENetworkParamSet", name, {"vpc": vpc, "vpcSubnet": subnet, "deviceMode": kind})
                )
                ref = {"group": "networking.gke.io", "kind": "GKENetworkParamSet", "name": name}
                self.resources.append(_k8s("Network", name, {"type": "Device", "parametersRef": ref}))

    def _pool(self, module_id: str, module: dict[str, Any], s: dict[str, Any]) -> None:
        queued = bool(s.get("enable_queued_provisioning"))
        flex = bool(s.get("enable_flex_start"))
        affinity = s.get("reservation_affinity") or {"consume_reservation_type": "NO_RESERVATION"}
        reservation: dict[str, Any] = {"consumeReservationType": affinity["consume_reservation_type"]}
        if affinity.get("specific_reservations"):
            reservation.update(
                key="compute.googleapis.com/reservation-name",
                values=[r["name"] for r in affinity["specific_reservations"]],
            )
        props: dict[str, Any] = {
            "name": s.get("name") or f"{s['machine_type']}-{module_id}",
            "cluster": self.variables["deployment_name"],
            "location": DEPLOYMENT["region"],
            "nodeLocations": s.get("zones"),
            "management": {
                "autoRepair": s.get("auto_repair", True),
                "autoUpgrade": s.get("auto_upgrade", True),
            },
            "nodeConfig": {
                "machineType": s["machine_type"],
                "guestAccelerators": [
                    {"type": a["type"], "count": float(a["count"])} for a in s.get("guest_accelerator") or []
                ],
                "reservationAffinity": reservation,
                **({"flexStart": True} if flex else {}),
            },
        }
        if s.get("static_node_count") is not None:
            props["nodeCount"] = float(s["static_node_count"])
        else:
            props["autoscaling"] = {
                "totalMinNodeCount": float(s.get("autoscaling_total_min_nodes", 0)),
                "totalMaxNodeCount": float(s.get("autoscaling_total_max_nodes", 1000)),
                "locationPolicy": "ANY",
            }
        if queued:
            props["queuedProvisioning"] = {"enabled": True}
        extra = self._additional(module, s)
        if extra:
            props["networkConfig"] = {
                "additionalNodeNetworkConfigs": [{"network": v, "subnetwork": n} for v, n, _ in extra]
            }
        self.resources.append(Res("gcp:container/nodePool:NodePool", props["name"], props))
