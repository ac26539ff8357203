"""Every policy of the pack, in one flat list (``policies/__main__.py`` hands it to PolicyPack).

Keep it a simple list with one import line and one list line per rule module so parallel
additions merge trivially.
"""

from __future__ import annotations

from pulumi_policy import Policy

from .fit.rules_egress import POLICIES as FIT_EGRESS
from .fit.rules_pod_fit import POLICIES as FIT_POD_FIT
from .fit.rules_runtime_classes import POLICIES as FIT_RUNTIME_CLASSES
from .fit.rules_system_pool import POLICIES as FIT_SYSTEM_POOL
from .fit.rules_webhook_ports import POLICIES as FIT_WEBHOOK_PORTS
from .rules_capacity import POLICIES as RULES_CAPACITY
from .rules_gke import POLICIES as RULES_GKE
from .rules_helm import POLICIES as RULES_HELM
from .rules_kai import POLICIES as RULES_KAI
from .rules_kueue_advisory import POLICIES as RULES_KUEUE_ADVISORY
from .rules_kueue_api import POLICIES as RULES_KUEUE_API
from .rules_kueue_config import POLICIES as RULES_KUEUE_CONFIG
from .rules_kueue_refs import POLICIES as RULES_KUEUE_REFS
from .rules_skypilot import POLICIES as RULES_SKYPILOT
from .rules_wiring import POLICIES as RULES_WIRING

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
    *FIT_POD_FIT,
    *FIT_SYSTEM_POOL,
    *FIT_EGRESS,
    *FIT_WEBHOOK_PORTS,
    *FIT_RUNTIME_CLASSES,
]
