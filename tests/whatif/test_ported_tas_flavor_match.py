"""The TAS match of flavor eligibility, ported from Kueue v0.19.2.

kubernetes-sigs/kueue@v0.19.2 ``pkg/scheduler/flavorassigner/tas_flavorassigner.go``
``checkPodSetAndFlavorMatchForTAS`` (run for every flavor by ``checkFlavorForPodSets``); the
cases are ``pkg/scheduler/scheduler_tas_test.go`` ``TestScheduleForTAS``'s "workload which does not
need TAS skips the TAS flavor", "workload requiring TAS skips the non-TAS flavor" and "workload with
mixed PodSets (requiring TAS and not)", with their flavors (``tas-default`` with a one-level
hostname Topology, ``default`` plain) and queue (``tas-main``, 50 cpu in each).  Kueue's
``QuotaReserved`` event names the skipped flavor's reason; here it is the assignment's reason.

Where a pod set may take the TAS flavor, Kueue places it by topology over its nodes, which the
simulator does not model: it stops with :class:`NotModelledError` instead of guessing.  The last
case is the gpudirect stack's shape (a plain ``cpu`` flavor with no GPU quota before a TAS GPU
flavor): a GPU job without a topology request is never admitted -- Kueue v0.19.2 holds it live
with the same reason (``tests/live/test_queues_live.py``).
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.whatif.kueue_cases import build, cluster_queue, flavor_quotas, group, local_queue
from tests.whatif.test_ported_flavorassigner import FakeOracle
from whatif.errors import NotModelledError
from whatif.flavors import Assignment, FlavorAssigner
from whatif.results import document
from whatif.simulator import Simulation
from whatif.trace import parse_trace
from whatif.workload import PodSet, Workload

API = "kueue.x-k8s.io/v1beta2"
HOSTNAME = "kubernetes.io/hostname"
REQUIRED = "kueue.x-k8s.io/podset-required-topology"
DOCS: list[dict[str, Any]] = [
    {
        "apiVersion": API,
        "kind": "Topology",
        "metadata": {"name": "default"},
        "spec": {"levels": [{"nodeLabel": HOSTNAME}]},
    },
    {
        "apiVersion": API,
        "kind": "ResourceFlavor",
        "metadata": {"name": "tas-default"},
        "spec": {"topologyName": "default"},
    },
    {"apiVersion": API, "kind": "ResourceFlavor", "metadata": {"name": "default"}, "spec": {}},
]


def _assign(flavors: tuple[str, ...], *pod_sets: PodSet) -> Assignment:
    quotas = [flavor_quotas(f, ("cpu", "50")) for f in flavors]
    cluster = build([*DOCS, cluster_queue("tas-main", group(*quotas))])
    cq = cluster.cluster_queues["tas-main"]
    wl = Workload("default", "foo", "q", 0, 0.0, 0.0, 1, pod_sets, cluster_queue=cq.name)
    return FlavorAssigner(cluster, FakeOracle()).assign(wl, cq)


def _pod_set(name: str, cpu_milli: int, annotations: dict[str, str] | None = None) -> PodSet:
    return PodSet(name, 1, {"cpu": cpu_milli}, None, annotations)


def test_a_workload_that_does_not_need_tas_skips_the_tas_flavor() -> None:
    got = _assign(("tas-default", "default"), _pod_set("one", 1000))
    assert got.flavors() == {"one": {"cpu": "default"}}
    assert got.reasons == ['Flavor "tas-default" supports only TopologyAwareScheduling']


def test_a_workload_requiring_tas_skips_the_non_tas_flavor_and_its_placement_is_not_modelled() -> None:
    with pytest.raises(NotModelledError, match="may take flavor tas-default of ClusterQueue tas-main"):
        _assign(("default", "tas-default"), _pod_set("one", 1000, {REQUIRED: HOSTNAME}))


def test_mixed_pod_sets_the_launcher_takes_the_plain_flavor_the_worker_needs_tas() -> None:
    launcher = _pod_set("launcher", 500)
    assert _assign(("tas-default", "default"), launcher).flavors() == {"launcher": {"cpu": "default"}}
    with pytest.raises(NotModelledError, match="pod set worker may take flavor tas-default"):
        _assign(("tas-default", "default"), launcher, _pod_set("worker", 500, {REQUIRED: HOSTNAME}))


def _gate_off_cluster(flavors: tuple[str, ...]) -> Any:
    """The cluster as a stack whose Kueue chart turns ``TopologyAwareScheduling`` off
    (``controllerManager.featureGates``) builds it."""
    from whatif.cluster import build_cluster
    from whatif.pack import StackModel

    release = {
        "chart": "kueue",
        "version": "0.19.2",
        "values": {
            "controllerManager": {"featureGates": [{"name": "TopologyAwareScheduling", "enabled": False}]}
        },
    }
    quotas = [flavor_quotas(f, ("cpu", "50")) for f in flavors]
    items: list[tuple[str, Any, str, str]] = [
        ("kubernetes:helm.sh/v3:Release", release, "urn:test:kueue", "kueue")
    ]
    for doc in [*DOCS, cluster_queue("tas-main", group(*quotas))]:
        group_name, _, version = doc["apiVersion"].rpartition("/")
        name = doc["metadata"]["name"]
        items.append(
            (f"kubernetes:{group_name}/{version}:{doc['kind']}", doc, f"test:{doc['kind']}/{name}", name)
        )
    return build_cluster(StackModel.from_plain(items))


def test_with_the_gate_off_a_topology_flavor_is_a_plain_flavor() -> None:
    """``checkFlavorForPodSets`` runs the TAS match only under
    ``features.Enabled(features.TopologyAwareScheduling)``: with the gate off, a pod set with no
    topology request takes ``tas-default`` as a plain flavor (on, it is skipped: the first case)."""
    cluster = _gate_off_cluster(("tas-default", "default"))
    assert cluster.tas_enabled is False
    cq = cluster.cluster_queues["tas-main"]
    wl = Workload("default", "foo", "q", 0, 0.0, 0.0, 1, (_pod_set("one", 1000),), cluster_queue=cq.name)
    got = FlavorAssigner(cluster, FakeOracle()).assign(wl, cq)
    assert got.flavors() == {"one": {"cpu": "tas-default"}}
    assert build(
        [*DOCS, cluster_queue("tas-main", group(flavor_quotas("default", ("cpu", "1"))))]
    ).tas_enabled


def test_the_multi_layer_constraints_annotation_alone_requests_tas() -> None:
    """``podSetTopologyRequestBuilder.Build`` (``jobframework/tas.go``) fills
    ``PodsetSliceRequiredTopologyConstraints`` from ``podset-slice-required-topology-constraints``
    alone, and ``IsExplicitlyRequestingTAS`` counts it: the pod set requests TAS, so the plain
    flavor is refused and the TAS flavor is not ("supports only TopologyAwareScheduling")."""
    constraints = '[{"topology": "kubernetes.io/hostname", "size": 1}]'
    pod_set = _pod_set(
        "one", 1000, {"kueue.x-k8s.io/podset-slice-required-topology-constraints": constraints}
    )
    with pytest.raises(NotModelledError, match="may take flavor tas-default"):
        _assign(("default", "tas-default"), pod_set)


def test_every_annotation_kueue_reads_into_a_topology_request_requests_tas() -> None:
    """Complete, not sampled: every ``PodSet*Annotation`` constant of kueue v0.19.2
    ``apis/kueue/v1beta2/topology_types.go`` that ``jobframework/tas.go`` ``Build`` turns into a
    TopologyRequest field is one of ours (the group name is not a request).  Read from the Go
    module cache, where the live tier's ``go install sigs.k8s.io/kueue/cmd/kueue@v0.19.2`` puts
    the module."""
    import re
    import subprocess
    from pathlib import Path

    from whatif.pack import TAS_REQUEST_ANNOTATIONS

    try:
        cache = subprocess.run(["go", "env", "GOMODCACHE"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as exc:
        pytest.skip(f"no Go toolchain to find the module cache: {exc}")
    source = (
        Path(cache.strip())
        / "sigs.k8s.io"
        / "kueue@v0.19.2"
        / "apis"
        / "kueue"
        / "v1beta2"
        / "topology_types.go"
    )
    if not source.is_file():
        pytest.skip(f"{source} is not in the module cache (make live-tools puts it there)")
    names = re.findall(r'PodSet\w*Annotation\s*=\s*"(kueue\.x-k8s\.io/podset-[^"]+)"', source.read_text())
    assert len(names) >= 6, names
    assert set(names) <= set(TAS_REQUEST_ANNOTATIONS), set(names) - set(TAS_REQUEST_ANNOTATIONS)


def test_a_level_the_topology_lacks_refuses_the_flavor() -> None:
    """``TASFlavorSnapshot.HasLevel``: "Flavor %q does not contain the requested level"."""
    block = "cloud.google.com/gce-topology-block"
    got = _assign(("tas-default",), _pod_set("one", 1000, {REQUIRED: block}))
    assert got.mode == "NoFit"
    assert got.reasons == ['Flavor "tas-default" does not contain the requested level']


def test_tas_is_implied_on_a_tas_only_queue() -> None:
    """``isTASImplied``: no request, every flavor TAS (``IsTASOnly``): the flavor matches."""
    with pytest.raises(NotModelledError, match="may take flavor tas-default"):
        _assign(("tas-default",), _pod_set("one", 1000))


def test_one_assigner_decides_the_tas_match_per_cluster_queue() -> None:
    """The assigner keeps ``tas_mismatch``'s answer for pod sets without annotations; the
    queue's ``IsTASOnly`` is one of its inputs, so the same pod set on the same flavor is refused
    on a queue with a plain flavor and matches (topology placement: not modelled) on a TAS-only
    queue, whichever queue the assigner saw first."""
    mixed = cluster_queue(
        "mixed", group(flavor_quotas("tas-default", ("cpu", "50")), flavor_quotas("default", ("cpu", "50")))
    )
    only = cluster_queue("tas-only", group(flavor_quotas("tas-default", ("cpu", "50"))))
    for order in (("mixed", "tas-only"), ("tas-only", "mixed")):
        cluster = build([*DOCS, mixed, only])
        assigner = FlavorAssigner(cluster, FakeOracle())
        for name in order:
            cq = cluster.cluster_queues[name]
            wl = Workload(
                "default", f"on-{name}", "q", 0, 0.0, 0.0, 1, (_pod_set("one", 1000),), cluster_queue=name
            )
            if name == "mixed":
                got = assigner.assign(wl, cq)
                assert got.flavors() == {"one": {"cpu": "default"}}
                assert got.reasons == ['Flavor "tas-default" supports only TopologyAwareScheduling']
            else:
                with pytest.raises(
                    NotModelledError, match="may take flavor tas-default of ClusterQueue tas-only"
                ):
                    assigner.assign(wl, cq)


def test_a_gpu_job_without_a_topology_request_is_never_admitted_on_gpudirects_queue_shape() -> None:
    gpus = "nvidia.com/gpu"
    docs = [
        *DOCS,
        cluster_queue(
            "tas-main",
            group(
                flavor_quotas("default", ("cpu", "4"), (gpus, "0")),
                flavor_quotas("tas-default", ("cpu", "50"), (gpus, "32")),
            ),
        ),
        local_queue("team", "q", "tas-main"),
    ]
    cluster = build(docs)
    pod_set: dict[str, Any] = {"name": "main", "count": 1, "requests": {"cpu": "1", gpus: "8"}}
    entry = {"name": "train", "namespace": "team", "queue": "q", "submit": 0, "duration": 60}
    trace = {"workloads": [{**entry, "podSets": [pod_set]}]}
    doc = document(cluster, Simulation(cluster, parse_trace(trace)).run())
    assert not [e for e in doc["events"] if e["event"] == "admitted"], doc["events"]
    (never,) = doc["queues"]["tas-main"]["neverAdmitted"]
    assert never.endswith("team/train"), never
    (held,) = [e for e in doc["events"] if e["event"] == "inadmissible"]
    assert 'Flavor "tas-default" supports only TopologyAwareScheduling' in held["reason"], held
    # with a topology request it would be placed by TAS: not modelled, never guessed
    pod_set["annotations"] = {REQUIRED: HOSTNAME}
    with pytest.raises(NotModelledError, match="topology placement is not modelled"):
        Simulation(cluster, parse_trace(trace)).run()


def test_the_pack_rule_and_the_simulator_share_one_tas_decision() -> None:
    from gpu_batch_policy.facts.tas import flavor_match
    from gpu_batch_policy.rules.kueue import flavors as kueue_flavors

    import whatif.flavors

    assert vars(whatif.flavors)["tas_mismatch"] is flavor_match.tas_mismatch
    assert vars(kueue_flavors)["tas_mismatch"] is flavor_match.tas_mismatch
