"""``python -m whatif.status`` against real Kueue, as a team member holding exactly the team Role.

Issue 43's last "Done when": the command run on a live control plane, on a Workload that real
Kueue holds pending.  On the shared ``kueue_cluster`` (the dev stack's Kueue v0.19.2 manager), in
one namespace of this test's own: a ClusterQueue of 4 ``nvidia.com/gpu`` selecting only that
namespace (``components.tenancy.namespace_selector``), its LocalQueue, and two suspended 4-GPU
Jobs: Kueue admits the first and holds the second with ``QuotaReserved`` False and its own message
(kubernetes-sigs/kueue v0.19.2: ``pkg/scheduler/flavorassigner/flavorassigner.go``
``fitsResourceQuota`` words it, ``insufficient unused quota for nvidia.com/gpu in flavor <f>, 4 more
needed``; ``pkg/scheduler/scheduler.go`` ``requeueAndUpdate`` writes it with
``pkg/workload/workload.go`` ``UnsetQuotaReservationWithCondition``, the reason
``UnadmittedWorkloadReasonWithFallback(..., "Pending")``: ``Pending`` while the
``UnadmittedWorkloadsObservability`` gate is off, as in the dev stack).

The member is a client certificate of the session's CA (user and groups as the API server reads
them) bound by the dev stack's own team RoleBinding's subjects to the dev stack's own team Role
(``components/tenancy.py`` ``TeamTenancy``, rules from ``team_rules``), copied into the test's
namespace rule for rule; the LocalQueue is named as that Role's ``pendingworkloads`` rule names it.

What the command says is checked against what the admin reads from the same API server: the pending
Workload and Kueue's condition, the admitted one, the 403s behind every "not visible", and the
visibility API's own answer.  Kueue's visibility API (``visibility.kueue.x-k8s.io``, Kueue v0.19.2
``pkg/visibility/server.go`` ``CreateAndStartVisibilityServer``;
``pkg/visibility/storage/pending_workloads_lq.go`` ``pendingWorkloadsInLqREST.Get``, positions from
``utils.go`` ``newPendingWorkload``) is first as the release deploys it here -- its APIService's
Service has no endpoints (no kubelet, no Pods), the availability controller marks it not
Available (kube-aggregator v0.37.2 ``pkg/controllers/status/remote/remote_available_controller.go``)
and the aggregator answers ``503 service unavailable`` (``pkg/apiserver/handler_proxy.go``
``proxyHandler.ServeHTTP``), the failure a user of a broken aggregated API sees -- and then reached,
through an ``ExternalName`` Service naming 127.0.0.1 (k8s.io/apiserver v0.37.2
``pkg/util/proxy/proxy.go`` ``ResolveCluster`` routes to ``externalName:<APIService port>``; an
Endpoints or EndpointSlice address in 127.0.0.0/8 is refused by kubernetes v1.37.2
``pkg/apis/core/validation/validation.go`` ``ValidateEndpointIP``).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from components.tenancy import TEAM_LABEL, namespace_selector
from tests.live.cluster import Cluster
from tests.live.conftest import KUEUE_STACK
from tests.live.stacks import Deployment, stack_clusters
from tests.live.test_kueue_admission import (
    KUEUE,
    apply_all,
    cluster_queue,
    condition,
    gpu_job,
    local_queue,
    namespace,
    pending_with,
    resource_flavor,
    wait_admitted,
    workload_of,
)
from whatif.status import cli
from whatif.status.objects import timestamp

ROOT = Path(__file__).resolve().parents[2]
NS = "live-status"
FLAVOR = "live-status-flavor"
CQ = "live-status-cq"
MEMBER = "status-member@example.com"
RUN = (600, 1200)  # seconds the admitted Job runs, low and high (--durations)
REGISTRATION = "apiregistration.k8s.io/v1"
VISIBILITY_SERVICE = "v1beta2.visibility.kueue.x-k8s.io"  # the release's APIService
PENDING_PATH = "/apis/visibility.kueue.x-k8s.io/v1beta2/namespaces/{ns}/localqueues/{lq}/pendingworkloads"


def team_role() -> tuple[dict[str, Any], dict[str, Any]]:
    """The dev stack's team Role and its RoleBinding, as its program declares them."""
    (objects,) = stack_clusters(KUEUE_STACK)  # cached: the kueue_cluster fixture ran it already
    (role,) = [
        o
        for o in objects.declared
        if o.get("kind") == "Role" and TEAM_LABEL in (o["metadata"].get("labels") or {})
    ]
    (binding,) = [
        o
        for o in objects.declared
        if o.get("kind") == "RoleBinding"
        and o["metadata"]["name"] == role["metadata"]["name"]
        and o["metadata"]["namespace"] == role["metadata"]["namespace"]
    ]
    return role, binding


def in_namespace(obj: dict[str, Any], ns: str) -> dict[str, Any]:
    """``obj`` (a Role or RoleBinding) moved to ``ns``: everything but the namespace kept."""
    meta = {k: v for k, v in obj["metadata"].items() if k in ("name", "labels")}
    return {**obj, "metadata": {**meta, "namespace": ns}}


@dataclass(frozen=True)
class Held:
    """The state real Kueue holds, and the member's view of it."""

    local_queue: str
    admitted: dict[str, Any]  # the first Job's Workload, as the admin read it once admitted
    pending: dict[str, Any]  # the second Job's Workload, once Kueue held it
    groups: tuple[str, ...]
    kubeconfig: Path
    durations: Path
    manifests: Path
    rules: list[dict[str, Any]]

    def key(self, wl: dict[str, Any]) -> str:
        return f"{NS}/{wl['metadata']['name']}"


@pytest.fixture(scope="module")
def held(kueue_cluster: Cluster, tmp_path_factory: pytest.TempPathFactory) -> Held:
    cluster = kueue_cluster
    role, binding = team_role()
    (pending_rule,) = [r for r in role["rules"] if "localqueues/pendingworkloads" in r["resources"]]
    lq = pending_rule["resourceNames"][0]
    groups = tuple(s["name"] for s in binding["subjects"] if s["kind"] == "Group")
    assert groups, binding
    flavor = resource_flavor(FLAVOR)
    queue = cluster_queue(CQ, FLAVOR, 4, namespace_selector=namespace_selector([NS]))
    apply_all(
        cluster,
        [
            namespace(NS),
            flavor,
            queue,
            local_queue(NS, lq, CQ),
            in_namespace(role, NS),
            in_namespace(binding, NS),
            gpu_job(NS, "first", lq, 4),
        ],
    )
    admitted = wait_admitted(cluster, NS, "first")
    apply_all(cluster, [gpu_job(NS, "second", lq, 4)])
    pending_with(cluster, NS, "second", f"insufficient unused quota for nvidia.com/gpu in flavor {FLAVOR}")
    pending = workload_of(cluster, NS, "second")
    assert pending is not None

    folder = tmp_path_factory.mktemp("status-member")
    pair = cluster.plane.pki.issue(
        "live-status-member", common_name=MEMBER, organizations=groups, client=True
    )
    config = cluster.kubeconfig_for(pair, user=MEMBER)
    config["contexts"][0]["context"]["namespace"] = NS  # the team's namespace, as a member's context has
    kubeconfig = folder / "member.kubeconfig"
    kubeconfig.write_text(yaml.safe_dump(config))
    durations = folder / "durations.yaml"
    durations.write_text(
        yaml.safe_dump({f"{NS}/{w['metadata']['name']}": list(RUN) for w in (admitted, pending)})
    )
    # what the platform team publishes of its queues (a member cannot read the ClusterQueue)
    manifests = folder / "queues.yaml"
    manifests.write_text(yaml.safe_dump_all([flavor, queue]))
    return Held(lq, admitted, pending, groups, kubeconfig, durations, manifests, role["rules"])


def as_member(cluster: Cluster, held: Held, path: str) -> int:
    """The status the API server gives the member for a GET (impersonated by the admin)."""
    status, _ = cluster.request("GET", path, as_user=MEMBER, groups=held.groups)
    return status


def status_json(held: Held, *extra: str) -> dict[str, Any]:
    """``python -m whatif.status --json`` as its own process, with only the member's kubeconfig."""
    argv = [sys.executable, "-m", "whatif.status", "--kubeconfig", str(held.kubeconfig), "--json", *extra]
    proc = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert isinstance(out, dict)
    return out


def admin_truth(cluster: Cluster, held: Held) -> tuple[set[str], set[str], dict[str, Any]]:
    """What the admin reads: the keys pending (QuotaReserved False), admitted, and the pending
    Workload's QuotaReserved condition."""
    pending, admitted = set(), set()
    found: dict[str, Any] = {}
    for wl in cluster.list(KUEUE, "Workload", NS):
        reserved = condition(wl, "QuotaReserved") or {}
        if reserved.get("status") == "False":
            pending.add(held.key(wl))
            found = reserved
        if (condition(wl, "Admitted") or {}).get("status") == "True":
            admitted.add(held.key(wl))
    return pending, admitted, found


def apiservice_available(cluster: Cluster) -> dict[str, Any]:
    return condition(cluster.get(REGISTRATION, "APIService", VISIBILITY_SERVICE), "Available") or {}


def near(at: str | None, expected: float) -> bool:
    """An RFC 3339 time of the report (whole seconds) within a second of ``expected``."""
    got = timestamp(at)
    return got is not None and abs(got - expected) <= 1.0


def test_a_member_is_told_why_real_kueue_holds_the_job(
    kueue_cluster: Cluster, held: Held, capsys: pytest.CaptureFixture[str]
) -> None:
    """Under the team Role, with Kueue's visibility API as deployed here (no endpoints: 503)."""
    cluster = kueue_cluster
    pending_keys, admitted_keys, reserved = admin_truth(cluster, held)
    assert pending_keys == {held.key(held.pending)} and admitted_keys == {held.key(held.admitted)}
    # the premise of the fallback: the aggregated API answers 503, to the admin too
    assert apiservice_available(cluster).get("status") != "True"
    path = PENDING_PATH.format(ns=NS, lq=held.local_queue)
    assert cluster.request("GET", path)[0] == 503

    out = status_json(held, "--manifests", str(held.manifests), "--durations", str(held.durations))
    assert out["namespaces"] == [NS]  # the context's namespace
    (p,) = out["pending"]  # the admitted one is not listed
    assert {p["workload"]} == pending_keys
    # Kueue's own words, verbatim, and read in plain words
    assert p["kueue"]["message"] == reserved["message"] and p["kueue"]["reason"] == reserved["reason"]
    assert p["kueue"]["message"] == (
        f"couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in flavor "
        f"{FLAVOR}, 4 more needed"
    )
    assert f"flavor {FLAVOR} has not enough unused nvidia.com/gpu quota (4 more needed)" in p["reason"]
    assert f"the quota is held by {held.key(held.admitted)} (running" in p["reason"]
    assert p["clusterQueue"] == CQ == held.admitted["status"]["admission"]["clusterQueue"]
    # the ETA: the admitted Job's end, by the durations given (its Admitted transition + RUN)
    admitted_at = timestamp((condition(held.admitted, "Admitted") or {}).get("lastTransitionTime"))
    assert admitted_at is not None
    assert near(p["eta"]["lowAt"], admitted_at + RUN[0]), (p["eta"], admitted_at)
    assert near(p["eta"]["highAt"], admitted_at + RUN[1]), (p["eta"], admitted_at)
    assert any(f"taken as --manifests {held.manifests} declares them" in a for a in out["assumptions"])

    # what it cannot see, and that the member truly cannot: the API server's 403s
    for what, path in (
        ("ClusterQueue", "/apis/kueue.x-k8s.io/v1beta2/clusterqueues"),
        ("ResourceFlavor", "/apis/kueue.x-k8s.io/v1beta2/resourceflavors"),
        ("Workload in other namespaces", "/apis/kueue.x-k8s.io/v1beta2/workloads"),
    ):
        assert out["notVisible"].get(what) == "forbidden (403)", (what, out["notVisible"])
        assert as_member(cluster, held, path) == 403, path
    # ... and what the Role lets it read, it read
    assert as_member(cluster, held, f"/apis/kueue.x-k8s.io/v1beta2/namespaces/{NS}/workloads") == 200
    assert not any(k.startswith("Workload in namespace") for k in out["notVisible"])
    # the visibility API failed: no crash, the Workloads read instead, and said
    assert p["queuePosition"] is None
    (why,) = out["queueOrderNotRead"].values()
    assert list(out["queueOrderNotRead"]) == [f"{NS}/{held.local_queue}"]
    assert why.startswith("the API server answered 503: service unavailable: the pending Workloads were read")
    assert any("Kueue's queue order not read" in a for a in out["assumptions"])

    # the table says the same for people
    assert cli.main(["--kubeconfig", str(held.kubeconfig), "--manifests", str(held.manifests)]) == 0
    table = capsys.readouterr().out
    assert table.splitlines()[0].split() == ["WORKLOAD", "STATE", "ETA", "WHY"]
    assert f"Kueue (Pending): {reserved['message']}" in table
    assert "Kueue's queue order (visibility API pendingworkloads) not read:" in table
    assert (
        "not visible with your rights (not absent):" in table and "  ClusterQueue: forbidden (403)" in table
    )

    # no queues declared, none visible: no ETA made up
    assert cli.main(["--kubeconfig", str(held.kubeconfig), "--json"]) == 0
    (bare,) = json.loads(capsys.readouterr().out)["pending"]
    assert "lowSeconds" not in bare["eta"] and bare["eta"]["low"] is None
    assert bare["eta"]["text"].startswith("not replayed: no ClusterQueue visible or declared")


@pytest.fixture
def visibility_reached(kueue_deployment: Deployment) -> Iterator[Cluster]:
    """The release's APIService pointed at Kueue's visibility server on 127.0.0.1 through an
    ExternalName Service; put back as the release has it afterwards."""
    cluster, kueue = kueue_deployment.cluster, kueue_deployment.kueue
    assert kueue is not None
    original = cluster.get(REGISTRATION, "APIService", VISIBILITY_SERVICE)
    assert original is not None
    service_ns = original["spec"]["service"]["namespace"]
    meta = {k: v for k, v in original["metadata"].items() if k in ("name", "labels", "annotations")}
    restore = {"apiVersion": REGISTRATION, "kind": "APIService", "metadata": meta, "spec": original["spec"]}
    external = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "live-status-visibility", "namespace": service_ns},
        "spec": {"type": "ExternalName", "externalName": "127.0.0.1"},
    }
    service = {"name": "live-status-visibility", "namespace": service_ns, "port": kueue.ports.visibility}
    pointed = {**restore, "spec": {**original["spec"], "service": service}}
    apply_all(cluster, [external, pointed])
    try:
        cluster.wait_for(
            lambda: apiservice_available(cluster).get("status") == "True",
            60,
            "the visibility APIService to be Available through 127.0.0.1",
        )
        yield cluster
    finally:
        apply_all(cluster, [restore])
        cluster.delete("v1", "Service", "live-status-visibility", service_ns)
        cluster.wait_for(
            lambda: apiservice_available(cluster).get("status") == "False",
            60,
            "the visibility APIService to be unavailable again",
        )


def test_with_kueues_visibility_api_reached_the_position_is_kueues(
    visibility_reached: Cluster, held: Held
) -> None:
    cluster = visibility_reached
    path = PENDING_PATH.format(ns=NS, lq=held.local_queue)
    status, summary = cluster.request("GET", path)
    assert status == 200, summary
    (item,) = summary["items"]
    assert item["metadata"]["name"] == held.pending["metadata"]["name"]
    # the member may ask (the Role's pendingworkloads rule), for its LocalQueue only
    assert as_member(cluster, held, path) == 200
    assert as_member(cluster, held, PENDING_PATH.format(ns=NS, lq="someone-elses")) == 403

    out = status_json(held, "--manifests", str(held.manifests), "--durations", str(held.durations))
    (p,) = out["pending"]
    assert p["workload"] == held.key(held.pending)
    assert p["queuePosition"] == {
        "clusterQueue": item["positionInClusterQueue"],
        "localQueue": item["positionInLocalQueue"],
    }
    assert out["queueOrderNotRead"] == {}
    assert not any("Kueue's queue order not read" in a for a in out["assumptions"])
