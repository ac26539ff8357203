"""The real pack as a separate process over the analyzer gRPC protocol, driven by preview/analyzer.py
exactly as ``pulumi preview --policy-pack policies`` drives it (one process for the module)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from gpu_batch_policy.runtime.registry import ALL_POLICIES
from pulumi_policy import EnforcementLevel, ResourceValidationPolicy

from preview.analyzer import (
    AnalyzerError,
    Diagnostic,
    PolicyPackProcess,
    format_diagnostic,
    load_policy_config_file,
    reconcile_config,
)
from preview.findings.levels import pack_part
from preview.records import RecordedResource
from tests.policies.pack_harness import UNKNOWN, Res, secret
from tests.policies.pack_objects import (
    cluster_queue,
    kueue_release,
    local_queue,
    patch,
    queued_pool,
    ray_job,
    resource_flavor,
)

POLICIES_DIR = Path(__file__).resolve().parents[2] / "policies"
SEEDS = Path(__file__).resolve().parents[1] / "fixtures" / "seeds"
STACK_URN = "urn:pulumi:test::gpu-batch::pulumi:pulumi:Stack::gpu-batch-test"


def record(res: Res) -> RecordedResource:
    return RecordedResource(
        urn=res.urn,
        type=res.type,
        name=res.name,
        parent=STACK_URN,
        provider="",
        custom=True,
        inputs=res.props,
        outputs=res.props,
    )


def stack_record() -> RecordedResource:
    return RecordedResource(STACK_URN, "pulumi:pulumi:Stack", "gpu-batch-test", "", "", False, {}, {})


def records(*items: Res) -> list[RecordedResource]:
    return [stack_record(), *(record(r) for r in items)]


BROKEN_POOL = patch(queued_pool(), "nodeConfig.spot", True)
DANGLING_LQ = local_queue(target="nowhere")
# The program turns on the API its node pool calls (gcp-service-api-enabled, issue 39).
CONTAINER_API = Res("gcp:projects/service:Service", "container-api", {"service": "container.googleapis.com"})


@pytest.fixture(scope="module")
def pack() -> Iterator[PolicyPackProcess]:
    with PolicyPackProcess(POLICIES_DIR, stack="dev") as process:
        yield process


def by_policy(diags: list[Diagnostic] | tuple[Diagnostic, ...], name: str) -> list[Diagnostic]:
    return [d for d in diags if d.policy_name == name]


def test_analyzer_info_lists_every_policy_with_type_and_level(pack: PolicyPackProcess) -> None:
    infos = {p.name: p for p in pack.policies()}
    assert set(infos) == {p.name for p in ALL_POLICIES}
    assert pack.info is not None and pack.info.name == "gpu-batch"
    for pol in ALL_POLICIES:
        info = infos[pol.name]
        assert info.policy_type == ("resource" if isinstance(pol, ResourceValidationPolicy) else "stack")
        expected = pol.enforcement_level or EnforcementLevel.MANDATORY
        assert info.level == expected.value
        assert info.description == pol.description
    assert (
        infos["kueue-infinite-quota-without-admission-check"].config_schema["infiniteGpuQuota"]["default"]
        == 1000000
    )


def test_configure_sends_a_level_for_every_policy(pack: PolicyPackProcess) -> None:
    config = pack.configure()
    assert set(config) == {p.name for p in ALL_POLICIES}
    assert config["gke-queued-provisioning-pool"].level == "mandatory"
    assert config["kueue-infinite-quota-without-admission-check"].properties == {
        "infiniteGpuQuota": 1000000,
        "gpuResources": ["nvidia.com/gpu"],
    }


def test_broken_set_yields_mandatory_diagnostics_with_urns(pack: PolicyPackProcess) -> None:
    # The stack declares a ClusterQueue, so a LocalQueue naming another one is a typo (mandatory);
    # with no ClusterQueue at all it would be "not in this stack" (test_open_world_e2e.py).
    recs = records(BROKEN_POOL, resource_flavor(), cluster_queue(), DANGLING_LQ)
    result = pack.run(recs)
    assert not result.passed
    [pool] = by_policy(result.diagnostics, "gke-queued-provisioning-pool")
    assert pool.level == "mandatory" and pool.stage == "analyze"
    assert pool.urn == BROKEN_POOL.urn  # Analyze leaves it empty; the driver fills it
    assert pool.resource_type == "gcp:container/nodePool:NodePool" and pool.resource_name == "gpu-pool"
    assert "nodeConfig.spot" in pool.message and not pool.message.startswith(pool.description)
    [lq] = by_policy(result.diagnostics, "kueue-localqueue-target-exists")
    assert lq.mandatory and lq.stage == "analyze-stack" and lq.urn == DANGLING_LQ.urn
    text = format_diagnostic(lq, recs)
    assert text.startswith(
        "[mandatory] kueue-localqueue-target-exists — kubernetes:kueue.x-k8s.io/v1beta2:LocalQueue"
    )
    assert "'nowhere'" in text and "Fix:" in text


def test_clean_set_passes(pack: PolicyPackProcess) -> None:
    clean = records(CONTAINER_API, queued_pool(), resource_flavor(), cluster_queue(), local_queue())
    result = pack.run(clean)
    # The ResourceFlavor CRD's transition rules (oldSelf) are not evaluated on create (the API
    # server's ValidationRule semantics), so a clean set has no finding at all, not even a note.
    assert result.passed
    assert not result.diagnostics


def test_policy_config_lowers_and_disables(pack: PolicyPackProcess) -> None:
    recs = records(CONTAINER_API, BROKEN_POOL, resource_flavor(), cluster_queue(), DANGLING_LQ)
    config = {
        # the dangling LocalQueue also leaves the ClusterQueue unreachable (issue 39's rule)
        "kueue-clusterqueue-reachable": "advisory",
        "gke-queued-provisioning-pool": "advisory",
        "kueue-localqueue-target-exists": {"enforcementLevel": "disabled"},
    }
    result = pack.run(recs, config)
    assert result.passed
    [pool] = by_policy(result.diagnostics, "gke-queued-provisioning-pool")
    assert pool.level == "advisory"
    assert not by_policy(result.diagnostics, "kueue-localqueue-target-exists")
    everything_advisory = pack.run(recs, {"all": "advisory"})
    found = [d for d in everything_advisory.diagnostics if d.policy_name != "custom-resource-schema"]
    # the pool, the dangling LocalQueue, and the ClusterQueue it leaves unreachable
    assert everything_advisory.passed and len(found) == 3
    # Configure replaces the stored config: the next run is back to the code defaults.
    assert not pack.run(recs).passed


def test_policy_config_file_sets_properties(pack: PolicyPackProcess, tmp_path: Path) -> None:
    cq = patch(cluster_queue(), "spec.resourceGroups[0].flavors[0].resources[2].nominalQuota", 5000.0)
    recs = records(cq)
    assert not by_policy(pack.run(recs).diagnostics, "kueue-infinite-quota-without-admission-check")
    path = tmp_path / "config.json"
    path.write_text(
        json.dumps(
            {
                "kueue-infinite-quota-without-admission-check": {
                    "enforcementLevel": "mandatory",
                    "infiniteGpuQuota": 1000,
                }
            }
        )
    )
    result = pack.run(recs, load_policy_config_file(path))
    [diag] = by_policy(result.diagnostics, "kueue-infinite-quota-without-admission-check")
    assert diag.mandatory and diag.urn == cq.urn


def test_unknowns_are_cannot_check_advisories_and_known_problems_still_count(pack: PolicyPackProcess) -> None:
    pool = patch(BROKEN_POOL, "management.autoRepair", UNKNOWN)
    lq = patch(local_queue(), "spec.clusterQueue", UNKNOWN)
    result = pack.run(records(pool, lq))
    pool_diags = by_policy(result.diagnostics, "gke-queued-provisioning-pool")
    assert {d.cannot_check for d in pool_diags} == {True, False}
    cannot = next(d for d in pool_diags if d.cannot_check)
    assert cannot.level == "advisory" and "cannot check yet" in cannot.message and cannot.urn == pool.urn
    assert any(d.mandatory and "spot" in d.message for d in pool_diags)
    [lq_diag] = by_policy(result.diagnostics, "kueue-localqueue-target-exists")
    assert lq_diag.cannot_check and not lq_diag.mandatory
    assert "cannot check yet" in format_diagnostic(lq_diag)


def test_secrets_are_unwrapped_by_the_pack(pack: PolicyPackProcess) -> None:
    release = kueue_release()
    release.props["values"]["managerConfig"] = {
        "controllerManagerConfigYaml": secret(yaml.safe_dump({"integrations": {"frameworks": ["batch/job"]}}))
    }
    result = pack.run(records(release, ray_job()))
    [diag] = by_policy(result.diagnostics, "kueue-integrations-cover-workloads")
    assert diag.mandatory and "ray.io/rayjob" in diag.message


@pytest.mark.parametrize("path", sorted(POLICIES_DIR.glob("config.*.json")), ids=lambda p: p.name)
def test_repo_policy_config_files_are_valid_for_the_pack(pack: PolicyPackProcess, path: Path) -> None:
    # The preview's own findings' levels (preview.findings.levels) are not the pack's to reconcile.
    file_config = pack_part(load_policy_config_file(path))
    config = reconcile_config(pack.policies(), file_config, pack_name="gpu-batch")
    assert set(config) == {p.name for p in ALL_POLICIES}


def test_repo_has_a_config_file_per_environment() -> None:
    assert {p.name for p in POLICIES_DIR.glob("config.*.json")} >= {
        "config.dev.json",
        "config.prod.json",
        "config.kai.json",
        "config.skypilot.json",
    }


def test_invalid_policy_config_is_rejected(pack: PolicyPackProcess) -> None:
    with pytest.raises(AnalyzerError, match="validating policy config: gpu-batch  kueue-infinite"):
        pack.configure({"kueue-infinite-quota-without-admission-check": {"infiniteGpuQuota": "lots"}})
    with pytest.raises(AnalyzerError, match="not a policy of pack"):
        pack.configure({"no-such-policy": "advisory"})
    with pytest.raises(AnalyzerError, match="unknown enforcement level"):
        pack.configure({"all": "fatal"})


def test_stack_name_reaches_the_pack() -> None:
    open_cq = patch(cluster_queue(), "spec.namespaceSelector", {})
    with PolicyPackProcess(POLICIES_DIR, stack="prod") as prod:
        result = prod.run(records(open_cq))
    [diag] = by_policy(result.diagnostics, "kueue-open-namespace-selector")
    assert diag.level == "advisory" and diag.urn == open_cq.urn


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the 128 KiB limit is Linux's")
def test_a_stack_config_too_large_for_the_environment_is_a_clear_error() -> None:
    # The engine hands the pack the stack config as PULUMI_CONFIG; past the kernel's limit for one
    # environment string the pack cannot be started at all (about 200 generated teams).
    config = {"gpu-batch:teams": "x" * 200_000}
    with pytest.raises(AnalyzerError, match=r"PULUMI_CONFIG environment variable, is 200,0\d\d bytes"):
        PolicyPackProcess(POLICIES_DIR, stack_config=config).start()


# Seed scenario 2 builds on scenario 1: kueue-priority.yaml's own header says the queues it names
# (user-queue) are in kueue-provisioning.yaml, so it is judged together with it.
SEED_BASES = {"kueue-priority.yaml": ["kueue-provisioning.yaml"]}


def _seed_records(seed: Path) -> list[RecordedResource]:
    from preview.manifest_resources import records_from_manifests
    from preview.manifest_resources import stack_record as seed_stack

    docs: list[Any] = []
    for name in [*SEED_BASES.get(seed.name, []), seed.name]:
        docs.extend(yaml.safe_load_all((seed.parent / name).read_text()))
    return [
        seed_stack(stack="dev", project="gpu-batch"),
        *records_from_manifests(docs, stack="dev", project="gpu-batch"),
    ]


# The seed's Cohort is kueue.x-k8s.io/v1alpha1, which Kueue 0.19.2 does not serve (the file's own
# header says so); kueue-served-api-version now catches it (issue 11).
KNOWN_SEED_FINDINGS = {"skypilot-cohort.yaml": {"kueue-served-api-version"}}
# Gaps of the upstream seed manifests themselves that the pack reports on purpose, as advisories
# (issue 10 #7: GKE's DWS sample has no podSetUpdates nodeSelector, so gangs can take each
# other's nodes; advisory because it is GKE's own working example).
SEED_GAPS = {"kueue-queued-provisioning-node-selector"}


@pytest.mark.parametrize("seed", sorted(SEEDS.glob("*.yaml")), ids=lambda p: p.name)
def test_seed_manifests_pass_without_mandatory_findings(pack: PolicyPackProcess, seed: Path) -> None:
    recs = _seed_records(seed)
    result = pack.run(recs)
    known = KNOWN_SEED_FINDINGS.get(seed.name, set())
    unexpected = [d for d in result.mandatory if d.policy_name not in known | SEED_GAPS]
    assert not unexpected, "\n".join(format_diagnostic(d, recs) for d in unexpected)
    assert known <= {d.policy_name for d in result.mandatory}


def test_the_dws_seed_gap_is_reported(pack: PolicyPackProcess) -> None:
    recs = _seed_records(SEEDS / "kueue-provisioning.yaml")
    result = pack.run(recs)
    assert not result.mandatory
    assert {d.policy_name for d in result.diagnostics if d.level == "advisory"} >= SEED_GAPS


def test_seed_scenario_two_alone_is_caught_missing_its_queue(pack: PolicyPackProcess) -> None:
    """Proves the seed run judges what it is given: without scenario 1, user-queue is missing."""
    docs = list(yaml.safe_load_all((SEEDS / "kueue-priority.yaml").read_text()))
    from preview.manifest_resources import records_from_manifests

    recs = records_from_manifests(docs, stack="dev", project="gpu-batch")
    # Our stacks run with closedWorld (policies/config.dev.json); open world calls it "not in this stack".
    result = pack.run(recs, {"kueue-queue-label-resolves": {"closedWorld": True}})
    assert any("user-queue" in d.message for d in result.mandatory)
    open_world = pack.run(recs)
    assert not any("user-queue" in d.message for d in open_world.mandatory)
    assert any("not in this stack" in d.message and "user-queue" in d.message for d in open_world.diagnostics)
