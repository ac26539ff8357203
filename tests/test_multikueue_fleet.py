"""``multiKueue.credentials: clusterProfile``: the workers reached through GKE Fleet ClusterProfiles.

The multi-region stack with that one edit, run through the real program under the preview mocks;
every fact compared with GoogleCloudPlatform/gke-fleet-management ``multikueue-clusterprofile`` read
at test time from its git mirror (``$GPU_BATCH_GKE_FLEET_GIT``), so a change of the published
setup (another API, role, label, provider field or patched field) fails here.  The pack's
``multikueue-clusterprofile-access`` judges the planned resources (Kueue v0.19.2
``multikueuecluster.go`` ``loadClientConfig``).
"""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from gpu_batch_policy.rules.multikueue.workers import check_cluster_profile_access

import preview.cli
from components.multikueue_fleet import (
    FLEET_APIS,
    KUEUE_DEPLOYMENT,
    KUEUE_ROLES,
    MANAGER_LABELS,
    access_providers,
)
from preview.cli import main
from preview.harness import RunResult
from stacks.errors import ConfigError
from tests.stack_runner import config_value, of_type, run_stack, stack_files, unedited_run
from tests.test_tenancy_findings import Item, findings, model
from tests.upstream import pinned, upstream_file

MK = "gpu-batch:multiKueue"
IMAGE = "us-central1-docker.pkg.dev/gpu-batch-multiregion/gcp-auth-plugin/gcp-auth-plugin:v0.0.1"
RULE = "multikueue-clusterprofile-access"
MANAGER_PROVIDER = "mk-manager-k8s"


def _published(path: str) -> str:
    return upstream_file(
        "GoogleCloudPlatform/gke-fleet-management",
        pinned("GoogleCloudPlatform/gke-fleet-management"),
        f"multikueue-clusterprofile/{path}",
        env="GPU_BATCH_GKE_FLEET_GIT",
    )


def _fleet_edits(**extra: Any) -> dict[str, Any]:
    mk = copy.deepcopy(config_value("multiregion", MK))
    mk.update({"credentials": "clusterProfile", "authPluginImage": IMAGE, **extra})
    return {MK: mk}


@pytest.fixture(scope="module")
def result() -> RunResult:
    return run_stack("multiregion", _fleet_edits())


def _provider(r: Any) -> str:
    """The provider's resource name (``<urn>::<id>``)."""
    return str(r.provider).rsplit("::", 1)[0].rsplit("::", 1)[-1]


def _kueue_releases(result: RunResult) -> dict[str, dict[str, Any]]:
    return {
        _provider(r): r.inputs
        for r in of_type(result, "kubernetes:helm.sh/v3:Release")
        if r.inputs.get("chart", "").endswith("kueue") or r.name.endswith("kueue-release")
    }


def test_every_cluster_joins_the_fleet_with_workload_identity_and_only_the_manager_is_labelled(
    result: RunResult,
) -> None:
    tf = _published("1-infrastructure/main.tf")
    hub = tf[tf.index('"google_container_cluster" "hub"') : tf.index('"google_project_iam_member"')]
    labels = dict(re.findall(r"(fleet-clusterinventory-[a-z-]+)\s*=\s*\"?([A-Za-z0-9-]+)\"?", hub))
    assert labels == MANAGER_LABELS
    clusters = {r.inputs["name"]: r.inputs for r in of_type(result, "gcp:container/cluster:Cluster")}
    assert set(clusters) == {"mk-manager", "mk-worker-us-east4", "mk-worker-europe-west4"}
    for name, cluster in clusters.items():
        assert cluster["fleet"] == {"project": "gpu-batch-multiregion"}
        assert cluster["workloadIdentityConfig"] == {"workloadPool": "gpu-batch-multiregion.svc.id.goog"}
        assert cluster.get("resourceLabels") == (MANAGER_LABELS if name == "mk-manager" else None)


def test_token_stacks_stay_out_of_the_fleet() -> None:
    for cluster in of_type(unedited_run("multiregion"), "gcp:container/cluster:Cluster"):
        assert cluster.inputs.get("fleet") is None and cluster.inputs.get("resourceLabels") is None


def test_the_fleet_apis_and_the_kueue_principals_roles_are_the_setups(result: RunResult) -> None:
    tf = _published("1-infrastructure/main.tf")
    services = re.findall(r'"([a-z]+\.googleapis\.com)"', tf[: tf.index("### Hub Cluster")])
    # The other three the setup enables (resource manager, compute, container) every stack needs.
    assert set(FLEET_APIS) == set(services) - {
        "cloudresourcemanager.googleapis.com",
        "compute.googleapis.com",
        "container.googleapis.com",
    }
    planned = of_type(result, "gcp:projects/service:Service")
    assert sorted(s.inputs["service"] for s in planned) == sorted(FLEET_APIS)
    assert all(s.inputs["disableOnDestroy"] is False for s in planned)
    iam = tf[tf.index('"google_project_iam_member"') : tf.index("### Worker Clusters")]
    assert set(KUEUE_ROLES) == set(re.findall(r'"(roles/[A-Za-z.]+)"', iam))
    subject = re.search(r"subject/ns/([a-z-]+)/sa/([a-z-]+)", iam)
    assert subject is not None
    principal = [
        m for m in of_type(result, "gcp:projects/iAMMember:IAMMember") if "subject/ns/" in m.inputs["member"]
    ]
    assert sorted(m.inputs["role"] for m in principal) == sorted(KUEUE_ROLES)
    for member in principal:
        assert member.inputs["member"].endswith(f"subject/ns/{subject[1]}/sa/{subject[2]}")
        assert "/workloadIdentityPools/gpu-batch-multiregion.svc.id.goog/" in member.inputs["member"]


def test_manager_kueue_runs_the_gate_and_the_setups_provider_and_workers_do_not(result: RunResult) -> None:
    setup = yaml.safe_load(_published("2-multikueue/modules/kueue/controller-manager-config.yaml"))
    # 0.19.2 renamed credentialsProviders to accessProviders (same shape, configuration_types.go).
    assert list(access_providers()) == setup["multiKueue"]["clusterProfile"]["credentialsProviders"]
    assert setup["featureGates"] == {"MultiKueueClusterProfile": True}
    releases = _kueue_releases(result)
    assert set(releases) == {MANAGER_PROVIDER, "mk-worker-us-east4-k8s", "mk-worker-europe-west4-k8s"}
    for provider, values in releases.items():
        gates = values["values"]["controllerManager"]["featureGates"]
        doc = yaml.safe_load(values["values"]["managerConfig"]["controllerManagerConfigYaml"])
        profile = doc.get("multiKueue", {}).get("clusterProfile")
        if provider == MANAGER_PROVIDER:
            assert {"name": "MultiKueueClusterProfile", "enabled": True} in gates
            assert profile == {"accessProviders": list(access_providers())}
        else:
            assert all(g["name"] != "MultiKueueClusterProfile" for g in gates) and profile is None


def test_the_auth_plugin_patch_is_the_setups_on_the_charts_deployment(result: RunResult) -> None:
    published = yaml.safe_load(_published("2-multikueue/modules/kueue/kueue-patches/patch.yaml"))
    (patch,) = of_type(result, "kubernetes:apps/v1:DeploymentPatch")
    assert _provider(patch) == MANAGER_PROVIDER
    assert (
        patch.inputs["metadata"]
        == published["metadata"]
        == {
            "name": KUEUE_DEPLOYMENT,
            "namespace": "kueue-system",
        }
    )
    ours, theirs = patch.inputs["spec"]["template"]["spec"], published["spec"]["template"]["spec"]
    assert ours["volumes"] == theirs["volumes"] and ours["containers"] == theirs["containers"]
    (init,) = ours["initContainers"]
    (their_init,) = theirs["initContainers"]
    assert init == {**their_init, "image": IMAGE}
    dockerfile = upstream_file(
        "GoogleCloudPlatform/gke-fleet-management",
        pinned("GoogleCloudPlatform/gke-fleet-management"),
        "gcp-auth-plugin/Dockerfile",
        env="GPU_BATCH_GKE_FLEET_GIT",
    )
    assert f"/workspace/gcp-auth-plugin {init['args'][0]}" in dockerfile  # the file the image holds
    # The chart's Deployment is the one patched, and its ServiceAccount is the IAM principal's.
    chart = (Path("../shared/vendor/kueue-0.19.2/templates/manager/manager.yaml")).read_text()
    assert 'name: {{ include "kueue.fullname" . }}-controller-manager' in chart
    assert "initContainers" not in chart and "clusterprofile-plugins" not in chart
    values = Path("../shared/vendor/kueue-0.19.2/values.yaml").read_text()
    assert "initContainers" not in values  # no chart value for it: hence the patch


def test_each_worker_is_a_cluster_profile_ref_without_a_secret_or_service_account(result: RunResult) -> None:
    setup = [d for d in yaml.safe_load_all(_published("multikueue-setup.yaml")) if d]
    # The setup: cluster multikueue-worker in europe-west4 -> ClusterProfile multikueue-worker-europe-west4.
    assert {"name": "multikueue-worker-europe-west4"} in [
        d["spec"]["clusterSource"]["clusterProfileRef"] for d in setup if d["kind"] == "MultiKueueCluster"
    ]
    clusters = {
        r.inputs["metadata"]["name"]: r.inputs["spec"]
        for r in of_type(result, "kubernetes:kueue.x-k8s.io/v1beta2:MultiKueueCluster")
    }
    assert clusters == {
        "us-east4": {"clusterSource": {"clusterProfileRef": {"name": "mk-worker-us-east4-us-east4-a"}}},
        "europe-west4": {
            "clusterSource": {"clusterProfileRef": {"name": "mk-worker-europe-west4-europe-west4-b"}}
        },
    }
    secrets = [r.inputs["metadata"]["name"] for r in of_type(result, "kubernetes:core/v1:Secret")]
    assert not [s for s in secrets if s.endswith("-kubeconfig") or s == "multikueue-sa"]
    accounts = [r.inputs["metadata"]["name"] for r in of_type(result, "kubernetes:core/v1:ServiceAccount")]
    assert "multikueue-sa" not in accounts


def _items(result: RunResult) -> list[Item]:
    from gpu_batch_policy.primitives.values import plain

    return [(r.type, plain(r.inputs), r.urn, r.name) for r in result.resources]


def _edit_manager_kueue(declared: list[Item], edit: Any) -> list[Item]:
    out: list[Item] = []
    for t, props, urn, name in declared:
        kept = props
        if t == "kubernetes:helm.sh/v3:Release" and name == "kueue-release":
            kept = copy.deepcopy(props)
            edit(kept["values"])
        out.append((t, kept, urn, name))
    return out


def _drop_gate(values: dict[str, Any]) -> None:
    values["controllerManager"]["featureGates"] = [
        g for g in values["controllerManager"]["featureGates"] if g["name"] != "MultiKueueClusterProfile"
    ]


def _drop_providers(values: dict[str, Any]) -> None:
    doc = yaml.safe_load(values["managerConfig"]["controllerManagerConfigYaml"])
    doc["multiKueue"].pop("clusterProfile")
    values["managerConfig"]["controllerManagerConfigYaml"] = yaml.safe_dump(doc)


def test_the_pack_rule_passes_the_stack_and_catches_a_removed_gate_or_provider(result: RunResult) -> None:
    declared = _items(result)
    assert findings(check_cluster_profile_access, model(declared), "multiregion", RULE) == []
    no_gate = findings(
        check_cluster_profile_access, model(_edit_manager_kueue(declared, _drop_gate)), "multiregion", RULE
    )
    assert len(no_gate) == 2 and all("MultiKueueClusterProfileFeatureDisabled" in f for f in no_gate)
    no_provider = findings(
        check_cluster_profile_access,
        model(_edit_manager_kueue(declared, _drop_providers)),
        "multiregion",
        RULE,
    )
    assert len(no_provider) == 2 and all("BadClusterProfile" in f for f in no_provider)


def test_the_preview_of_a_cluster_profile_stack_has_no_mandatory_finding(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The whole preview (program, pack over gRPC, manifests validated against the CRDs)."""
    monkeypatch.setattr(
        preview.cli, "load_stack_files", lambda _dir, _stack: stack_files("multiregion", _fleet_edits())
    )
    code = main(["--stack", "multiregion", "--out", str(tmp_path), "--quiet"])
    printed = capsys.readouterr().out
    assert code == 0, printed
    assert "[mandatory]" not in printed
    manifests = (tmp_path / "multiregion" / "manifests.yaml").read_text()
    assert "clusterProfileRef" in manifests and "-kubeconfig" not in manifests


@pytest.mark.parametrize(
    ("extra", "path", "fragment"),
    [
        ({"authPluginImage": None}, "multiKueue.authPluginImage", "gcp-auth-plugin"),
        ({"credentials": "token"}, "multiKueue.authPluginImage", "unset with credentials token"),
    ],
)
def test_a_wrong_cluster_profile_config_is_one_line_at_its_key(
    extra: dict[str, Any], path: str, fragment: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        run_stack("multiregion", _fleet_edits(**extra))
    lines = [line for line in str(caught.value).splitlines() if path in line]
    assert len(lines) == 1 and fragment in lines[0], str(caught.value)


def test_a_gate_switched_off_by_hand_is_refused_not_overridden() -> None:
    kueue = config_value("multiregion", "gpu-batch:kueue")
    kueue["featureGates"] = {"MultiKueueClusterProfile": False}
    with pytest.raises(ConfigError) as caught:
        run_stack("multiregion", {**_fleet_edits(), "gpu-batch:kueue": kueue})
    assert "gpu-batch:kueue.featureGates.MultiKueueClusterProfile: got false" in str(caught.value)
