"""Checks of a MultiKueue stack: the manager and every worker must each be a valid single-cluster stack.

The manager's and each worker's config are derived from the one stack file
(``stacks.config.multikueue``) and run through every single-cluster check; a worker's issue is
reported at its own key path (``multiKueue.workers[i].cluster.location``), and a shared key's
issue (``kueueQueues``, ``teams``) once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from stacks.config import StackConfig
from stacks.config.multikueue import CLUSTER_PROFILE_GATE, manager_config, worker_config
from stacks.config.tenancy import skypilot_teams
from stacks.errors import ConfigIssue

NS = "gpu-batch:"
KEY = f"{NS}multiKueue"
PER_CLUSTER = ("cluster", "gpuPools")


def _relocated(issue: ConfigIssue, prefix: str) -> ConfigIssue:
    """``gpu-batch:gpuPools[0].minNodes`` of worker i -> ``gpu-batch:multiKueue.workers[i].gpuPools[0].minNodes``."""
    path = issue.path.removeprefix(NS)
    if path.split(".", 1)[0].split("[", 1)[0] in PER_CLUSTER:
        return ConfigIssue(f"{prefix}.{path}", issue.expected, issue.given)
    return issue


def check_multikueue(
    config: StackConfig, single: Callable[[StackConfig], Iterator[ConfigIssue]]
) -> Iterator[ConfigIssue]:
    """``single``: the single-cluster checks (``stacks.checks.semantic_issues``)."""
    mk = config.multi_kueue
    assert mk is not None
    if mk.credentials == "clusterProfile" and not mk.auth_plugin_image:
        yield ConfigIssue(
            f"{KEY}.authPluginImage",
            "an image holding /gcp-auth-plugin (gke-fleet-management gcp-auth-plugin): with credentials "
            "clusterProfile the manager's Kueue runs it to reach the workers",
            mk.auth_plugin_image,
        )
    if mk.credentials == "token" and mk.auth_plugin_image:
        yield ConfigIssue(
            f"{KEY}.authPluginImage",
            "unset with credentials token (only credentials: clusterProfile runs the auth plugin)",
            mk.auth_plugin_image,
        )
    if mk.credentials == "clusterProfile" and config.kueue.feature_gates.get(CLUSTER_PROFILE_GATE) is False:
        yield ConfigIssue(
            f"{NS}kueue.featureGates.{CLUSTER_PROFILE_GATE}",
            "true or unset with multiKueue.credentials clusterProfile (Kueue marks the workers inactive without it)",
            False,
        )
    if not config.kueue.enabled:
        yield ConfigIssue(f"{NS}kueue.enabled", "true: MultiKueue is Kueue's (multiKueue is set)", False)
    if config.kai_queues:
        yield ConfigIssue(
            f"{NS}kaiQueues",
            "none under multiKueue: KAI queues are not dispatched by MultiKueue",
            len(config.kai_queues),
        )
    sky = [t.name for t in skypilot_teams(config.teams)]
    if sky:
        yield ConfigIssue(
            f"{NS}teams[].skypilot",
            "no SkyPilot servers under multiKueue (their pods would run on the manager, which has no GPU pools)",
            sky,
        )
    identities = [t.name for t in config.teams if t.workload_identity is not None]
    if identities:
        yield ConfigIssue(
            f"{NS}teams[].workloadIdentity",
            "none under multiKueue (a team's Google service account is declared once, its Kubernetes "
            "ServiceAccount would exist on the manager only, not on the workers that run the pods)",
            identities,
        )
    names = [config.cluster.name]
    seen: set[str] = set()
    for i, worker in enumerate(mk.workers):
        if worker.name in seen:
            yield ConfigIssue(f"{KEY}.workers[{i}].name", "a name no other worker has", worker.name)
        seen.add(worker.name)
        if worker.cluster.name in names:
            yield ConfigIssue(
                f"{KEY}.workers[{i}].cluster.name",
                "a GKE cluster name the manager and other workers do not use",
                worker.cluster.name,
            )
        names.append(worker.cluster.name)
    reported: set[str] = set()
    issues = list(single(manager_config(config)))
    for i, worker in enumerate(mk.workers):
        issues += [
            _relocated(issue, f"{KEY}.workers[{i}]") for issue in single(worker_config(config, worker))
        ]
    for issue in issues:
        if issue.line() not in reported:
            reported.add(issue.line())
            yield issue
