"""Topology-aware templates, the pack's verdict on each, and reading Kueue's topology assignment.

Templates (:func:`tas_templates`): per topology-aware GPU flavor (``topologyName``) of each
ClusterQueue a team reaches, a gang as a GPUDirect user must submit it -- each pod template with
``kueue.x-k8s.io/podset-required-topology`` (docs/multi-node-training.md, ``workloads[].topology``;
the example is ``cloud.google.com/gce-topology-block``):

- *fits*: required at the Topology's widest level, as large as the report's largest gang
  (``preview.report.largest_gang``) and no larger than one domain of that level where the report
  knows its size (``facts.tas.domains.domain_gpus``: the "largest gang in one domain" column);
- *cannot fit*: required at the narrowest level whose domain the report knows, one pod more than
  such a domain holds.

Expected verdict (:func:`pack_verdict`): the what-if does not place by topology (it says so), so the
verdict is the pack's -- ``kueue-flavor-eligible`` (the TAS match, ``facts.tas.flavor_match``) and
``kueue-tas-gang-fits-domain`` run on the stack's model with the template's Job added, with the
stack's policy config (``policies/config.<stack>.json``, its declared reservation sizes): a finding
of either is "never admitted", none is "admitted in the template's flavor".

:func:`assigned_nodes` decodes a ``PodSetAssignment.topologyAssignment`` (kueue v0.19.2
``apis/kueue/v1beta2/workload_types.go`` ``TopologyAssignment``: ``levels`` and ``slices``, each
slice ``domainCount`` domains with ``valuesPerLevel`` universal or individual
(``prefix`` + root + ``suffix``) and ``podCounts`` universal or individual).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from decimal import Decimal
from functools import cache
from pathlib import Path
from typing import Any

from gpu_batch_policy.facts.model import StackModel
from gpu_batch_policy.facts.tas.annotations import REQUIRED
from gpu_batch_policy.facts.tas.domains import domain_gpus, tas_flavors, topology_levels
from gpu_batch_policy.facts.tas.levels import HOSTNAME
from gpu_batch_policy.facts.tas.reservations import ReservationSize
from gpu_batch_policy.rules.kit.report import Reporter
from gpu_batch_policy.rules.kueue.flavors import check_flavor_eligible
from gpu_batch_policy.rules.kueue.tas import check_gang_fits

from preview.analyzer import load_policy_config_file
from preview.report import flavor_pools
from preview.report.training import GANG_FITS_RULE, reservation_sizes
from tests.live.cluster import Cluster
from tests.live.queue_templates import (
    GPU,
    Template,
    Verdict,
    first_cluster_model,
    flavor_gangs,
    records,
    team_queues,
)
from tests.live.tas_nodes import pool_nodes

POLICIES = Path(__file__).resolve().parents[2] / "policies"
FLAVOR_RULE = "kueue-flavor-eligible"
Check = Callable[[StackModel, Reporter, Mapping[str, Any]], None]
# kueue v0.19.2 apis/kueue/v1beta2: ``TopologySchedulingGate`` (topology_types.go),
# ``DelayedTopologyRequestStateReady`` (workload_types.go)
TOPOLOGY_GATE = "kueue.x-k8s.io/topology"
DELAYED_READY = "Ready"
STATIC = "static"  # ``played_by`` of the Nodes a pool keeps from the start
RULES: tuple[tuple[str, Check], ...] = (
    (FLAVOR_RULE, check_flavor_eligible),
    (GANG_FITS_RULE, check_gang_fits),
)


@cache
def policy_config(stack: str) -> dict[str, Any]:
    """``policies/config.<stack>.json`` as the preview runs the pack with it (empty without one)."""
    path = POLICIES / f"config.{stack}.json"
    return load_policy_config_file(path) if path.exists() else {}


def reservations(stack: str) -> dict[str, ReservationSize]:
    return reservation_sizes(policy_config(stack))


def tas_templates(stack: str) -> list[Template]:
    """Per topology-aware GPU flavor a team reaches: the two gangs the module docstring names."""
    m = first_cluster_model(stack)
    sizes = reservations(stack)
    levels_of = topology_levels(m)
    out: list[Template] = []
    for g in flavor_gangs(m):
        name, per_node, gang = g.flavor, g.per_node, g.gang
        flavor = m.find_resource_flavor(name, near=g.cq)[1]
        topology = flavor.topology_name if flavor is not None else None
        levels = levels_of.get(topology) if isinstance(topology, str) else None
        if flavor is None or not levels:
            continue
        widest = domain_gpus(m, flavor, levels[0], sizes)
        fits = int(min(gang, Decimal(widest) if widest is not None else gang) // per_node)
        known = [(lv, s) for lv in levels if (s := domain_gpus(m, flavor, lv, sizes)) is not None]
        shapes = [(levels[0], fits, f"largest gang in one {levels[0]}")]
        if known:
            level, size = known[-1]
            shapes.append((level, size // per_node + 1, f"one pod more than one {level} holds"))
        for level, count, what in shapes:
            pod_set = {
                "name": "main",
                "count": count,
                "requests": {"cpu": "1", GPU: str(per_node)},
                "annotations": {REQUIRED: level},
            }
            short = level.rsplit("-", 1)[-1].rsplit("/", 1)[-1]
            out.append(
                Template(
                    f"t-{g.cq.name}-{name}-{short}-{count}"[:50].rstrip("-"),
                    g.namespace,
                    g.queue,
                    (pod_set,),
                    f"{what} of {g.cq.name}/{name} ({count} x {per_node} GPUs, "
                    f"podset-required-topology {level}) as team {g.namespace}",
                    flavor=name,
                )
            )
    return out


def pack_verdict(stack: str, obj: Mapping[str, Any]) -> list[str]:
    """The pack's findings (``<rule>: <message>``) that say ``obj`` (a Job) is never admitted."""
    meta = obj["metadata"]
    urn = f"urn:pulumi:{stack}::gpu-batch::kubernetes:batch/v1:Job::{meta['namespace']}-{meta['name']}"
    model = StackModel.from_plain(
        [*(r[:4] for r in records(stack)), ("kubernetes:batch/v1:Job", dict(obj), urn, meta["name"])]
    )
    found: list[str] = []
    config = policy_config(stack)
    for rule, check in RULES:

        def report(message: str, subject: str | None = None, rule: str = rule) -> None:
            if subject == urn:
                found.append(f"{rule}: {message}")

        entry = config.get(rule)
        check(model, Reporter(report, stack=True), entry if isinstance(entry, dict) else {})
    return found


def _values(level: Mapping[str, Any], count: int) -> list[str]:
    if level.get("universal") is not None:
        return [str(level["universal"])] * count
    individual = level.get("individual") or {}
    prefix, suffix = individual.get("prefix") or "", individual.get("suffix") or ""
    return [f"{prefix}{root}{suffix}" for root in individual.get("roots") or []]


def assigned_domains(assignment: Mapping[str, Any]) -> list[tuple[dict[str, str], int]]:
    """Each domain of a ``topologyAssignment``: (level label -> value, pods)."""
    levels = list(assignment.get("levels") or [])
    out: list[tuple[dict[str, str], int]] = []
    for piece in assignment.get("slices") or []:
        count = int(piece.get("domainCount") or 0)
        values = [_values(v, count) for v in piece.get("valuesPerLevel") or []]
        pods = piece.get("podCounts") or {}
        counts = (
            [int(pods["universal"])] * count
            if pods.get("universal") is not None
            else [int(c) for c in pods.get("individual") or []]
        )
        for i in range(count):
            out.append(({lv: values[n][i] for n, lv in enumerate(levels)}, counts[i]))
    return out


def tas_verdict(stack: str, template: Template, obj: Mapping[str, Any], whatif: Verdict) -> Verdict:
    """The pack's verdict on a TAS template, which the what-if does not place (``whatif``: its
    verdict, asserted to say so: a what-if that placed by topology should be the expected side)."""
    assert whatif.not_modelled and "Topology-Aware Scheduling" in whatif.not_modelled, whatif
    findings = pack_verdict(stack, obj)
    cq = team_queues(first_cluster_model(stack))[(template.namespace, template.queue)]
    flavors = tuple(
        (str(ps["name"]), tuple(sorted((str(r), str(template.flavor)) for r in ps["requests"])))
        for ps in template.pod_sets
    )
    return Verdict(not findings, cq, flavors, pack=tuple(findings))


def static_nodes(stack: str) -> list[dict[str, Any]]:
    """The Nodes GKE keeps up from the start behind each TAS flavor: each pool's minimum
    (``NodePool.min_nodes``; a queued-provisioning pool's is 0), e.g. gpudirect's static A3 Mega
    reservation pool (``minNodes: 4``)."""
    m = first_cluster_model(stack)
    nodes: list[dict[str, Any]] = []
    seen: set[str] = set()
    for flavor, _ in tas_flavors(m):
        for capacity in flavor_pools(m, flavor.name):
            pool = capacity.pool
            count = pool.min_nodes()
            if pool.name in seen or not isinstance(count, int) or count <= 0:
                continue
            seen.add(pool.name)
            nodes += pool_nodes(
                m, pool, count, prefix=pool.name, reservations=reservations(stack), played_by=STATIC
            )
    return nodes


def provisioned_nodes(
    stack: str,
    flavor: str,
    pr: Mapping[str, Any],
    config: Mapping[str, Any],
    details: Mapping[str, str],
    by: str,
) -> list[dict[str, Any]]:
    """The Nodes GKE brings up for a provisioned queued request: one per pod the request counts
    (``spec.podSets[].count``; one 8-GPU pod per node here), in one block as a compact DWS
    placement would, labelled with what the config's podSetUpdates select on
    (``autoscaling.gke.io/provisioning-request`` = the detail GKE reported)."""
    m = first_cluster_model(stack)
    (capacity,) = flavor_pools(m, flavor)
    count = sum(int(ps.get("count") or 0) for ps in pr["spec"].get("podSets") or [])
    wanted = ((config.get("spec") or {}).get("podSetUpdates") or {}).get("nodeSelector") or []
    labels = {str(s["key"]): details[str(s["valueFromProvisioningClassDetail"])] for s in wanted}
    return pool_nodes(
        m, capacity.pool, count, prefix=by, reservations=reservations(stack), labels=labels, played_by=by
    )


def topology_problems(
    template: Template, wl: Mapping[str, Any], pod_templates: Mapping[str, Any], nodes: Mapping[str, Any]
) -> list[str]:
    """What is wrong with an admitted TAS template: every pod set has a topology assignment whose
    pods add up to its count, on Nodes that exist (``nodes``: name -> labels), all in one domain of
    the required level; a delayed request is ``Ready``; the started pod template carries Kueue's
    ``kueue.x-k8s.io/topology`` scheduling gate (``pkg/podset`` ``FromAssignment``), which Kueue's
    TopologyUngater lifts per pod with the assigned node (``pkg/controller/tas/topology_ungater.go``)."""
    problems: list[str] = []
    wanted = {str(ps["name"]): ps for ps in template.pod_sets}
    for psa in wl["status"]["admission"]["podSetAssignments"]:
        name = str(psa["name"])
        assignment = psa.get("topologyAssignment")
        if assignment is None:
            problems.append(f"{name}: no topologyAssignment")
            continue
        domains = assigned_domains(assignment)
        if sum(n for _, n in domains) != int(wanted[name]["count"]):
            problems.append(f"{name}: {domains} does not place {wanted[name]['count']} pods")
        hosts = [values.get(HOSTNAME, "") for values, _ in domains]
        missing = [h for h in hosts if h not in nodes]
        if missing:
            problems.append(f"{name}: assigned to {missing}, which are no Nodes of the flavor")
        level = (wanted[name].get("annotations") or {}).get(REQUIRED)
        spread = {nodes[h].get(level) for h in hosts if h in nodes}
        if level and len(spread) != 1:
            problems.append(f"{name}: required {level} but placed on {sorted(map(str, spread))}")
        if psa.get("delayedTopologyRequest") not in (None, DELAYED_READY):
            problems.append(f"{name}: delayedTopologyRequest {psa.get('delayedTopologyRequest')}")
        gates = ((pod_templates.get(name) or {}).get("spec") or {}).get("schedulingGates") or []
        if {"name": TOPOLOGY_GATE} not in gates:
            problems.append(f"{name}: the started pod template lacks the {TOPOLOGY_GATE} scheduling gate")
    return problems


def second_pass_failure(cluster: Cluster, wl: Mapping[str, Any]) -> str | None:
    """The note of Kueue's ``SecondPassFailed`` event on ``wl`` (``scheduler.go``
    ``requeueAndUpdate``: the topology could not be assigned after the check was Ready)."""
    meta = wl["metadata"]
    for event in cluster.list("v1", "Event", meta["namespace"]):
        involved = event.get("involvedObject") or {}
        if involved.get("name") == meta["name"] and event.get("reason") == "SecondPassFailed":
            return str(event.get("message") or event.get("note"))
    return None
