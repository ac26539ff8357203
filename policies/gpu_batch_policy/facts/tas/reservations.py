"""How many nodes one block or sub-block domain holds, from a reservation's declared size.

GCE carves dense GPU capacity into blocks and sub-blocks; GKE copies the node's place into the
``cloud.google.com/gce-topology-block`` / ``-subblock`` labels Kueue's TAS builds its domains
from.  A node pool consumes a reservation through ``nodeConfig.reservationAffinity.values``: a
name, or ``projects/<p>/reservations/NAME/reservationBlocks/B[/reservationSubBlocks/S]``
(GoogleCloudPlatform/cluster-toolkit v1.95.0 ``modules/compute/gke-node-pool/
reservation_definitions.tf``; xpk writes the same paths).  No GKE resource input carries the size
of a block or a sub-block: GCE reports it only as output (Compute API ``reservationBlocks.count``,
"number of resources allocated in this reservation block"; ``reservationSubBlocks.count``, "number
of hosts allocated in this reservation subBlock"; the reservation's own
``specificReservation.count``, machines).  So the stack declares it in the policy config, under
``kueue-tas-gang-fits-domain``'s ``reservations`` property, keyed as the pool writes it:

``{"reservations": {"NAME": {"count": 32, "blockNodes": 16, "subBlockNodes": 4},
"NAME/reservationBlocks/B": {"count": 16}}}``

- ``count``: machines in what the key names (the reservation, the block or the sub-block);
- ``blockNodes`` / ``subBlockNodes``: nodes per block / sub-block of the reservation.

One fact is fixed by the machine type: an A4X sub-block is one NVLink domain of 18 A4X machines
(72 GPUs): Google Cloud AI Hypercomputer docs, "Terminology" ("An NVLink domain, also known as a
sub-block, ... consists of 18 A4X Max or A4X instances (72 GPUs)").  For A3 Ultra and A4 the
docs define a sub-block only as "a group of hosts ... on a single rack", with no fixed count, so
it must be declared.

A domain's node count is the smallest bound that applies (a block of the reservation cannot hold
more of its nodes than the reservation has); no bound: None, "cannot tell", never a pass.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from ...primitives.values import Unknown, as_list
from ..model import NodePool
from .levels import BLOCK, SUBBLOCK

PROPERTY: Final = "reservations"
A4X_SUBBLOCK_NODES: Final = 18
"""A4X machines in one sub-block (= one NVLink domain), AI Hypercomputer "Terminology"."""

_SIZE_KEYS: Final = {"count": "count", "blockNodes": "block_nodes", "subBlockNodes": "subblock_nodes"}
_NAME = r"[a-z]([-a-z0-9]*[a-z0-9])?"
KEY_PATTERN: Final = rf"^{_NAME}(/reservationBlocks/{_NAME}(/reservationSubBlocks/{_NAME})?)?$"

SCHEMA: Final[dict[str, Any]] = {
    PROPERTY: {
        "type": "object",
        "default": {},
        "description": "Declared sizes of the GCE reservations node pools consume, keyed by reservation "
        "name or NAME/reservationBlocks/B[/reservationSubBlocks/S]: count (machines in it), "
        "blockNodes, subBlockNodes (nodes per block / sub-block).",
        "propertyNames": {"pattern": KEY_PATTERN},
        "additionalProperties": {
            "type": "object",
            "properties": {key: {"type": "integer", "minimum": 1} for key in _SIZE_KEYS},
            "minProperties": 1,
            "additionalProperties": False,
        },
    }
}
"""The JSON schema of the property; the engine and the offline preview reject a config failing it
with one line naming the key, before any rule runs."""

_PATH = re.compile(
    r"^(?:projects/[^/]+/reservations/)?"
    r"(?P<path>[^/]+(?:/reservationBlocks/[^/]+(?:/reservationSubBlocks/[^/]+)?)?)$"
)


@dataclass(frozen=True)
class ReservationSize:
    """What the config declares for one key (each None: not declared)."""

    count: int | None = None
    block_nodes: int | None = None
    subblock_nodes: int | None = None


def declared_sizes(config: Mapping[str, Any] | None) -> dict[str, ReservationSize]:
    """The ``reservations`` property as sizes; entries the schema would reject are left out here
    (the schema refuses them with a message first)."""
    raw = (config or {}).get(PROPERTY)
    out: dict[str, ReservationSize] = {}
    if not isinstance(raw, Mapping):
        return out
    for key, entry in raw.items():
        if not isinstance(key, str) or not isinstance(entry, Mapping):
            continue
        values = {
            field: value
            for name, field in _SIZE_KEYS.items()
            if isinstance(value := entry.get(name), int) and not isinstance(value, bool) and value >= 1
        }
        out[key] = ReservationSize(**values)
    return out


def pool_reservation(pool: NodePool) -> str | Unknown | None:
    """The reservation path the pool consumes (``NAME[/reservationBlocks/B[/...]]``, project
    prefix dropped); None when it consumes no specific reservation."""
    if pool.reservation_affinity != "SPECIFIC_RESERVATION":
        return pool.reservation_affinity if isinstance(pool.reservation_affinity, Unknown) else None
    values = as_list(pool.res.get("nodeConfig", "reservationAffinity", "values"))
    if isinstance(values, Unknown):
        return values
    first = values[0] if values else None
    if isinstance(first, Unknown):
        return first
    match = _PATH.match(first) if isinstance(first, str) else None
    return match.group("path") if match else None


def _nodes(path: str, level: str, sizes: Mapping[str, ReservationSize]) -> list[int]:
    """Bounds on one ``level`` domain's nodes of a pool consuming ``path``."""
    parts = path.split("/")
    name, block, subblock = parts[0], "/".join(parts[:3]), "/".join(parts[:5])
    whole = sizes.get(name, ReservationSize())
    bounds = [whole.count, whole.block_nodes]
    if level == SUBBLOCK:
        bounds.append(whole.subblock_nodes)
    if len(parts) >= 3:  # the pool's nodes all sit in this block
        at_block = sizes.get(block, ReservationSize())
        bounds += [at_block.count, at_block.block_nodes]
        if level == SUBBLOCK:
            bounds.append(at_block.subblock_nodes)
    if len(parts) == 5:  # ... and in this sub-block
        bounds.append(sizes.get(subblock, ReservationSize()).count)
    return [b for b in bounds if b is not None]


def domain_nodes(pool: NodePool, level: str, sizes: Mapping[str, ReservationSize]) -> int | None:
    """Nodes of ``pool`` one ``level`` (block or sub-block) domain can hold; None: cannot tell."""
    if level not in (BLOCK, SUBBLOCK):
        return None
    bounds: list[int] = []
    if level == SUBBLOCK and pool.machine_type == "a4x-highgpu-4g":
        bounds.append(A4X_SUBBLOCK_NODES)
    path = pool_reservation(pool)
    if isinstance(path, str):
        bounds += _nodes(path, level, sizes)
    return min(bounds) if bounds else None
