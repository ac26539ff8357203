"""The worker kubeconfig checks of Kueue's MultiKueueCluster controller, in Kueue's words.

Source: kubernetes-sigs/kueue v0.19.2,
``pkg/controller/admissionchecks/multikueue/multikueuecluster.go``:

* ``getKubeConfigFromSecret`` reads key ``kubeconfig`` (``MultiKueueConfigSecretKey``,
  ``apis/kueue/v1beta2/multikueue_types.go``) of a Secret in Kueue's own namespace; a missing
  Secret or key makes the cluster inactive with reason ``BadKubeConfig``.
* ``validateKubeconfig`` (reason ``InsecureKubeConfig``): a user with ``tokenFile``; per cluster
  ``insecure-skip-tls-verify``, a ``certificate-authority`` file path, an empty ``server``; then,
  on the REST config of the current context, ``validateRestConfig``: a server
  host that is neither an IP nor a DNS-1123 subdomain ("untrusted server endpoint", after
  lowercasing), basic auth, an ``exec`` plugin, an ``auth-provider``.  (Its "bearerTokenFile is
  not allowed" can only come from a ``tokenFile``, already refused above.)

Kueue stops at the first problem; :func:`rejections` returns every one, in Kueue's order, so a
user fixes them all in one pass.  Messages never quote a credential: only the kubeconfig's
cluster names and Kueue's fixed sentences.

Malformed files are refused as clientcmd's strict decoding refuses them ("failed to parse
kubeconfig(apiconfig)"), an empty one as ``RESTConfigFromKubeConfig`` does.  When the current
context cannot be resolved (clientcmd fails to build the REST config: "context was not found for
specified context"), the REST-config checks are applied to every user and cluster of the file:
Kueue would reject it either way, and no problem is hidden.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

import yaml

from ...primitives.k8s_names import dns1123_subdomain_error

INSECURE = "InsecureKubeConfig"
BAD = "BadKubeConfig"


def _named(items: Any, key: str) -> dict[str, Mapping[str, Any]]:
    """``clusters``/``users``/``contexts`` of a kubeconfig as name -> body (malformed skipped)."""
    out: dict[str, Mapping[str, Any]] = {}
    if not isinstance(items, list):
        return out
    for item in items:
        if isinstance(item, Mapping) and isinstance(item.get(key), Mapping):
            out[str(item.get("name", ""))] = item[key]
    return out


def is_valid_hostname(server: str) -> bool:
    """Kueue ``isValidHostname``: the URL's host (port stripped) is an IP or a DNS-1123 subdomain."""
    try:
        netloc = urlsplit(server).netloc
    except ValueError:
        return False
    host = netloc.rsplit("@", 1)[-1]
    if host.startswith("[") and "]" in host:  # net.SplitHostPort on "[v6]:port" or "[v6]"
        host = host[1 : host.index("]")]
    elif host.count(":") == 1:
        host = host.split(":", 1)[0]
    try:
        ipaddress.ip_address(host)
        return True
    except ValueError:
        return dns1123_subdomain_error(host) is None


def _shape_error(config: Any) -> str | None:
    """What clientcmd's strict decoding refuses: the lists of named entries and the strings."""
    if not isinstance(config, Mapping):
        return "not a mapping"
    for key, body in (("clusters", "cluster"), ("users", "user"), ("contexts", "context")):
        items = config.get(key)
        if items is None:
            continue
        if not isinstance(items, list):
            return f"{key} is not a list"
        for item in items:
            if not isinstance(item, Mapping) or not isinstance(item.get(body, {}), Mapping):
                return f"an entry of {key} is not a named {body}"
    if not isinstance(config.get("current-context", ""), str):
        return "current-context is not a string"
    for item in config.get("clusters") or []:
        cluster = item.get("cluster") or {}
        if not isinstance(cluster.get("server", ""), str):
            return "a cluster's server is not a string"
        if not isinstance(cluster.get("insecure-skip-tls-verify", False), bool):
            return "a cluster's insecure-skip-tls-verify is not a boolean"
    return None


def _current(config: Mapping[str, Any]) -> tuple[Mapping[str, Any], Mapping[str, Any]] | None:
    contexts = _named(config.get("contexts"), "context")
    context = contexts.get(str(config.get("current-context") or ""))
    if context is None:
        return None
    users = _named(config.get("users"), "user")
    clusters = _named(config.get("clusters"), "cluster")
    return users.get(str(context.get("user", "")), {}), clusters.get(str(context.get("cluster", "")), {})


def rejections(text: str) -> list[str]:
    """Every reason Kueue gives for refusing this kubeconfig (empty: Kueue accepts it)."""
    try:
        config = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        return [f"failed to parse kubeconfig(apiconfig): {str(exc).splitlines()[0]}"]
    if config is None:
        # clientcmd.Load accepts an empty file; RESTConfigFromKubeConfig then fails (ErrEmptyConfig).
        return ["invalid configuration: no configuration has been provided"]
    shape = _shape_error(config)
    if shape is not None:
        return [f"failed to parse kubeconfig(apiconfig): {shape}"]
    users = _named(config.get("users"), "user")
    clusters = _named(config.get("clusters"), "cluster")
    found: list[str] = []
    if any(u.get("tokenFile") for u in users.values()):
        found.append("tokenFile is not allowed")
    for name, cluster in clusters.items():
        if cluster.get("insecure-skip-tls-verify") is True:
            found.append(f"insecure TLS verification is not allowed for cluster {name}")
        if cluster.get("certificate-authority"):
            found.append(
                "certificate-authority file paths are not allowed, use certificate-authority-data "
                f"for cluster {name}"
            )
        if not cluster.get("server"):
            found.append(f"server URL is required for cluster {name}")
    current = _current(config)
    wanted = config.get("current-context")
    if current is None and wanted:
        found.append(f"context was not found for specified context: {wanted}")
    rest_users = [current[0]] if current else list(users.values())
    rest_clusters = [current[1]] if current else list(clusters.values())
    servers = [str(c.get("server")) for c in rest_clusters if c.get("server")]
    if any(not is_valid_hostname(s.lower()) for s in servers):
        found.append("untrusted server endpoint")
    if any(u.get("username") or u.get("password") for u in rest_users):
        found.append("basic auth is not allowed")
    if any(u.get("exec") for u in rest_users):
        found.append("exec plugins are not allowed")
    if any(u.get("auth-provider") for u in rest_users):
        found.append("auth providers are not allowed")
    return found
