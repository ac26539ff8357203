"""The report's multi-node training section: network stack and NICs per GPU pool, the TCP
fallback flag, and the largest gang per TAS level (issue 29 #6)."""

from __future__ import annotations

from pathlib import Path

from preview.analyzer import load_policy_config_file
from preview.report import capacity_sections, render_report
from tests.stack_runner import unedited_run

HEADER = "### Multi-node training: GPU networking and topology"


def section(stack: str) -> str:
    report = render_report(stack, unedited_run(stack).resources, None)
    start = report.index(HEADER)
    return report[start : report.index("\n### ", start + 3)]


def test_gpudirect_stack_shows_stacks_nics_and_domains() -> None:
    text = section("gpudirect")
    assert "| TCPXO | a3mega-tcpxo | a3-megagpu-8g | 8 |  |" in text
    assert "| RDMA | a3ultra-rdma | a3-ultragpu-8g | 9 |  |" in text
    # host and node domains are one node's 8 GPUs; blocks depend on the reservation.
    assert (
        "gce-topology-block: cannot tell; gce-topology-subblock: cannot tell; gce-topology-host: 8; hostname: 8"
        in text
    )


def test_an_a3_pool_without_gpudirect_is_flagged() -> None:
    text = section("prod")
    assert "| none | h100-queued | a3-highgpu-8g | 0 | multi-node gangs run NCCL over TCP" in text
    # An L4 pool has no GPU NICs: no flag.
    assert "| none | l4-queued | g2-standard-24 | 0 |  |" in text


def test_declared_reservation_sizes_give_block_and_subblock_numbers() -> None:
    """``config.gpudirect.json`` declares a3mega-reservation's 4 machines: one block or sub-block
    of it holds at most 4 x 8 GPUs; the queued A3 Ultra pool consumes no reservation: cannot tell."""
    config = load_policy_config_file(Path("policies/config.gpudirect.json"))
    text = "\n".join(capacity_sections("gpudirect", unedited_run("gpudirect").resources, config))
    assert "| h100-mega | gke-default |" in text
    mega = next(line for line in text.splitlines() if line.startswith("| h100-mega |"))
    assert "gce-topology-block: 32; gce-topology-subblock: 32; gce-topology-host: 8" in mega
    ultra = next(line for line in text.splitlines() if line.startswith("| h200 |"))
    assert "gce-topology-block: cannot tell" in ultra
