"""SkyPilot API server rules: team LocalQueues and a shared ingress."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from gpu_batch_policy.rules.tenancy import skypilot as rules_skypilot

from tests.policies.workload_stack import (
    UNKNOWN,
    Registration,
    cluster_queue,
    flavor,
    helm_release,
    local_queue,
    run,
)

POLICY = {p.name: p for p in rules_skypilot.POLICIES}


def pod_config_label(queue: str) -> str:
    """The seed's form: kubernetes.pod_config.metadata.labels."""
    return yaml.safe_dump(
        {"kubernetes": {"pod_config": {"metadata": {"labels": {"kueue.x-k8s.io/queue-name": queue}}}}}
    )


def local_queue_name(queue: str) -> str:
    return yaml.safe_dump({"kubernetes": {"kueue": {"local_queue_name": queue}}})


def server(
    team: str, config: str | None, *, chart: str = "skypilot-nightly", values: dict[str, Any] | None = None
) -> Registration:
    merged: dict[str, Any] = dict(values or {})
    if config is not None:
        merged["apiService"] = {"config": config}
    return helm_release(f"skypilot-{team}", chart, merged, namespace=team)


def queues() -> list[Registration]:
    """Seed scenario 4, one shared ClusterQueue with a LocalQueue per team."""
    return [
        flavor("default-flavor"),
        cluster_queue("skypilot-cluster-queue", {"default-flavor": {"nvidia.com/gpu": 8}}),
        local_queue("skypilot-local-queue-team1", "team1", "skypilot-cluster-queue"),
        local_queue("skypilot-local-queue-team2", "team2", "skypilot-cluster-queue"),
    ]


class TestTeamLocalQueue:
    policy = POLICY["skypilot-team-local-queue"]

    def test_other_teams_queue_caught(self) -> None:
        """The seed's own typo: team1's server configured with team2's file."""
        stack = [*queues(), server("team1", pod_config_label("skypilot-local-queue-team2"))]
        out = run(self.policy, stack)
        assert out.mentions("Helm Release 'skypilot-team1'", "another team", "skypilot-local-queue-team1")

    def test_no_queue_configured_caught(self) -> None:
        assert run(self.policy, [*queues(), server("team1", None)]).mentions("bypass Kueue")

    def test_invalid_yaml_caught(self) -> None:
        assert run(self.policy, [*queues(), server("team1", "kubernetes: [unclosed")]).mentions("cannot read")

    @pytest.mark.parametrize("config", [pod_config_label, local_queue_name])
    def test_clean_in_either_spelling(self, config: Any) -> None:
        stack = [
            *queues(),
            server("team1", config("skypilot-local-queue-team1"), chart="skypilot"),
            server("team2", config("skypilot-local-queue-team2")),
        ]
        assert run(self.policy, stack).violations == []

    def test_stack_without_kueue_is_skipped(self) -> None:
        assert run(self.policy, [server("team1", None)]).violations == []

    def test_unknown_config_cannot_check(self) -> None:
        out = run(self.policy, [*queues(), server("team1", UNKNOWN)])
        assert out.violations == [] and out.cannot_check and "apiService.config" in out.cannot_check


class TestSharedIngress:
    policy = POLICY["skypilot-shared-ingress"]

    def test_two_nginx_and_same_path_caught(self) -> None:
        out = run(self.policy, [server("team1", None), server("team2", None)])
        assert out.mentions("skypilot-team2", "ingress-nginx") and out.mentions(
            "skypilot-team2", "ingress.path '/'"
        )

    def test_seed_layout_clean(self) -> None:
        second = server(
            "team2", None, values={"ingress-nginx": {"enabled": False}, "ingress": {"path": "/team2"}}
        )
        assert run(self.policy, [server("team1", None), second]).violations == []

    def test_trailing_slash_is_the_same_path(self) -> None:
        a = server("team1", None, values={"ingress": {"path": "/team"}, "ingress-nginx": {"enabled": False}})
        b = server("team2", None, values={"ingress": {"path": "/team/"}})
        assert run(self.policy, [a, b]).mentions("'/team'")

    def test_single_release_clean(self) -> None:
        assert run(self.policy, [server("team1", None)]).violations == []

    def test_unknown_path_cannot_check(self) -> None:
        second = server(
            "team2", None, values={"ingress-nginx": {"enabled": False}, "ingress": {"path": UNKNOWN}}
        )
        out = run(self.policy, [server("team1", None), second])
        assert out.violations == [] and out.cannot_check
