"""GKE DWS pool rules: each GKE/cluster-toolkit constraint caught, the how-to's pool clean."""

from __future__ import annotations

from typing import Any

import pytest

from tests.policies.pack_harness import UNKNOWN, UNKNOWN_NUMBER, run
from tests.policies.pack_harness import policy as get_policy
from tests.policies.pack_objects import DELETE, cpu_pool, flex_pool, gke_cluster, patch, queued_pool

QUEUED = get_policy("gke-queued-provisioning-pool")
FLEX = get_policy("gke-flex-start-pool")
VERSION = get_policy("gke-queued-provisioning-version")


def test_queued_pool_as_documented_is_clean() -> None:
    result = run(QUEUED, [queued_pool()])
    assert result.clean and result.cannot_check is None


def test_non_dws_pools_are_not_judged() -> None:
    # Spot + COMPACT + static count are fine on an ordinary pool.
    assert run(QUEUED, [cpu_pool()]).clean
    assert run(FLEX, [cpu_pool()]).clean


@pytest.mark.parametrize(
    ("path", "value", "expected"),
    [
        ("autoscaling", DELETE, "no `autoscaling` block"),
        ("autoscaling.totalMinNodeCount", 1.0, "autoscaling.totalMinNodeCount is 1"),
        ("autoscaling.minNodeCount", 2.0, "autoscaling.minNodeCount is 2"),
        ("autoscaling.locationPolicy", "BALANCED", "location policy ANY"),
        ("autoscaling.locationPolicy", DELETE, "unset (BALANCED)"),
        ("initialNodeCount", 3.0, "initialNodeCount is 3"),
        ("nodeCount", 1.0, "nodeCount is 1"),
        ("nodeConfig.reservationAffinity.consumeReservationType", "ANY_RESERVATION", "ANY_RESERVATION"),
        ("nodeConfig.reservationAffinity", DELETE, "consumeReservationType is unset"),
        ("nodeConfig.spot", True, "nodeConfig.spot"),
        ("nodeConfig.preemptible", True, "nodeConfig.preemptible"),
        ("placementPolicy", {"type": "COMPACT"}, "COMPACT placement"),
        ("management.autoRepair", True, "management.autoRepair is true"),
        ("management", DELETE, "unset (GKE enables it)"),
    ],
)
def test_queued_pool_breakages_are_caught(path: str, value: Any, expected: str) -> None:
    result = run(QUEUED, [patch(queued_pool(), path, value)])
    assert len(result.violations) == 1, result.text()
    message = result.messages[0]
    assert expected in message
    assert message.startswith("GKE NodePool 'gpu-pool'") and "Fix:" in message
    # Resource policies leave the URN to the engine.
    assert result.violations[0][1] is None


def test_queued_pool_unknown_pieces_are_cannot_check_not_violations() -> None:
    pool = patch(queued_pool(), "management.autoRepair", UNKNOWN)
    pool = patch(pool, "autoscaling.totalMinNodeCount", UNKNOWN_NUMBER)
    pool = patch(pool, "nodeConfig.spot", True)  # known and wrong: still reported
    result = run(QUEUED, [pool])
    assert [m for m in result.messages if "spot" in m] and len(result.violations) == 1
    assert result.cannot_check is not None
    assert "management.autoRepair" in result.cannot_check and "totalMinNodeCount" in result.cannot_check


def test_unknown_queued_flag_skips_the_pool() -> None:
    result = run(
        QUEUED, [patch(patch(queued_pool(), "queuedProvisioning.enabled", UNKNOWN), "nodeConfig.spot", True)]
    )
    assert result.clean and result.cannot_check is not None and "queuedProvisioning" in result.cannot_check


def test_flex_start_pool_clean_and_breakages() -> None:
    assert run(FLEX, [flex_pool()]).clean
    for path, value, expected in [
        ("nodeConfig.spot", True, "nodeConfig.spot"),
        (
            "nodeConfig.reservationAffinity.consumeReservationType",
            "SPECIFIC_RESERVATION",
            "SPECIFIC_RESERVATION",
        ),
        ("management.autoRepair", True, "auto-repair off"),
        ("autoscaling.locationPolicy", "BALANCED", "BALANCED"),
    ]:
        result = run(FLEX, [patch(flex_pool(), path, value)])
        assert len(result.violations) == 1 and expected in result.messages[0], (path, result.text())
    static = patch(patch(flex_pool(), "autoscaling", DELETE), "nodeCount", 2.0)
    assert any("static node count" in m for m in run(FLEX, [static]).messages)


def test_flex_start_on_a_queued_pool_is_judged_once() -> None:
    pool = patch(patch(queued_pool(), "nodeConfig.flexStart", True), "nodeConfig.spot", True)
    assert len(run(QUEUED, [pool]).violations) == 1
    assert run(FLEX, [pool]).clean


@pytest.mark.parametrize("version", ["1.33", "1.28", "1.28.3-gke.1098000", "1.29.1-gke.1589018", "latest"])
def test_new_enough_versions_pass(version: str) -> None:
    result = run(VERSION, [gke_cluster(minMasterVersion=version), queued_pool()])
    assert result.clean and result.cannot_check is None


@pytest.mark.parametrize(
    ("field", "version"),
    [("minMasterVersion", "1.27"), ("minMasterVersion", "1.28.2"), ("nodeVersion", "1.28.3-gke.1000000")],
)
def test_old_versions_are_caught_with_the_cluster_urn(field: str, version: str) -> None:
    cluster = gke_cluster(**{field: version})
    result = run(VERSION, [cluster, queued_pool()])
    assert len(result.violations) == 1, result.text()
    message, urn = result.violations[0]
    assert f"{field} {version} is older than 1.28.3-gke.1098000" in message and "gpu-pool" in message
    assert urn == cluster.urn


def test_old_pool_version_is_caught() -> None:
    result = run(VERSION, [gke_cluster(), patch(queued_pool(), "version", "1.27.8-gke.100")])
    assert len(result.violations) == 1 and "GKE NodePool 'gpu-pool'" in result.messages[0]


def test_release_channel_without_version_cannot_be_checked() -> None:
    cluster = patch(gke_cluster(releaseChannel={"channel": "REGULAR"}), "minMasterVersion", DELETE)
    result = run(VERSION, [cluster, queued_pool()])
    assert result.clean
    assert result.cannot_check is not None and "release channel REGULAR" in result.cannot_check


def test_version_rule_ignores_clusters_without_queued_pools() -> None:
    assert run(VERSION, [gke_cluster(minMasterVersion="1.20"), cpu_pool()]).clean


def test_pool_matched_to_its_cluster_by_id_among_several_clusters() -> None:
    old = gke_cluster("old", minMasterVersion="1.27")
    new = gke_cluster("new", minMasterVersion="1.30")
    pool = patch(queued_pool(), "cluster", "projects/p/locations/us-west1-b/clusters/new")
    assert run(VERSION, [old, new, pool]).clean
    pool_old = patch(queued_pool(), "cluster", "old")
    assert len(run(VERSION, [old, new, pool_old]).violations) == 1
