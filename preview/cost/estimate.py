"""Per-queue GPU cost figures (``build/<stack>/cost.json``), from the pack's own stack model.

The quota arithmetic is the capacity report's (``preview.report.quota_figures``: nominal and
borrowable GPUs per flavor, the pack's ``kueue_capacity``), the pools behind a flavor the
report's ``flavor_pools`` (the pack's pool selection), GPUs per node and pool capacity the pack's
``pools.pool_capacity``; so a cost and the capacity table never disagree about a GPU.

Per ClusterQueue and GPU flavor: the GPU-hour price (node-hour price / GPUs per node) of the
pools behind the flavor; the cost per hour at the nominal quota and at the borrowing ceiling
(nominal + borrowable); the quota beyond what the pools can ever hold (``maxNodes`` x GPUs per
node, summed over the pools) in money.  A flavor whose pools have no price, or several different
ones, is unpriced (``None``) and its queue's total is marked incomplete.  A flavor served only
by reservation pools is ``committed``: capacity already paid for, not new spend.
KAI queues are priced likewise from every GPU pool of the stack (KAI has no flavors).
The expected week (``expected_week``): the what-if's GPU-hours per flavor (``preview.cost.usage``:
Kueue's per assigned flavor, KAI's per queue), each at its own flavor's GPU-hour price.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

from gpu_batch_policy.facts import kueue_capacity, pools
from gpu_batch_policy.facts.model import StackModel
from gpu_batch_policy.facts.model.gke import NodePool
from gpu_batch_policy.primitives.values import Unknown

from preview.cost.prices import ClusterFee, Price, cluster_fee, region_of
from preview.cost.usage import KAI_FLAVOR, Weekly, WeeklyUse, weekly_use
from preview.report import GPU, flavor_pools, quota_figures
from whatif.errors import WhatIfError
from whatif.kai.model import KaiCluster, build_kai
from whatif.kai.results import gpu_capacity as kai_gpu_capacity

SCHEMA = "gpu-batch/cost/v1"
HOURS_PER_WEEK = 168


def pricing_model(pool: NodePool) -> str:
    """How GCP bills the pool's nodes (components/gpu_pool.py writes these inputs)."""
    if (
        pool.res.get("queuedProvisioning", "enabled") is True
        or pool.res.get("nodeConfig", "flexStart") is True
    ):
        return "flex-start"
    if pool.res.get("nodeConfig", "spot") is True:
        return "spot"
    affinity = pool.res.get("nodeConfig", "reservationAffinity", "consumeReservationType")
    return "reservation" if affinity == "SPECIFIC_RESERVATION" else "on-demand"


def _pool_price(
    model: StackModel, capacity: pools.PoolCapacity, prices: Mapping[tuple[str, str, str], Price]
) -> tuple[dict[str, Any], Price | None]:
    pool = capacity.pool
    machine = pool.res.get("nodeConfig", "machineType")
    location = pool.res.get("location")
    if not isinstance(location, str):
        cluster = model.cluster_of(pool)
        location = cluster.res.get("location") if cluster is not None else None
    region = region_of(location) if isinstance(location, str) else None
    how = pricing_model(pool)
    price = _lookup(prices, machine, region, how) if isinstance(machine, str) and region else None
    described = {
        "pool": pool.name,
        "machineType": machine if isinstance(machine, str) else None,
        "region": region,
        "provisioning": how,
        "gpusPerNode": capacity.gpus_per_node,
        "maxNodes": capacity.max_nodes,
        "price": price.cited() if price is not None else None,
    }
    return described, price


def _lookup(
    prices: Mapping[tuple[str, str, str], Price], machine: str, region: str, how: str
) -> Price | None:
    """The price of the pool's own provisioning model; a reservation without one of its own is
    billed at the on-demand rate of what it reserves (Compute Engine "About reservations",
    https://cloud.google.com/compute/docs/instances/reservations-overview: "reserved resources
    are charged at the same on-demand rates as running VMs"), shown as committed cost."""
    price = prices.get((machine, region, how))
    if price is None and how == "reservation":
        price = prices.get((machine, region, "on-demand"))
    return price


def _gpu_hour(
    behind: Sequence[tuple[dict[str, Any], Price | None, pools.PoolCapacity]],
) -> tuple[Decimal | None, str | None, str]:
    """One GPU-hour price for the pools, its currency, and why not when there is none."""
    if not behind:
        return None, None, "no GPU pool behind it"
    per_gpu = set()
    for described, price, capacity in behind:
        if price is None:
            return (
                None,
                None,
                f"no price for {described['machineType']} {described['provisioning']} in {described['region']}",
            )
        if not capacity.gpus_per_node:
            return None, None, f"GPUs per node of {described['pool']} unknown"
        per_gpu.add((price.node_hour / capacity.gpus_per_node, price.currency))
    if len(per_gpu) > 1:
        return None, None, "pools behind it have different prices"
    ((value, currency),) = per_gpu
    return value, currency, ""


def _money(gpus: Decimal | None, price: Decimal | None) -> str | None:
    if gpus is None or price is None:
        return None
    return f"{(gpus * price).quantize(Decimal('0.01'))}"


def _flavor_figures(
    model: StackModel, cq: Any, flavor: str, prices: Mapping[tuple[str, str, str], Price]
) -> dict[str, Any]:
    nominal, _borrow, ceiling = quota_figures(model, cq, flavor)
    capacities = flavor_pools(model, flavor)
    behind = [(*_pool_price(model, c, prices), c) for c in capacities]
    price, currency, why = _gpu_hour(behind)
    sizes = [c.max_gpus for c in capacities]
    servable = Decimal(sum(s for s in sizes if s is not None)) if sizes and None not in sizes else None
    unservable = max(Decimal(0), nominal - servable) if nominal is not None and servable is not None else None
    return {
        "flavor": flavor,
        "pools": [d for d, _, _ in behind],
        "committed": bool(behind) and all(d["provisioning"] == "reservation" for d, _, _ in behind),
        "nominalGpus": _num(nominal),
        "ceilingGpus": _num(ceiling),
        "servableGpus": _num(servable),
        "unservableGpus": _num(unservable),
        "gpuHour": f"{price}" if price is not None else None,
        "currency": currency,
        "unpriced": why or None,
        "nominalPerHour": _money(nominal, price),
        "ceilingPerHour": _money(ceiling, price),
        "unservablePerHour": _money(unservable, price),
    }


def _num(value: Decimal | None) -> str | None:
    return None if value is None else f"{value.normalize():f}"


def _totals(flavors: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """A queue's figures: sums of the priced flavors; ``complete`` says whether every one was."""
    return {
        "complete": all(f["gpuHour"] is not None for f in flavors),
        "currency": next((f["currency"] for f in flavors if f["currency"]), None),
        "nominalPerHour": _sum_of(flavors, "nominalPerHour"),
        "ceilingPerHour": _sum_of(flavors, "ceilingPerHour"),
        "unservablePerHour": _sum_of(flavors, "unservablePerHour"),
        "committedPerHour": _sum_of([f for f in flavors if f["committed"]], "nominalPerHour"),
    }


def _sum_of(flavors: Sequence[dict[str, Any]], key: str) -> str | None:
    known = [Decimal(f[key]) for f in flavors if f[key] is not None]
    return f"{sum(known, Decimal(0)).quantize(Decimal('0.01'))}" if known else None


def plan_cost(
    plan: Mapping[str, Any], prices: Mapping[tuple[str, str, str], Price], *, what_if: bool = True
) -> dict[str, Any]:
    """``cost_document`` of a ``plan.json`` (this run's, or a base ref's: both priced alike),
    with the what-if's expected weekly GPU-hours unless ``what_if`` is off."""
    resources = sorted(plan["resources"], key=lambda r: str(r["urn"]))
    items = [(r["type"], r["inputs"], r["urn"], r["name"]) for r in resources]
    model = StackModel.from_plain(items)
    weekly = weekly_use(str(plan["stack"]), lambda: model) if what_if else None
    return cost_document(str(plan["stack"]), model, prices, weekly, cluster_fee())


def cost_document(
    stack: str,
    model: StackModel,
    prices: Mapping[tuple[str, str, str], Price],
    weekly: WeeklyUse | None = None,
    fee: ClusterFee | None = None,
) -> dict[str, Any]:
    """``cost.json``: per queue (its teams = the LocalQueues that submit to it) and flavor, and
    the expected week from ``weekly`` GPU-hours per flavor (the what-if; None: not simulated)."""
    kueue_week = weekly.kueue if weekly is not None else None
    kai_week = weekly.kai if weekly is not None else None
    local: dict[str, list[str]] = {}
    for lq in model.local_queues():
        if isinstance(lq.cluster_queue, str):
            local.setdefault(lq.cluster_queue, []).append(f"{lq.namespace}/{lq.name}")
    queues = []
    for cq in sorted(model.cluster_queues(), key=lambda q: q.name):
        figures = (
            _flavor_figures(model, cq, flavor, prices)
            for flavor in kueue_capacity.gpu_flavors(cq, GPU)
            if not isinstance(flavor, Unknown)
        )
        # A flavor with no GPU quota and nothing to borrow adds nothing to a GPU bill.
        flavors = [f for f in figures if (f["nominalGpus"], f["ceilingGpus"]) != ("0", "0")]
        queues.append(
            {
                "queue": cq.name,
                "scheduler": "kueue",
                "teams": sorted(local.get(cq.name, [])),
                "flavors": flavors,
                **_totals(flavors),
                **expected_week(flavors, None if kueue_week is None else kueue_week.get(cq.name)),
            }
        )
    queues += _kai_queues(model, prices, kai_week)
    return {"schema": SCHEMA, "stack": stack, "queues": queues, "clusterManagement": _management(model, fee)}


def _management(model: StackModel, fee: ClusterFee | None) -> dict[str, Any]:
    """GKE's flat fee for the stack's clusters (every ``gcp:container/cluster:Cluster``, the
    MultiKueue workers too): a stack-wide figure, in no team's row; None without a cited fee."""
    clusters = len(model.gke_clusters())
    return {
        "clusters": clusters,
        "perHour": None if fee is None else f"{(fee.per_cluster_hour * clusters).quantize(Decimal('0.01'))}",
        "price": None if fee is None else fee.cited(),
    }


def expected_week(flavors: list[dict[str, Any]], hours: Mapping[str, Decimal] | None) -> dict[str, Any]:
    """The what-if's GPU-hours for the week per GPU flavor (``hours``; None: not simulated), each
    at its flavor's GPU-hour price, written on the flavor and summed for the queue.  The queue's
    money is known only when every flavor that held GPUs has a price (a week with no GPU use
    needs every flavor priced to say 0): a partial sum would read as the whole bill."""
    if hours is None:
        for flavor in flavors:
            flavor["expectedWeeklyGpuHours"] = flavor["expectedWeekly"] = None
        return {"expectedWeeklyGpuHours": None, "expectedWeekly": None}
    by_name = {f["flavor"]: f for f in flavors}
    money: Decimal | None = Decimal(0)
    for flavor in flavors:
        flavor_hours = hours.get(flavor["flavor"], Decimal(0))
        flavor["expectedWeeklyGpuHours"] = f"{flavor_hours.quantize(Decimal('0.1'))}"
        flavor["expectedWeekly"] = (
            None if flavor["gpuHour"] is None else _money(flavor_hours, Decimal(flavor["gpuHour"]))
        )
    used = {name: h for name, h in hours.items() if h > 0}
    for name, used_hours in used.items():
        price = by_name[name]["gpuHour"] if name in by_name else None
        if price is None or money is None:
            money = None
            continue
        money += used_hours * Decimal(price)
    if not used and not all(f["gpuHour"] is not None for f in flavors):
        money = None
    total = sum(hours.values(), Decimal(0))
    return {
        "expectedWeeklyGpuHours": f"{total.quantize(Decimal('0.1'))}",
        "expectedWeekly": None if money is None else f"{money.quantize(Decimal('0.01'))}",
    }


def _kai_queues(
    model: StackModel, prices: Mapping[tuple[str, str, str], Price], weekly: Weekly | None
) -> list[dict[str, Any]]:
    gpu_pools = [c for c in (pools.pool_capacity(model, p) for p in model.node_pools()) if c.gpus_per_node]
    behind = [(*_pool_price(model, c, prices), c) for c in gpu_pools]
    price, currency, why = _gpu_hour(behind)
    sizes = [c.max_gpus for c in gpu_pools]
    servable = Decimal(sum(s for s in sizes if s is not None)) if sizes and None not in sizes else None
    cluster = _kai_cluster(model) if model.kai_queues() else None
    out = []
    for queue in sorted(model.kai_queues(), key=lambda q: q.name):
        resources = queue.resources if isinstance(queue.resources, dict) else {}
        gpu = resources.get("gpu")
        quota = _kai_amount(gpu.quota if gpu is not None else 0)
        # What the queue can hold: the nodes' GPUs, or less when it or an ancestor has a GPU
        # limit (the KAI what-if's gpu_capacity: KAI v0.17.0's proportion plugin caps a queue's
        # share by the limits on its chain); so an unlimited (-1) queue still has a ceiling.
        ceiling = (
            Decimal(str(kai_gpu_capacity(cluster, queue.name)))
            if cluster is not None and queue.name in cluster.queues
            else None
        )
        unservable = max(Decimal(0), quota - servable) if quota is not None and servable is not None else None
        figures = {
            "flavor": KAI_FLAVOR,
            "pools": [d for d, _, _ in behind],
            "committed": bool(behind) and all(d["provisioning"] == "reservation" for d, _, _ in behind),
            "nominalGpus": _num(quota),
            "ceilingGpus": _num(ceiling),
            "servableGpus": _num(servable),
            "unservableGpus": _num(unservable),
            "gpuHour": f"{price}" if price is not None else None,
            "currency": currency,
            "unpriced": why or None,
            "nominalPerHour": _money(quota, price),
            "ceilingPerHour": _money(ceiling, price),
            "unservablePerHour": _money(unservable, price),
        }
        week = expected_week([figures], None if weekly is None else weekly.get(queue.name))
        out.append(
            {
                "queue": queue.name,
                "scheduler": "kai",
                "teams": [],
                "flavors": [figures],
                **_totals([figures]),
                **week,
            }
        )
    return out


def _kai_cluster(model: StackModel) -> KaiCluster | None:
    try:
        return build_kai(model)
    except WhatIfError:  # a value unknown until apply, or a behaviour the what-if refuses
        return None


def _kai_amount(value: object) -> Decimal | None:
    """A KAI quota; -1 (unlimited: no fixed amount to price) and an unknown are None."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return None if value == -1 else Decimal(str(value))
    return None
