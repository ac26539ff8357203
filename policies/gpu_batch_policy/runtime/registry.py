"""Every policy of the pack, in one flat list (``policies/__main__.py`` hands it to PolicyPack).

Keep it a simple list with one import line and one list line per rule module so parallel
additions merge trivially.
"""

from __future__ import annotations

from pulumi_policy import Policy

from ..rules.api_server.builtin_objects import POLICIES as RULES_BUILTIN_OBJECTS
from ..rules.api_server.container_quantities import POLICIES as RULES_CONTAINER_QUANTITIES
from ..rules.api_server.custom_resources import POLICIES as RULES_CUSTOM_RESOURCES
from ..rules.api_server.pod_templates import POLICIES as RULES_POD_TEMPLATES
from ..rules.fit.egress import POLICIES as FIT_EGRESS
from ..rules.fit.pod_fit import POLICIES as FIT_POD_FIT
from ..rules.fit.runtime_classes import POLICIES as FIT_RUNTIME_CLASSES
from ..rules.fit.system_pool import POLICIES as FIT_SYSTEM_POOL
from ..rules.fit.webhook_ports import POLICIES as FIT_WEBHOOK_PORTS
from ..rules.gke.cluster_access import POLICIES as RULES_CLUSTER_ACCESS
from ..rules.gke.dws import POLICIES as RULES_DWS
from ..rules.gke.gcs_fuse import POLICIES as RULES_GCS_FUSE
from ..rules.gke.gpu_stack import POLICIES as RULES_GPU_STACK
from ..rules.gke.node_pools import POLICIES as RULES_GKE
from ..rules.gpudirect.networking import POLICIES as RULES_GPUDIRECT
from ..rules.gpudirect.pod_wiring import POLICIES as RULES_GPUDIRECT_PODS
from ..rules.installs.helm import POLICIES as RULES_HELM
from ..rules.installs.helm_crds import POLICIES as RULES_HELM_CRDS
from ..rules.installs.known_bugs import POLICIES as RULES_KNOWN_BUGS
from ..rules.installs.wiring import POLICIES as RULES_WIRING
from ..rules.kai.min_member import POLICIES as RULES_KAI_MIN_MEMBER
from ..rules.kai.pod_group_members import POLICIES as RULES_KAI_POD_GROUP_MEMBERS
from ..rules.kai.queues import POLICIES as RULES_KAI
from ..rules.kai.runtime_class import POLICIES as RULES_KAI_RUNTIME_CLASS
from ..rules.kai.topology import POLICIES as RULES_KAI_TOPOLOGY
from ..rules.kuberay.auth import POLICIES as RULES_RAY_AUTH
from ..rules.kueue.accelerator_mix import POLICIES as RULES_KUEUE_ACCELERATOR_MIX
from ..rules.kueue.admission_check_controllers import POLICIES as RULES_ADMISSION_CHECK_CONTROLLERS
from ..rules.kueue.advisory import POLICIES as RULES_KUEUE_ADVISORY
from ..rules.kueue.api import POLICIES as RULES_KUEUE_API
from ..rules.kueue.capacity import POLICIES as RULES_CAPACITY
from ..rules.kueue.config import POLICIES as RULES_KUEUE_CONFIG
from ..rules.kueue.fair_sharing import POLICIES as RULES_KUEUE_FAIR_SHARING
from ..rules.kueue.flavors import POLICIES as RULES_KUEUE_FLAVORS
from ..rules.kueue.managed_namespaces import POLICIES as RULES_KUEUE_MANAGED_NAMESPACES
from ..rules.kueue.pod_bypass import POLICIES as RULES_KUEUE_POD_BYPASS
from ..rules.kueue.queue_labels import POLICIES as RULES_QUEUE_LABELS
from ..rules.kueue.queue_name_reach import POLICIES as RULES_QUEUE_NAME_REACH
from ..rules.kueue.refs import POLICIES as RULES_KUEUE_REFS
from ..rules.kueue.tas import POLICIES as RULES_KUEUE_TAS
from ..rules.kueue.workload_gangs import POLICIES as RULES_WORKLOAD_GANGS
from ..rules.monitoring.dcgm_exporters import POLICIES as RULES_DCGM_EXPORTERS
from ..rules.monitoring.queries import POLICIES as RULES_MONITORING_QUERIES
from ..rules.monitoring.ray_metrics import POLICIES as RULES_MONITORING_RAY
from ..rules.monitoring.scrapes import POLICIES as RULES_MONITORING
from ..rules.multikueue.workers import POLICIES as RULES_MULTIKUEUE
from ..rules.tenancy.ingress_exposure import POLICIES as RULES_INGRESS_EXPOSURE
from ..rules.tenancy.network_isolation import POLICIES as RULES_NETWORK_ISOLATION
from ..rules.tenancy.operator_pool import POLICIES as RULES_OPERATOR_POOL
from ..rules.tenancy.pod_security import POLICIES as RULES_POD_SECURITY
from ..rules.tenancy.service_account_rbac import POLICIES as RULES_SERVICE_ACCOUNT_RBAC
from ..rules.tenancy.skypilot import POLICIES as RULES_SKYPILOT
from ..rules.webhooks import POLICIES as RULES_WEBHOOKS

ALL_POLICIES: list[Policy] = [
    *RULES_GPUDIRECT,
    *RULES_GPUDIRECT_PODS,
    *RULES_KUEUE_TAS,
    *RULES_GKE,
    *RULES_KUEUE_REFS,
    *RULES_ADMISSION_CHECK_CONTROLLERS,
    *RULES_KUEUE_API,
    *RULES_KUEUE_CONFIG,
    *RULES_KUEUE_ADVISORY,
    *RULES_KAI,
    *RULES_KAI_TOPOLOGY,
    *RULES_CAPACITY,
    *RULES_WIRING,
    *RULES_SKYPILOT,
    *RULES_HELM,
    *RULES_QUEUE_LABELS,
    *RULES_QUEUE_NAME_REACH,
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
    *RULES_POD_TEMPLATES,
    *RULES_BUILTIN_OBJECTS,
    *FIT_POD_FIT,
    *FIT_SYSTEM_POOL,
    *FIT_EGRESS,
    *FIT_WEBHOOK_PORTS,
    *FIT_RUNTIME_CLASSES,
    *RULES_KUEUE_FLAVORS,
    *RULES_KAI_MIN_MEMBER,
    *RULES_KAI_POD_GROUP_MEMBERS,
    *RULES_GPU_STACK,
    *RULES_KUEUE_ACCELERATOR_MIX,
    *RULES_HELM_CRDS,
    *RULES_MULTIKUEUE,
    *RULES_MONITORING,
    *RULES_MONITORING_QUERIES,
    *RULES_MONITORING_RAY,
    *RULES_DCGM_EXPORTERS,
    *RULES_KNOWN_BUGS,
    *RULES_OPERATOR_POOL,
    *RULES_POD_SECURITY,
    *RULES_KUEUE_MANAGED_NAMESPACES,
    *RULES_NETWORK_ISOLATION,
    *RULES_RAY_AUTH,
    *RULES_GCS_FUSE,
]
