"""``multikueue-clusterprofile-access``: a MultiKueueCluster whose source is a ClusterProfile.

Kueue v0.19.2 reaches such a worker only with the ``MultiKueueClusterProfile`` gate (alpha, off
by default: ``pkg/features/kube_features.go``) and an access provider in the Configuration's
``multiKueue.clusterProfile`` (``pkg/controller/admissionchecks/multikueue/controllers.go``
``SetupControllers``, ``multikueuecluster.go`` ``loadClientConfig``).  The correct setup is
GoogleCloudPlatform/gke-fleet-management's published ``multikueue-clusterprofile`` (its
``multikueue-setup.yaml`` objects and the manager's ``controller-manager-config.yaml``), read at
test time from a git mirror (``$GPU_BATCH_GKE_FLEET_GIT``, default
``../.mirror/GoogleCloudPlatform+gke-fleet-management/repo``); absent mirror: those tests skip.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from tests.policies.multikueue.fixtures import MANAGER, _obj, program
from tests.policies.pack_harness import Res, policy, run
from tests.policies.pack_objects import kueue_release
from tests.upstream import pinned, upstream_file

RULE = policy("multikueue-clusterprofile-access")
FLEET = "GoogleCloudPlatform/gke-fleet-management"
EXAMPLE = "multikueue-clusterprofile"
GATE_ON = "featureGates:\n  MultiKueueClusterProfile: true\n"
PROVIDERS = (
    "multiKueue:\n  clusterProfile:\n    accessProviders:\n    - name: google\n      execConfig:\n"
    "        apiVersion: client.authentication.k8s.io/v1beta1\n        command: /plugins/gcp-auth-plugin\n"
)


def _on_manager(release: Res) -> Res:
    release.provider = MANAGER
    return release


def _profiled(config_yaml: str | None, **values: Any) -> list[Res]:
    """The fixture program with worker-us reached through a ClusterProfile instead of a Secret."""
    out = [r for r in program() if r.name != "manager-k8s-worker-us"]
    out.append(
        _obj(
            "MultiKueueCluster",
            "worker-us",
            {"clusterSource": {"clusterProfileRef": {"name": "worker-us"}}},
            MANAGER,
        )
    )
    out.append(_on_manager(kueue_release(config_yaml, **values)))
    return out


def test_gate_and_access_provider_set_is_clean() -> None:
    out = run(RULE, _profiled(GATE_ON + PROVIDERS))
    assert out.violations == [] and out.cannot_check is None
    assert run(policy("multikueue-worker-kubeconfig"), _profiled(GATE_ON + PROVIDERS)).violations == []


@pytest.mark.parametrize(
    ("config_yaml", "values", "reason"),
    [
        (PROVIDERS, {}, "MultiKueueClusterProfileFeatureDisabled"),
        (GATE_ON, {}, "BadClusterProfile"),
        (
            PROVIDERS,
            {"controllerManager": {"featureGates": [{"name": "MultiKueueClusterProfile", "enabled": False}]}},
            "FeatureDisabled",
        ),
    ],
)
def test_a_gate_off_or_no_access_provider_is_one_finding_per_profiled_cluster(
    config_yaml: str, values: dict[str, Any], reason: str
) -> None:
    out = run(RULE, _profiled(config_yaml, **values))
    assert len(out.violations) == 1, out.messages
    assert reason in out.messages[0] and "MultiKueueCluster 'worker-us'" in out.messages[0]


def test_the_chart_flag_turns_the_gate_on_too() -> None:
    gates = {"controllerManager": {"featureGates": [{"name": "MultiKueueClusterProfile", "enabled": True}]}}
    assert run(RULE, _profiled(PROVIDERS, **gates)).violations == []


def test_no_kueue_release_on_the_manager_is_judged_by_the_shipped_defaults_and_says_so() -> None:
    resources = [r for r in _profiled(GATE_ON + PROVIDERS) if not r.type.startswith("kubernetes:helm.sh")]
    out = run(RULE, resources)
    assert len(out.violations) == 1 and "assuming Kueue 0.19.2's defaults" in out.messages[0]


def test_a_gate_set_on_a_worker_is_not_the_managers() -> None:
    """Only the manager's Kueue reaches workers: a worker's release with the gate changes nothing."""
    resources = [r for r in _profiled(PROVIDERS) if not r.type.startswith("kubernetes:helm.sh")]
    worker = kueue_release(GATE_ON + PROVIDERS)
    worker.provider, worker.name = (
        "urn:pulumi:test::gpu-batch::pulumi:providers:kubernetes::worker-us-k8s",
        "worker-kueue",
    )
    worker.urn = f"urn:pulumi:test::gpu-batch::{worker.type}::{worker.name}"
    resources += [_on_manager(kueue_release(PROVIDERS)), worker]
    out = run(RULE, resources)
    assert len(out.violations) == 1 and "FeatureDisabled" in out.messages[0]


def _published(path: str) -> str:
    return upstream_file(FLEET, pinned(FLEET), f"{EXAMPLE}/{path}", env="GPU_BATCH_GKE_FLEET_GIT")


def test_gke_fleet_managements_published_setup_passes_and_without_its_gate_fails() -> None:
    config = _published("2-multikueue/modules/kueue/controller-manager-config.yaml")
    docs = [d for d in yaml.safe_load_all(_published("multikueue-setup.yaml")) if isinstance(d, dict)]
    objects = [
        Res(f"kubernetes:{d['apiVersion']}:{d['kind']}", f"fleet-{i}", d, provider=MANAGER)
        for i, d in enumerate(docs)
    ]
    profiled = [d for d in docs if d["kind"] == "MultiKueueCluster"]
    assert profiled and all("clusterProfileRef" in d["spec"]["clusterSource"] for d in profiled)
    good = run(RULE, [*objects, _on_manager(kueue_release(config))])
    assert good.violations == [] and good.cannot_check is None
    without_gate = yaml.safe_load(config)
    without_gate.pop("featureGates")
    bad = run(RULE, [*objects, _on_manager(kueue_release(yaml.safe_dump(without_gate)))])
    assert len(bad.violations) == len(profiled)
