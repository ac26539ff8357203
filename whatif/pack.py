"""The policy pack's package (``policies/gpu_batch_policy``), made importable as preview/report does.

The simulator reads Kueue objects through the pack's typed model so that v1beta1 and v1beta2
objects, quantities and unknown-until-apply values are understood exactly as the rules see them.
Everything the simulator uses from the pack is imported here, once.
"""

from __future__ import annotations

import sys
from pathlib import Path

POLICIES_DIR = Path(__file__).resolve().parent.parent / "policies"
if str(POLICIES_DIR) not in sys.path:
    sys.path.insert(0, str(POLICIES_DIR))

from gpu_batch_policy.facts import pools  # noqa: E402
from gpu_batch_policy.facts.demand import GPU_FRACTION_DEVICES_ANNOTATION  # noqa: E402
from gpu_batch_policy.facts.fit.flavor_match import flavor_rejects  # noqa: E402
from gpu_batch_policy.facts.kai.priority import KAI_BUILTIN_PRIORITIES, NON_PREEMPTIBLE_FROM  # noqa: E402
from gpu_batch_policy.facts.kueue_install import feature_gate  # noqa: E402
from gpu_batch_policy.facts.model import StackModel  # noqa: E402
from gpu_batch_policy.facts.model.base import build_resource  # noqa: E402
from gpu_batch_policy.facts.model.kueue import (  # noqa: E402
    DEFAULT_WHEN_CAN_BORROW,
    DEFAULT_WHEN_CAN_PREEMPT,
    MULTIKUEUE_CONTROLLER,
    PROVISIONING_REQUEST_CONTROLLER,
    ResourceFlavor,
    ResourceGroup,
)
from gpu_batch_policy.facts.model.workloads import GPU_FRACTION_ANNOTATION, GPU_MEMORY_ANNOTATION  # noqa: E402
from gpu_batch_policy.facts.multikueue.clusters import (  # noqa: E402
    KueueCluster,
    cluster_model,
    gke_cluster_of,
    provider_urn,
    topologies,
)
from gpu_batch_policy.facts.tas.domains import topology_levels  # noqa: E402
from gpu_batch_policy.facts.tas.flavor_match import (  # noqa: E402
    TAS_REQUEST_ANNOTATIONS,
    tas_mismatch,
    tas_only,
)
from gpu_batch_policy.facts.workload_kinds import kueue_gangs  # noqa: E402
from gpu_batch_policy.primitives.go_duration import parse_go_duration  # noqa: E402
from gpu_batch_policy.primitives.tokens import HELM_RELEASE  # noqa: E402
from gpu_batch_policy.primitives.values import Quantity, Unknown, quantity  # noqa: E402
from gpu_batch_policy.rules.kit.report import Reporter  # noqa: E402
from gpu_batch_policy.rules.kueue.api import API_CHECKS  # noqa: E402

__all__ = [
    "API_CHECKS",
    "DEFAULT_WHEN_CAN_BORROW",
    "DEFAULT_WHEN_CAN_PREEMPT",
    "GPU_FRACTION_ANNOTATION",
    "GPU_FRACTION_DEVICES_ANNOTATION",
    "GPU_MEMORY_ANNOTATION",
    "HELM_RELEASE",
    "KAI_BUILTIN_PRIORITIES",
    "MULTIKUEUE_CONTROLLER",
    "NON_PREEMPTIBLE_FROM",
    "PROVISIONING_REQUEST_CONTROLLER",
    "TAS_REQUEST_ANNOTATIONS",
    "KueueCluster",
    "Quantity",
    "Reporter",
    "ResourceFlavor",
    "ResourceGroup",
    "StackModel",
    "Unknown",
    "build_resource",
    "cluster_model",
    "feature_gate",
    "flavor_rejects",
    "gke_cluster_of",
    "kueue_gangs",
    "parse_go_duration",
    "pools",
    "provider_urn",
    "quantity",
    "tas_mismatch",
    "tas_only",
    "topologies",
    "topology_levels",
]
