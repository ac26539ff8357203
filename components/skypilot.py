"""A team's SkyPilot API server: the ``skypilot`` Helm chart in the team's namespace.

What the release is configured to do (reference/kai-kuberay-skypilot.md §3, seed 004):

* ``apiService.config`` (the server's ``~/.sky/config.yaml``) puts every pod the server launches
  into the team's Kueue LocalQueue with ``kubernetes.pod_config.metadata.labels``
  (``kueue.x-k8s.io/queue-name``, and a ``kueue.x-k8s.io/priority-class`` when set) -- the
  mechanism of the seed and of SkyPilot's examples/kueue, valid in every SkyPilot release -- and
  sets ``kubernetes.provision_timeout: -1`` so a launch waits while Kueue holds its pods back
  instead of failing over (examples/kueue/README.md).  Kueue must run its ``pod`` integration,
  because SkyPilot creates bare pods.
* The server authenticates every request itself (issue 27): ``apiService.enableUserManagement:
  true`` makes the chart start ``sky api start --deploy --enable-basic-auth``
  (``_helpers.tpl`` ``skypilot.apiArgs``), which sets ``ENABLE_BASIC_AUTH=true`` for the server
  (skypilot 0.13.0 ``sky/server/common.py`` ``_start_api_server``), and
  ``sky/server/server.py`` then installs ``BasicAuthMiddleware``, whose ``dispatch`` answers 401
  to every request without valid credentials except ``/api/health`` and loopback connections from
  inside the pod (``sky/server/auth/loopback.py``).  Its one user comes from
  ``apiService.initialBasicAuthCredentials``, an htpasswd line hashed here from the team's
  password (a Pulumi secret that stays a secret Output end to end); the server checks it with
  passlib's bcrypt (``sky/server/common.py`` ``crypt_ctx``) and seeds it as an admin
  (``sky/users/permission.py`` ``_maybe_initialize_basic_auth_user``).  Never the chart's default
  credentials, which are public (values.yaml ``apiService.initialBasicAuthCredentials``).
* No ingress and no ingress controller: ``ingress.enabled: false`` and ``ingress-nginx.enabled:
  false``.  Each server is reached only through GKE's internal Gateway at its own host
  (:mod:`components.gateway`), on its ClusterIP Service (templates/api-service.yaml).
* Least privilege (issue 19 #3): ``rbac.manageRbacPolicies: false``.  With the chart's default
  (true) the server's ServiceAccount gets ``*`` on ClusterRoles and ClusterRoleBindings
  (skypilot 0.13.0 ``templates/rbac.yaml``), enough to make itself cluster-admin.  Off, the chart
  still creates the ServiceAccount, a Role in the team's namespace with ``rbac.namespaceRules``
  (pods, services, secrets, deployments, PVCs: what the server manages) and a read-only
  ClusterRole (nodes, pods, runtime/ingress/storage classes, to find GPUs); and, as the chart's
  values.yaml says, ``kubernetes.remote_identity`` must then name a service account.
* Task pods run as their own ServiceAccount, not the server's (issue 27):
  ``kubernetes.remote_identity`` names :func:`task_service_account`, created here with a Role of
  :data:`TASK_RULES` only.  SkyPilot 0.13.0 puts that name in every pod's
  ``serviceAccountName`` with the token mounted (``sky/clouds/kubernetes.py``
  ``make_deploy_resources_variables``: ``k8s_service_account_name``, ``k8s_automount_sa_token``)
  and, for a name other than its default, creates no RBAC itself
  (``sky/provision/kubernetes/config.py`` ``bootstrap_instances``: "we assume they have already set
  up the necessary roles").  The pods themselves create nothing: the server creates them.  What a
  task's token is for is its cluster tearing itself down (autodown, ``sky down`` from inside), which
  runs ``sky/provision/kubernetes/instance.py`` ``terminate_instances`` there: list the cluster's
  pods, delete them and their services (``_terminate_node``, ``_delete_services``,
  ``_delete_cluster_services``: ``delete_collection_namespaced_service``).  So the token may read
  and delete pods and services of its namespace, and nothing else: no Secrets, no exec, no
  creating pods (a pod made there would skip the server's queue label) or Services (no
  LoadBalancer), no Deployments.  The server keeps its own token for what it manages.  ``rbac.manageSystemComponents: false``
  too: it grants ``*`` on DaemonSets in ``skypilot-system`` to every team's server, for object
  store mounting the stack does not use.

* The stack owns the server's config, on upgrades too.  The chart writes ``apiService.config`` to
  a ConfigMap, but the server reads ``~/.sky/config.yaml`` on its volume, and the start script
  copies the ConfigMap over it only when that file is empty (skypilot 0.13.0
  ``templates/api-deployment.yaml``, "Initialize the SkyPilot config"; values.yaml: "This value
  is IGNORED during an helm upgrade if there is an existing config").  So a renamed LocalQueue
  would never reach a running server, and its pods would wait for a queue that no longer exists.
  :func:`config_sync_hook` goes into ``apiService.preDeployHook`` (run by the same script just
  before that step): when the digest of the stack's config differs from the one it recorded on the
  volume, it replaces the volume's copy with the ConfigMap's and records the new digest.  The
  digest is also a pod annotation (``apiService.annotations``), so a changed config rolls the
  pod and the hook runs.  Edits made through SkyPilot's dashboard are kept until the stack's
  config changes; then the stack's wins.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s
import yaml

from components.chart_lock import locked
from components.htpasswd import htpasswd_line
from components.k8s_object import compact
from components.workloads import KUEUE_PRIORITY_LABEL, KUEUE_QUEUE_LABEL

SKYPILOT_REPO = locked("skypilot").source
SKYPILOT_CHART = locked("skypilot").name
SKYPILOT_VERSION = locked("skypilot").version


# How long Helm may wait for a SkyPilot release (atomic implies --wait; see
# components.operator_release.operator_release): the API server's PersistentVolumeClaim must be
# bound (a new GKE persistent disk) and its 4 CPU / 8 GiB pod scheduled -- possibly after the
# system pool's autoscaler adds a node -- and pass its readiness probe.
SKYPILOT_RELEASE_TIMEOUT_SECONDS = 900


@dataclass(frozen=True)
class SkypilotServerArgs:
    team: str
    namespace: str
    chart_version: str
    username: str
    # A secret Output; hashed inside an apply so the result stays secret.
    password: pulumi.Output[str]
    # Salt scope for the htpasswd hash: something stable that identifies the deployment.
    auth_scope: str
    local_queue: str
    # The host the Gateway serves this team's server on (components.gateway.objects.team_host).
    host: str
    priority_class: str | None = None

    @property
    def release_name(self) -> str:
        return f"skypilot-{self.team}"


# The chart's rbac.namespaceRules (skypilot 0.13.0 values.yaml) without the one for Deployments,
# which it needs only for the high-availability controller (its comment says so) that this stack
# does not enable: with it, anything holding the server's token -- every task pod, which runs as
# that ServiceAccount (remote_identity) -- could create a Deployment whose pods, made by the
# ReplicaSet controller, carry no queue label and escape Kueue (issue 19 #2).
NAMESPACE_RULES = [
    {
        "apiGroups": [""],
        "resources": ["pods", "pods/status", "pods/exec", "pods/portforward"],
        "verbs": ["*"],
    },
    {"apiGroups": [""], "resources": ["services"], "verbs": ["*"]},
    {"apiGroups": [""], "resources": ["secrets"], "verbs": ["*"]},
    {"apiGroups": [""], "resources": ["events"], "verbs": ["get", "list", "watch"]},
    {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "patch"]},
    {"apiGroups": [""], "resources": ["persistentvolumeclaims"], "verbs": ["*"]},
]


# What a task pod's token may do in its namespace (see the module doc): tear its own cluster down.
TASK_RULES = [
    {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch", "delete"]},
    {"apiGroups": [""], "resources": ["services"], "verbs": ["get", "list", "delete", "deletecollection"]},
]


def task_service_account(release_name: str) -> str:
    """The ServiceAccount the team's task pods run as (``kubernetes.remote_identity``)."""
    return f"{release_name}-tasks"


def service_account_name(release_name: str) -> str:
    """The chart's ServiceAccount (skypilot 0.13.0 ``_helpers.tpl`` ``skypilot.serviceAccountName``:
    ``<fullname>-api-sa``, fullname being the release name without fullnameOverride)."""
    return f"{release_name}-api-sa"


def sky_config(local_queue: str, priority_class: str | None, service_account: str | None = None) -> str:
    """The server's ``~/.sky/config.yaml``: pods labelled into the team's queue, run as
    ``service_account`` (``remote_identity``) when given."""
    labels = compact({KUEUE_QUEUE_LABEL: local_queue, KUEUE_PRIORITY_LABEL: priority_class})
    kubernetes: dict[str, object] = {"provision_timeout": -1}
    if service_account is not None:
        kubernetes["remote_identity"] = service_account
    kubernetes["pod_config"] = {"metadata": {"labels": labels}}
    return yaml.safe_dump({"kubernetes": kubernetes}, sort_keys=False)


# Where the chart's start script keeps the server's config, and where it mounts the ConfigMap
# (skypilot 0.13.0 templates/api-deployment.yaml: ``/root/.sky/config.yaml``,
# ``/var/skypilot/config/config.yaml``).
SERVER_CONFIG = "/root/.sky/config.yaml"
CONFIGMAP_CONFIG = "/var/skypilot/config/config.yaml"
CONFIG_DIGEST_FILE = "/root/.sky/.gpu-batch-config-sha256"
CONFIG_DIGEST_ANNOTATION = "gpu-batch.dev/sky-config-sha256"


def config_digest(config: str) -> str:
    return hashlib.sha256(config.encode()).hexdigest()


def config_sync_hook(digest: str) -> str:
    """Shell run before the chart's config step: adopt the ConfigMap's config when the stack's
    config changed since the volume's copy was written (see module doc)."""
    return "\n".join(
        [
            "# gpu-batch: the stack owns ~/.sky/config.yaml; re-apply it when its digest changed.",
            "mkdir -p /root/.sky",
            f'if [ "$(cat {CONFIG_DIGEST_FILE} 2>/dev/null)" != "{digest}" ]; then',
            f"  rm -f {SERVER_CONFIG}",
            f"  cp {CONFIGMAP_CONFIG} {SERVER_CONFIG}",
            f'  echo "{digest}" > {CONFIG_DIGEST_FILE}',
            f'  echo "gpu-batch: applied the stack config {digest[:12]}"',
            "fi",
        ]
    )


class SkypilotServer(pulumi.ComponentResource):
    """One team's SkyPilot API server release."""

    release: k8s.helm.v3.Release
    release_name: str

    def __init__(
        self,
        name: str,
        args: SkypilotServerArgs,
        depends_on: Sequence[pulumi.Resource] = (),
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("gpu-batch:skypilot:Server", name, None, opts)
        self.release_name = args.release_name
        # Secret whatever the caller passed: the hash must never reach the plan in plain text.
        password: pulumi.Output[str] = pulumi.Output.secret(args.password)
        credentials = password.apply(lambda pw: htpasswd_line(args.username, pw, args.auth_scope))
        tasks = task_service_account(args.release_name)
        task_identity = _task_identity(name, args.namespace, tasks, self, depends_on)
        config = sky_config(args.local_queue, args.priority_class, tasks)
        digest = config_digest(config)
        self.release = k8s.helm.v3.Release(
            f"{name}-release",
            name=args.release_name,
            chart=SKYPILOT_CHART,
            version=args.chart_version,
            repository_opts=k8s.helm.v3.RepositoryOptsArgs(repo=SKYPILOT_REPO),
            namespace=args.namespace,
            create_namespace=False,
            values={
                "apiService": {
                    "config": config,
                    "preDeployHook": config_sync_hook(digest),
                    "annotations": {CONFIG_DIGEST_ANNOTATION: digest},
                    "enableUserManagement": True,
                    "initialBasicAuthCredentials": credentials,
                },
                "rbac": {
                    "manageRbacPolicies": False,
                    "manageSystemComponents": False,
                    "namespaceRules": NAMESPACE_RULES,
                },
                "ingress": {"enabled": False},
                "ingress-nginx": {"enabled": False},
            },
            atomic=True,
            cleanup_on_fail=True,
            max_history=10,
            timeout=SKYPILOT_RELEASE_TIMEOUT_SECONDS,
            opts=pulumi.ResourceOptions(parent=self, depends_on=[*depends_on, *task_identity]),
        )
        self.register_outputs({"release": args.release_name, "namespace": args.namespace, "host": args.host})


def _task_identity(
    name: str, namespace: str, account: str, parent: pulumi.Resource, depends_on: Sequence[pulumi.Resource]
) -> list[pulumi.Resource]:
    """The task pods' ServiceAccount, its Role of :data:`TASK_RULES` and their binding."""
    opts = pulumi.ResourceOptions(parent=parent, depends_on=list(depends_on))
    labels = {"app.kubernetes.io/managed-by": "pulumi", "app.kubernetes.io/component": "skypilot-tasks"}
    metadata = k8s.meta.v1.ObjectMetaArgs(name=account, namespace=namespace, labels=labels)
    service_account = k8s.core.v1.ServiceAccount(f"{name}-task-sa", metadata=metadata, opts=opts)
    role = k8s.rbac.v1.Role(
        f"{name}-task-role",
        metadata=metadata,
        rules=[
            k8s.rbac.v1.PolicyRuleArgs(api_groups=r["apiGroups"], resources=r["resources"], verbs=r["verbs"])
            for r in TASK_RULES
        ],
        opts=opts,
    )
    binding = k8s.rbac.v1.RoleBinding(
        f"{name}-task-binding",
        metadata=metadata,
        role_ref=k8s.rbac.v1.RoleRefArgs(api_group="rbac.authorization.k8s.io", kind="Role", name=account),
        subjects=[k8s.rbac.v1.SubjectArgs(kind="ServiceAccount", name=account, namespace=namespace)],
        opts=opts,
    )
    return [service_account, role, binding]
