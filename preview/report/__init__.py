"""``build/<stack>/report.md``: the capacity report a reviewer reads in the pull request.

Per queue it answers the questions reviewers otherwise work out by hand from YAML: how much
GPU quota the queue owns, how much more it can borrow, the largest gang it can ever admit, and
which node pools stand behind its flavors with what GPU capacity; then the queue hierarchy as a
Mermaid diagram and the policy results.

The arithmetic is the policy pack's own (``gpu_batch_policy``: the stack model, ``can_get``,
pool selection and capacity), so the report and the rules can never disagree about a number.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from decimal import Decimal
from typing import Any

from gpu_batch_policy.facts import kueue_capacity, kueue_reach, pools
from gpu_batch_policy.facts.demand import CannotTellError
from gpu_batch_policy.facts.fit.placement import pool_allocatable
from gpu_batch_policy.facts.fit.resources import Resources
from gpu_batch_policy.facts.fit.system_load import PoolLoad, system_loads
from gpu_batch_policy.facts.kueue_capacity import InvalidQuotaError
from gpu_batch_policy.facts.model import ClusterQueue, StackModel
from gpu_batch_policy.facts.tas.reservations import ReservationSize
from gpu_batch_policy.primitives.values import Unknown

from preview.analyzer import AnalysisResult, Diagnostic, in_display_order
from preview.records import RecordedResource, by_urn
from preview.report.gpu_sharing import fraction_section, gpu_stack_cell
from preview.report.monitoring import monitoring_section
from preview.report.multikueue import cluster_subsets, multikueue_section
from preview.report.network import network_section
from preview.report.tenancy import tenancy_section
from preview.report.training import GANG_FITS_RULE, reservation_sizes, training_section

GPU = "nvidia.com/gpu"
UNKNOWN = "unknown until apply"


def stack_model(resources: Iterable[RecordedResource]) -> StackModel:
    """The pack's model of the recorded resources (wire form: unknowns and secrets understood)."""
    return StackModel.from_plain((r.type, r.inputs, r.urn, r.name) for r in by_urn(resources))


def _fmt(value: Decimal | int | None) -> str:
    if value is None:
        return UNKNOWN
    number = Decimal(value)
    return f"{number.normalize():f}" if number == number.to_integral() else f"{number:f}"


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _table(header: Sequence[str], rows: Iterable[Sequence[object]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines.extend("| " + " | ".join(_cell(c) for c in row) + " |" for row in rows)
    return lines


def markdown_table(header: Sequence[str], rows: Iterable[Sequence[object]]) -> list[str]:
    """The report's Markdown table, for sections built outside this module (preview/cost)."""
    return _table(header, rows)


def _resources(value: Resources | None) -> str:
    return UNKNOWN if value is None else value.describe()


def _system_pool_rows(model: StackModel) -> Iterator[list[object]]:
    """Requested vs allocatable of the always-on workloads per pool set (the pack's own sums, see
    ``fit/system_load.py``); CPU pools no such workload uses are listed with nothing requested."""
    loads = system_loads(model)
    used = {id(p) for load in loads for p in load.pools}
    idle = [PoolLoad((p,)) for p in model.node_pools() if id(p) not in used and p.gpus_per_node() == 0]
    for load in loads + idle:
        if load.allocatable is None and not load.unknown:
            nodes = load.pools[0].max_nodes(model.cluster_of(load.pools[0]))
            room = pool_allocatable(load.pools[0])
            if isinstance(nodes, int) and isinstance(room, Resources):
                load.max_nodes, load.allocatable = nodes, room.times(nodes)
        verdict = {True: "fits", False: "**does not fit**", None: "cannot tell yet"}[load.fits]
        per_node = [pool_allocatable(p) for p in load.pools]
        yield [
            load.describe_pools(),
            _fmt(load.max_nodes),
            "; ".join(r.describe() if isinstance(r, Resources) else UNKNOWN for r in per_node),
            load.requested.describe(),
            _resources(load.allocatable),
            verdict,
        ]


def system_pool_section(model: StackModel) -> list[str]:
    """The "System pool" section: always-on requests vs allocatable per pool set."""
    rows = list(_system_pool_rows(model))
    if not rows:
        return []
    return [
        "### System pool",
        "",
        *_table(
            [
                "pools",
                "max nodes",
                "allocatable per node",
                "always-on requests",
                "allocatable at max",
                "verdict",
            ],
            rows,
        ),
        "",
        "*always-on requests*: Deployments/StatefulSets × replicas plus DaemonSets × nodes that can run "
        "only on these pools; allocatable is machine capacity minus GKE's reserved CPU/memory.",
        "",
    ]


def _pool_rows(model: StackModel) -> Iterator[list[object]]:
    for pool in model.node_pools():
        cap = pools.pool_capacity(model, pool)
        if not cap.gpus_per_node:
            continue
        mode = (
            "queued provisioning"
            if pool.res.get("queuedProvisioning", "enabled") is True
            else (
                "flex-start"
                if pool.res.get("nodeConfig", "flexStart") is True
                else ("spot" if pool.res.get("nodeConfig", "spot") is True else "on-demand / reservation")
            )
        )
        yield [
            pool.name,
            pool.res.get("nodeConfig", "machineType"),
            cap.gpus_per_node,
            _fmt(cap.max_nodes),
            _fmt(cap.max_gpus),
            mode,
            gpu_stack_cell(model, pool),
        ]


def flavor_pools(model: StackModel, flavor_name: str) -> list[pools.PoolCapacity]:
    found = model.find_resource_flavor(flavor_name)[1]
    if found is None:
        return []
    selection = pools.select(model.node_pools(), found.node_labels)
    capacities = (pools.pool_capacity(model, p) for p in selection.possible)
    return [c for c in capacities if c.gpus_per_node]


def largest_gang(
    model: StackModel, cq: ClusterQueue, flavor: str, obtainable: Decimal | None
) -> Decimal | None:
    """GPUs one workload can get in ``flavor``: quota-bound, then capacity-bound.

    With a queued-provisioning check GKE scales one pool per request, so the bound is the biggest
    single pool; otherwise it is every pool the flavor selects together.
    """
    if obtainable is None:
        return None
    behind = flavor_pools(model, flavor)
    capacities = [c.max_gpus for c in behind]
    if not behind or any(c is None for c in capacities):
        return obtainable
    known = [Decimal(c) for c in capacities if c is not None]
    try:
        queued = any(check.queued for check in kueue_capacity.provisioning_checks(model, cq, flavor))
    except CannotTellError:
        return None
    bound = max(known) if queued else sum(known, Decimal(0))
    return min(obtainable, bound)


def quota_figures(
    model: StackModel, cq: ClusterQueue, flavor: str
) -> tuple[Decimal | None, Decimal | None, Decimal | None]:
    """Nominal GPUs, borrowable GPUs and their sum for ``cq`` in ``flavor``; None = cannot tell."""
    entry = cq.quota_entry(flavor, GPU)
    try:
        nominal = Decimal(0) if entry is None else kueue_capacity.value_of(entry.nominal_quota, "nominal")
        borrow = kueue_capacity.borrowable(model, cq, flavor, GPU) if cq.cohort else Decimal(0)
    except (CannotTellError, InvalidQuotaError):
        return None, None, None
    return nominal, borrow, nominal + borrow


def _cluster_queue_rows(model: StackModel) -> Iterator[list[object]]:
    local: dict[str | None, list[str]] = {}
    for lq in model.local_queues():
        target = lq.cluster_queue if isinstance(lq.cluster_queue, str) else None
        local.setdefault(target, []).append(f"{lq.namespace}/{lq.name}")
    for cq in model.cluster_queues():
        cohort = cq.cohort if isinstance(cq.cohort, str) else ("-" if cq.cohort is None else UNKNOWN)
        for flavor in kueue_capacity.gpu_flavors(cq, GPU):
            if isinstance(flavor, Unknown):
                continue
            nominal, borrow, obtainable = quota_figures(model, cq, flavor)
            # A queue no namespace can submit to holds no usable capacity (facts.kueue_reach).
            # A slack queue's quota still counts in its peers' borrow column (kueue_reach.lent_to).
            unreachable = kueue_reach.reach(model, cq)
            note = ""
            if unreachable.reachable is False:
                nominal, borrow, obtainable = Decimal(0), Decimal(0), Decimal(0)
                lent = kueue_reach.lent_to(model, cq, GPU).borrowers
                note = f" (unreachable: {unreachable.why}" + (
                    f"; lent to {', '.join(lent)})" if lent else ")"
                )
            behind = ", ".join(
                f"{c.pool.name} ({_fmt(c.max_gpus)} GPUs)" for c in flavor_pools(model, flavor)
            )
            yield [
                cq.name,
                cohort,
                flavor,
                _fmt(nominal),
                _fmt(borrow),
                _fmt(largest_gang(model, cq, flavor, obtainable)),
                behind or "-",
                (", ".join(sorted(local.get(cq.name, []))) or "-") + note,
            ]


def _kai_amount(value: float | Unknown | None, unset: str) -> str:
    """A KAI queue number as reviewers read it: -1 is unlimited (KAI's convention)."""
    if value is None:
        return unset
    if isinstance(value, Unknown):
        return UNKNOWN
    return "unlimited" if value == -1 else _fmt(Decimal(str(value)))


def _kai_rows(model: StackModel) -> Iterator[list[object]]:
    for queue in model.kai_queues():
        resources = queue.resources if isinstance(queue.resources, dict) else {}
        gpu = resources.get("gpu")
        parent = queue.parent_queue if isinstance(queue.parent_queue, str) else "-"
        if gpu is None:
            yield [queue.name, parent, "-", "none (unset: no GPUs allowed)", "-"]
            continue
        yield [
            queue.name,
            parent,
            _kai_amount(gpu.quota, "0"),
            # An unset limit admits nothing for that resource (kai-kuberay-skypilot.md §1.5).
            _kai_amount(gpu.limit, "none (unset: no GPUs allowed)"),
            _kai_amount(gpu.over_quota_weight, "1"),
        ]


def _node_id(kind: str, name: str) -> str:
    return f"{kind}_{''.join(ch if ch.isalnum() else '_' for ch in name)}"


def mermaid(model: StackModel) -> list[str]:
    """The queue hierarchy: cohorts -> ClusterQueues -> LocalQueues, and KAI parents -> children."""
    lines = ["```mermaid", "flowchart TD"]
    for cohort in model.cohorts():
        lines.append(f'  {_node_id("co", cohort.name)}["Cohort {cohort.name}"]')
        if isinstance(cohort.parent, str) and cohort.parent:
            lines.append(f"  {_node_id('co', cohort.parent)} --> {_node_id('co', cohort.name)}")
    declared = {c.name for c in model.cohorts()}
    for cq in model.cluster_queues():
        lines.append(f'  {_node_id("cq", cq.name)}["ClusterQueue {cq.name}"]')
        if isinstance(cq.cohort, str) and cq.cohort:
            if cq.cohort not in declared:
                declared.add(cq.cohort)
                lines.append(f'  {_node_id("co", cq.cohort)}["Cohort {cq.cohort}"]')
            lines.append(f"  {_node_id('co', cq.cohort)} --> {_node_id('cq', cq.name)}")
    for lq in model.local_queues():
        node = _node_id("lq", f"{lq.namespace}/{lq.name}")
        lines.append(f'  {node}["LocalQueue {lq.namespace}/{lq.name}"]')
        if isinstance(lq.cluster_queue, str):
            lines.append(f"  {_node_id('cq', lq.cluster_queue)} --> {node}")
    for queue in model.kai_queues():
        lines.append(f'  {_node_id("kai", queue.name)}["KAI queue {queue.name}"]')
        if isinstance(queue.parent_queue, str) and queue.parent_queue:
            lines.append(f"  {_node_id('kai', queue.parent_queue)} --> {_node_id('kai', queue.name)}")
    lines.append("```")
    return lines if len(lines) > 3 else []


def _finding_rows(diagnostics: Sequence[Diagnostic]) -> Iterator[list[object]]:
    for d in in_display_order(diagnostics):
        level = "cannot check yet" if d.cannot_check else d.level
        where = f"{d.resource_type} '{d.resource_name}'" if d.resource_type else "(stack)"
        yield [level, d.policy_name, where, d.message.splitlines()[0] if d.message else ""]


def what_if_section(
    stack: str, resources: Sequence[RecordedResource], model: StackModel | None = None
) -> list[str]:
    """The What-if section (issue 14): Kueue admission simulated under the stack's load profile.
    ``model``: the pack's model of ``resources`` when the caller has built it already."""
    from whatif.section import section_lines

    return section_lines(
        stack,
        ((r.type, r.inputs, r.urn, r.name, r.provider or "", tuple(r.dependencies)) for r in resources),
        model,
    )


def render_report(stack: str, resources: Sequence[RecordedResource], analysis: AnalysisResult | None) -> str:
    rule = analysis.config.get(GANG_FITS_RULE) if analysis is not None else None
    policy_config = {GANG_FITS_RULE: rule.properties} if rule is not None else None
    return "\n".join([*capacity_sections(stack, resources, policy_config), *policy_section(analysis)])


def capacity_sections(
    stack: str, resources: Sequence[RecordedResource], policy_config: Mapping[str, Any] | None = None
) -> list[str]:
    """Every section but the policy results: what the stack plans, which needs no pack answer
    (so the preview writes it while the pack still runs ``AnalyzeStack``).  A program reaching
    several clusters gets the sections once per cluster, then which workers take which gangs.
    ``policy_config`` (the ``--policy-pack-config`` object) gives the declared reservation sizes.

    Every section reads the resources in URN order: registration order varies from run to run
    (``preview.records.by_urn``), and a section listing rows as it meets them (the network
    section's firewall rules, for one: gpudirect's five GPU-network rules came out in another
    order every few runs) would make ``report.md`` differ between two previews of one program."""
    resources = by_urn(resources)
    clusters = cluster_subsets(resources)
    reservations = reservation_sizes(policy_config)
    if len(clusters) < 2:
        model = stack_model(resources)  # one model for the sections and the what-if (~1 s at 1,000 teams)
        return [
            f"## gpu-batch capacity report: `{stack}`",
            "",
            *_cluster_sections(resources, model, reservations),
            *what_if_section(stack, resources, model),
        ]
    out = [f"## gpu-batch capacity report: `{stack}` ({len(clusters)} clusters)", ""]
    models = {id(subset): stack_model(subset) for _, subset in clusters}  # one per cluster, used twice
    for title, subset in clusters:
        out += [f"## {title}", "", *_cluster_sections(subset, models[id(subset)], reservations)]
    out += multikueue_section(clusters, lambda subset: _gang_rows(models[id(subset)]), _table)
    out += what_if_section(stack, resources)
    return out


def _gang_rows(model: StackModel) -> dict[str, tuple[str, str]]:
    """Per ClusterQueue: (largest gang in GPUs, pools behind) over its GPU flavors."""
    out: dict[str, tuple[str, str]] = {}
    for row in _cluster_queue_rows(model):
        name, gang, behind = str(row[0]), str(row[5]), str(row[6])
        previous = out.get(name)
        out[name] = (
            (gang, behind) if previous is None else (f"{previous[0]}, {gang}", f"{previous[1]}, {behind}")
        )
    return out


def _cluster_sections(
    resources: Sequence[RecordedResource], model: StackModel, reservations: Mapping[str, ReservationSize]
) -> list[str]:
    """The capacity sections of one cluster's resources (``model``: :func:`stack_model` of them)."""
    out: list[str] = []
    pool_rows = list(_pool_rows(model))
    if pool_rows:
        out += ["### GPU node pools", ""]
        out += _table(
            [
                "pool",
                "machine",
                "GPUs/node",
                "max nodes",
                "GPU capacity",
                "provisioning",
                "driver + device plugin",
            ],
            pool_rows,
        )
        out += [
            "",
            "*GPUs/node* and *GPU capacity* count `nvidia.com/gpu` as the node advertises them: with GKE "
            "time-sharing or MPS each physical GPU is that many units (shared, not isolated).",
            "",
        ]
    out += system_pool_section(model)
    out += network_section(resources, _table)
    out += training_section(model, _table, reservations)
    out += tenancy_section(resources, _table)
    cq_rows = list(_cluster_queue_rows(model))
    if cq_rows:
        out += ["### Kueue ClusterQueues (GPUs)", ""]
        out += _table(
            [
                "ClusterQueue",
                "cohort",
                "flavor",
                "nominal",
                "can borrow",
                "largest gang",
                "pools behind the flavor",
                "LocalQueues",
            ],
            cq_rows,
        )
        out += [
            "",
            "*largest gang*: the most GPUs one workload can be admitted with in that flavor -- "
            "nominal + borrowable, bounded by the pools behind the flavor (one pool when a "
            "queued-provisioning check applies: GKE scales one pool per request).",
            "",
        ]
    out += fraction_section(model, _table)
    kai_rows = list(_kai_rows(model))
    if kai_rows:
        out += ["### KAI queues (GPUs)", ""]
        out += _table(["queue", "parent", "quota", "limit", "over-quota weight"], kai_rows)
        out.append("")
    diagram = mermaid(model)
    if diagram:
        out += ["### Queue hierarchy", "", *diagram, ""]
    out += monitoring_section(model, resources, _table)
    return out


def policy_section(analysis: AnalysisResult | None) -> list[str]:
    """The pack's verdict and findings, in a stable order."""
    out = ["### Policy results", ""]
    if analysis is None:
        out += ["The policy pack was not run (`--no-policy`).", ""]
    else:
        verdict = "**failed**" if analysis.mandatory else "passed"
        out.append(
            f"Policy pack `{analysis.pack_name}` {verdict}: {len(analysis.policies)} policies, "
            f"{len(analysis.mandatory)} mandatory and {len(analysis.diagnostics) - len(analysis.mandatory)} other findings."
        )
        out.append("")
        if analysis.diagnostics:
            out += _table(["level", "rule", "resource", "message"], _finding_rows(analysis.diagnostics))
            out.append("")
    return out
