"""Which cluster is the manager and which are its workers (``whatif.multikueue.fleet``)."""

from __future__ import annotations

import copy

import pytest

from whatif.errors import NotModelledError
from whatif.multikueue.fleet import fleet
from whatif.sources import Record


def _with_config_clusters(records: list[Record], clusters: list[str]) -> list[Record]:
    out = []
    for t, props, urn, name, provider, deps in records:
        changed = copy.deepcopy(props) if t.endswith(":MultiKueueConfig") else props
        if changed is not props:
            changed["spec"]["clusters"] = clusters
        out.append((t, changed, urn, name, provider, deps))
    return out


def test_each_worker_has_its_own_objects_and_node_pools(records: list[Record]) -> None:
    found = fleet(records)
    assert found is not None
    for name, member in found.workers:
        pools = sorted(p.res.pulumi_name for p in member.model.node_pools())
        assert pools == sorted([f"{name}-h100-dws-pool", f"mk-worker-{name}-system"])
        assert all(
            o.pulumi_name.startswith(f"{name}-") for o in member.model.kube_objects("kueue.x-k8s.io", None)
        )
    assert not found.manager.model.admission_checks()[0].is_provisioning_request


def test_a_multikueue_cluster_no_provider_name_matches_is_refused_in_one_line(records: list[Record]) -> None:
    with pytest.raises(
        NotModelledError, match=r"^MultiKueueCluster asia: .* 0 of the Kueue clusters"
    ) as error:
        fleet(_with_config_clusters(records, ["us-east4", "asia"]))
    assert "\n" not in str(error.value)


def test_a_program_without_a_multikueue_check_is_no_fleet(records: list[Record]) -> None:
    single = [r for r in records if "mk-manager" not in r[4] and not r[0].endswith(":MultiKueueConfig")]
    assert fleet(single) is None
