"""Block and sub-block domain sizes from a reservation's declared size (issue 29): the pack's
``kueue-tas-gang-fits-domain`` and the report read the same ``reservations`` policy config.

A pool names its reservation as cluster-toolkit's ``gke-node-pool/reservation_definitions.tf``
renders it (``projects/<p>/reservations/NAME[/reservationBlocks/B[/reservationSubBlocks/S]]``);
GCE reports a block's / sub-block's size only as output (``reservationBlocks.count``,
``reservationSubBlocks.count``), so it is declared; an A4X sub-block is one NVLink domain of 18
machines (AI Hypercomputer "Terminology")."""

from __future__ import annotations

from typing import Any

import jsonschema  # type: ignore[import-untyped]
import pytest
from gpu_batch_policy.facts.tas import annotations as tas
from gpu_batch_policy.facts.tas.levels import BLOCK, HOST, SUBBLOCK
from gpu_batch_policy.facts.tas.reservations import SCHEMA, declared_sizes

from preview.analyzer import AnalyzerError, PolicyInfo, reconcile_config
from tests.policies.pack_harness import Res, run
from tests.policies.pack_harness import policy as get_policy
from tests.policies.rules.test_kueue_tas import flavor, job, pool, topology

RULE = "kueue-tas-gang-fits-domain"


def reserved(path: str, name: str = "a3mega", machine: str = "a3-megagpu-8g") -> Res:
    return pool(
        name,
        machine,
        reservationAffinity={
            "consumeReservationType": "SPECIFIC_RESERVATION",
            "key": "compute.googleapis.com/reservation-name",
            "values": [path],
        },
    )


def fits(resources: list[Res], config: dict[str, Any] | None = None) -> list[str]:
    return run(get_policy(RULE), resources, config).messages


def stack(p: Res, annotations: dict[str, str], pods: int) -> list[Res]:
    return [p, topology(), flavor(p.name), job(annotations, pods=pods)]


def test_declared_block_size_refuses_a_gang_larger_than_one_block() -> None:
    config = {"reservations": {"res-a": {"blockNodes": 4}}}
    # 5 x 8 GPUs > one block of 4 nodes x 8 GPUs: never admitted.
    found = fits(stack(reserved("res-a"), {tas.REQUIRED: BLOCK}, 5), config)
    assert len(found) == 1 and "needs 40 GPUs within one" in found[0] and "holds 32" in found[0]
    assert fits(stack(reserved("res-a"), {tas.REQUIRED: BLOCK}, 4), config) == []
    # Preferred may spread over blocks.
    assert fits(stack(reserved("res-a"), {tas.PREFERRED: BLOCK}, 5), config) == []
    # Undeclared: cannot tell, not judged.
    assert fits(stack(reserved("res-a"), {tas.REQUIRED: BLOCK}, 64)) == []


def test_the_reservation_count_bounds_every_level_and_a_subblock_path_its_own_count() -> None:
    # A reservation of 2 machines: no block of it holds 3 of its nodes.
    found = fits(
        stack(reserved("res-a"), {tas.REQUIRED: BLOCK}, 3), {"reservations": {"res-a": {"count": 2}}}
    )
    assert len(found) == 1 and "holds 16" in found[0]
    # A pool pinned to one sub-block (full path, as the stack writes it) of 2 hosts.
    path = "projects/p/reservations/res-a/reservationBlocks/b1/reservationSubBlocks/s1"
    config = {"reservations": {"res-a/reservationBlocks/b1/reservationSubBlocks/s1": {"count": 2}}}
    assert len(fits(stack(reserved(path), {tas.REQUIRED: SUBBLOCK}, 3), config)) == 1
    assert fits(stack(reserved(path), {tas.REQUIRED: SUBBLOCK}, 2), config) == []
    # The sub-block's count says nothing about another reservation's pool.
    assert fits(stack(reserved("res-b"), {tas.REQUIRED: SUBBLOCK}, 3), config) == []


def test_a_block_of_two_pools_is_bounded_by_their_sum() -> None:
    config = {"reservations": {"res-a": {"blockNodes": 2}, "res-b": {"blockNodes": 2}}}
    a, b = reserved("res-a", "pool-a"), reserved("res-b", "pool-b")
    both = flavor("pool-a")
    both.props["spec"]["nodeLabels"] = {"cloud.google.com/machine-family": "a3"}
    for p in (a, b):
        p.props["nodeConfig"]["labels"] = {"cloud.google.com/machine-family": "a3"}
    assert fits([a, b, topology(), both, job({tas.REQUIRED: BLOCK}, pods=4)], config) == []
    assert len(fits([a, b, topology(), both, job({tas.REQUIRED: BLOCK}, pods=5)], config)) == 1


def test_an_a4x_subblock_is_18_nodes_without_any_declaration() -> None:
    a4x = pool("a4x", "a4x-highgpu-4g")
    a4x.props["nodeConfig"]["guestAccelerators"] = [{"type": "nvidia-gb200", "count": 4.0}]
    resources = [a4x, topology("a4x-default"), flavor("a4x", "a4x-default")]
    found = fits([*resources, job({tas.REQUIRED: SUBBLOCK}, pods=19, gpus=4)])
    assert len(found) == 1 and "holds 72" in found[0]
    assert fits([*resources, job({tas.REQUIRED: SUBBLOCK}, pods=18, gpus=4)]) == []
    # The block above it is still undeclared.
    assert fits([*resources, job({tas.REQUIRED: BLOCK}, pods=40, gpus=4)]) == []


def test_host_level_is_unchanged_by_reservation_sizes() -> None:
    config = {"reservations": {"res-a": {"blockNodes": 4}}}
    assert len(fits(stack(reserved("res-a"), {tas.REQUIRED: HOST}, 2), config)) == 1


@pytest.mark.parametrize(
    "bad",
    [
        {"res-a": {"blockNodes": 0}},
        {"res-a": {"nodes": 4}},
        {"res-a": {}},
        {"Res_A": {"count": 4}},
        {"res-a/blocks/b": {"count": 4}},
        {"res-a": 4},
    ],
)
def test_the_schema_refuses_a_malformed_declaration(bad: dict[str, Any]) -> None:
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"reservations": bad}, {"type": "object", "properties": SCHEMA})


def test_the_schema_accepts_names_and_paths() -> None:
    good = {
        "res-a": {"count": 32, "blockNodes": 16, "subBlockNodes": 4},
        "res-a/reservationBlocks/b1": {"count": 16},
        "res-a/reservationBlocks/b1/reservationSubBlocks/s1": {"count": 4},
    }
    jsonschema.validate({"reservations": good}, {"type": "object", "properties": SCHEMA})
    sizes = declared_sizes({"reservations": good})
    assert sizes["res-a"].subblock_nodes == 4 and sizes["res-a/reservationBlocks/b1"].count == 16


def test_a_bad_declaration_is_one_line_naming_the_key_path() -> None:
    """The offline preview validates the policy config as the engine does, naming the key."""
    info = PolicyInfo(RULE, "", "mandatory", "stack", dict(SCHEMA))
    with pytest.raises(AnalyzerError) as caught:
        reconcile_config([info], {RULE: {"reservations": {"res-a": {"blockNodes": 0}}}}, pack_name="p")
    line = str(caught.value)
    assert "\n" not in line
    assert f"{RULE}.reservations.res-a.blockNodes: 0 is less than the minimum of 1" in line
