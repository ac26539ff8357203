"""The multi-region stack (issue 33): one manager and N workers from one stack file.

Run through the real program under the preview mocks.  Shapes from Kueue v0.19.2:
``apis/kueue/v1beta2/multikueue_types.go`` (MultiKueueCluster/Config, the ``kubeconfig`` key),
``site/static/examples/multikueue/create-multikueue-kubeconfig.sh`` (the worker's access).
"""

from __future__ import annotations

import base64
import copy
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from gpu_batch_policy.facts.charts.manifests import LOADER
from gpu_batch_policy.facts.multikueue.kubeconfig import rejections

from components.multikueue import ALWAYS_RULES, INTEGRATION_RULES, render_kubeconfig, worker_rules
from preview.clusters import cluster_groups
from preview.harness import RunResult
from preview.records import is_secret
from preview.report import capacity_sections
from preview.report.multikueue import cluster_subsets
from stacks.errors import ConfigError
from stacks.quantity import amount, times
from tests.shared_previews import StackPreview, preview_group
from tests.stack_runner import config_value, custom_objects, of_type, run_stack, unedited_run
from tests.upstream import upstream_file

ROOT = Path(__file__).resolve().parents[1]
MK = "gpu-batch:multiKueue"


@pytest.fixture(scope="module")
def result() -> RunResult:
    return unedited_run("multiregion")


def _by_provider(result: RunResult, kind: str) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for r in result.resources:
        if r.type.startswith("kubernetes:") and r.type.endswith(f":{kind}"):
            name = r.provider.rsplit("::", 1)[0].rsplit("::", 1)[-1]
            out.setdefault(name, []).append(r.inputs)
    return out


def _checks(cq: dict[str, Any]) -> list[str]:
    return [c["name"] for c in cq["spec"].get("admissionChecksStrategy", {}).get("admissionChecks", [])]


def test_manager_queues_carry_only_the_multikueue_check_and_workers_their_dws_check(
    result: RunResult,
) -> None:
    queues = _by_provider(result, "ClusterQueue")
    assert set(queues) == {"mk-manager-k8s", "mk-worker-us-east4-k8s", "mk-worker-europe-west4-k8s"}
    assert [_checks(cq) for cq in queues["mk-manager-k8s"]] == [["multikueue"]]
    for worker in ("mk-worker-us-east4-k8s", "mk-worker-europe-west4-k8s"):
        assert [_checks(cq) for cq in queues[worker]] == [["dws"]]
    checks = _by_provider(result, "AdmissionCheck")
    assert [c["spec"]["controllerName"] for c in checks["mk-manager-k8s"]] == ["kueue.x-k8s.io/multikueue"]
    assert "ProvisioningRequestConfig" not in {
        k
        for k, v in {"ProvisioningRequestConfig": _by_provider(result, "ProvisioningRequestConfig")}.items()
        if "mk-manager-k8s" in v
    }


def test_worker_flavors_tolerate_the_queued_taint_and_select_their_pool(result: RunResult) -> None:
    flavors = _by_provider(result, "ResourceFlavor")
    assert flavors["mk-manager-k8s"][0].get("spec", {}).get("nodeLabels") is None  # no pod runs there
    for worker in ("mk-worker-us-east4-k8s", "mk-worker-europe-west4-k8s"):
        spec = flavors[worker][0]["spec"]
        assert spec["nodeLabels"] == {"cloud.google.com/gke-nodepool": "h100-dws"}
        assert any(t["key"] == "cloud.google.com/gke-queued" for t in spec["tolerations"])


def test_namespaces_and_local_queues_are_mirrored_on_every_cluster(result: RunResult) -> None:
    queues = _by_provider(result, "LocalQueue")
    assert len(queues) == 3
    assert {
        tuple((q["metadata"]["namespace"], q["metadata"]["name"]) for q in v) for v in queues.values()
    } == {(("research", "default"),)}
    namespaces = _by_provider(result, "Namespace")
    for objs in namespaces.values():
        assert "research" in {n["metadata"]["name"] for n in objs}


def test_multikueue_config_lists_workers_in_config_order(result: RunResult) -> None:
    (config,) = custom_objects(result, "MultiKueueConfig")
    workers = [w["name"] for w in config_value("multiregion", MK)["workers"]]
    assert config["spec"]["clusters"] == workers
    clusters = {c["metadata"]["name"]: c for c in custom_objects(result, "MultiKueueCluster")}
    assert sorted(clusters) == sorted(workers)
    for name, cluster in clusters.items():
        assert cluster["spec"]["clusterSource"]["kubeConfig"] == {
            "locationType": "Secret",
            "location": f"{name}-kubeconfig",
        }


def test_worker_kubeconfig_is_a_secret_in_kueues_namespace(result: RunResult) -> None:
    secrets = [
        r
        for r in of_type(result, "kubernetes:core/v1:Secret")
        if r.inputs["metadata"]["name"].endswith("-kubeconfig")
    ]
    assert len(secrets) == 2
    for secret in secrets:
        assert secret.inputs["metadata"]["namespace"] == "kueue-system"
        assert is_secret(secret.inputs["stringData"]) or is_secret(secret.inputs["stringData"]["kubeconfig"])


def test_dispatcher_is_in_the_managers_kueue_configuration_only(result: RunResult) -> None:
    releases = {
        r.name: r.inputs
        for r in of_type(result, "kubernetes:helm.sh/v3:Release")
        if str(r.inputs.get("chart", "")).endswith("/kueue")
    }
    assert len(releases) == 3
    dispatchers = {}
    for name, inputs in releases.items():
        doc = yaml.safe_load(inputs["values"]["managerConfig"]["controllerManagerConfigYaml"])
        dispatchers[name] = doc.get("multiKueue", {}).get("dispatcherName")
    assert dispatchers == {
        "kueue-release": "kueue.x-k8s.io/multikueue-dispatcher-all-at-once",
        "us-east4-kueue-release": None,
        "europe-west4-kueue-release": None,
    }


def test_worker_urns_derive_from_the_worker_name(result: RunResult) -> None:
    """Adding a worker adds resources; it renames none of another cluster's."""
    three = copy.deepcopy(config_value("multiregion", MK))
    extra = copy.deepcopy(three["workers"][0])
    extra["name"] = "asia-southeast1"
    extra["cluster"]["name"] = "mk-worker-asia-southeast1"
    extra["cluster"]["location"] = "asia-southeast1-b"
    three["workers"].append(extra)
    grown = run_stack("multiregion", {MK: three})
    before, after = {r.urn for r in result.resources}, {r.urn for r in grown.resources}
    added = after - before
    assert before - after == set()  # nothing renamed or dropped
    assert added and all("asia-southeast1" in urn for urn in added), sorted(
        u for u in added if "asia" not in u
    )


def test_worker_access_grants_the_scripts_rules_for_the_enabled_integrations(result: RunResult) -> None:
    (role,) = (
        r.inputs
        for r in of_type(result, "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole")
        if r.name == "us-east4-multikueue-role"
    )
    # The stack's Kueue runs batch/job and the two Ray integrations (KubeRay on).
    expected = worker_rules(("batch/job", "ray.io/rayjob", "ray.io/raycluster"))
    assert role["rules"] == expected
    groups = {g for rule in role["rules"] for g in rule["apiGroups"]}
    assert groups == {"kueue.x-k8s.io", "batch", "ray.io"}  # no pods, jobsets, kubeflow: not enabled


KUEUE_GIT = Path(
    os.environ.get("GPU_BATCH_KUEUE_GIT", ROOT.parent / ".mirror" / "kubernetes-sigs+kueue" / "repo")
)
SCRIPT = "site/static/examples/multikueue/create-multikueue-kubeconfig.sh"


def test_every_rule_of_kueues_script_is_covered_exactly() -> None:
    """Kueue's script at v0.19.2, read from a git mirror of kubernetes-sigs/kueue at test time:
    every rule it grants is in ALWAYS_RULES or INTEGRATION_RULES with the same verbs, and nothing
    more -- a rule added upstream fails here."""
    script = upstream_file("kubernetes-sigs/kueue", "v0.19.2", SCRIPT, env="GPU_BATCH_KUEUE_GIT")
    body = script.split("kubectl apply -f - <<EOF\n", 1)[1].split("\nEOF", 1)[0]
    docs = yaml.safe_load_all(
        body.replace("${MULTIKUEUE_SA}", "multikueue-sa").replace("${NAMESPACE}", "kueue-system")
    )
    (role,) = [d for d in docs if d["kind"] == "ClusterRole"]
    upstream = {(r["apiGroups"][0], tuple(r["resources"]), tuple(r["verbs"])) for r in role["rules"]}
    ours = {*ALWAYS_RULES, *(r for rules in INTEGRATION_RULES.values() for r in rules)}
    assert upstream == ours, (sorted(upstream - ours), sorted(ours - upstream))


@pytest.mark.parametrize(
    ("edit", "path", "fragment"),
    [
        (
            lambda mk: mk["workers"].append(copy.deepcopy(mk["workers"][0])),
            "multiKueue.workers[2].name",
            "no other worker",
        ),
        (
            lambda mk: mk["workers"][1]["cluster"].update(name="mk-manager"),
            "multiKueue.workers[1].cluster.name",
            "the manager and other workers do not use",
        ),
        (
            lambda mk: mk["workers"][1]["gpuPools"][0].update(minNodes=1),
            "multiKueue.workers[1].gpuPools[0].minNodes",
            "GKE refuses it on a queued pool",
        ),
        (
            lambda mk: mk["workers"][0]["gpuPools"][0].update(name="other"),
            "kueueQueues.resourceFlavors[0].pool",
            "",
        ),
        (lambda mk: mk.update(dispatcher="RoundRobin"), "multiKueue.dispatcher", "AllAtOnce"),
        (lambda mk: mk.update(workers=[]), "multiKueue.workers", ""),
        (lambda mk: mk.update(credentials="clusterProfile"), "multiKueue.authPluginImage", "gcp-auth-plugin"),
        (lambda mk: mk.update(credentials="fleet"), "multiKueue.credentials", "clusterProfile"),
    ],
)
def test_a_wrong_multikueue_config_is_one_line_at_its_key(edit: Any, path: str, fragment: str) -> None:
    mk = copy.deepcopy(config_value("multiregion", MK))
    edit(mk)
    with pytest.raises(ConfigError) as caught:
        run_stack("multiregion", {MK: mk})
    lines = [line for line in str(caught.value).splitlines() if path in line]
    assert lines and fragment in lines[0], str(caught.value)


@pytest.mark.parametrize("stack", ["dev", "prod", "kai", "skypilot"])
def test_single_cluster_stacks_stay_one_cluster(stack: str) -> None:
    """One Kubernetes provider: manifests.yaml and the report take the single-cluster path,
    byte for byte what they were before multi-cluster programs existed."""
    resources = unedited_run(stack).resources
    assert len(cluster_groups(resources, ())) == 1
    assert len(cluster_subsets(resources)) == 1


def test_report_says_which_workers_take_which_gangs(result: RunResult) -> None:
    lines = capacity_sections("multiregion", result.resources)
    text = "\n".join(lines)
    assert text.count("\n## cluster `") == 3
    section = text.split("## MultiKueue: which workers take which gangs", 1)[1]
    rows = [line for line in section.splitlines() if line.startswith("| research/default")]
    assert len(rows) == 2
    for row in rows:
        # each worker: its own queue (16 GPUs) and its own pool (2 x a3-highgpu-8g), not both regions'
        assert "| research-h100 | 16 | h100-dws (16 GPUs) |" in row


def test_manager_quota_is_the_workers_total(result: RunResult) -> None:
    """Kueue's MultiKueue concept page: the manager's quota should equal the workers' total."""
    queues = _by_provider(result, "ClusterQueue")
    (manager,) = queues["mk-manager-k8s"]
    (worker,) = queues["mk-worker-us-east4-k8s"]
    quotas = {
        r["name"]: r["nominalQuota"] for r in manager["spec"]["resourceGroups"][0]["flavors"][0]["resources"]
    }
    per_worker = {
        r["name"]: r["nominalQuota"] for r in worker["spec"]["resourceGroups"][0]["flavors"][0]["resources"]
    }
    assert per_worker == {"cpu": "400", "memory": "3000Gi", "nvidia.com/gpu": "16"}
    assert quotas == {"cpu": "800", "memory": "6000Gi", "nvidia.com/gpu": "32"}


@pytest.mark.parametrize(
    ("value", "factor", "product"),
    [
        ("16", 2, "32"),
        ("3000Gi", 2, "6000Gi"),
        ("500m", 3, "1500m"),
        ("1e3", 2, "2000"),
        ("1.5Ti", 3, "4.5Ti"),
    ],
)
def test_quantity_times_keeps_the_suffix(value: str, factor: int, product: str) -> None:
    assert times(value, factor) == product
    assert amount(product) == amount(value) * factor


def test_the_programs_worker_kubeconfig_is_one_kueue_accepts() -> None:
    """The kubeconfig the program writes for a worker, judged by the pack's re-statement of Kueue's
    validateKubeconfig (multikueuecluster.go v0.19.2): no reason to refuse it."""
    data = {"token": base64.b64encode(b"a-service-account-token").decode(), "ca.crt": "LS0tLS1CRUdJTg=="}
    text = render_kubeconfig("mk-worker-us-east4", "34.1.2.3", data)
    assert rejections(text) == []
    parsed = yaml.safe_load(text)
    assert parsed["users"][0]["user"] == {"token": "a-service-account-token"}
    assert parsed["clusters"][0]["cluster"]["certificate-authority-data"] == "LS0tLS1CRUdJTg=="


def test_kai_queues_or_skypilot_under_multikueue_are_refused_in_one_line() -> None:
    kai = config_value("kai", "gpu-batch:kaiQueues")
    with pytest.raises(ConfigError) as caught:
        run_stack("multiregion", {"gpu-batch:kaiQueues": kai, "gpu-batch:kai": {"enabled": True}})
    assert "gpu-batch:kaiQueues: got 1, expected none under multiKueue" in str(caught.value)


@preview_group("multiregion")
def test_manifests_hold_every_cluster_in_its_own_validated_section(
    stack_preview: Callable[[str], StackPreview],
) -> None:
    """The preview as users run it: exit 0 means every object of every cluster is valid against
    the CRDs that cluster installs (strict, with CEL) or the Kubernetes schema of its minor.  The
    stack's shared preview (tests/shared_previews.py), which test_preview_cli.py checks too."""
    preview = stack_preview("multiregion")
    assert preview.exit_code == 0
    text = (preview.folder / "manifests.yaml").read_text()
    sections = text.split("# === cluster of Kubernetes provider ")[1:]
    assert [s.split("'", 2)[1] for s in sections] == [
        "mk-manager-k8s",
        "mk-worker-europe-west4-k8s",
        "mk-worker-us-east4-k8s",
    ]
    bodies = [s.split("\n", 1)[1] for s in sections]
    kinds = [
        {(d["kind"], d["metadata"]["name"]) for d in yaml.load_all(b, Loader=LOADER) if d} for b in bodies
    ]
    assert ("MultiKueueConfig", "multikueue") in kinds[0]
    assert all(("MultiKueueConfig", "multikueue") not in k for k in kinds[1:])
    for worker in kinds[1:]:
        assert ("ProvisioningRequestConfig", "dws-config") in worker
        assert ("ServiceAccount", "multikueue-sa") in worker
        assert ("CustomResourceDefinition", "multikueueclusters.kueue.x-k8s.io") in worker  # its own Kueue
    assert "[secret]" in text and "a-service-account-token" not in text


def test_every_urn_is_unique_across_clusters(result: RunResult) -> None:
    """The engine refuses a second resource with the same URN: every top-level resource a cluster
    gets must carry the worker's prefix (a fixed name, as tenant-services had, breaks this)."""
    urns = [r.urn for r in result.resources]
    assert len(urns) == len(set(urns)), sorted({u for u in urns if urns.count(u) > 1})
