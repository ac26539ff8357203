"""MultiKueue objects: the manager's check, config and clusters, and each worker's access for it.

Sources (kubernetes-sigs/kueue v0.19.2):

* ``apis/kueue/v1beta2/multikueue_types.go``: ``MultiKueueCluster.spec.clusterSource.kubeConfig``
  (``locationType: Secret``, ``location``: a Secret in Kueue's namespace whose key is
  ``kubeconfig``, ``MultiKueueConfigSecretKey``), ``MultiKueueConfig.spec.clusters`` (the order the
  Incremental dispatcher nominates them in), ``MultiKueueControllerName``.
* ``site/static/examples/multikueue/create-multikueue-kubeconfig.sh``: the worker side -- a
  ServiceAccount ``multikueue-sa`` in ``kueue-system``, a ClusterRole, its binding, a
  ``kubernetes.io/service-account-token`` Secret, and a kubeconfig of that token, the Secret's
  ``ca.crt`` as ``certificate-authority-data`` and the cluster's server.  The ClusterRole here grants
  exactly the script's rules for the integrations the worker's Kueue enables
  (:data:`INTEGRATION_RULES`, :data:`ALWAYS_RULES`); ``tests/test_multikueue_components.py`` reads
  the script at the pinned tag and fails when it gains a rule this table lacks.
* The kubeconfig carries a token, never an exec plugin: ``multikueuecluster.go``
  ``validateKubeconfig`` refuses exec plugins, token files, insecure TLS and CA file paths.  It is a
  Pulumi secret end to end (``pulumi.Output.secret``), so plans and reports show ``[secret]``.
* pulumi-kubernetes waits for a service-account-token Secret's ``data`` to be filled before it
  reports the Secret created (pulumi/pulumi-kubernetes#2048), so the token is read once created.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import pulumi
import pulumi_kubernetes as k8s

from components.k8s_object import KubeObject
from components.kueue_config import KUEUE_NAMESPACE

API_VERSION: Final = "kueue.x-k8s.io/v1beta2"
CONTROLLER_NAME: Final = "kueue.x-k8s.io/multikueue"
SECRET_KEY: Final = "kubeconfig"
SERVICE_ACCOUNT: Final = "multikueue-sa"
WATCH: Final = ("create", "delete", "get", "list", "watch")
WATCH_UPDATE: Final = (*WATCH, "update", "patch")

Rule = tuple[str, tuple[str, ...], tuple[str, ...]]  # (apiGroup, resources, verbs)

# The script's rules the manager needs whatever runs: the remote Workloads and the queues.
ALWAYS_RULES: Final[tuple[Rule, ...]] = (
    ("kueue.x-k8s.io", ("workloads",), WATCH_UPDATE),
    ("kueue.x-k8s.io", ("clusterqueues", "localqueues"), ("get", "list", "watch")),
    ("kueue.x-k8s.io", ("workloads/status",), ("get", "patch", "update")),
)
# The script's rules per Kueue integration (framework name, apis/config/v1beta2 Integrations).
INTEGRATION_RULES: Final[Mapping[str, tuple[Rule, ...]]] = {
    "batch/job": (("batch", ("jobs",), WATCH), ("batch", ("jobs/status",), ("get",))),
    "pod": (("", ("pods",), WATCH),),
    "statefulset": (("apps", ("statefulsets",), WATCH), ("apps", ("statefulsets/status",), ("get",))),
    "leaderworkerset.x-k8s.io/leaderworkerset": (
        ("leaderworkerset.x-k8s.io", ("leaderworkersets",), WATCH),
        ("leaderworkerset.x-k8s.io", ("leaderworkersets/status",), ("get",)),
    ),
    "jobset.x-k8s.io/jobset": (
        ("jobset.x-k8s.io", ("jobsets",), WATCH),
        ("jobset.x-k8s.io", ("jobsets/status",), ("get",)),
    ),
    **{
        f"kubeflow.org/{kind}": (
            ("kubeflow.org", (f"{kind}s",), WATCH),
            ("kubeflow.org", (f"{kind}s/status",), ("get",)),
        )
        for kind in ("tfjob", "paddlejob", "pytorchjob", "xgboostjob", "mpijob")
    },
    "ray.io/rayjob": (("ray.io", ("rayjobs",), WATCH), ("ray.io", ("rayjobs/status",), ("get",))),
    "ray.io/raycluster": (
        ("ray.io", ("rayclusters",), WATCH_UPDATE),
        ("ray.io", ("rayclusters/status",), ("get",)),
    ),
    "ray.io/rayservice": (("ray.io", ("rayservices",), WATCH), ("ray.io", ("rayservices/status",), ("get",))),
    "workload.codeflare.dev/appwrapper": (
        ("workload.codeflare.dev", ("appwrappers",), WATCH),
        ("workload.codeflare.dev", ("appwrappers/status",), ("get",)),
    ),
}


def worker_rules(frameworks: Sequence[str]) -> list[dict[str, Any]]:
    """The ClusterRole rules for a worker whose Kueue runs ``frameworks``, in the script's form."""
    rules = [*ALWAYS_RULES, *(r for f in frameworks for r in INTEGRATION_RULES.get(f, ()))]
    return [{"apiGroups": [g], "resources": list(res), "verbs": list(verbs)} for g, res, verbs in rules]


@dataclass(frozen=True)
class WorkerAccessArgs:
    frameworks: tuple[str, ...]
    namespace: str = KUEUE_NAMESPACE


class MultiKueueWorkerAccess(pulumi.ComponentResource):
    """What the manager's Kueue signs in to a worker with: a ServiceAccount, its ClusterRole and
    binding, and a token Secret (create-multikueue-kubeconfig.sh, through the worker's provider)."""

    token_secret: k8s.core.v1.Secret

    def __init__(self, name: str, args: WorkerAccessArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("gpu-batch:multikueue:WorkerAccess", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        meta = k8s.meta.v1.ObjectMetaArgs(name=SERVICE_ACCOUNT, namespace=args.namespace)
        account = k8s.core.v1.ServiceAccount(f"{name}-account", metadata=meta, opts=child)
        role = k8s.rbac.v1.ClusterRole(
            f"{name}-role",
            metadata=k8s.meta.v1.ObjectMetaArgs(name=f"{SERVICE_ACCOUNT}-role"),
            rules=[
                k8s.rbac.v1.PolicyRuleArgs(
                    api_groups=r["apiGroups"], resources=r["resources"], verbs=r["verbs"]
                )
                for r in worker_rules(args.frameworks)
            ],
            opts=child,
        )
        k8s.rbac.v1.ClusterRoleBinding(
            f"{name}-binding",
            metadata=k8s.meta.v1.ObjectMetaArgs(name=f"{SERVICE_ACCOUNT}-crb"),
            role_ref=k8s.rbac.v1.RoleRefArgs(
                api_group="rbac.authorization.k8s.io", kind="ClusterRole", name=f"{SERVICE_ACCOUNT}-role"
            ),
            subjects=[
                k8s.rbac.v1.SubjectArgs(kind="ServiceAccount", name=SERVICE_ACCOUNT, namespace=args.namespace)
            ],
            opts=pulumi.ResourceOptions(parent=self, depends_on=[role, account]),
        )
        self.token_secret = k8s.core.v1.Secret(
            f"{name}-token",
            metadata=k8s.meta.v1.ObjectMetaArgs(
                name=SERVICE_ACCOUNT,
                namespace=args.namespace,
                annotations={"kubernetes.io/service-account.name": SERVICE_ACCOUNT},
            ),
            type="kubernetes.io/service-account-token",
            opts=pulumi.ResourceOptions(parent=self, depends_on=[account]),
        )
        self.register_outputs({})


def render_kubeconfig(name: str, server: str, data: Mapping[str, str] | None) -> str:
    """The script's kubeconfig: ``https://<server>``, the token Secret's ``token`` (decoded) as the
    user's token and its ``ca.crt`` as ``certificate-authority-data``."""
    data = data or {}
    token = base64.b64decode(data.get("token", "")).decode()
    return (
        "apiVersion: v1\nkind: Config\n"
        f"clusters:\n- name: {name}\n  cluster:\n    server: https://{server}\n"
        f"    certificate-authority-data: {data.get('ca.crt', '')}\n"
        f"contexts:\n- name: {name}\n  context:\n    cluster: {name}\n    user: {name}-{SERVICE_ACCOUNT}\n"
        f"current-context: {name}\n"
        f"users:\n- name: {name}-{SERVICE_ACCOUNT}\n  user:\n    token: {token}\n"
    )


def token_kubeconfig(
    name: str, endpoint: pulumi.Input[str], token_data: pulumi.Input[Mapping[str, str]]
) -> pulumi.Output[str]:
    """:func:`render_kubeconfig` of a worker once its endpoint and token are known, as a secret."""
    return pulumi.Output.secret(
        pulumi.Output.all(endpoint, token_data).apply(lambda a: render_kubeconfig(name, a[0], a[1]))
    )


@dataclass(frozen=True)
class WorkerLink:
    """One worker as the manager sees it: its name and either its kubeconfig (a secret output)
    or the ClusterProfile GKE's fleet writes for it (components/multikueue_fleet.py)."""

    name: str
    kubeconfig: pulumi.Input[str] | None = None
    cluster_profile: str | None = None


@dataclass(frozen=True)
class ManagerArgs:
    workers: tuple[WorkerLink, ...]
    check_name: str = "multikueue"
    config_name: str = "multikueue"
    namespace: str = KUEUE_NAMESPACE


class MultiKueueManager(pulumi.ComponentResource):
    """The manager's MultiKueue objects: a MultiKueueCluster (and its kubeconfig Secret, unless the
    worker is reached through a ClusterProfile) per worker,
    the MultiKueueConfig listing them in order, and the AdmissionCheck ClusterQueues use."""

    check: KubeObject

    def __init__(self, name: str, args: ManagerArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("gpu-batch:multikueue:Manager", name, None, opts)
        clusters: list[pulumi.Resource] = []
        for worker in args.workers:
            source, needs = self._source(name, worker, args.namespace)
            clusters.append(
                KubeObject(
                    f"{name}-cluster-{worker.name}",
                    api_version=API_VERSION,
                    kind="MultiKueueCluster",
                    metadata={"name": worker.name},
                    spec={"clusterSource": source},
                    opts=pulumi.ResourceOptions(parent=self, depends_on=needs),
                )
            )
        config = KubeObject(
            f"{name}-config",
            api_version=API_VERSION,
            kind="MultiKueueConfig",
            metadata={"name": args.config_name},
            spec={"clusters": [w.name for w in args.workers]},
            opts=pulumi.ResourceOptions(parent=self, depends_on=clusters),
        )
        self.check = KubeObject(
            f"{name}-check",
            api_version=API_VERSION,
            kind="AdmissionCheck",
            metadata={"name": args.check_name},
            spec={
                "controllerName": CONTROLLER_NAME,
                "parameters": {
                    "apiGroup": "kueue.x-k8s.io",
                    "kind": "MultiKueueConfig",
                    "name": args.config_name,
                },
            },
            opts=pulumi.ResourceOptions(parent=self, depends_on=[config]),
        )
        self.register_outputs({"workers": [w.name for w in args.workers]})

    def _source(
        self, name: str, worker: WorkerLink, namespace: str
    ) -> tuple[dict[str, Any], list[pulumi.Resource]]:
        """The worker's ``clusterSource`` and what it needs first: a ClusterProfile reference (no
        Secret: Kueue builds the credentials from its access provider), else a kubeconfig Secret."""
        if worker.cluster_profile is not None:
            return {"clusterProfileRef": {"name": worker.cluster_profile}}, []
        if worker.kubeconfig is None:
            raise ValueError(f"MultiKueue worker {worker.name}: neither a kubeconfig nor a ClusterProfile")
        secret_name = f"{worker.name}-kubeconfig"
        secret = k8s.core.v1.Secret(
            f"{name}-{secret_name}",
            metadata=k8s.meta.v1.ObjectMetaArgs(name=secret_name, namespace=namespace),
            string_data={SECRET_KEY: pulumi.Output.secret(worker.kubeconfig)},
            opts=pulumi.ResourceOptions(parent=self, additional_secret_outputs=["stringData", "data"]),
        )
        return {"kubeConfig": {"locationType": "Secret", "location": secret_name}}, [secret]
