"""The discrete-event simulator end to end: events over time, queueing, checks, refusals, input errors."""

from __future__ import annotations

import gc
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.whatif.kueue_cases import (
    build,
    cluster_queue,
    flavor,
    flavor_quotas,
    group,
    local_queue,
    provisioning_cluster,
)
from whatif import results
from whatif.capacity import Pool
from whatif.cluster import Cluster
from whatif.errors import NotModelledError, WhatIfError
from whatif.results import document
from whatif.simulator import Simulation
from whatif.trace import parse_trace


def wl(name: str, submit: float, duration: float, gpus: str = "1", **extra: Any) -> dict[str, Any]:
    return {
        "name": name,
        "namespace": "team-a",
        "queue": "user-queue",
        "submit": submit,
        "duration": duration,
        "podSets": [{"name": "workers", "count": 1, "requests": {"nvidia.com/gpu": gpus}}],
        **extra,
    }


def cluster(
    gpus: str = "2", strategy: str | None = None, preemption: dict[str, Any] | None = None
) -> Cluster:
    return build(
        [
            flavor("l4"),
            cluster_queue(
                "cq",
                group(flavor_quotas("l4", ("nvidia.com/gpu", gpus))),
                strategy=strategy,
                preemption=preemption,
            ),
            local_queue("team-a", "user-queue", "cq"),
        ]
    )


def run(c: Cluster, workloads: list[dict[str, Any]], **kw: Any) -> dict[str, Any]:
    return document(c, Simulation(c, parse_trace({"workloads": workloads}), **kw).run())


def brief(doc: dict[str, Any]) -> list[tuple[Any, ...]]:
    return [
        (e["time"], e["workload"].split("/")[1], e["event"], e.get("by", "").split("/")[-1])
        for e in doc["events"]
    ]


def test_priority_preemption_frees_quota_at_once_and_requeues_the_victim() -> None:
    doc = run(
        cluster("1", preemption={"withinClusterQueue": "LowerPriority"}),
        [wl("dev", 0, 100, priority=100), wl("prod", 10, 50, priority=1000)],
    )
    assert brief(doc) == [
        (0, "dev", "admitted", ""),
        (10, "dev", "preempted", "prod"),
        (10, "prod", "admitted", ""),
        (10, "dev", "inadmissible", ""),  # requeued, waiting for quota
        (60, "prod", "finished", ""),
        (61, "dev", "admitted", ""),  # parked: back with the requeuer's 1 s batch (whatif.requeuer)
        (161, "dev", "finished", ""),
    ]
    assert doc["events"][1]["clusterQueue"] == "cq" and doc["events"][1]["by"] == "team-a/prod"
    assert doc["events"][0]["flavors"] == {"workers": {"nvidia.com/gpu": "l4"}}
    assert doc["queues"]["cq"]["preempted"] == 1
    assert doc["queues"]["cq"]["waitSeconds"] == {"p50": 0, "p95": 0, "max": 0}


def test_eviction_delay_holds_the_victims_quota_until_it_is_gone() -> None:
    doc = run(
        cluster("1", preemption={"withinClusterQueue": "LowerPriority"}),
        [wl("dev", 0, 100, priority=100), wl("prod", 10, 50, priority=1000)],
        eviction_delay=30,
    )
    assert brief(doc)[:3] == [
        (0, "dev", "admitted", ""),
        (10, "dev", "preempted", "prod"),
        (40, "prod", "admitted", ""),
    ]


def test_negative_submit_reproduces_an_already_admitted_state_at_time_zero() -> None:
    doc = run(cluster("1"), [wl("old", -600, 3600), wl("new", 0, 60)])
    upto_zero = [(e["workload"], e["event"]) for e in doc["events"] if e["time"] <= 0]
    assert upto_zero == [("team-a/old", "admitted"), ("team-a/new", "inadmissible")]
    assert brief(doc)[2:] == [
        (3000, "old", "finished", ""),
        (3001, "new", "admitted", ""),  # parked at 0: back with the requeuer's 1 s batch
        (3061, "new", "finished", ""),
    ]


def test_same_submit_time_keeps_file_order_as_age() -> None:
    doc = run(cluster("1"), [wl("first", 0, 10), wl("second", 0, 10)])
    assert [e[1] for e in brief(doc) if e[2] == "admitted"] == ["first", "second"]


def test_best_effort_fifo_lets_a_smaller_workload_pass_a_blocked_head() -> None:
    trace = [wl("running", 0, 100), wl("big", 1, 10, gpus="2"), wl("small", 2, 10)]
    doc = run(cluster("2"), trace)
    assert (2, "small", "admitted", "") in brief(doc)
    assert ("big", "inadmissible") in [(e[1], e[2]) for e in brief(doc)]


def test_strict_fifo_head_blocks_the_queue() -> None:
    trace = [wl("running", 0, 100), wl("big", 1, 10, gpus="2"), wl("small", 2, 10)]
    doc = run(cluster("2", strategy="StrictFIFO"), trace)
    admitted = [(e[0], e[1]) for e in brief(doc) if e[2] == "admitted"]
    assert admitted == [(0, "running"), (100, "big"), (110, "small")]


def test_a_workload_that_can_never_fit_is_reported_never_admitted() -> None:
    doc = run(cluster("2"), [wl("huge", 0, 10, gpus="3")])
    assert doc["queues"]["cq"]["neverAdmitted"] == ["team-a/huge"]
    assert doc["events"][0]["event"] == "inadmissible" and "maximum capacity" in doc["events"][0]["reason"]


def test_gpu_utilisation_is_gpu_seconds_over_nominal_quota_without_known_pools() -> None:
    doc = run(cluster("2"), [wl("a", 0, 100), wl("b", 0, 100)])
    assert doc["queues"]["cq"]["gpuUtilisation"] == 1.0


def test_the_trace_default_provisioning_delay_applies_without_a_parameter() -> None:
    c = provisioning_cluster(Pool("l4-pool", 8, 1))
    trace = parse_trace({"workloads": [wl("a", 0, 60)], "provisioningDelaySeconds": 120})
    doc = document(c, Simulation(c, trace).run())
    assert brief(doc)[0] == (120, "a", "admitted", "")


def test_output_is_deterministic() -> None:
    trace = [wl(f"w{i}", i % 7, 30 + i % 11, priority=i % 3) for i in range(60)]
    first = json.dumps(run(cluster("3", preemption={"withinClusterQueue": "LowerPriority"}), trace))
    second = json.dumps(run(cluster("3", preemption={"withinClusterQueue": "LowerPriority"}), trace))
    assert first == second


@pytest.mark.parametrize("enabled", [True, False])
def test_the_garbage_collector_is_paused_for_the_document_and_left_as_it_was(
    enabled: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``document`` builds a dictionary per event after the run: paused there too, then as the
    caller had it."""
    seen: list[bool] = []
    figures = results.queue_figures

    def spy(c: Cluster, outcome: Any) -> dict[str, Any]:
        seen.append(gc.isenabled())
        return figures(c, outcome)

    c = cluster("1")
    outcome = Simulation(c, parse_trace({"workloads": [wl("a", 0, 10)]})).run()
    monkeypatch.setattr(results, "queue_figures", spy)
    (gc.enable if enabled else gc.disable)()
    try:
        assert document(c, outcome)["events"]
        assert seen == [False]
        assert gc.isenabled() is enabled
    finally:
        gc.enable()


@pytest.mark.parametrize("enabled", [True, False])
def test_the_garbage_collector_is_paused_for_the_run_and_left_as_it_was(
    enabled: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``_collector_paused``: off while the run makes its events, then as the caller had it (also
    when the run fails)."""
    seen: list[bool] = []
    record = Simulation._record

    def spy(self: Simulation, *args: Any, **kwargs: Any) -> None:
        seen.append(gc.isenabled())
        record(self, *args, **kwargs)

    monkeypatch.setattr(Simulation, "_record", spy)
    (gc.enable if enabled else gc.disable)()
    try:
        run(cluster("1"), [wl("a", 0, 10), wl("b", 0, 10)])
        assert seen and not any(seen)
        assert gc.isenabled() is enabled
        bad = Simulation(cluster("1"), parse_trace({"workloads": [wl("a", 0, 10)]}))
        monkeypatch.setattr(Simulation, "_settle", lambda self: 1 / 0)
        with pytest.raises(ZeroDivisionError):
            bad.run()
        assert gc.isenabled() is enabled
    finally:
        gc.enable()


def test_an_unknown_local_queue_is_reported_not_dropped() -> None:
    doc = run(cluster("1"), [{**wl("lost", 0, 10), "queue": "nope"}])
    assert (
        doc["events"][0]["event"] == "inadmissible" and "LocalQueue team-a/nope" in doc["events"][0]["reason"]
    )
    assert doc["queues"]["(no ClusterQueue)"]["neverAdmitted"] == ["team-a/lost"]


@pytest.mark.parametrize(
    ("trace", "message"),
    [
        ({"workloads": [{**wl("a", 0, 10), "duration": "long"}]}, "trace workloads[0].duration: got 'long'"),
        ({"workloads": [{**wl("a", 0, 10), "colour": "red"}]}, "trace workloads[0].colour: got 'red'"),
        (
            {"workloads": [wl("a", 0, 10), wl("a", 1, 10)]},
            "trace workloads[1].name: got 'a', expected a name unique",
        ),
        (
            {"workloads": [{**wl("a", 0, 10), "podSets": [{"name": "w", "count": 0}]}]},
            "trace workloads[0].podSets[0].count: got 0",
        ),
        (
            {"workloads": [{**wl("a", 0, 10), "podSets": [{"name": "w", "requests": {"cpu": "lots"}}]}]},
            "trace workloads[0].podSets[0].requests.cpu: got 'lots'",
        ),
        ({"jobs": []}, "trace workloads: got None"),
    ],
)
def test_bad_traces_get_one_line_with_the_key_path(trace: dict[str, Any], message: str) -> None:
    with pytest.raises(WhatIfError) as info:
        parse_trace(trace)
    assert str(info.value).startswith(message) and "\n" not in str(info.value)


def test_unknown_priority_class_names_the_ones_that_exist() -> None:
    with pytest.raises(WhatIfError, match=r"priorityClass: got 'urgent', expected one of \[\]"):
        Simulation(cluster(), parse_trace({"workloads": [wl("a", 0, 1, priorityClass="urgent")]}))


def test_partial_admission_is_refused() -> None:
    bad = {"workloads": [{**wl("a", 0, 10), "podSets": [{"name": "w", "count": 4, "minCount": 2}]}]}
    with pytest.raises(NotModelledError, match="partial admission is not modelled"):
        parse_trace(bad)


def _kueue_release(config: str) -> tuple[str, Any, str, str]:
    props = {
        "chart": "kueue",
        "version": "0.19.2",
        "values": {"managerConfig": {"controllerManagerConfigYaml": config}},
    }
    return ("kubernetes:helm.sh/v3:Release", props, "urn:test:kueue", "kueue")


def test_fair_sharing_in_the_configuration_is_simulated_unless_explicitly_ignored() -> None:
    from whatif.cluster import FairSharing, build_cluster
    from whatif.pack import StackModel

    config = "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nfairSharing:\n  preemptionStrategies: [LessThanOrEqualToFinalShare]\n"
    model = StackModel.from_plain([_kueue_release(config)])
    assert build_cluster(model).fair_sharing == FairSharing(("LessThanOrEqualToFinalShare",))
    ignored = build_cluster(model, ignore_fair_sharing=True)
    assert ignored.fair_sharing is None and "NOT simulated" in ignored.notes[0]
    default = StackModel.from_plain(
        [_kueue_release("apiVersion: config.kueue.x-k8s.io/v1beta2\nfairSharing: {}\n")]
    )
    assert build_cluster(default).fair_sharing == FairSharing(
        ("LessThanOrEqualToFinalShare", "LessThanInitialShare")
    )
    # admission fair sharing is simulated (tests/whatif/test_ported_admission_fair_sharing.py);
    # without a usage-based ClusterQueue it changes nothing
    afs = StackModel.from_plain([_kueue_release("admissionFairSharing: {usageHalfLifeTime: 168h}\n")])
    assert build_cluster(afs).admission_fair_sharing is None
    bad = StackModel.from_plain([_kueue_release("fairSharing: {preemptionStrategies: [Fastest]}\n")])
    with pytest.raises(WhatIfError, match=r"fairSharing.preemptionStrategies: got \['Fastest'\]"):
        build_cluster(bad)
    plain = StackModel.from_plain(
        [_kueue_release("apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n")]
    )
    assert build_cluster(plain).notes == []


def test_multikueue_is_refused() -> None:
    """(TAS flavors are read: tests/whatif/test_ported_tas_flavor_match.py.)"""
    mk = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "AdmissionCheck",
        "metadata": {"name": "mk"},
        "spec": {"controllerName": "kueue.x-k8s.io/multikueue"},
    }
    cq = cluster_queue("cq", group(flavor_quotas("l4", ("cpu", "1"))))
    cq["spec"]["admissionChecksStrategy"] = {"admissionChecks": [{"name": "mk"}]}
    with pytest.raises(NotModelledError, match="MultiKueue is not modelled"):
        build([flavor("l4"), mk, cq])


def test_cli_reads_a_kubectl_list_and_writes_the_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from whatif.cli import main

    items = [
        flavor("l4"),
        cluster_queue("cq", group(flavor_quotas("l4", ("nvidia.com/gpu", "1")))),
        local_queue("team-a", "user-queue", "cq"),
    ]
    (tmp_path / "objects.yaml").write_text(
        yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": items})
    )
    (tmp_path / "trace.yaml").write_text(yaml.safe_dump({"workloads": [wl("a", 0, 10), wl("b", 0, 10)]}))
    out = tmp_path / "out.json"
    args = [
        "--manifests",
        str(tmp_path / "objects.yaml"),
        "--trace",
        str(tmp_path / "trace.yaml"),
        "--json",
        str(out),
    ]
    assert main(args) == 0
    doc = json.loads(out.read_text())
    assert [(e["workload"], e["event"], e["time"]) for e in doc["events"]][:4] == [
        ("team-a/a", "admitted", 0),
        ("team-a/b", "inadmissible", 0),
        ("team-a/a", "finished", 10),
        ("team-a/b", "admitted", 11),  # parked at 0: the requeuer's batch after a ends at 10
    ]
    assert doc["queues"]["cq"]["waitSeconds"]["max"] == 11
    assert "| `cq` | 2 | 0 |" in capsys.readouterr().out


def test_cli_bad_input_is_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from whatif.cli import main

    (tmp_path / "objects.yaml").write_text(
        yaml.safe_dump(cluster_queue("cq", group(flavor_quotas("l4", ("cpu", "1")))))
    )
    (tmp_path / "trace.yaml").write_text("workloads: [")
    code = main(["--manifests", str(tmp_path / "objects.yaml"), "--trace", str(tmp_path / "trace.yaml")])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("whatif: --trace") and err.count("\n") == 1


def test_fair_sharing_weights_without_a_kueue_configuration_are_not_guessed() -> None:
    cq = cluster_queue("cq", group(flavor_quotas("l4", ("cpu", "1"))))
    cq["spec"]["fairSharing"] = {"weight": "1"}
    with pytest.raises(NotModelledError, match="cannot be told; include it, or pass --ignore-fair-sharing"):
        build([flavor("l4"), cq])


def test_a_reclaimed_borrower_does_not_take_its_quota_back_before_the_preemptor() -> None:
    """A head that cannot fit (``big``) blocks the preemptor's queue for one cycle after the
    eviction; the victim must not win the freed quota back in that cycle (it used to loop forever)."""
    c = build(
        [
            flavor("l4"),
            cluster_queue(
                "a",
                group(flavor_quotas("l4", ("nvidia.com/gpu", "4"))),
                cohort="co",
                preemption={"reclaimWithinCohort": "Any", "withinClusterQueue": "LowerPriority"},
            ),
            cluster_queue("b", group(flavor_quotas("l4", ("nvidia.com/gpu", "0", "4"))), cohort="co"),
            local_queue("team-a", "user-queue", "a"),
            local_queue("team-b", "user-queue", "b"),
        ]
    )
    trace = [
        {**wl("borrower", 0, 100, gpus="4"), "namespace": "team-b"},
        wl("big", 1, 10, gpus="8", priority=1000),
        wl("small", 1, 10, gpus="4", priority=100),
    ]
    events = brief(run(c, trace))
    assert (1, "borrower", "preempted", "small") in events
    assert (1, "small", "admitted", "") in events
    assert [e for e in events if e[1] == "borrower" and e[2] == "admitted"] == [
        (0, "borrower", "admitted", ""),
        (12, "borrower", "admitted", ""),  # parked at 1, small finishes at 11: back at 12
    ]


def test_the_kueue_configmap_in_manifests_says_whether_fair_sharing_is_on() -> None:
    """``--manifests`` of ``build/<stack>/manifests.yaml`` carries the Kueue chart's rendered
    ``kueue-manager-config`` ConfigMap (key ``controller_manager_config.yaml``)."""
    from whatif.cluster import build_cluster
    from whatif.pack import StackModel
    from whatif.sources import manifests_items

    config = {"fairSharing": {"preemptionStrategies": ["LessThanOrEqualToFinalShare"]}}
    config_map = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "kueue-manager-config", "namespace": "kueue-system"},
        "data": {"controller_manager_config.yaml": yaml.safe_dump(config)},
    }
    cq = cluster_queue("cq", group(flavor_quotas("l4", ("cpu", "1"))))
    cq["spec"]["fairSharing"] = {"weight": "0.5"}
    text = yaml.safe_dump_all([config_map, cq])
    built = build_cluster(StackModel.from_plain(manifests_items(text, "test")))
    assert built.fair_sharing is not None and built.cluster_queues["cq"].node.fair_weight == 0.5
