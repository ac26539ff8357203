"""``python -m whatif.status`` (issue 43) on recorded fixtures of three situations.

Each fixture (``tests/fixtures/status/<name>.yaml``) is a ``kubectl get -o yaml`` List of Kueue
v0.19.2 objects at 2026-11-28T12:00:00Z, and ``<name>-history.yaml`` the history that led there as
a what-if trace.  The what-if's own run of that history must (1) be in the dump's state at time 0
-- the same workloads running in the same flavors, reserved, pending -- and (2) admit each pending
workload exactly when the status command's replay from the dump says, given the history's
durations.  Under the prod team Role the command makes only reads the Role allows or reports as
not visible, and its range holds the what-if's answer.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
import yaml

from whatif.multikueue.run import prepared
from whatif.pack import StackModel
from whatif.simulator import Simulation
from whatif.sources import type_token
from whatif.status import cli
from whatif.status.collect import collect
from whatif.status.explain import explain
from whatif.status.objects import CHECKS, PENDING, KueueWorkload, timestamp
from whatif.status.reads import DumpReader, RbacReader, Read, flatten, pending_read, rule_allows
from whatif.status.render import summary, to_json
from whatif.status.replay import MODEL_KINDS, Inputs, Profile, Range
from whatif.status.report import build
from whatif.trace import load_trace
from whatif.workload import ADMITTED, RESERVED

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "status"
NOW = "2026-11-28T12:00:00Z"
SITUATIONS = ("quota", "dws", "flavor")
# what Kueue's message says keeps each pending workload out, per situation (explain.Blocker.kind)
EXPECTED_KINDS = {
    "quota": {"research/job-eval-h-91c3d": {"quota"}, "research/job-finetune-m-2b8f4": {"quota"}},
    "dws": {"research/job-train-p-8a1f0": {"checks"}, "research/job-sweep-q-c47d9": {"quota"}},
    "flavor": {
        "research/job-h100-x-4e6a1": {"affinity", "taint"},
        "research/job-big-z-0b9c8": {"max-quota", "taint"},
    },
}


def dump(name: str) -> list[dict[str, Any]]:
    return flatten(yaml.safe_load_all((FIXTURES / f"{name}.yaml").read_text()))


def history(name: str) -> Path:
    return FIXTURES / f"{name}-history.yaml"


def cluster_items(objects: list[dict[str, Any]]) -> list[tuple[str, Any, str, str]]:
    """The Kueue objects of a dump as the stack would declare them (no status)."""
    kinds = (*MODEL_KINDS, "LocalQueue")
    return [
        (
            type_token(o),
            {k: v for k, v in o.items() if k != "status"},
            f"decl:{o['kind']}/{i}",
            o["metadata"]["name"],
        )
        for i, o in enumerate(objects)
        if o.get("kind") in kinds
    ]


def whatif_run(name: str) -> tuple[dict[str, tuple[str, dict[str, Any]]], dict[str, float | None]]:
    """The what-if's own run of the history: each workload's state and flavors at time 0, and
    when it is first admitted (None: never)."""
    sim = Simulation(prepared(StackModel.from_plain(cluster_items(dump(name)))), load_trace(history(name)))
    sim.start()
    while sim.next_time() <= 0:
        sim.step()
    at_now = {w.key: (w.state, dict(w.flavors)) for w in sim.workloads}
    while sim.next_time() < math.inf:  # the events and the requeuer's batches (whatif.requeuer)
        sim.step()
    return at_now, {w.key: w.first_admitted_at for w in sim.workloads}


def history_durations(name: str) -> dict[str, Range]:
    return {f"{e.namespace}/{e.name}": (e.duration, e.duration) for e in load_trace(history(name)).entries}


def history_provisioning(name: str) -> Range | None:
    delay = load_trace(history(name)).provisioning_delay
    return None if delay is None else (delay, delay) if isinstance(delay, float) else delay


def status(name: str, reader: Any = None, **kw: Any) -> dict[str, Any]:
    objects = dump(name)
    snap = collect(reader or DumpReader(objects), ["research"])
    now = timestamp(NOW)
    assert now is not None
    return to_json(build(snap, now, Inputs(**kw)))


@pytest.mark.parametrize("name", SITUATIONS)
def test_the_history_leads_to_the_dump(name: str) -> None:
    """The fixture is a state the what-if itself reaches: same submissions, same holders and
    flavors, same pending workloads (so the ETA check below compares like with like)."""
    now = timestamp(NOW)
    assert now is not None
    at_now, _ = whatif_run(name)
    wls = {w.key: w for w in (KueueWorkload(o) for o in dump(name) if o["kind"] == "Workload")}
    assert set(wls) == set(at_now)
    for e in load_trace(history(name)).entries:
        assert wls[f"{e.namespace}/{e.name}"].created - now == e.submit
    expected = {ADMITTED: "admitted", RESERVED: CHECKS}
    for key, (state, flavors) in at_now.items():
        assert wls[key].state() == expected.get(state, PENDING), key
        if state in (ADMITTED, RESERVED):
            assert wls[key].admitted_flavors() == flavors, key


@pytest.mark.parametrize("name", SITUATIONS)
def test_every_pending_workload_gets_kueues_own_reason(name: str) -> None:
    out = status(name)
    pending = {p["workload"]: p for p in out["pending"]}
    assert set(pending) == set(EXPECTED_KINDS[name])
    for obj in dump(name):
        if obj["kind"] != "Workload" or f"research/{obj['metadata']['name']}" not in pending:
            continue
        got = pending[f"research/{obj['metadata']['name']}"]
        reserved = next(c for c in obj["status"]["conditions"] if c["type"] == "QuotaReserved")
        assert got["kueue"]["message"] == reserved["message"]  # verbatim
        assert got["kueue"]["reason"] == reserved["reason"]
        assert got["kueue"]["admissionChecks"] == [
            {k: c[k] for k in ("name", "state", "message")} for c in obj["status"].get("admissionChecks", [])
        ]
        assert got["reason"] and got["change"]
    for key, kinds in EXPECTED_KINDS[name].items():
        wl = KueueWorkload(
            next(
                o
                for o in dump(name)
                if o["kind"] == "Workload" and o["metadata"]["name"] == key.split("/")[1]
            )
        )
        assert {b.kind for b in explain(wl, "research-l4", 0).blockers} == kinds, key


@pytest.mark.parametrize("name", SITUATIONS)
def test_replayed_eta_is_the_whatifs_own(name: str) -> None:
    """Given the history's durations, the range closes on the what-if's admission time."""
    _, admitted = whatif_run(name)
    out = status(name, durations=history_durations(name), provisioning=history_provisioning(name))
    for p in out["pending"]:
        eta, expected = p["eta"], admitted[p["workload"]]
        if expected is None:
            assert eta["lowSeconds"] is None and eta["never"], p["workload"]
        else:
            assert eta["lowSeconds"] == eta["highSeconds"] == expected, p["workload"]


def test_flavor_fixture_never_starts_and_says_why() -> None:
    out = status("flavor", durations=history_durations("flavor"))
    for p in out["pending"]:
        assert p["eta"]["text"] == "never"
    x = next(p for p in out["pending"] if p["workload"] == "research/job-h100-x-4e6a1")
    assert "does not match the node labels of flavor l4" in x["reason"]
    assert "{cloud.google.com/gke-spot true NoSchedule <nil>}" in x["reason"]


def test_dws_fixture_reports_the_request_in_flight() -> None:
    out = status("dws", durations=history_durations("dws"), provisioning=(900.0, 900.0))
    p = next(p for p in out["pending"] if p["workload"] == "research/job-train-p-8a1f0")
    assert p["state"] == CHECKS
    assert p["kueue"]["provisioningRequests"][0]["name"] == "job-train-p-8a1f0-dws-1"
    assert p["eta"]["lowSeconds"] == 600  # 900 s of DWS time, 300 s of it already spent
    q = next(p for p in out["pending"] if p["workload"] == "research/job-sweep-q-c47d9")
    assert "research/job-train-p-8a1f0" in q["reason"]  # the quota's holder is named


# --- the team's Role -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def prod_run() -> Any:
    from tests.stack_runner import run_stack

    return run_stack("prod")


@pytest.fixture(scope="module")
def team_role(prod_run: Any) -> dict[str, Any]:
    """research's Role as the prod stack renders it into build/prod/manifests.yaml (the declared
    objects of ``python -m preview --stack prod``: ``preview.manifests.render_manifests``)."""
    from preview.manifests import render_manifests

    objects = render_manifests(prod_run.resources)
    (role,) = [
        o for o in objects if o.get("kind") == "Role" and o["metadata"]["name"] == "research-submitter"
    ]
    return role


def required_reads() -> list[Read]:
    from whatif.status.reads import namespaced_read

    return [
        namespaced_read("localqueues", "LocalQueue", "research"),
        namespaced_read("workloads", "Workload", "research"),
        pending_read("research", "l4"),
    ]


@pytest.mark.parametrize("name", SITUATIONS)
def test_runs_with_exactly_the_team_roles_rules(name: str, team_role: dict[str, Any]) -> None:
    """Every read of a run is one the Role allows, or is denied and reported as not visible."""
    inner = DumpReader(dump(name))
    reader = RbacReader(inner, team_role["rules"], team_role["metadata"]["namespace"])
    out = status(name, reader=reader, stack=cluster_items(dump(name)))
    assert inner.calls, "the dump answered nothing"
    for read in inner.calls:
        assert any(rule_allows(rule, read) for rule in team_role["rules"]), read.describe()
    for read in required_reads():
        assert read in inner.calls, read.describe()
    for read in reader.denied:
        kind = read.kind
        reported = [k for k in out["notVisible"] if k.startswith(kind)]
        relevant = kind in ("ClusterQueue", "ResourceFlavor", "Workload", "LocalQueue") or (
            kind == "ProvisioningRequest" and name == "dws"
        )
        assert reported or not relevant, read.describe()
    assert out["pending"]


def test_the_roles_queue_rules_are_read_only(team_role: dict[str, Any]) -> None:
    for rule in team_role["rules"]:
        if set(rule["apiGroups"]) & {"kueue.x-k8s.io", "visibility.kueue.x-k8s.io"}:
            assert set(rule["verbs"]) <= {"get", "list", "watch"}, rule
    (pending,) = [r for r in team_role["rules"] if "localqueues/pendingworkloads" in r["resources"]]
    assert pending["verbs"] == ["get"] and "l4" in pending["resourceNames"]


def test_what_the_team_cannot_see_widens_the_range(team_role: dict[str, Any]) -> None:
    """quota: applied's job-serve-b (in the cohort) is invisible to research; the range still
    holds the what-if's answer, and is wider than the admin's point."""
    _, admitted = whatif_run("quota")
    reader = RbacReader(DumpReader(dump("quota")), team_role["rules"], "research")
    durations = {k: v for k, v in history_durations("quota").items() if k.startswith("research/")}
    profile = Profile({("applied", "l4"): (3600.0, 7200.0)})
    out = status(
        "quota", reader=reader, stack=cluster_items(dump("quota")), durations=durations, profile=profile
    )
    assert "Workload in other namespaces" in out["notVisible"]
    assert "ClusterQueue" in out["notVisible"]
    widened = False
    for p in out["pending"]:
        low, high, truth = p["eta"]["lowSeconds"], p["eta"]["highSeconds"], admitted[p["workload"]]
        assert truth is not None and low is not None and high is not None
        assert low <= truth <= high, p["workload"]
        widened |= low < high
    assert widened


# --- reading Kueue's words, and the authorizer -------------------------------------------------


def test_kueues_test_message_with_two_flavors_is_read_in_full() -> None:
    """kueue@v0.19.2 pkg/scheduler/scheduler_test.go: a message listing two flavors' reasons."""
    message = (
        "couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor on-demand, 5 more "
        "needed, untolerated taint {key val NoSchedule <nil>} in flavor spot-tainted"
    )
    wl = KueueWorkload(
        {
            "metadata": {"namespace": "ns", "name": "w"},
            "status": {
                "conditions": [
                    {"type": "QuotaReserved", "status": "False", "reason": "Pending", "message": message}
                ]
            },
        }
    )
    blockers = explain(wl, "cq", 0).blockers
    assert [(b.kind, b.flavor, b.resource) for b in blockers] == [
        ("quota", "on-demand", "cpu"),
        ("taint", "spot-tainted", None),
    ]
    assert "5 more needed" in blockers[0].plain


def test_a_message_it_does_not_know_is_passed_on_verbatim() -> None:
    wl = KueueWorkload(
        {
            "metadata": {"namespace": "ns", "name": "w"},
            "status": {
                "conditions": [{"type": "QuotaReserved", "status": "False", "message": "Something new"}]
            },
        }
    )
    assert explain(wl, "cq", 0).reason() == "Kueue says: Something new"


def test_the_authorizer_is_rbacs() -> None:
    lq_list = Read("list", "kueue.x-k8s.io", "v1beta2", "localqueues", "LocalQueue", "research")
    pending = pending_read("research", "l4")
    named = {
        "apiGroups": ["visibility.kueue.x-k8s.io"],
        "resources": ["localqueues/pendingworkloads"],
        "verbs": ["get"],
        "resourceNames": ["l4"],
    }
    assert rule_allows(named, pending)
    assert not rule_allows(named, pending_read("research", "h100"))  # another LocalQueue
    assert not rule_allows({**named, "resources": ["localqueues"]}, pending)  # the subresource is its own
    assert not rule_allows(
        {**named, "resources": ["localqueues"], "apiGroups": ["kueue.x-k8s.io"], "verbs": ["list"]}, lq_list
    )
    reader = RbacReader(
        DumpReader(dump("quota")), [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}], "research"
    )
    assert reader.allowed(lq_list)
    assert not reader.allowed(Read("list", "kueue.x-k8s.io", "v1beta2", "clusterqueues", "ClusterQueue"))
    assert not reader.allowed(Read("list", "kueue.x-k8s.io", "v1beta2", "workloads", "Workload", "applied"))


# --- the command line ----------------------------------------------------------------------------


def test_cli_json_summary_and_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    durations = tmp_path / "d.yaml"
    durations.write_text(yaml.safe_dump({k: v[0] for k, v in history_durations("quota").items()}))
    base = ["--dump", str(FIXTURES / "quota.yaml"), "--now", NOW, "--durations", str(durations)]
    assert cli.main([*base, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    by = {p["workload"]: p for p in out["pending"]}
    # parked until the requeuer's batch, 1 s after the quota it waits for is freed
    assert by["research/job-finetune-m-2b8f4"]["eta"]["lowAt"] == "2026-11-28T13:10:01Z"
    assert all({"workload", "reason", "eta"} <= set(p) for p in out["pending"])
    assert cli.main([*base, "--summary"]) == 0
    line = capsys.readouterr().out
    assert line.count("\n") == 1 and "research/job-eval-h-91c3d in 30m" in line
    assert cli.main(base) == 0
    table = capsys.readouterr().out
    assert table.splitlines()[0].split() == ["WORKLOAD", "STATE", "ETA", "WHY"]
    assert "insufficient unused quota for nvidia.com/gpu in flavor l4, 4 more needed" in table


def test_cli_bad_durations_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "d.yaml"
    bad.write_text("research/x: [10, 5]\n")
    assert cli.main(["--dump", str(FIXTURES / "quota.yaml"), "--durations", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "research/x" in err and "low <= high" in err


def test_summary_says_nothing_is_pending() -> None:
    objects = [o for o in dump("quota") if o["kind"] != "Workload"]
    now = timestamp(NOW)
    assert now is not None
    assert summary(build(collect(DumpReader(objects), ["research"]), now)) == "nothing pending in research"


# --- KAI queues ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def kai_role() -> dict[str, Any]:
    """team-a's Role as the kai stack renders it."""
    from preview.manifests import render_manifests
    from tests.stack_runner import run_stack

    objects = render_manifests(run_stack("kai").resources)
    (role,) = [o for o in objects if o.get("kind") == "Role" and o["metadata"]["name"] == "team-a-submitter"]
    return role


def test_kai_pending_podgroup_gets_kais_own_reason_under_the_team_role(kai_role: dict[str, Any]) -> None:
    inner = DumpReader(dump("kai"))
    reader = RbacReader(inner, kai_role["rules"], kai_role["metadata"]["namespace"])
    now = timestamp(NOW)
    assert now is not None
    out = to_json(build(collect(reader, [kai_role["metadata"]["namespace"]]), now))
    (pending,) = out["pending"]  # the running PodGroup is not pending
    assert pending["workload"] == "team-a/pg-train-small-9b4d0f61"
    assert pending["kai"]["reasons"][0]["reason"] == "OverLimit"
    assert "over its limit" in pending["reason"] and "limit 4" in pending["reason"]
    assert "Queue" in out["notVisible"]  # cluster-scoped: the team cannot read its queue
    assert pending["queueStatus"] is None
    podgroups = Read("list", "scheduling.run.ai", "v2alpha2", "podgroups", "PodGroup", "team-a")
    assert podgroups in inner.calls
    for read in inner.calls:
        assert any(rule_allows(rule, read) for rule in kai_role["rules"]), read.describe()


def test_kai_team_role_reads_podgroups_only(kai_role: dict[str, Any]) -> None:
    (rule,) = [r for r in kai_role["rules"] if "scheduling.run.ai" in r["apiGroups"]]
    assert rule["resources"] == ["podgroups"] and set(rule["verbs"]) == {"get", "list", "watch"}


def test_a_team_dump_with_the_stacks_queues(
    prod_run: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A dump a research member can make (their namespace, the visibility API's answer) replayed
    on the prod stack's declared queues and pools: the replay finds what Kueue cannot say yet --
    prod's L4 nodes (g2-standard-24) hold 2 GPUs, so a 4-GPU pod's ProvisioningRequest can never
    be provisioned -- and says the queues are the stack's, not read."""
    import whatif.sources

    records = [(r.type, r.inputs, r.urn, r.name, r.provider or "", ()) for r in prod_run.resources]
    monkeypatch.setattr(whatif.sources, "stack_records", lambda stack: records)
    team = [o for o in dump("quota") if (o.get("metadata") or {}).get("namespace") == "research"]
    team += [o for o in dump("quota") if o["kind"] == "PendingWorkloadsSummary"]
    path = tmp_path / "team.yaml"
    path.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": team}))
    assert cli.main(["--dump", str(path), "--now", NOW, "--stack", "prod", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert any("taken as the stack declares them" in a for a in out["assumptions"])
    for p in out["pending"]:
        assert p["eta"]["text"] == "never"
    assert any("cannot hold the gang" in p["eta"]["never"] for p in out["pending"])


def test_work_ahead_the_team_cannot_see_is_counted_and_widens_the_high_end(team_role: dict[str, Any]) -> None:
    """The visibility API puts two workloads of another LocalQueue of research-l4 between eval-h
    and finetune-m; research cannot see them, so the high end takes them as large as finetune-m."""

    def finetune(objects: list[dict[str, Any]]) -> dict[str, Any]:
        reader = RbacReader(DumpReader(objects), team_role["rules"], "research")
        durations = {k: v for k, v in history_durations("quota").items() if k.startswith("research/")}
        profile = Profile({("applied", "l4"): (3600.0, 7200.0)})
        out = status(
            "quota", reader=reader, stack=cluster_items(objects), durations=durations, profile=profile
        )
        return next(p for p in out["pending"] if p["workload"] == "research/job-finetune-m-2b8f4")

    plain = finetune(dump("quota"))
    objects = dump("quota")
    summary = next(o for o in objects if o["kind"] == "PendingWorkloadsSummary")
    summary["items"][1]["positionInClusterQueue"] = 3
    crowded = finetune(objects)
    assert (plain["aheadNotVisible"], crowded["aheadNotVisible"]) == (0, 2)
    assert "2 workload(s) of other teams you cannot see" in crowded["reason"]
    assert crowded["eta"]["lowSeconds"] == plain["eta"]["lowSeconds"]
    # + 1 s per handover of freed quota to a parked workload: the requeuer's batch (whatif.requeuer)
    assert crowded["eta"]["highSeconds"] == 4500 + 1800 + 3 > plain["eta"]["highSeconds"] == 4500 + 2


def test_a_check_in_retry_is_requeued_after_its_back_off() -> None:
    """dws, one minute earlier in another history: job-train-p's first request failed; Kueue set
    the check to Retry with a 60 s back-off (``UpdateAdmissionCheckRequeueState``), released the
    quota (QuotaReserved False) and requeues it at lastTransitionTime + requeueAfterSeconds."""
    objects = dump("dws")
    wl = next(o for o in objects if o["kind"] == "Workload" and o["metadata"]["name"] == "job-train-p-8a1f0")
    del wl["status"]["admission"]
    wl["status"]["admissionChecks"] = [
        {
            "name": "dws",
            "state": "Retry",
            "message": "Retrying after failure: the nodes could not be provisioned",
            "lastTransitionTime": "2026-11-28T11:59:30Z",
            "requeueAfterSeconds": 60,
            "retryCount": 1,
        }
    ]
    wl["status"]["conditions"] = [
        {
            "type": "QuotaReserved",
            "status": "False",
            "reason": "Pending",
            "message": "The workload has failed admission checks",
            "lastTransitionTime": "2026-11-28T11:59:30Z",
        },
    ]
    now = timestamp(NOW)
    assert now is not None
    snap = collect(DumpReader(objects), ["research"])
    out = to_json(build(snap, now, Inputs(durations=history_durations("dws"), provisioning=(900.0, 900.0))))
    p = next(p for p in out["pending"] if p["workload"] == "research/job-train-p-8a1f0")
    assert p["state"] == PENDING and "Kueue retries it 60 s after 2026-11-28T11:59:30Z" in p["reason"]
    assert p["eta"]["lowSeconds"] == 30 + 900  # requeued in 30 s, then a new request of 900 s
    q = next(p for p in out["pending"] if p["workload"] == "research/job-sweep-q-c47d9")
    # sweep-q reserves the free quota at once, but train-p (prod-priority) comes back at 30 s and
    # preempts it (withinClusterQueue: LowerPriority); it starts after train-p's run and its own request
    # (+ 1 s: parked after its eviction, it is back in its queue with the requeuer's batch)
    assert q["eta"]["lowSeconds"] == 30 + 900 + 3600 + 900 + 1


def test_kai_eta_is_the_kai_whatifs_own(kai_records: list[Any]) -> None:
    """The KAI what-if's run of kai-history.yaml on the kai stack admits pg-train-small when
    pg-train-big ends; the replay from the dump (the stack's queues and nodes) says the same."""
    from whatif.kai.model import build_kai
    from whatif.kai.simulator import simulate

    items = [r[:4] for r in kai_records]
    outcome = simulate(build_kai(StackModel.from_plain(items)), load_trace(history("kai")))
    admitted = {e.workload: e.time for e in outcome.events if e.event == "admitted"}
    now = timestamp(NOW)
    assert now is not None
    durations = history_durations("kai")
    out = to_json(
        build(collect(DumpReader(dump("kai")), ["team-a"]), now, Inputs(stack=items, durations=durations))
    )
    (p,) = out["pending"]
    assert (
        p["eta"]["lowSeconds"]
        == p["eta"]["highSeconds"]
        == admitted["team-a/pg-train-small-9b4d0f61"]
        == 3600
    )
    without = to_json(build(collect(DumpReader(dump("kai")), ["team-a"]), now))
    assert without["pending"][0]["eta"]["text"].startswith("not replayed: KAI's ETA needs --stack")


@pytest.fixture(scope="module")
def kai_records() -> list[Any]:
    from tests.stack_runner import run_stack

    return [(r.type, r.inputs, r.urn, r.name) for r in run_stack("kai").resources]


# --- Kueue's visibility API unread, queues the team cannot read given as a file --------------------


def test_without_kueues_queue_order_the_workloads_are_read_and_it_says_so(team_role: dict[str, Any]) -> None:
    """A dump without the visibility API's answer: the order comes from the Workloads, every
    pending one still gets Kueue's reason, and the output names the LocalQueue whose order was
    not read and why; with the answer, each pending workload carries Kueue's positions."""
    objects = [o for o in dump("quota") if o["kind"] != "PendingWorkloadsSummary"]
    reader = RbacReader(DumpReader(objects), team_role["rules"], "research")
    now = timestamp(NOW)
    assert now is not None
    report = build(collect(reader, ["research"]), now, Inputs(stack=cluster_items(objects)))
    out = to_json(report)
    assert list(out["queueOrderNotRead"]) == ["research/l4"]
    assert (
        "no PendingWorkloadsSummary of LocalQueue research/l4 in the dump"
        in out["queueOrderNotRead"]["research/l4"]
    )
    assert all(p["queuePosition"] is None and p["kueue"]["message"] for p in out["pending"])
    assert any("Kueue's queue order not read for research/l4" in a for a in out["assumptions"])
    assert "[not visible:" in summary(report) and "Kueue's queue order]" in summary(report)
    read = status("quota", reader=RbacReader(DumpReader(dump("quota")), team_role["rules"], "research"))
    assert read["queueOrderNotRead"] == {}
    positions = {p["workload"]: p["queuePosition"] for p in read["pending"]}
    assert positions == {
        "research/job-eval-h-91c3d": {"clusterQueue": 0, "localQueue": 0},
        "research/job-finetune-m-2b8f4": {"clusterQueue": 1, "localQueue": 1},
    }


def test_manifests_stand_in_for_the_queues_the_team_cannot_read(
    team_role: dict[str, Any], tmp_path: Path
) -> None:
    """``--manifests``: the declared queues as a file (what the platform team publishes), read as
    ``python -m whatif --manifests`` reads it; the same ETAs as the same objects given as a stack."""
    declared = [
        {k: v for k, v in o.items() if k != "status"}
        for o in dump("quota")
        if o["kind"] in (*MODEL_KINDS, "LocalQueue")
    ]
    manifests = tmp_path / "queues.yaml"
    manifests.write_text(yaml.safe_dump_all(declared))
    durations = {k: v for k, v in history_durations("quota").items() if k.startswith("research/")}
    given = tmp_path / "durations.yaml"
    given.write_text(yaml.safe_dump({k: list(v) for k, v in durations.items()}))

    def team_reader() -> RbacReader:
        return RbacReader(DumpReader(dump("quota")), team_role["rules"], "research")

    argv = ["-n", "research", "--now", NOW, "--manifests", str(manifests), "--durations", str(given)]
    out = to_json(cli.run(cli._parser().parse_args(argv), team_reader()))
    assert any(f"taken as --manifests {manifests} declares them" in a for a in out["assumptions"])
    expected = status("quota", reader=team_reader(), stack=cluster_items(dump("quota")), durations=durations)
    assert [p["eta"] for p in out["pending"]] == [p["eta"] for p in expected["pending"]]
    assert all(p["eta"]["lowSeconds"] is not None for p in out["pending"])
    with pytest.raises(SystemExit):  # one source of declared queues
        cli._parser().parse_args(["--stack", "prod", "--manifests", str(manifests)])


def test_an_api_error_keeps_the_servers_words() -> None:
    from whatif.status.reads import server_message

    assert server_message(b"service unavailable\n") == "service unavailable"
    status_body = {"kind": "Status", "code": 503, "message": 'the server is currently unable to handle "x"'}
    assert server_message(json.dumps(status_body).encode()) == 'the server is currently unable to handle "x"'
    assert server_message(b"") == "" and len(server_message(b"x" * 500)) == 200
