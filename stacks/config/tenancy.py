"""Config of the teams sharing the cluster (key ``gpu-batch:teams``) and their checks.

A team is a namespace, the people who may submit jobs there, the queue its jobs go to
(a Kueue LocalQueue pointing at a ClusterQueue, and/or a leaf KAI queue), and optionally its
own SkyPilot API server.  The ClusterQueues' namespace selectors are derived from these
entries, so a team can only ever reach the ClusterQueues it is listed against.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator
from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from components.skypilot import SKYPILOT_VERSION
from stacks.base import ConfigModel, DnsLabel, NonEmptyStr
from stacks.config.cost import Money
from stacks.config.kai_queues import KAI_PRIORITY_CLASSES, KaiQueueConfig, leaf_queues
from stacks.config.queues import KueueQueuesConfig
from stacks.errors import ConfigIssue
from stacks.references import unknown_reference

TEAMS_KEY = "gpu-batch:teams"
SKYPILOT_PASSWORDS_KEY = "skypilotPasswords"
"""Secret config key: a mapping team name -> SkyPilot basic-auth password."""
# Helm chart https://helm.skypilot.co, chart `skypilot`, version 0.13.0: the stable release
# listed in that repository's index.yaml (appVersion 0.13.0, digest 71f83d43...; stored copy of
# skypilot-org/skypilot-helm), matching the PyPI release skypilot 0.13.0.
SKYPILOT_CHART_VERSION = SKYPILOT_VERSION
# Namespaces Kubernetes, GKE or the operators create themselves: a team may live in one
# (the seeds use `default`) but the stack must not create, and so on destroy delete, it.
SYSTEM_NAMESPACES = frozenset(
    {"default", "kube-system", "kube-public", "kube-node-lease", "gke-managed-system", "gmp-system"}
)
# LocalQueueDefaulting (GA since Kueue 0.17): a managed job without a queue label in a namespace
# with a LocalQueue named `default` is put into it (reference/kueue.md §6).
DEFAULTING_LOCAL_QUEUE = "default"

SemVer = Annotated[str, StringConstraints(pattern=r"^\d+\.\d+\.\d+([-+][0-9A-Za-z.-]+)?$")]


class MembersConfig(ConfigModel):
    """Who may submit jobs in the team's namespace (Kubernetes RBAC subjects)."""

    groups: list[NonEmptyStr] = Field(
        default_factory=list, description="Groups, e.g. Google Groups for RBAC: ml-team@example.com."
    )
    users: list[NonEmptyStr] = Field(default_factory=list, description="Users, e.g. alice@example.com.")


class SkypilotServerConfig(ConfigModel):
    """The team's own SkyPilot API server (Helm chart `skypilot` from https://helm.skypilot.co)."""

    username: NonEmptyStr | None = Field(
        None, description="The server's basic-auth user (checked by the server itself); default <team>-user."
    )
    chart_version: SemVer = Field(SKYPILOT_CHART_VERSION, description="Pinned `skypilot` chart version.")
    priority_class: str | None = Field(
        None, description="WorkloadPriorityClass label put on every pod the server launches."
    )


class SkypilotGatewayConfig(ConfigModel):
    """GKE's internal Gateway in front of the SkyPilot servers (components/gateway): one host per
    team, ``<team>.<domain>``, TLS from a Certificate Manager certificate the stack creates."""

    domain: NonEmptyStr | None = Field(
        None, description="DNS domain of the servers: team T answers at T.<domain> (required with a server)."
    )
    dns_zone: NonEmptyStr | None = Field(
        None,
        description="Cloud DNS managed zone of the domain: the certificate's DNS authorization and the hosts' record.",
    )
    proxy_subnet_range: NonEmptyStr | None = Field(
        None,
        description="CIDR of the region's proxy-only subnet (/26 or larger); the NetworkPolicies allow it.",
    )
    create_proxy_subnet: bool = Field(
        True, description="Create that subnet; false: the network's owner already runs it (its range above)."
    )


class BucketAccessConfig(ConfigModel):
    """A Cloud Storage bucket the team's workloads may use."""

    bucket: NonEmptyStr = Field(description="Bucket name (not gs://).")
    access: Literal["read", "write"] = Field(
        "read",
        description="read: roles/storage.objectViewer; write: roles/storage.objectUser, on that bucket only.",
    )
    mount: bool = Field(
        False,
        description="Pods may mount the bucket as a file system through GKE's Cloud Storage FUSE CSI driver: "
        "the cluster gets the driver add-on; a pod running as the team's serviceAccount adds the annotation "
        "gke-gcsfuse/volumes: 'true' and a csi volume (driver gcsfuse.csi.storage.gke.io, bucketName).",
    )


class WorkloadIdentityConfig(ConfigModel):
    """The team's own Google service account, which its pods act as through GKE Workload Identity."""

    service_account: DnsLabel = Field(
        "workload",
        description="Kubernetes ServiceAccount in the team's namespace that pods name to act as it.",
    )
    buckets: list[BucketAccessConfig] = Field(
        default_factory=list, description="Buckets the team's service account may use (see buckets[].* keys)."
    )


class TeamConfig(ConfigModel):
    """One team: its namespace, members, queues and optional SkyPilot server."""

    name: DnsLabel = Field(description="Team name; also the SkyPilot host <name>.<skypilotGateway.domain>.")
    namespace: DnsLabel | None = Field(None, description="The team's namespace; default: the team name.")
    create_namespace: bool = Field(
        True,
        description="Create (and on destroy delete) the namespace; false for one that exists (default): its "
        "labels are then set by a server-side patch (NamespacePatch).",
    )
    pod_security: Literal["privileged", "baseline", "restricted"] = Field(
        "baseline",
        description="Pod Security level the namespace enforces (pod-security.kubernetes.io/enforce, at the "
        "cluster's minor): baseline refuses privileged pods, hostPath, hostNetwork; restricted also needs "
        "non-root, no privilege escalation, capabilities dropped, a seccomp profile.",
    )
    members: MembersConfig = Field(
        default_factory=lambda: MembersConfig.model_validate({}),
        description="Who may submit jobs (see members.* keys); none: no RoleBinding.",
    )
    local_queue: DnsLabel | None = Field(
        None, description="Name of the team's Kueue LocalQueue (needs clusterQueue)."
    )
    cluster_queue: str | None = Field(None, description="ClusterQueue the LocalQueue points at.")
    gpu_queues: dict[DnsLabel, NonEmptyStr] = Field(
        default_factory=dict,
        description="More LocalQueues of the team, one per GPU type: name -> ClusterQueue, e.g. "
        "{h100: research-h100}; a job picks its GPU type by naming one (kueue.x-k8s.io/queue-name).",
    )
    kai_queue: DnsLabel | None = Field(None, description="Leaf KAI queue the team's KAI workloads use.")
    weekly_gpu_budget: Money | None = Field(
        None,
        description="Weekly GPU budget in the price table's currency; the preview flags an expected week "
        "(what-if GPU-hours at cited prices) over it.",
    )
    priority_classes: list[NonEmptyStr] | None = Field(
        None,
        description="The priority classes the team may use (Kueue WorkloadPriorityClasses, KAI's priority "
        "classes, and PriorityClasses in pod specs), enforced by its admission policy; omitted: any.",
    )
    skypilot: SkypilotServerConfig | None = Field(
        None, description="The team's SkyPilot API server (see skypilot.* keys); omitted: none."
    )
    workload_identity: WorkloadIdentityConfig | None = Field(
        None,
        description="A per-team Google service account its pods act as (see workloadIdentity.* keys); "
        "omitted: none.",
    )

    @property
    def namespace_name(self) -> str:
        return self.namespace or self.name

    @property
    def local_queues(self) -> dict[str, str]:
        """Every LocalQueue of the team -> its ClusterQueue: localQueue first, then gpuQueues."""
        queues = {self.local_queue: self.cluster_queue} if self.local_queue and self.cluster_queue else {}
        for name, target in self.gpu_queues.items():
            queues.setdefault(name, target)
        return queues


def teams_by_queue(teams: list[TeamConfig]) -> dict[str, list[TeamConfig]]:
    """Per ClusterQueue, the teams with a LocalQueue pointing at it, in stack-file order, each once.

    One pass over the teams for every queue: a thousand teams each with its own queue made a
    per-queue scan a million comparisons (``team_namespaces``, and the dashboards' queue views:
    ~1 s of a 1,000-team program)."""
    by_queue: dict[str, list[TeamConfig]] = {}
    for team in teams:
        for target in dict.fromkeys(team.local_queues.values()):
            by_queue.setdefault(target, []).append(team)
    return by_queue


def team_namespaces(teams: list[TeamConfig]) -> dict[str, list[str]]:
    """Per ClusterQueue, the namespaces whose LocalQueue points at it: what its selector admits."""
    return {
        queue: sorted({team.namespace_name for team in queue_teams})
        for queue, queue_teams in teams_by_queue(teams).items()
    }


def skypilot_teams(teams: list[TeamConfig]) -> list[TeamConfig]:
    """Teams with a SkyPilot API server, in stack-file order (the first serves at /)."""
    return [t for t in teams if t.skypilot is not None]


def check_teams(
    teams: list[TeamConfig],
    kueue_queues: KueueQueuesConfig,
    kai_queues: list[KaiQueueConfig],
) -> Iterator[ConfigIssue]:
    cluster_queues = [q.name for q in kueue_queues.cluster_queues]
    priority_classes = [p.name for p in kueue_queues.priority_classes]
    leaves = sorted(leaf_queues(kai_queues))
    names: set[str] = set()
    namespaces: set[str] = set()
    for index, team in enumerate(teams):
        at = f"{TEAMS_KEY}[{index}]"
        if team.name in names:
            yield ConfigIssue(f"{at}.name", "a team name used once", team.name)
        names.add(team.name)
        ns = team.namespace_name
        if ns in namespaces:
            yield ConfigIssue(f"{at}.namespace", "a namespace no other team uses (RBAC is per namespace)", ns)
        namespaces.add(ns)
        if team.create_namespace and ns in SYSTEM_NAMESPACES:
            yield ConfigIssue(
                f"{at}.createNamespace",
                f"false: namespace {ns} exists already and must not be deleted with the stack",
                True,
            )
        yield from _check_queues(at, team, cluster_queues, leaves)
        yield from _check_skypilot(at, team, priority_classes)
        yield from _check_priority_classes(at, team, [*priority_classes, *KAI_PRIORITY_CLASSES])


def _check_queues(
    at: str, team: TeamConfig, cluster_queues: list[str], leaves: list[str]
) -> Iterator[ConfigIssue]:
    if team.local_queue is not None and team.cluster_queue is None:
        yield ConfigIssue(f"{at}.clusterQueue", "the ClusterQueue the team's LocalQueue points at")
    if team.cluster_queue is not None:
        if team.local_queue is None:
            yield ConfigIssue(f"{at}.localQueue", "the name of the team's LocalQueue (clusterQueue is set)")
        if team.cluster_queue not in cluster_queues:
            yield unknown_reference(
                f"{at}.clusterQueue",
                team.cluster_queue,
                "a ClusterQueue declared under gpu-batch:kueueQueues.clusterQueues",
                cluster_queues,
            )
    for name, target in team.gpu_queues.items():
        if name == team.local_queue and target != team.cluster_queue:
            yield ConfigIssue(
                f"{at}.gpuQueues.{name}",
                f"another LocalQueue name than localQueue ({name} points at {team.cluster_queue})",
                target,
            )
        elif target not in cluster_queues:
            yield unknown_reference(
                f"{at}.gpuQueues.{name}",
                target,
                "a ClusterQueue declared under gpu-batch:kueueQueues.clusterQueues",
                cluster_queues,
            )
    if team.kai_queue is not None and team.kai_queue not in leaves:
        yield unknown_reference(
            f"{at}.kaiQueue",
            team.kai_queue,
            "a leaf queue of gpu-batch:kaiQueues",
            leaves,
            "KAI silently drops jobs of a missing or non-leaf queue",
        )


def _check_priority_classes(at: str, team: TeamConfig, declared: list[str]) -> Iterator[ConfigIssue]:
    """Each allowed class is one the stack declares (a Kueue WorkloadPriorityClass or one of the
    classes the KAI chart installs), and the team's SkyPilot server uses an allowed one."""
    if team.priority_classes is None:
        return
    for index, name in enumerate(team.priority_classes):
        if name not in declared:
            yield unknown_reference(
                f"{at}.priorityClasses[{index}]",
                name,
                "a WorkloadPriorityClass under gpu-batch:kueueQueues.priorityClasses or a KAI priority class",
                declared,
            )
    server = team.skypilot
    if (
        server is not None
        and server.priority_class is not None
        and server.priority_class not in team.priority_classes
    ):
        yield ConfigIssue(
            f"{at}.skypilot.priorityClass",
            f"one of the team's priorityClasses ({', '.join(team.priority_classes) or 'none'})",
            server.priority_class,
        )


def _check_skypilot(at: str, team: TeamConfig, priority_classes: list[str]) -> Iterator[ConfigIssue]:
    server = team.skypilot
    if server is None:
        return
    if team.local_queue is None:
        yield ConfigIssue(f"{at}.localQueue", "a LocalQueue for the team's SkyPilot pods (skypilot is set)")
    elif team.local_queue == DEFAULTING_LOCAL_QUEUE:
        yield ConfigIssue(
            f"{at}.localQueue",
            "another name than 'default' next to a SkyPilot server: Kueue's pod integration would "
            "default the server's own pods (and ingress-nginx) into the queue",
            team.local_queue,
        )
    if server.priority_class is not None and server.priority_class not in priority_classes:
        yield unknown_reference(
            f"{at}.skypilot.priorityClass",
            server.priority_class,
            "a WorkloadPriorityClass under gpu-batch:kueueQueues.priorityClasses",
            priority_classes,
        )


SKYPILOT_GATEWAY_KEY = "gpu-batch:skypilotGateway"
# Cloud Load Balancing docs, proxy-only-subnets: "at least 64 IP addresses", a /26 or larger.
PROXY_SUBNET_MAX_PREFIX = 26


def check_skypilot_gateway(gateway: SkypilotGatewayConfig, teams: list[TeamConfig]) -> Iterator[ConfigIssue]:
    """A stack with a SkyPilot server names the domain, the DNS zone that proves it (the
    certificate is issued only then) and the proxy-only subnet's range (components/gateway)."""
    running = [index for index, team in enumerate(teams) if team.skypilot is not None]
    if not running:
        return
    why = f"({TEAMS_KEY}[{running[0]}] runs a SkyPilot server)"
    if gateway.domain is None:
        yield ConfigIssue(f"{SKYPILOT_GATEWAY_KEY}.domain", f"the DNS domain the servers answer under {why}")
    if gateway.dns_zone is None:
        yield ConfigIssue(
            f"{SKYPILOT_GATEWAY_KEY}.dnsZone",
            f"the Cloud DNS managed zone of that domain, for its certificate {why}",
        )
    if gateway.proxy_subnet_range is None:
        yield ConfigIssue(
            f"{SKYPILOT_GATEWAY_KEY}.proxySubnetRange", f"the CIDR of the region's proxy-only subnet {why}"
        )
        return
    try:
        network = ipaddress.IPv4Network(gateway.proxy_subnet_range)
    except ValueError:
        yield ConfigIssue(
            f"{SKYPILOT_GATEWAY_KEY}.proxySubnetRange",
            "an IPv4 CIDR such as 10.129.0.0/23",
            gateway.proxy_subnet_range,
        )
        return
    if network.prefixlen > PROXY_SUBNET_MAX_PREFIX:
        yield ConfigIssue(
            f"{SKYPILOT_GATEWAY_KEY}.proxySubnetRange",
            f"a range of /{PROXY_SUBNET_MAX_PREFIX} or larger (64 proxy addresses at least)",
            gateway.proxy_subnet_range,
        )
