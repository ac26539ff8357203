"""The real API server as a judge of objects (issue 41, part 1): a live-tier cluster with every
CRD the pack knows and Kueue's webhooks serving, asked by server-side dry-run create.

What the cluster holds, before any object is judged:

* every CRD the pack validates custom resources against, first by name wins: the six stacks' own
  CRDs, then the pinned charts' (``gpu_batch_policy.facts.schema.pinned``, the pack's catalog),
  then the platform's (``tests.live.stacks.platform_crds``: ``../shared/schemas`` and the
  ProvisioningRequest CRD of the cluster-autoscaler module Kueue's go.mod requires).  A CRD whose
  conversion webhook names an operator that does not run here (KAI's, say) gets the ``None``
  strategy: otherwise every object at a version other than the storage one would be refused for
  the missing server, not for itself;
* Kueue v0.19.2's manager with the dev stack's Kueue release and configuration
  (``tests.live.stacks.kueue_objects``), started after those CRDs so that it serves the webhooks
  of every integration whose CRD is there.  KubeRay's, KAI's, JobSet's ... webhooks do not run:
  the pack's rules that port them are not part of the comparison (``differential_pack``);
* the namespaces the objects name, each with its ``default`` ServiceAccount (no
  controller-manager creates it here), and the ServiceAccounts and PriorityClasses Pods name: the
  ServiceAccount and Priority admission plugins refuse a Pod that names a missing one, a refusal
  about the cluster's state, not the object.

Each object is then sent as ``POST ...?dryRun=All&fieldValidation=Strict``: the whole create path
(mutating admission, the strategy's validation, validating admission) without storing; Strict
refuses an undeclared field as server-side apply does.  A ``409 AlreadyExists`` (a Namespace or
CRD the cluster holds) is an acceptance: ``Store.Create`` validates (``rest.BeforeCreate``) and
runs validating admission before the storage refuses the duplicate
(kubernetes v1.37.2 ``staging/src/k8s.io/apiserver/pkg/registry/generic/registry/store.go``).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from tests.live.cluster import Cluster, ControlPlane
from tests.live.stacks import (
    Deployment,
    deploy_to,
    kueue_objects,
    platform_crds,
    stack_clusters,
    stand_ins,
)

KUEUE_GROUP_SUFFIX = ".kueue.x-k8s.io"


@dataclass(frozen=True)
class Answer:
    """The server's answer to one dry-run create; ``status`` 0: it serves no such kind."""

    accepted: bool
    status: int
    reason: str
    message: str

    @property
    def served(self) -> bool:
        return self.status != 0


def crds(stack_names: Iterable[str]) -> list[dict[str, Any]]:
    """Every CRD the pack knows, first by name wins (see the module doc), Kueue's left out (the
    Kueue release brings them, pointed at its manager)."""
    from gpu_batch_policy.facts.schema.pinned import pinned_crd_documents

    found: dict[str, dict[str, Any]] = {}
    own = [
        o
        for name in stack_names
        for group in stack_clusters(name)
        for o in [*group.declared, *(x for r in group.releases for x in r.objects)]
        if o.get("kind") == "CustomResourceDefinition"
    ]
    for doc in [*own, *(d for _, d in pinned_crd_documents()), *platform_crds()]:
        name = str((doc.get("metadata") or {}).get("name"))
        if name in found or name.endswith(KUEUE_GROUP_SUFFIX):
            continue
        plain, _ = stand_ins(copy.deepcopy(doc))
        assert isinstance(plain, dict)
        conversion = (plain.get("spec") or {}).get("conversion") or {}
        if conversion.get("strategy") == "Webhook":
            plain["spec"]["conversion"] = {"strategy": "None"}
        # name and annotations: a protected group's CRD needs its api-approved.kubernetes.io
        plain["metadata"] = {k: v for k, v in plain["metadata"].items() if k in ("name", "annotations")}
        found[name] = plain
    return list(found.values())


def start(plane: ControlPlane, stack_names: Iterable[str], name: str = "pack-vs-server") -> Deployment:
    """A cluster with the CRDs installed and Kueue serving; the caller stops ``.cluster``."""
    cluster = plane.cluster(name)
    try:
        applied = cluster.apply(crds(stack_names))
        refused = [a for a in applied if not a.accepted]
        if refused:
            raise RuntimeError("CRDs refused: " + "; ".join(map(str, refused)))
        deployment = deploy_to(cluster, kueue_objects(), platform=False)
        if deployment.refused:
            raise RuntimeError("Kueue refused: " + "; ".join(map(str, deployment.refused)))
        return deployment
    except BaseException:
        cluster.stop()
        raise


def placed(cluster: Cluster, doc: Mapping[str, Any]) -> tuple[dict[str, Any], bool]:
    """``doc`` as it is sent: a namespaced object in its namespace (``default`` when it names
    none), a cluster-scoped one without; and whether the server serves its kind."""
    out = copy.deepcopy(dict(doc))
    meta = out.get("metadata")
    if not isinstance(meta, dict):
        return out, True
    try:
        resource = cluster.resource(str(out.get("apiVersion")), str(out.get("kind")))
    except LookupError:
        return out, False
    if resource.namespaced:
        meta.setdefault("namespace", "default")
    else:
        meta.pop("namespace", None)
    return out, True


def prepare(cluster: Cluster, docs: Iterable[Mapping[str, Any]]) -> None:
    """The namespaces, default ServiceAccounts, and the ServiceAccounts and PriorityClasses Pods
    name (see the module doc), created for real."""
    namespaces: set[str] = set()
    accounts: set[tuple[str, str]] = set()
    classes: set[str] = set()
    for doc in docs:
        meta = doc.get("metadata") if isinstance(doc.get("metadata"), dict) else {}
        assert isinstance(meta, dict)
        ns = meta.get("namespace")
        if isinstance(ns, str) and ns:
            namespaces.add(ns)
            if doc.get("kind") == "Pod" and isinstance(doc.get("spec"), dict):
                spec = doc["spec"]
                account = spec.get("serviceAccountName") or spec.get("serviceAccount")
                if isinstance(account, str) and account:
                    accounts.add((ns, account))
                if isinstance(spec.get("priorityClassName"), str):
                    classes.add(spec["priorityClassName"])
    objects: list[dict[str, Any]] = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}} for ns in sorted(namespaces)
    ]
    accounts |= {(ns, "default") for ns in namespaces}
    objects += [
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": a, "namespace": ns}}
        for ns, a in sorted(accounts)
    ]
    objects += [
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": c},
            "value": 1000,
        }
        for c in sorted(classes)
        if not c.startswith("system-")
    ]
    # a name the API server refuses is the object's own problem; the object's answer says it
    cluster.apply(objects)


def dry_run_create(cluster: Cluster, doc: Mapping[str, Any]) -> Answer:
    """The server's answer to creating ``doc`` (placed) with ``dryRun=All``."""
    meta = doc.get("metadata") if isinstance(doc.get("metadata"), dict) else {}
    assert isinstance(meta, dict)
    try:
        path = cluster.path(str(doc.get("apiVersion")), str(doc.get("kind")), namespace=meta.get("namespace"))
    except (LookupError, ValueError) as exc:
        return Answer(False, 0, "NoKind", str(exc))
    status, body = cluster.request(
        "POST", path, dict(doc), query={"dryRun": "All", "fieldValidation": "Strict"}
    )
    if 200 <= status < 300:
        return Answer(True, status, "", "")
    reason = str(body.get("reason", "")) if isinstance(body, dict) else ""
    message = str(body.get("message", "")) if isinstance(body, dict) else str(body)
    if status == 409 and reason == "AlreadyExists":
        return Answer(True, status, reason, "")
    return Answer(False, status, reason, message)
