"""A stack's workload templates and what the preview and the what-if say Kueue does with each.

Templates (issue 40 part 4): the arrival ``shapes`` of the stack's load profile
(``whatif/<stack>.yaml``; a ``declared`` shape is the stack's own RayJob), submitted by every team
that has a LocalQueue of the stream's name; and per ClusterQueue GPU flavor of the first cluster,
a gang of the report's *largest gang* and one of a node more (``preview.report.largest_gang``,
the report's own arithmetic), so each stack has a template its report says cannot fit.

The expected verdict of a template is the what-if's, never re-typed: :func:`expected` simulates
exactly that one workload on the empty stack (``whatif.run.simulate``, the ``python -m whatif``
code path, with the stack's MultiKueue fleet when it has one) and reads its ``admitted`` event
(the ClusterQueue and flavors) or its ``neverAdmitted`` entry.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal
from functools import cache
from typing import Any

from gpu_batch_policy.facts import kueue_capacity
from gpu_batch_policy.facts.model import ClusterQueue

from preview.report import flavor_pools, largest_gang, quota_figures, stack_model
from preview.report.multikueue import cluster_subsets
from tests.live.stacks import stack_run
from whatif.errors import NotModelledError
from whatif.multikueue.fleet import fleet
from whatif.pack import StackModel
from whatif.profiles import declared_pod_sets, load_profile, profile_path
from whatif.run import simulate
from whatif.sources import Record
from whatif.trace import DELAY_KEYS, parse_trace

GPU = "nvidia.com/gpu"
RUN_SECONDS = 3600  # how long the simulated workload runs: it is alone, any length decides the same


@dataclass(frozen=True)
class Template:
    """One workload a team submits: pod sets in trace form (``whatif/README.md``)."""

    name: str  # a DNS label, unique in the stack
    namespace: str  # the team's namespace
    queue: str  # the team's LocalQueue
    pod_sets: tuple[dict[str, Any], ...]
    source: str  # where it comes from, for messages
    declared: str | None = None  # the stack's declared workload of that name (submitted as it is)
    priority_class: str | None = None
    flavor: str | None = None  # the topology-aware flavor a TAS template is meant for (queue_tas)


@dataclass(frozen=True)
class Verdict:
    """What the what-if says: admitted (in ``cluster_queue`` with ``flavors`` per pod set and
    resource) or never admitted; ``not_modelled``: the what-if's own reason it cannot say."""

    admitted: bool
    cluster_queue: str | None = None
    flavors: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = ()
    not_modelled: str | None = None
    worker: str | None = None  # MultiKueue: the worker it ran on (``multiKueue.teams.<ns>.ranOn``)
    reason: str | None = None  # why the what-if never admits it (its ``inadmissible`` event)
    pack: tuple[str, ...] = ()  # a TAS template: the pack's findings that it is never admitted

    def flavor_map(self, kind: str) -> dict[str, dict[str, str]]:
        """Per pod set as Kueue names it: a batch Job has one pod set, ``main`` (kueue v0.19.2
        ``pkg/controller/jobs/job/job_controller.go`` ``PodSets``: ``kueue.DefaultPodSetName``)."""
        if kind == "Job":
            ((_, res),) = self.flavors
            return {"main": dict(res)}
        return {ps: dict(res) for ps, res in self.flavors}


@cache
def records(stack: str) -> tuple[Record, ...]:
    """The stack's registrations as ``python -m whatif --stack`` reads them (``_run_program``)."""
    return tuple(
        (r.type, r.inputs, r.urn, r.name, r.provider or "", tuple(r.dependencies))
        for r in stack_run(stack).resources
    )


@cache
def model(stack: str) -> StackModel:
    return StackModel.from_plain(r[:4] for r in records(stack))


@cache
def cluster_model(stack: str, index: int) -> StackModel:
    """The report's model of the stack's ``index``-th cluster (0: a MultiKueue program's
    manager), in the order ``stacks.stack_clusters`` lists them (both ``cluster_groups``)."""
    return stack_model(cluster_subsets(stack_run(stack).resources)[index][1])


def first_cluster_model(stack: str) -> StackModel:
    """The report's model of the stack's first cluster (a MultiKueue program's manager)."""
    return cluster_model(stack, 0)


def team_queues(m: StackModel) -> dict[tuple[str, str], str]:
    """(namespace, LocalQueue) -> ClusterQueue of every LocalQueue ``m`` declares."""
    return {
        (lq.namespace, lq.name): str(lq.cluster_queue)
        for lq in m.local_queues()
        if isinstance(lq.namespace, str) and isinstance(lq.name, str)
    }


def profile_templates(stack: str) -> list[Template]:
    """Every shape of the load profile, as every team with a LocalQueue of its stream's name."""
    path = profile_path(stack)
    if not path.exists():
        return []
    profile = load_profile(path)
    queues = team_queues(first_cluster_model(stack))
    out: list[Template] = []
    for i, stream in enumerate(profile["arrivals"]):
        for j, shape in enumerate(stream.get("shapes") or []):
            where = f"whatif/{path.name} arrivals[{i}].shapes[{j}]"
            declared = shape.get("declared") if isinstance(shape, dict) else None
            pod_sets = declared_pod_sets(model(stack), str(declared), where) if declared else shape["podSets"]
            for namespace, queue in sorted(queues):
                if queue != stream.get("queue"):
                    continue
                out.append(
                    Template(
                        f"p{i}-{j}-{namespace}"[:50],
                        namespace,
                        queue,
                        tuple(pod_sets),
                        f"{where} as team {namespace}",
                        str(declared) if declared else None,
                        # another team's template goes without the stream's priority class: the
                        # stack's queue policy allows each team only its own (queue_admission.py)
                        stream.get("priorityClass") if namespace == stream.get("namespace") else None,
                    )
                )
    return out


@dataclass(frozen=True)
class FlavorGang:
    """A GPU flavor of a ClusterQueue a team reaches, with the report's *largest gang* in it."""

    cq: ClusterQueue
    namespace: str  # the first team (by namespace) whose LocalQueue reaches the queue
    queue: str
    flavor: str
    gang: Decimal  # GPUs (``preview.report.largest_gang``)
    per_node: int  # GPUs of one node of the flavor's pools


def flavor_gangs(m: StackModel) -> Iterator[FlavorGang]:
    """Every GPU flavor of each ClusterQueue of ``m`` a team's LocalQueue reaches, where the
    report's largest gang is more than nothing."""
    queues = team_queues(m)
    for cq in m.cluster_queues():
        reaching = sorted(k for k, v in queues.items() if v == cq.name)
        if not reaching:
            continue
        namespace, queue = reaching[0]
        for flavor in kueue_capacity.gpu_flavors(cq, GPU):
            gang = largest_gang(m, cq, flavor, quota_figures(m, cq, flavor)[2])
            if gang:
                per_node = max((c.gpus_per_node or 0 for c in flavor_pools(m, flavor)), default=0) or 1
                yield FlavorGang(cq, namespace, queue, flavor, gang, per_node)


def gang_templates(stack: str) -> list[Template]:
    """Per GPU flavor of each ClusterQueue of the first cluster a team's LocalQueue reaches: a
    gang of the report's *largest gang* in pods of one node's GPUs, and that plus one pod."""
    out: list[Template] = []
    for g in flavor_gangs(first_cluster_model(stack)):
        fits = int(g.gang // Decimal(g.per_node))
        for count, what in ((fits, "largest gang"), (fits + 1, "largest gang + one pod")):
            if count < 1:
                continue
            pod_set = {"name": "main", "count": count, "requests": {"cpu": "1", GPU: str(g.per_node)}}
            out.append(
                Template(
                    f"g-{g.cq.name}-{g.flavor}-{count}"[:50].rstrip("-"),
                    g.namespace,
                    g.queue,
                    (pod_set,),
                    f"{what} of {g.cq.name}/{g.flavor} ({g.gang} GPUs in the report; "
                    f"{count} x {g.per_node} GPUs) as team {g.namespace}",
                )
            )
    return out


def templates(stack: str) -> list[Template]:
    return [*profile_templates(stack), *gang_templates(stack)]


def expected(stack: str, template: Template) -> Verdict:
    """The what-if's verdict on ``template`` alone on the empty stack."""
    entry: dict[str, Any] = {
        "name": template.name,
        "namespace": template.namespace,
        "queue": template.queue,
        "submit": 0,
        "duration": RUN_SECONDS,
        "podSets": list(template.pod_sets),
    }
    if template.priority_class:
        entry["priorityClass"] = template.priority_class
    doc: dict[str, Any] = {"workloads": [entry]}
    path = profile_path(stack)
    if path.exists():
        profile = load_profile(path)
        doc.update({k: profile[k] for k in DELAY_KEYS if k in profile})
    try:
        result = simulate(model(stack), parse_trace(doc), fleet=fleet(list(records(stack))))
    except NotModelledError as error:
        return Verdict(False, not_modelled=str(error))
    reason = None
    for event in result["events"]:
        if event["event"] == "inadmissible":
            reason = str(event.get("reason"))
        if event["event"] == "admitted":
            flavors = tuple(
                (ps, tuple(sorted(res.items()))) for ps, res in sorted((event.get("flavors") or {}).items())
            )
            ran_on = (
                (result.get("multiKueue") or {}).get("teams", {}).get(template.namespace, {}).get("ranOn")
            )
            worker = next(iter(ran_on), None) if ran_on else None
            return Verdict(True, event["clusterQueue"], flavors, worker=worker)
    return Verdict(False, reason=reason)
