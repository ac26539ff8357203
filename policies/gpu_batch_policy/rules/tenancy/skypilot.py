"""SkyPilot API servers on a Kueue cluster: each team's server queues into its own team's
LocalQueue, and several servers share one ingress without colliding.

Facts (kai-kuberay-skypilot.md §3; the two-team example in SkyPilot's
``docs/source/reference/kubernetes/examples/kueue-example.rst``):

* A server launches pods in its own namespace and labels them only as its ``apiService.config``
  says: ``kubernetes.kueue.local_queue_name`` (newest: ``kubernetes.quota.queue``, which takes
  precedence) or the older ``kubernetes.pod_config.metadata.labels["kueue.x-k8s.io/queue-name"]``.
  Without it the team's pods bypass Kueue; with another namespace's queue name they never match a
  LocalQueue (Kueue looks in the pod's namespace) and stay gated.
* **skypilot-server-unauthenticated** (advisory; the skypilot stack's config raises it): the API
  server does not authenticate requests itself, decided from the release's values as the chart and
  the server decide.  The chart passes ``--enable-basic-auth`` to ``sky api start`` exactly when
  ``apiService.enableUserManagement`` is on and ``ingress.oauth2-proxy.enabled`` is off
  (skypilot 0.13.0 ``templates/_helpers.tpl`` ``skypilot.enableBasicAuthInAPIServer``,
  ``skypilot.apiArgs``), which sets ``ENABLE_BASIC_AUTH`` (``sky/server/common.py``
  ``_start_api_server``); ``sky/server/server.py`` then adds ``BasicAuthMiddleware`` unless
  ``SKYPILOT_DISABLE_BASIC_AUTH_MIDDLEWARE`` (chart ``auth.disableBasicAuthMiddleware``), and its
  ``dispatch`` answers 401 to every request without valid credentials but ``/api/health``.  With
  ``auth.oauth.enabled`` the server's ``OAuth2ProxyMiddleware`` authenticates instead
  (``sky/server/auth/oauth2_proxy.py``).  Otherwise the server serves every request it receives:
  the ingress's basic auth (``ingress.authCredentials``) guards only the path through the
  ingress, not the ClusterIP Service any pod can reach.  Basic auth whose only user is the chart's
  published default (values.yaml ``apiService.initialBasicAuthCredentials``, used when neither it
  nor ``apiService.initialBasicAuthSecret`` is set) is no authentication either.
* The chart installs ingress-nginx by default (``ingress-nginx.enabled: true``) and serves at
  ``ingress.path: /``: a second release must turn its ingress-nginx off and use its own path,
  or the two controllers / routes collide.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from typing import Any

from pulumi_policy import EnforcementLevel, Policy

from ...facts.model import HelmRelease, StackModel
from ...primitives.values import Unknown, as_bool, as_str, dig
from ..kit.builders import stack_policy
from ..kit.report import Reporter

QUEUE_KEYS = (
    "kubernetes.quota.queue",
    "kubernetes.kueue.local_queue_name",
    'kubernetes.pod_config.metadata.labels["kueue.x-k8s.io/queue-name"]',
)


def _uses_kueue(model: StackModel) -> bool:
    return bool(model.kueue_releases() or model.local_queues() or model.cluster_queues())


def _namespace(release: HelmRelease) -> str | Unknown:
    """Helm installs into ``namespace``, else the provider's namespace ("default")."""
    if isinstance(release.namespace, Unknown):
        return release.namespace
    return release.namespace or "default"


# --- skypilot-team-local-queue ------------------------------------------------------------------
def check_team_local_queue(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    """Each SkyPilot release's config names LocalQueue(s) that exist in the release's namespace."""
    if not _uses_kueue(model):
        return
    for release in model.skypilot_releases():
        config = release.skypilot_config()
        if config.unknown is not None:
            reporter.cannot_check(release, "apiService.config")
            continue
        if config.error is not None:
            reporter.violation(
                release,
                f"has an apiService.config SkyPilot cannot read ({config.error})",
                "pass the SkyPilot config as a valid YAML string",
            )
            continue
        namespace = _namespace(release)
        if isinstance(namespace, Unknown):
            reporter.cannot_check(release, "its namespace")
            continue
        names = release.skypilot_queue_names()
        here = sorted(lq.name for lq in model.local_queues_in(namespace))
        if not names:
            reporter.violation(
                release,
                f"does not point SkyPilot at a Kueue LocalQueue (none of {', '.join(QUEUE_KEYS)} is set in "
                "apiService.config), so the team's pods bypass Kueue",
                f"set kubernetes.kueue.local_queue_name in apiService.config to the team's LocalQueue in "
                f"namespace '{namespace}'" + (f" ({', '.join(here)})" if here else ""),
            )
            continue
        for name in names:
            if isinstance(name, Unknown):
                reporter.cannot_check(release, "the LocalQueue name in apiService.config")
                continue
            found, _ = model.find_local_queue(name, namespace, near=release)
            if found.ok:
                continue
            if found.status == "unknown":
                reporter.cannot_check(release, f"LocalQueue '{name}' (names unknown until apply)")
                continue
            elsewhere = sorted(lq.namespace for lq in model.local_queues_named(name))
            reporter.violation(
                release,
                f"labels its pods for LocalQueue '{name}', but its namespace '{namespace}' has no such "
                "LocalQueue"
                + (f" (it lives in {', '.join(elsewhere)}: another team's)" if elsewhere else "")
                + "; SkyPilot pods run in the server's namespace, so they stay gated forever",
                f"use the team's own LocalQueue in '{namespace}'"
                + (f" ({', '.join(here)})" if here else f", declaring one in '{namespace}' first"),
            )


# --- skypilot-shared-ingress --------------------------------------------------------------------
def _flag(release: HelmRelease, *keys: str, default: bool) -> bool | Unknown:
    return _switch(release.values, *keys, default=default)


def check_shared_ingress(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    """With several SkyPilot releases, at most one installs ingress-nginx and ingress paths differ."""
    releases = model.skypilot_releases()
    if len(releases) < 2:
        return
    nginx: list[HelmRelease] = []
    paths: dict[str, list[HelmRelease]] = defaultdict(list)
    for release in releases:
        installs = _flag(release, "ingress-nginx", "enabled", default=True)
        if isinstance(installs, Unknown):
            reporter.cannot_check(release, "ingress-nginx.enabled")
        elif installs:
            nginx.append(release)
        enabled = _flag(release, "ingress", "enabled", default=True)
        path = as_str(release.value("ingress", "path"))
        if isinstance(enabled, Unknown) or isinstance(path, Unknown):
            reporter.cannot_check(release, "ingress.enabled / ingress.path")
        elif enabled:
            paths[(path or "/").rstrip("/") or "/"].append(release)
    for extra in nginx[1:]:
        reporter.violation(
            extra,
            f"installs its own ingress-nginx (ingress-nginx.enabled defaults to true) although "
            f"{nginx[0].describe()} already does; two controllers compete for the same ingress class",
            "set ingress-nginx.enabled: false on every SkyPilot release but one, and give it its own ingress.path",
        )
    for path, sharing in paths.items():
        for extra in sharing[1:]:
            reporter.violation(
                extra,
                f"serves at ingress.path '{path}', the same path as {sharing[0].describe()}, so one API "
                "server hides the other",
                f"give each release its own ingress.path (e.g. /{extra.release_name})",
            )


# --- skypilot-server-unauthenticated ------------------------------------------------------------
# skypilot 0.13.0 values.yaml apiService.initialBasicAuthCredentials: the published default user.
CHART_DEFAULT_BASIC_AUTH = "skypilot:$apr1$c1h4rNxt$2NnL7dIDUV0tWsnuNMGSr/"


def _switch(values: Any, *keys: str, default: bool) -> bool | Unknown:
    value = as_bool(dig(values, *keys))
    if isinstance(value, Unknown):
        return value
    return default if value is None else value


def server_auth(values: Any) -> str | Unknown | None:
    """How a skypilot release's server authenticates requests ("oauth", "basic"), None when it
    does not, Unknown when a deciding value is unknown (see the module doc).  The preview's report
    reads the same function."""
    oauth = _switch(values, "auth", "oauth", "enabled", default=False)
    if isinstance(oauth, Unknown) or oauth:
        return oauth if isinstance(oauth, Unknown) else "oauth"
    managed = _switch(values, "apiService", "enableUserManagement", default=False)
    proxy = _switch(values, "ingress", "oauth2-proxy", "enabled", default=False)
    disabled = _switch(values, "auth", "disableBasicAuthMiddleware", default=False)
    for flag in (managed, proxy, disabled):
        if isinstance(flag, Unknown):
            return flag
    return "basic" if managed and not proxy and not disabled else None


def check_server_unauthenticated(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    for release in model.skypilot_releases():
        auth = server_auth(release.values)
        if isinstance(auth, Unknown):
            reporter.cannot_check(
                release,
                "apiService.enableUserManagement / auth.oauth.enabled / ingress.oauth2-proxy.enabled / "
                "auth.disableBasicAuthMiddleware",
            )
            continue
        if auth is None:
            reporter.violation(
                release,
                "runs a SkyPilot API server that authenticates no request itself (apiService.enableUserManagement "
                "off, no auth.oauth): whoever reaches its Service -- any pod the network allows -- can launch and "
                "read every job; ingress basic auth guards only the ingress",
                "set apiService.enableUserManagement: true with apiService.initialBasicAuthSecret (or "
                "initialBasicAuthCredentials from a secret), or auth.oauth.enabled",
            )
            continue
        if auth != "basic":
            continue
        secret = as_str(release.value("apiService", "initialBasicAuthSecret"))
        credentials = release.value("apiService", "initialBasicAuthCredentials")
        if isinstance(secret, Unknown) or secret:
            continue
        if isinstance(credentials, Unknown):
            continue  # a secret Output: the program's own credentials
        if credentials is None or credentials == CHART_DEFAULT_BASIC_AUTH:
            reporter.violation(
                release,
                "authenticates against the chart's published default user (apiService.initialBasicAuthCredentials "
                "left at its default): anyone who read the chart logs in as admin",
                "set apiService.initialBasicAuthSecret or initialBasicAuthCredentials to the team's own htpasswd line",
            )


POLICIES: list[Policy] = [
    stack_policy(
        "skypilot-server-unauthenticated",
        "Each SkyPilot API server authenticates every request itself (user management or OAuth), "
        "not only at an ingress.",
        check_server_unauthenticated,
        enforcement_level=EnforcementLevel.ADVISORY,
    ),
    stack_policy(
        "skypilot-team-local-queue",
        "Each SkyPilot API server labels its pods with a Kueue LocalQueue that exists in its own namespace.",
        check_team_local_queue,
    ),
    stack_policy(
        "skypilot-shared-ingress",
        "Several SkyPilot releases: only one installs ingress-nginx, and ingress paths are unique.",
        check_shared_ingress,
    ),
]
