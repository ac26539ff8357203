"""Flavor eligibility and the scan progress of a pod set that finds no flavor, ported from Kueue
v0.19.2 (kubernetes-sigs/kueue@v0.19.2 ``pkg/scheduler/flavorassigner/flavorassigner_test.go``).

``TestAssignFlavors``'s taint / node-selector / affinity cases, with its ResourceFlavors as the Go
test declares them (``one`` labelled ``type=one``, ``tainted`` with ``instance=spot:NoSchedule``,
...): each asserts the representative mode, the flavor chosen per resource and the
``TriedFlavorIdx`` recorded, which ``checkFlavorForPodSets`` (skip an ineligible flavor, still
counted as attempted) decides.  The decision is the pack's own ``flavor_rejects``, so the pack
rule and the simulator cannot disagree on it.

Scan progress on failure (``assignFlavors``: ``groupFlavors = nil`` for the pod set that finds
no flavor, ``Assignment.append`` of its empty index map, then ``return``): derived from the code
path, since the Go test file has no case for it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from tests.whatif.kueue_cases import build, cluster_queue, flavor_quotas, group, pod_set, pod_set_of
from tests.whatif.test_ported_flavorassigner import FakeOracle
from whatif.flavors import FlavorAssigner
from whatif.pack import flavor_rejects
from whatif.workload import PodSet, Workload

API = "kueue.x-k8s.io/v1beta2"
SPOT = {"key": "instance", "value": "spot", "effect": "NoSchedule"}


def rf(name: str, labels: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    body = dict(spec)
    if labels:
        body["nodeLabels"] = labels
    return {"apiVersion": API, "kind": "ResourceFlavor", "metadata": {"name": name}, "spec": body}


# ``TestAssignFlavors``'s resourceFlavors
FLAVORS = [
    rf("default"),
    rf("one", {"type": "one"}),
    rf("two", {"type": "two"}),
    rf("b_one", {"b_type": "one"}),
    rf("b_two", {"b_type": "two"}),
    rf("tainted", nodeTaints=[SPOT]),
    rf(
        "taint_and_toleration",
        nodeTaints=[SPOT],
        tolerations=[{"key": "instance", "operator": "Equal", "value": "spot", "effect": "NoSchedule"}],
    ),
    rf("label-x-a", {"x": "a"}),
    rf("label-xy-b", {"x": "b", "y": "k"}),
]


def spec_pod_set(spec: dict[str, Any], **requests: str) -> PodSet:
    base = pod_set_of(requests)
    return PodSet(base.name, base.count, base.requests, spec)


def terms(*exprs: tuple[str, str, list[str]]) -> dict[str, Any]:
    """``RequiredDuringSchedulingIgnoredDuringExecution``: one term per expression."""
    node_terms = [{"matchExpressions": [{"key": k, "operator": op, "values": v}]} for k, op, v in exprs]
    return {
        "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": node_terms}}
    }


@dataclass
class Case:
    pod: PodSet
    flavors: list[str]
    want_mode: str
    want: dict[str, str] = field(default_factory=dict)  # resource -> flavor
    want_tried: int | None = None  # TriedFlavorIdx recorded for every resource
    resources: tuple[str, ...] = ("cpu",)


CASES = {
    "single flavor, fits tainted flavor": Case(
        spec_pod_set(
            {
                "tolerations": [
                    {"key": "instance", "operator": "Equal", "value": "spot", "effect": "NoSchedule"}
                ]
            },
            cpu="1",
        ),
        ["tainted"],
        "Fit",
        {"cpu": "tainted"},
        -1,
    ),
    "single flavor, fits tainted flavor with toleration": Case(
        pod_set(cpu="1"),
        ["taint_and_toleration"],
        "Fit",
        {"cpu": "taint_and_toleration"},
        -1,
    ),
    "multiple flavors, fits while skipping tainted flavor": Case(
        pod_set(cpu="3"),
        ["tainted", "two"],
        "Fit",
        {"cpu": "two"},
        -1,
    ),
    "multiple flavors, fits a node selector": Case(
        spec_pod_set(
            {
                "nodeSelector": {"type": "two", "ignored1": "foo"},
                "affinity": terms(("ignored2", "In", ["bar"])),
            },
            cpu="1",
        ),
        ["one", "two"],
        "Fit",
        {"cpu": "two"},
        -1,
    ),
    "multiple flavors, fits with node affinity": Case(
        spec_pod_set(
            {"nodeSelector": {"ignored1": "foo"}, "affinity": terms(("type", "In", ["two"]))},
            cpu="1",
            memory="1Mi",
        ),
        ["one", "two"],
        "Fit",
        {"cpu": "two", "memory": "two"},
        -1,
        ("cpu", "memory"),
    ),
    "multiple flavors, node affinity fits any flavor": Case(
        spec_pod_set({"affinity": terms(("ignored2", "In", ["bar"]), ("cpuType", "In", ["two"]))}, cpu="1"),
        ["one", "two"],
        "Fit",
        {"cpu": "one"},
        0,
    ),
    "multiple flavors with different label keys, selector only uses flavor's own keys": Case(
        spec_pod_set({"nodeSelector": {"x": "a", "y": "g"}}, cpu="1"),
        ["label-x-a", "label-xy-b"],
        "Fit",
        {"cpu": "label-x-a"},
        0,
    ),
    "labelless flavor in group with labeled flavor, workload uses labeled selector": Case(
        spec_pod_set({"nodeSelector": {"type": "two"}}, cpu="1"),
        ["default", "two"],
        "Fit",
        {"cpu": "default"},
        0,
    ),
    "multiple flavors, doesn't fit node affinity": Case(
        spec_pod_set({"affinity": terms(("type", "In", ["three"]))}, cpu="1"),
        ["one", "two"],
        "NoFit",
    ),
    # ``TestIsNoFitDueToCapacityAndLimits`` "taints mismatch": the only flavor is tainted
    "taints mismatch": Case(pod_set(cpu="1"), ["tainted"], "NoFit"),
}


def _assign(case: Case) -> tuple[str, dict[str, str], dict[tuple[int, str], int], list[str]]:
    quotas = [
        flavor_quotas(f, *((r, "4Gi" if r == "memory" else "4") for r in case.resources))
        for f in case.flavors
    ]
    cluster = build([*FLAVORS, cluster_queue("test-clusterqueue", group(*quotas))])
    cq = cluster.cluster_queues["test-clusterqueue"]
    wl = Workload("ns", "wl", "q", 0, 0.0, 0.0, 1, (case.pod,), cluster_queue=cq.name)
    got = FlavorAssigner(cluster, FakeOracle()).assign(wl, cq)
    chosen = {r: c.flavor for r, c in got.pod_sets.get("main", {}).items()}
    return got.mode, chosen, got.tried, got.reasons


@pytest.mark.parametrize("name", sorted(CASES))
def test_flavor_eligibility_matches_kueue(name: str) -> None:
    case = CASES[name]
    mode, chosen, tried, _ = _assign(case)
    assert mode == case.want_mode
    assert chosen == case.want
    if case.want_tried is not None:
        assert tried == {(0, r): case.want_tried for r in case.want}


def test_a_skipped_flavor_says_why_in_kueues_words() -> None:
    """``checkFlavorForPodSets``: "untolerated taint %s in flavor %s" / "flavor %s doesn't match
    node affinity" (the pack's finding carries the same reason)."""
    _, _, _, reasons = _assign(CASES["taints mismatch"])
    assert reasons == ["untolerated taint instance=spot:NoSchedule in flavor tainted"]
    _, _, _, reasons = _assign(CASES["multiple flavors, doesn't fit node affinity"])
    assert reasons == ["flavor one doesn't match node affinity", "flavor two doesn't match node affinity"]


def test_the_pack_rule_and_the_simulator_share_one_eligibility_function() -> None:
    from gpu_batch_policy.facts.fit import flavor_match
    from gpu_batch_policy.rules.kueue import flavors as kueue_flavors

    import whatif.flavors

    assert vars(whatif.flavors)["flavor_rejects"] is flavor_match.flavor_rejects
    assert vars(kueue_flavors)["flavor_rejects"] is flavor_match.flavor_rejects
    assert flavor_rejects is flavor_match.flavor_rejects


# --- scan progress of a pod set that finds no flavor (``assignFlavors``) -----------------------

TWO_GROUPS = cluster_queue(
    "test-clusterqueue",
    group(flavor_quotas("one", ("cpu", "10")), flavor_quotas("two", ("cpu", "10"))),
    group(flavor_quotas("b_one", ("nvidia.com/gpu", "1")), flavor_quotas("b_two", ("nvidia.com/gpu", "1"))),
    fungibility={"whenCanBorrow": "MayStopSearch", "whenCanPreempt": "MayStopSearch"},
)


def _scan(*pods: PodSet) -> tuple[str, dict[tuple[int, str], int], bool]:
    cluster = build([*FLAVORS, TWO_GROUPS])
    cq = cluster.cluster_queues["test-clusterqueue"]
    wl = Workload("ns", "wl", "q", 0, 0.0, 0.0, 1, pods, cluster_queue=cq.name)
    got = FlavorAssigner(cluster, FakeOracle()).assign(wl, cq)
    return got.mode, got.tried, got.pending_flavors()


def test_a_pod_set_that_finds_no_flavor_records_no_progress_even_for_its_groups_that_found_one() -> None:
    """cpu finds ``one`` (index 0: MayStopSearch stops there), then the GPU group finds nothing:
    ``groupFlavors = nil`` drops cpu's flavor, so nothing is recorded and no flavor is pending --
    the head is parked, not sent back to resume its cpu scan at ``two``."""
    mode, tried, pending = _scan(pod_set(cpu="1", gpu="2"))
    assert mode == "NoFit"
    assert tried == {}
    assert not pending


def test_pod_sets_before_the_failed_one_keep_their_progress_and_those_after_record_none() -> None:
    mode, tried, pending = _scan(
        pod_set("driver", cpu="1"), pod_set("workers", cpu="1", gpu="2"), pod_set("tail", cpu="1")
    )
    assert mode == "NoFit"
    assert tried == {(0, "cpu"): 0}  # the driver's scan stopped at ``one``; workers and tail: nothing
    assert pending


def test_a_resource_no_group_covers_also_drops_the_pod_sets_progress() -> None:
    """``findFlavorForPodSets`` for a resource without a group: "resource %s unavailable in
    ClusterQueue", no flavors: the same ``groupFlavors = nil`` path."""
    mode, tried, _ = _scan(pod_set(cpu="1", memory="1Gi"))
    assert mode == "NoFit"
    assert tried == {}


# --- end to end: a trace pod set's tolerations / nodeSelector against tainted / labelled flavors ---


def _spot_cluster() -> Any:
    from tests.whatif.kueue_cases import local_queue

    return build(
        [
            rf("spot", {"cloud.google.com/gke-spot": "true"}, nodeTaints=[SPOT]),
            rf("on-demand", {"cloud.google.com/gke-spot": "false"}),
            cluster_queue(
                "cq",
                group(
                    flavor_quotas("spot", ("nvidia.com/gpu", "4")),
                    flavor_quotas("on-demand", ("nvidia.com/gpu", "1")),
                ),
            ),
            local_queue("team-a", "user-queue", "cq"),
        ]
    )


def test_a_trace_pod_set_without_the_toleration_never_lands_on_the_tainted_flavor() -> None:
    from tests.whatif.test_simulator import run, wl

    tolerant = {"tolerations": [{"key": "instance", "operator": "Exists", "effect": "NoSchedule"}]}
    doc = run(
        _spot_cluster(),
        [
            wl("plain", 0, 100, gpus="2"),  # 2 GPUs: only the tainted spot flavor has them
            wl(
                "tolerant",
                0,
                100,
                gpus="2",
                podSets=[{"name": "workers", "requests": {"nvidia.com/gpu": "2"}, **tolerant}],
            ),
            wl(
                "pinned",
                0,
                100,
                gpus="1",
                podSets=[
                    {
                        "name": "workers",
                        "requests": {"nvidia.com/gpu": "1"},
                        "nodeSelector": {"cloud.google.com/gke-spot": "false"},
                    }
                ],
            ),
        ],
    )
    admitted = {e["workload"].split("/")[1]: e["flavors"] for e in doc["events"] if e["event"] == "admitted"}
    assert admitted == {
        "tolerant": {"workers": {"nvidia.com/gpu": "spot"}},
        "pinned": {"workers": {"nvidia.com/gpu": "on-demand"}},
    }
    assert doc["queues"]["cq"]["neverAdmitted"] == ["team-a/plain"]
    reasons = [
        e["reason"] for e in doc["events"] if e["event"] == "inadmissible" and "plain" in e["workload"]
    ]
    assert "untolerated taint instance=spot:NoSchedule in flavor spot" in reasons[0]


@pytest.mark.parametrize(
    ("extra", "where"),
    [
        ({"tolerations": {"key": "a"}}, "podSets[0].tolerations: got {'key': 'a'}, expected a list"),
        ({"tolerations": [{"key": "a", "operator": "In"}]}, "podSets[0].tolerations[0].operator: got 'In'"),
        ({"tolerations": [{"operator": "Equal", "value": "x"}]}, "podSets[0].tolerations[0].key: got None"),
        ({"tolerations": [{"key": "a", "effect": "Never"}]}, "podSets[0].tolerations[0].effect: got 'Never'"),
        ({"nodeSelector": {"a": 1}}, "podSets[0].nodeSelector: got {'a': 1}, expected a mapping of label"),
        (
            {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {}}}},
            "nodeSelectorTerms: got None, expected a non-empty list",
        ),
    ],
)
def test_a_bad_scheduling_constraint_in_the_trace_is_one_line_naming_its_key(
    extra: dict[str, Any], where: str
) -> None:
    from whatif.errors import WhatIfError
    from whatif.trace import parse_trace

    pod = {"name": "workers", "requests": {"cpu": "1"}, **extra}
    entry = {"name": "a", "namespace": "n", "queue": "q", "duration": 1, "podSets": [pod]}
    with pytest.raises(WhatIfError) as raised:
        parse_trace({"workloads": [entry]})
    message = str(raised.value)
    assert "\n" not in message and message.startswith("trace workloads[0].") and where in message


def test_a_declared_shape_carries_its_pod_templates_scheduling_constraints() -> None:
    """``declared`` reads the stack's workload through the pack (``kueue_gangs``): the pod set
    keeps the template's tolerations and nodeSelector, which Kueue's flavor assigner reads."""
    from whatif.pack import StackModel
    from whatif.profiles import declared_pod_sets

    tolerations = [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": "train",
            "namespace": "team-a",
            "labels": {"kueue.x-k8s.io/queue-name": "user-queue"},
        },
        "spec": {
            "parallelism": 2,
            "template": {
                "spec": {
                    "tolerations": tolerations,
                    "nodeSelector": {"cloud.google.com/gke-accelerator": "nvidia-l4"},
                    "containers": [
                        {"name": "main", "resources": {"requests": {"cpu": "1", "nvidia.com/gpu": "1"}}}
                    ],
                }
            },
        },
    }
    model = StackModel.from_plain([("kubernetes:batch/v1:Job", job, "test:Job/team-a/train", "train")])
    (shape,) = declared_pod_sets(model, "train", "arrivals[0].shapes[0]")
    assert shape["tolerations"] == tolerations
    assert shape["nodeSelector"] == {"cloud.google.com/gke-accelerator": "nvidia-l4"}
    assert shape["count"] == 2 and shape["requests"]["nvidia.com/gpu"] == "1"
