"""KubeRay token auth as KubeRay v1.7.0 accepts it (``utils/validation.go``
``ValidateRayClusterSpec``; ``utils/util.go`` ``IsAuthEnabled``), and what the templates render."""

from __future__ import annotations

import pytest

from components.workloads import token_auth
from tests.policies.pack_harness import policy as get_policy
from tests.policies.pack_harness import run
from tests.policies.pack_objects import patch, ray_cluster, ray_job

RULE = get_policy("ray-token-auth-valid")


@pytest.mark.parametrize(
    ("version", "auth", "refused"),
    [
        ("2.52.0", {"mode": "token"}, False),
        ("2.53.1", {"mode": "token", "secretName": "my-token"}, False),
        ("2.50.1", {"mode": "token"}, True),
        (None, {"mode": "token"}, True),
        ("2.52.0", {"mode": "token", "enableK8sTokenAuth": True}, True),  # needs 2.55.0
        ("2.55.0", {"mode": "token", "enableK8sTokenAuth": True, "secretName": "x"}, True),
        ("2.55.0", {"enableK8sTokenAuth": True}, True),  # mode not token
        ("2.40.0", {"mode": "disabled"}, False),
    ],
)
def test_kuberay_s_validation(version: str | None, auth: dict[str, object], refused: bool) -> None:
    cluster = patch(ray_cluster(), "spec.authOptions", auth)
    if version is not None:
        cluster = patch(cluster, "spec.rayVersion", version)
    assert bool(run(RULE, [cluster]).violations) is refused


def test_a_ray_job_s_cluster_spec_is_judged_too() -> None:
    job = patch(ray_job(), "spec.rayClusterSpec.authOptions", {"mode": "token"})
    assert len(run(RULE, [patch(job, "spec.rayClusterSpec.rayVersion", "2.46.0")]).violations) == 1
    assert run(RULE, [patch(job, "spec.rayClusterSpec.rayVersion", "2.52.0")]).clean


def test_the_program_turns_token_auth_on_exactly_where_kuberay_accepts_it() -> None:
    assert token_auth("2.52.0") and token_auth("2.60.1") and token_auth("v2.52.0")
    assert not token_auth("2.51.9") and not token_auth("2.46.0") and not token_auth(None)
