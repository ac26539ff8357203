"""``kueue-tas-sparse-capacity`` (advisory): GKE's TAS guide ("TAS works best with densely placed
capacity, which can be obtained through reservations. With Flex-start VMs or Spot VMs, your
capacity is less likely to allocated close together") on a TAS flavor with block / sub-block
levels; compact placement or a specific reservation makes the pool dense."""

from __future__ import annotations

from typing import Any

from gpu_batch_policy.facts.tas.levels import HOSTNAME
from pulumi_policy import EnforcementLevel

from tests.policies.pack_harness import Res, run, run_all
from tests.policies.pack_harness import policy as get_policy
from tests.policies.pack_objects import k8s
from tests.policies.rules.test_kueue_tas import flavor, pool, topology

RULE = get_policy("kueue-tas-sparse-capacity")
RESERVED = {
    "consumeReservationType": "SPECIFIC_RESERVATION",
    "key": "compute.googleapis.com/reservation-name",
    "values": ["res-a"],
}


def tas(p: Res) -> list[str]:
    return run(RULE, [p, topology(), flavor(p.name)]).messages


def with_top(p: Res, **top: Any) -> Res:
    p.props.update(top)
    return p


def test_spot_flex_start_queued_and_unreserved_on_demand_are_flagged() -> None:
    for p, why in [
        (pool(spot=True), "Spot VMs"),
        (pool(preemptible=True), "Spot VMs"),
        (pool(flexStart=True), "flex-start VMs"),
        (with_top(pool(), queuedProvisioning={"enabled": True}), "flex-start VMs"),
        (pool(reservationAffinity={"consumeReservationType": "NO_RESERVATION"}), "on-demand VMs with no"),
    ]:
        found = tas(p)
        assert len(found) == 1 and why in found[0] and "gce-topology-block" in found[0], (p.props, found)
    assert RULE.enforcement_level == EnforcementLevel.ADVISORY


def test_compact_placement_or_a_reservation_is_dense() -> None:
    assert tas(with_top(pool(spot=True), placementPolicy={"type": "COMPACT"})) == []
    assert tas(pool(reservationAffinity=RESERVED)) == []
    # ANY_RESERVATION / unset may consume a reservation: not flagged.
    assert tas(pool()) == []


def test_a_hostname_only_topology_does_not_care_about_density() -> None:
    nodes = k8s("kueue.x-k8s.io/v1beta2", "Topology", "nodes", spec={"levels": [{"nodeLabel": HOSTNAME}]})
    assert run(RULE, [pool(spot=True), nodes, flavor("a3mega", "nodes")]).clean


def test_the_fixture_fires_exactly_this_rule() -> None:
    spot = [pool(spot=True), topology(), flavor("a3mega")]
    reserved = [pool(reservationAffinity=RESERVED), topology(), flavor("a3mega")]
    fired = {name for name, result in run_all(spot).items() if result.violations}
    clean = {name for name, result in run_all(reserved).items() if result.violations}
    assert fired - clean == {"kueue-tas-sparse-capacity"}
