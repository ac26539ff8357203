"""Every policy of the pack, in one flat list (``policies/__main__.py`` hands it to PolicyPack).

Keep it a simple list with one import line and one list line per rule module so parallel
additions merge trivially.
"""

from __future__ import annotations

from pulumi_policy import Policy

from .fit.rules.egress import POLICIES as FIT_EGRESS
from .fit.rules.pod_fit import POLICIES as FIT_POD_FIT
from .fit.rules.runtime_classes import POLICIES as FIT_RUNTIME_CLASSES
from .fit.rules.system_pool import POLICIES as FIT_SYSTEM_POOL
from .fit.rules.webhook_ports import POLICIES as FIT_WEBHOOK_PORTS
from .rules.capacity import POLICIES as RULES_CAPACITY
from .rules.container_quantities import POLICIES as RULES_CONTAINER_QUANTITIES
from .rules.dws import POLICIES as RULES_DWS
from .rules.gke import POLICIES as RULES_GKE
from .rules.gpu_stack import POLICIES as RULES_GPU_STACK
from .rules.helm import POLICIES as RULES_HELM
from .rules.kai import POLICIES as RULES_KAI
from .rules.kai_runtime_class import POLICIES as RULES_KAI_RUNTIME_CLASS
from .rules.kueue_advisory import POLICIES as RULES_KUEUE_ADVISORY
from .rules.kueue_api import POLICIES as RULES_KUEUE_API
from .rules.kueue_config import POLICIES as RULES_KUEUE_CONFIG
from .rules.kueue_fair_sharing import POLICIES as RULES_KUEUE_FAIR_SHARING
from .rules.kueue_pod_bypass import POLICIES as RULES_KUEUE_POD_BYPASS
from .rules.kueue_refs import POLICIES as RULES_KUEUE_REFS
from .rules.kueue_webhook import POLICIES as RULES_KUEUE_WEBHOOK
from .rules.queue_labels import POLICIES as RULES_QUEUE_LABELS
from .rules.ray_admission import POLICIES as RULES_RAY_ADMISSION
from .rules.skypilot import POLICIES as RULES_SKYPILOT
from .rules.wiring import POLICIES as RULES_WIRING
from .rules.workload_gangs import POLICIES as RULES_WORKLOAD_GANGS

ALL_POLICIES: list[Policy] = [
    *RULES_GKE,
    *RULES_KUEUE_REFS,
    *RULES_KUEUE_API,
    *RULES_KUEUE_CONFIG,
    *RULES_KUEUE_ADVISORY,
    *RULES_KAI,
    *RULES_CAPACITY,
    *RULES_WIRING,
    *RULES_SKYPILOT,
    *RULES_HELM,
    *RULES_QUEUE_LABELS,
    *RULES_RAY_ADMISSION,
    *RULES_WORKLOAD_GANGS,
    *RULES_KUEUE_WEBHOOK,
    *RULES_DWS,
    *RULES_KUEUE_FAIR_SHARING,
    *RULES_KAI_RUNTIME_CLASS,
    *RULES_KUEUE_POD_BYPASS,
    *RULES_CONTAINER_QUANTITIES,
    *FIT_POD_FIT,
    *FIT_SYSTEM_POOL,
    *FIT_EGRESS,
    *FIT_WEBHOOK_PORTS,
    *FIT_RUNTIME_CLASSES,
    *RULES_GPU_STACK,
]
