"""The API reads the status command makes, and three ways to answer them.

Every read is a :class:`Read` (verb, API group, version, resource, namespace, name,
subresource): the same values the API server's authorizer sees for the request
(``k8s.io/apiserver`` ``pkg/endpoints/request`` ``RequestInfo``), so a Role's rules can be
checked against exactly the calls a run made.

- :class:`DumpReader` answers from a ``kubectl get -o yaml`` List and records each call;
- :class:`RbacReader` answers only what a Role's rules allow, as the RBAC authorizer does
  (kubernetes ``pkg/apis/rbac/v1/evaluation_helpers.go`` ``RuleAllows``, ``VerbMatches``,
  ``APIGroupMatches``, ``ResourceMatches`` with ``resource/subresource``, ``ResourceNameMatches``:
  a rule with ``resourceNames`` never allows ``list``; a Role's rules apply only in its
  namespace, never to a cluster-wide request);
- :class:`KubeReader` asks a live API server through the pinned ``kubernetes`` client.

A read the caller may not make, or a kind a dump does not hold, raises :class:`NotVisibleError`:
the status command reports it as not visible, never as absent.  A kind the server does not
serve (404 on the list: the CRD is not installed) raises :class:`NotServedError`: that one is absent.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import urllib3

from whatif.errors import WhatIfError

KUEUE = "kueue.x-k8s.io"
KUEUE_VERSION = "v1beta2"
# Kueue v0.19.2 pkg/visibility/server.go: v1beta2 is served first (PrioritizedVersions), v1beta1 too
VISIBILITY = "visibility.kueue.x-k8s.io"
VISIBILITY_VERSION = "v1beta2"
KAI = "scheduling.run.ai"
AUTOSCALING = "autoscaling.x-k8s.io"


@dataclass(frozen=True)
class Read:
    verb: str  # list | get
    group: str  # "" for the core group
    version: str
    resource: str  # plural
    kind: str  # what the items are (dumps)
    namespace: str | None = None  # None: cluster-scoped, or every namespace
    name: str | None = None
    subresource: str | None = None

    def path(self) -> str:
        base = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        if self.namespace is not None:
            base += f"/namespaces/{self.namespace}"
        base += f"/{self.resource}"
        if self.name is not None:
            base += f"/{self.name}"
        if self.subresource is not None:
            base += f"/{self.subresource}"
        return base

    def describe(self) -> str:
        where = f" in namespace {self.namespace}" if self.namespace is not None else ""
        res = f"{self.resource}/{self.subresource}" if self.subresource else self.resource
        group = self.group or "core"
        name = f" {self.name}" if self.name else ""
        return f"{self.verb} {group} {res}{name}{where}"


# Cluster-scoped Kueue objects: a team's Role cannot grant them (a Role is namespaced).
CLUSTER_KINDS = (
    ("clusterqueues", "ClusterQueue"),
    ("cohorts", "Cohort"),
    ("resourceflavors", "ResourceFlavor"),
    ("admissionchecks", "AdmissionCheck"),
    ("provisioningrequestconfigs", "ProvisioningRequestConfig"),
)


def cluster_read(resource: str, kind: str) -> Read:
    return Read("list", KUEUE, KUEUE_VERSION, resource, kind)


# the versions read per group: Kueue's storage version; KAI's PodGroups (v0.17.0
# pkg/apis/scheduling/v2alpha2); the ProvisioningRequests Kueue v0.19.2 creates
# (pkg/controller/admissionchecks/provisioning imports autoscaling.x-k8s.io/v1)
VERSIONS = {KUEUE: KUEUE_VERSION, KAI: "v2alpha2", AUTOSCALING: "v1"}


def namespaced_read(resource: str, kind: str, namespace: str | None, group: str = KUEUE) -> Read:
    return Read("list", group, VERSIONS[group], resource, kind, namespace)


def pending_read(namespace: str, local_queue: str) -> Read:
    """Kueue's visibility API for one LocalQueue (pkg/visibility/storage/pending_workloads_lq.go)."""
    return Read(
        "get",
        VISIBILITY,
        VISIBILITY_VERSION,
        "localqueues",
        "PendingWorkloadsSummary",
        namespace,
        local_queue,
        "pendingworkloads",
    )


def kai_queue_read() -> Read:
    return Read("list", KAI, "v2", "queues", "Queue")


class NotVisibleError(Exception):
    """The caller may not read this (403), or the dump does not hold it."""

    def __init__(self, read: Read, why: str) -> None:
        super().__init__(f"{read.describe()}: {why}")
        self.read = read
        self.why = why


class NotServedError(Exception):
    """The API server does not serve this kind (its CRD is not installed): it is absent."""


class Reader(Protocol):
    def list(self, read: Read) -> list[dict[str, Any]]: ...

    def get(self, read: Read) -> dict[str, Any]: ...


def _group_of(api_version: str) -> str:
    group, _, _ = str(api_version).rpartition("/")
    return group


def flatten(docs: Iterable[Any]) -> list[dict[str, Any]]:
    """Objects of a List (``kubectl get -o yaml``) or of many documents."""
    out: list[dict[str, Any]] = []
    for doc in docs:
        if not isinstance(doc, dict):
            continue
        if str(doc.get("kind", "")).endswith("List") and isinstance(doc.get("items"), list):
            out.extend(flatten(doc["items"]))
        elif doc.get("kind"):
            out.append(doc)
    return out


@dataclass
class DumpReader:
    """Answers from the objects of a dump; ``calls`` records every read, in order."""

    objects: Sequence[dict[str, Any]]
    calls: list[Read] = field(default_factory=list)

    def _kind(self, read: Read) -> list[dict[str, Any]]:
        return [
            o
            for o in self.objects
            if o.get("kind") == read.kind and _group_of(o.get("apiVersion", "")) == read.group
        ]

    def list(self, read: Read) -> list[dict[str, Any]]:
        self.calls.append(read)
        found = self._kind(read)
        if not found:
            raise NotVisibleError(read, "none in the dump (not dumped, or none exist)")
        if read.namespace is None:
            return found
        return [o for o in found if (o.get("metadata") or {}).get("namespace") == read.namespace]

    def get(self, read: Read) -> dict[str, Any]:
        self.calls.append(read)
        items = [
            item
            for summary in self._kind(read)
            for item in summary.get("items") or []
            if (item.get("metadata") or {}).get("namespace") == read.namespace
            and item.get("localQueueName") == read.name
        ]
        if not items:
            raise NotVisibleError(
                read, f"no {read.kind} of LocalQueue {read.namespace}/{read.name} in the dump"
            )
        return {"kind": read.kind, "apiVersion": f"{read.group}/{read.version}", "items": items}


def _matches(values: Sequence[str], wanted: str) -> bool:
    return "*" in values or wanted in values


def rule_allows(rule: Mapping[str, Any], read: Read) -> bool:
    """``RuleAllows`` for a resource request (kubernetes pkg/apis/rbac/v1/evaluation_helpers.go)."""
    resource = f"{read.resource}/{read.subresource}" if read.subresource else read.resource
    if not _matches(rule.get("verbs") or [], read.verb):
        return False
    if not _matches(rule.get("apiGroups") or [], read.group):
        return False
    resources = rule.get("resources") or []
    if not ("*" in resources or resource in resources):
        return False
    names = rule.get("resourceNames") or []
    return not names or (read.name is not None and read.name in names)


@dataclass
class RbacReader:
    """Only what a namespaced Role's ``rules`` allow in ``namespace``, as the authorizer decides."""

    inner: Reader
    rules: Sequence[Mapping[str, Any]]
    namespace: str
    denied: list[Read] = field(default_factory=list)

    def allowed(self, read: Read) -> bool:
        if read.namespace != self.namespace:
            return False
        return any(rule_allows(rule, read) for rule in self.rules)

    def _check(self, read: Read) -> None:
        if not self.allowed(read):
            self.denied.append(read)
            raise NotVisibleError(read, "forbidden by the team's Role")

    def list(self, read: Read) -> list[dict[str, Any]]:
        self._check(read)
        return self.inner.list(read)

    def get(self, read: Read) -> dict[str, Any]:
        self._check(read)
        return self.inner.get(read)


def server_message(body: bytes | None, limit: int = 200) -> str:
    """What the server said with an error: a ``Status``'s ``message``, else the first line of the
    body (the aggregator's proxy answers plain text, e.g. ``service unavailable`` for an
    APIService that is not Available: kube-aggregator ``pkg/apiserver/handler_proxy.go``
    ``proxyHandler.ServeHTTP``)."""
    text = (body or b"").decode("utf-8", "replace").strip()
    try:
        status = json.loads(text)
    except ValueError:
        status = None
    if isinstance(status, dict) and status.get("message"):
        text = str(status["message"])
    line = text.splitlines()[0] if text else ""
    return line if len(line) <= limit else line[: limit - 3] + "..."


class KubeReader:
    """A live API server through the pinned ``kubernetes`` client (kubeconfig and context)."""

    def __init__(self, kubeconfig: str | None, context: str | None) -> None:
        from kubernetes import client, config
        from kubernetes.config.config_exception import ConfigException

        try:
            self._client = config.new_client_from_config(config_file=kubeconfig, context=context)  # type: ignore[no-untyped-call]
        except (ConfigException, OSError) as error:
            raise WhatIfError(f"--kubeconfig {kubeconfig or '(default)'}: {error}") from None
        self._api = client.CustomObjectsApi(self._client)
        self.calls: list[Read] = []

    @staticmethod
    def default_namespace(kubeconfig: str | None, context: str | None) -> str:
        from kubernetes import config

        contexts, active = config.list_kube_config_contexts(config_file=kubeconfig)  # type: ignore[no-untyped-call]
        chosen = next((c for c in contexts if c.get("name") == context), active) if context else active
        return str(((chosen or {}).get("context") or {}).get("namespace") or "default")

    def _request(self, read: Read) -> dict[str, Any]:
        self.calls.append(read)
        params = self._client.param_serialize("GET", read.path(), auth_settings=["BearerToken"])
        try:
            response = self._client.call_api(*params)
            response.read()
        except (urllib3.exceptions.HTTPError, OSError) as error:
            host = self._client.configuration.host
            raise WhatIfError(f"cannot reach the API server at {host} ({type(error).__name__})") from None
        if response.status in (401, 403):
            raise NotVisibleError(read, f"forbidden ({response.status})")
        if response.status == 404:
            if read.verb == "list":
                raise NotServedError(read.describe())
            raise NotVisibleError(read, "not found (404)")
        if response.status >= 400:
            said = server_message(response.data)
            raise NotVisibleError(
                read, f"the API server answered {response.status}" + (f": {said}" if said else "")
            )
        data = json.loads(response.data or b"{}")
        return data if isinstance(data, dict) else {}

    def list(self, read: Read) -> list[dict[str, Any]]:
        data = self._request(read)
        kind = read.kind
        items = data.get("items") or []
        api_version = f"{read.group}/{read.version}" if read.group else read.version
        for item in items:  # a List's items carry no kind/apiVersion of their own
            item.setdefault("kind", kind)
            item.setdefault("apiVersion", api_version)
        return [i for i in items if isinstance(i, dict)]

    def get(self, read: Read) -> dict[str, Any]:
        return self._request(read)
