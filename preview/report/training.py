"""The report's "Multi-node training" section: GPU networking per pool and TAS domains per flavor.

Per GPU pool: which GPUDirect stack its nodes get (TCPX, TCPXO, RDMA, or none), from the machine
type's profile (``gpu_batch_policy.facts.gpudirect.profiles``) and the pool's
``networkConfig.additionalNodeNetworkConfigs``; how many extra NICs; and a flag on an A3/A4
pool with GPU NICs that declares none, where NCCL between nodes runs over TCP on the one gVNIC.

Per TAS flavor: its Topology's levels and, at each level, the largest gang one domain holds where
that is known from the machine type (``gpu_batch_policy.facts.tas.domains``: a host = one node's GPUs,
an A4X node pool = one 72-GPU NVLink domain, an A4X sub-block 18 nodes); a block or sub-block from
the reservation sizes the stack declares in its policy config (``kueue-tas-gang-fits-domain``'s
``reservations``, :mod:`gpu_batch_policy.facts.tas.reservations`), else "cannot tell", never a pass.
Same arithmetic and the same config as the pack's ``kueue-tas-gang-fits-domain``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from gpu_batch_policy.facts.gpudirect.profiles import profile_for
from gpu_batch_policy.facts.model import StackModel
from gpu_batch_policy.facts.tas.domains import domain_gpus, tas_flavors
from gpu_batch_policy.facts.tas.reservations import ReservationSize, declared_sizes
from gpu_batch_policy.primitives.values import Unknown
from gpu_batch_policy.rules.gpudirect.networking import extra_nics

from preview.report.gpu_sharing import Table

GANG_FITS_RULE = "kueue-tas-gang-fits-domain"
TCP_FALLBACK = "multi-node gangs run NCCL over TCP on the single gVNIC (no GPUDirect networks)"


def _pool_rows(model: StackModel) -> Iterator[list[object]]:
    for pool in sorted(model.node_pools(), key=lambda p: p.name):
        machine = pool.machine_type
        gpus = pool.gpus_per_node()
        if not isinstance(gpus, int) or gpus == 0 or not isinstance(machine, str):
            continue
        profile = profile_for(machine)
        nics = extra_nics(pool)
        if isinstance(nics, Unknown):
            yield ["cannot tell yet", pool.name, machine, "?", ""]
            continue
        stack = profile.stack if profile is not None and nics else "none"
        flag = TCP_FALLBACK if profile is not None and not nics and gpus == 8 else ""
        if profile is not None and nics and len(nics) != profile.nic_count:
            flag = f"{len(nics)} of the machine's {profile.nic_count} GPU NICs attached"
        yield [stack, pool.name, machine, len(nics), flag]


def reservation_sizes(policy_config: Mapping[str, Any] | None) -> dict[str, ReservationSize]:
    """The reservation sizes a ``--policy-pack-config`` object declares for the gang-fits rule."""
    entry = (policy_config or {}).get(GANG_FITS_RULE)
    return declared_sizes(entry if isinstance(entry, Mapping) else None)


def _flavor_rows(model: StackModel, reservations: Mapping[str, ReservationSize]) -> Iterator[list[object]]:
    for flavor, levels in sorted(tas_flavors(model), key=lambda f: f[0].name):
        if levels is None:
            yield [flavor.name, flavor.topology_name, "Topology not in this stack", ""]
            continue
        sizes = []
        for level in levels:
            size = domain_gpus(model, flavor, level, reservations)
            sizes.append(f"{level.rsplit('/', 1)[-1]}: {size if size is not None else 'cannot tell'}")
        yield [flavor.name, flavor.topology_name, " > ".join(levels), "; ".join(sizes)]


def training_section(
    model: StackModel, table: Table, reservations: Mapping[str, ReservationSize] | None = None
) -> list[str]:
    """The section; empty when the stack has neither GPU pools nor TAS flavors."""
    pools = list(_pool_rows(model))
    flavors = list(_flavor_rows(model, reservations or {}))
    if not pools and not flavors:
        return []
    out = ["### Multi-node training: GPU networking and topology", ""]
    if pools:
        out += table(["network stack", "GPU pool", "machine", "extra NICs", "note"], pools)
        out.append("")
    if flavors:
        out += table(
            ["TAS flavor", "Topology", "levels (widest first)", "largest gang in one domain (GPUs)"], flavors
        )
        out += [
            "",
            "A block or sub-block holds as many GPUs as the reservation GCE carved it from: known where "
            f"the policy config declares the reservation's size (`{GANG_FITS_RULE}`: `reservations`) "
            "or for an A4X sub-block (18 nodes), else *cannot tell*, not a pass.",
            "",
        ]
    return out
