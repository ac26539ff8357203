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
from .rules.cluster_access import POLICIES as RULES_CLUSTER_ACCESS
from .rules.container_quantities import POLICIES as RULES_CONTAINER_QUANTITIES
from .rules.custom_resources import POLICIES as RULES_CUSTOM_RESOURCES
from .rules.dws import POLICIES as RULES_DWS
from .rules.gke import POLICIES as RULES_GKE
from .rules.gpu_stack import POLICIES as RULES_GPU_STACK
from .rules.helm import POLICIES as RULES_HELM
from .rules.helm_crds import POLICIES as RULES_HELM_CRDS
from .rules.ingress_exposure import POLICIES as RULES_INGRESS_EXPOSURE
from .rules.kai import POLICIES as RULES_KAI
from .rules.kai_min_member import POLICIES as RULES_KAI_MIN_MEMBER
from .rules.kai_runtime_class import POLICIES as RULES_KAI_RUNTIME_CLASS
from .rules.kueue_accelerator_mix import POLICIES as RULES_KUEUE_ACCELERATOR_MIX
from .rules.kueue_advisory import POLICIES as RULES_KUEUE_ADVISORY
from .rules.kueue_api import POLICIES as RULES_KUEUE_API
from .rules.kueue_config import POLICIES as RULES_KUEUE_CONFIG
from .rules.kueue_fair_sharing import POLICIES as RULES_KUEUE_FAIR_SHARING
from .rules.kueue_flavors import POLICIES as RULES_KUEUE_FLAVORS
from .rules.kueue_pod_bypass import POLICIES as RULES_KUEUE_POD_BYPASS
from .rules.kueue_refs import POLICIES as RULES_KUEUE_REFS
from .rules.multikueue import POLICIES as RULES_MULTIKUEUE
from .rules.queue_labels import POLICIES as RULES_QUEUE_LABELS
from .rules.service_account_rbac import POLICIES as RULES_SERVICE_ACCOUNT_RBAC
from .rules.skypilot import POLICIES as RULES_SKYPILOT
from .rules.webhooks import POLICIES as RULES_WEBHOOKS
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
    *RULES_WEBHOOKS,
    *RULES_WORKLOAD_GANGS,
    *RULES_DWS,
    *RULES_KUEUE_FAIR_SHARING,
    *RULES_KAI_RUNTIME_CLASS,
    *RULES_KUEUE_POD_BYPASS,
    *RULES_CONTAINER_QUANTITIES,
    *RULES_CLUSTER_ACCESS,
    *RULES_SERVICE_ACCOUNT_RBAC,
    *RULES_INGRESS_EXPOSURE,
    *RULES_CUSTOM_RESOURCES,
    *FIT_POD_FIT,
    *FIT_SYSTEM_POOL,
    *FIT_EGRESS,
    *FIT_WEBHOOK_PORTS,
    *FIT_RUNTIME_CLASSES,
    *RULES_KUEUE_FLAVORS,
    *RULES_KAI_MIN_MEMBER,
    *RULES_GPU_STACK,
    *RULES_KUEUE_ACCELERATOR_MIX,
    *RULES_HELM_CRDS,
    *RULES_MULTIKUEUE,
]
