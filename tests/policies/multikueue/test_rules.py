"""MultiKueue rules (issue 33): each fixture breaks one rule of Kueue v0.19.2 and fires exactly it.

"Exactly" is checked against the whole pack: the rules that fire on the broken program, minus
those that fire on the correct one, are the one rule under test.
"""

from __future__ import annotations

from string import Template
from typing import Any

import pytest
from gpu_batch_policy.facts.multikueue.kubeconfig import rejections
from gpu_batch_policy.rules.multikueue.workers import POLICIES

from components.k8s_provider import _KUBECONFIG as OUR_EXEC_KUBECONFIG
from tests.policies.multikueue.fixtures import (
    MANAGER,
    TOKEN_KUBECONFIG,
    WORKERS,
    _cq,
    _obj,
    multikueue_cluster,
    program,
    replace,
    secret,
    with_pools,
    worker,
)
from tests.policies.pack_harness import UNKNOWN, Res, Run, run, run_all

NAMES = [p.name for p in POLICIES]


def fired(resources: list[Res]) -> dict[str, Run]:
    return {name: r for name, r in run_all(resources).items() if r.violations}


@pytest.fixture(scope="module")
def baseline() -> set[str]:
    return set(fired(program()))


def only(resources: list[Res], rule: str, baseline: set[str]) -> Run:
    """Run the whole pack; assert ``rule`` is the one rule firing beyond the correct program's."""
    found = fired(resources)
    assert set(found) - baseline == {rule}, sorted(set(found) - baseline)
    return found[rule]


def test_the_correct_program_fires_no_multikueue_rule(baseline: set[str]) -> None:
    """The fixture's bare team namespaces draw the tenancy hardening rules (pod security, default
    deny); those are subtracted as the baseline of every "fires exactly its rule" below."""
    assert not baseline & set(NAMES), baseline
    assert baseline <= {"namespace-default-deny", "namespace-pod-security"}, baseline
    for name in NAMES:
        assert run(next(p for p in POLICIES if p.name == name), program()).cannot_check is None


def test_the_fixture_is_judged_as_its_own_stack_whatever_ran_before(monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker that earlier ran the prod program leaves the Pulumi runtime's stack at "prod"; the
    harness judges the fixture as the stack its URNs name ("test"), so prod's strict tenancy
    (``kueue-open-namespace-selector``) does not leak into this baseline."""
    import pulumi.runtime.settings as settings

    monkeypatch.delenv("PULUMI_STACK", raising=False)
    monkeypatch.setattr(settings.SETTINGS, "stack", "prod")
    assert "kueue-open-namespace-selector" not in fired(program())
    monkeypatch.setenv("PULUMI_STACK", "prod")
    assert "kueue-open-namespace-selector" in fired(program())


def _with_kubeconfig(text: str) -> list[Res]:
    return replace(program(), "manager-worker-us-kubeconfig", secret("worker-us-kubeconfig", text))


def test_our_exec_plugin_kubeconfig_is_rejected_in_kueues_words(baseline: set[str]) -> None:
    ours = OUR_EXEC_KUBECONFIG.format(name="worker-us", endpoint="34.1.2.3", ca="LS0t")
    result = only(_with_kubeconfig(ours), "multikueue-worker-kubeconfig", baseline)
    assert len(result.violations) == 1
    assert "InsecureKubeConfig" in result.messages[0] and "exec plugins are not allowed" in result.messages[0]
    assert "MultiKueueCluster 'worker-us'" in result.messages[0]


BAD_KUBECONFIG = Template("""apiVersion: v1
kind: Config
clusters:
- name: w
  cluster:
    server: https://Bad_Host:443
    insecure-skip-tls-verify: true
    certificate-authority: /etc/ca.crt
- name: empty
  cluster: {}
users:
- name: u
  user: {tokenFile: /var/run/token, username: admin, password: $pw, auth-provider: {name: gcp}}
contexts:
- name: w
  context: {cluster: w, user: u}
current-context: w
""")


def test_every_rejection_reason_is_one_finding(baseline: set[str]) -> None:
    text = BAD_KUBECONFIG.substitute(pw="hunter2")
    expected = [
        "tokenFile is not allowed",
        "insecure TLS verification is not allowed for cluster w",
        "certificate-authority file paths are not allowed, use certificate-authority-data for cluster w",
        "server URL is required for cluster empty",
        "untrusted server endpoint",
        "basic auth is not allowed",
        "auth providers are not allowed",
    ]
    assert rejections(text) == expected
    result = only(_with_kubeconfig(text), "multikueue-worker-kubeconfig", baseline)
    assert len(result.violations) == len(expected)
    for reason, message in zip(expected, result.messages, strict=True):
        assert reason in message
    assert "hunter2" not in result.text() and "/var/run/token" not in result.text()


def test_token_kubeconfig_as_string_data_passes_and_missing_key_is_bad() -> None:
    rule = next(p for p in POLICIES if p.name == "multikueue-worker-kubeconfig")
    plain = secret("worker-us-kubeconfig", TOKEN_KUBECONFIG.format(name="w"), encoded=False)
    assert run(rule, replace(program(), "manager-worker-us-kubeconfig", plain)).clean
    empty = Res(plain.type, plain.name, {**plain.props, "stringData": {"config": "x"}}, provider=MANAGER)
    result = run(rule, replace(program(), "manager-worker-us-kubeconfig", empty))
    assert len(result.violations) == 1 and 'BadKubeConfig): key "kubeconfig" not found' in result.messages[0]


def test_unknown_or_absent_kubeconfig_is_not_a_failure() -> None:
    rule = next(p for p in POLICIES if p.name == "multikueue-worker-kubeconfig")
    unknown = secret("worker-us-kubeconfig", "x", encoded=False)
    unknown.props["stringData"]["kubeconfig"] = UNKNOWN
    result = run(rule, replace(program(), "manager-worker-us-kubeconfig", unknown))
    assert result.clean and result.cannot_check and "unknown until apply" in result.cannot_check
    absent = run(rule, replace(program(), "manager-worker-us-kubeconfig", None))
    assert absent.clean and absent.cannot_check and "not in this stack" in absent.cannot_check


def test_secret_of_another_cluster_does_not_count() -> None:
    """Kueue reads the Secret in its own cluster: the same Secret sent to a worker is absent."""
    rule = next(p for p in POLICIES if p.name == "multikueue-worker-kubeconfig")
    elsewhere = secret("worker-us-kubeconfig", "not: [yaml", WORKERS["worker-us"])
    result = run(rule, replace(program(), "manager-worker-us-kubeconfig", elsewhere))
    assert result.clean and result.cannot_check and "not in this stack" in result.cannot_check


@pytest.mark.parametrize(
    ("location", "reason"),
    [
        ("/var/kubeconfigs/w", '"/var/kubeconfigs/w" is not under "/etc/multikueue/kubeconfigs"'),
        ("kubeconfigs/w", "path must be absolute"),
        ("/etc/multikueue/kubeconfigs/../w", 'path contains ".."'),
        ("/etc/multikueue/kubeconfigs-other/w", 'is not under "/etc/multikueue/kubeconfigs"'),
    ],
)
def test_kubeconfig_path_outside_kueues_prefix(location: str, reason: str, baseline: set[str]) -> None:
    path = multikueue_cluster("worker-us", {"kubeConfig": {"locationType": "Path", "location": location}})
    result = only(replace(program(), "manager-k8s-worker-us", path), "multikueue-kubeconfig-path", baseline)
    assert len(result.violations) == 1 and reason in result.messages[0]
    inside = multikueue_cluster(
        "worker-us", {"kubeConfig": {"locationType": "Path", "location": "/etc/multikueue/kubeconfigs/w"}}
    )
    assert not fired(replace(program(), "manager-k8s-worker-us", inside)).keys() - baseline


def test_v1beta1_multikueue_shape(baseline: set[str]) -> None:
    old = _obj(
        "MultiKueueCluster",
        "worker-us",
        {"kubeConfig": {"locationType": "Secret", "location": "worker-us-kubeconfig"}},
        MANAGER,
        version="kubernetes:kueue.x-k8s.io/v1beta1",
    )
    result = only(replace(program(), "manager-k8s-worker-us", old), "multikueue-v1beta1", baseline)
    assert len(result.violations) == 1 and "spec.clusterSource.kubeConfig" in result.messages[0]


def test_provisioning_check_on_the_manager(baseline: set[str]) -> None:
    """Kueue v0.19.2 pkg/cache/scheduler/clusterqueue.go: MultiKueueWithProvisioningRequest, the
    existing kueue-clusterqueue-references finding (one code path per fact)."""
    resources = [
        *program(),
        *(r for r in worker("worker-us") if r.type.endswith(("ProvisioningRequestConfig", "AdmissionCheck"))),
    ]
    for r in resources[len(program()) :]:
        r.provider, r.urn, r.name = (
            MANAGER,
            r.urn.replace("worker-us-k8s", "manager-k8s"),
            r.name.replace("worker-us", "manager"),
        )
    with_pr = replace(resources, "manager-k8s-team-a", _cq("team-a", ["multikueue", "dws"], 16, MANAGER))
    result = only(with_pr, "kueue-clusterqueue-references", baseline)
    assert len(result.violations) == 1 and "MultiKueueWithProvisioningRequest" in result.messages[0]


def test_local_queue_and_namespace_mirrored_on_every_worker(baseline: set[str]) -> None:
    no_lq = replace(program(), "worker-eu-k8s-team-a-team-a", None)
    # The worker's ClusterQueue then has no LocalQueue on its own API server either, so the
    # generic reachability rule names the same gap from the queue's side (facts/kueue_reach.py).
    found = fired(no_lq)
    assert set(found) - baseline == {"multikueue-worker-mirror", "kueue-clusterqueue-reachable"}
    assert "worker-eu" in str(found["kueue-clusterqueue-reachable"].violations[0][1])
    result = found["multikueue-worker-mirror"]
    assert len(result.violations) == 1 and "no LocalQueue team-a/team-a" in result.messages[0]
    assert "worker-eu-k8s" in result.messages[0]
    no_ns = replace(program(), "worker-us-ns-team-a", None)
    result = only(no_ns, "multikueue-worker-mirror", baseline)
    assert len(result.violations) == 1 and "namespace 'team-a' is not declared" in result.messages[0]


def test_resource_covered_by_the_manager_not_by_a_worker(baseline: set[str]) -> None:
    cpu_only = replace(
        program(), "worker-eu-k8s-team-a", _cq("team-a", ["dws"], 8, WORKERS["worker-eu"], ("cpu",))
    )
    result = only(cpu_only, "multikueue-worker-coverage", baseline)
    assert len(result.violations) == 1 and "covers nvidia.com/gpu" in result.messages[0]
    assert "no worker covers it" not in result.messages[0]


@pytest.mark.parametrize(
    ("gpus", "words"), [(4, "below the largest worker's 8"), (32, "above the workers' total 16")]
)
def test_manager_quota_against_the_workers(gpus: int, words: str, baseline: set[str]) -> None:
    resources = replace(program(), "manager-k8s-team-a", _cq("team-a", ["multikueue"], gpus, MANAGER))
    result = only(resources, "multikueue-manager-quota", baseline)
    assert len(result.violations) == 1 and words in result.messages[0]


def test_one_region_program_is_not_judged_as_multikueue() -> None:
    """No MultiKueue object: no cluster is a manager, whatever the providers."""
    single = worker("worker-us")
    for rule in POLICIES:
        result = run(rule, single)
        assert result.clean and result.cannot_check is None, rule.name


def test_malformed_kubeconfig_is_a_finding_not_a_crash() -> None:
    assert rejections("a: [b") and rejections("- just a list")
    rule = next(p for p in POLICIES if p.name == "multikueue-worker-kubeconfig")
    garbage = Res(
        "kubernetes:core/v1:Secret",
        "manager-worker-us-kubeconfig",
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "worker-us-kubeconfig", "namespace": "kueue-system"},
            "data": {"kubeconfig": "%%%"},
        },
        provider=MANAGER,
    )
    result = run(rule, replace(program(), "manager-worker-us-kubeconfig", garbage))
    assert len(result.violations) == 1 and "data.kubeconfig is not base64" in result.messages[0]


def _job(gpus_per_pod: int, pods: int) -> Res:
    container = {
        "name": "train",
        "image": "example.com/train:1",
        "resources": {
            "requests": {"nvidia.com/gpu": str(gpus_per_pod)},
            "limits": {"nvidia.com/gpu": str(gpus_per_pod)},
        },
    }
    props = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": "train",
            "namespace": "team-a",
            "labels": {"kueue.x-k8s.io/queue-name": "team-a"},
        },
        "spec": {
            "parallelism": pods,
            "completions": pods,
            "suspend": True,
            "template": {"spec": {"restartPolicy": "Never", "containers": [container]}},
        },
    }
    return Res("kubernetes:batch/v1:Job", "manager-train", props, provider=MANAGER)


def test_gang_that_fits_the_manager_but_no_worker(baseline: set[str]) -> None:
    """kueue#8602: 16 GPUs on the manager (8 + 8), 8 per worker; a 12-GPU gang is never admitted."""
    fits = [*program(), _job(4, 2)]
    assert not set(fired(fits)) - baseline
    result = only([*program(), _job(4, 3)], "multikueue-gang-fits-a-worker", baseline)
    assert len(result.violations) == 1
    assert "needs 12 GPUs" in result.messages[0] and "largest: 8" in result.messages[0]


MALFORMED: list[Any] = [
    {"clusterSource": "not-a-map"},
    {"clusterSource": {"kubeConfig": {"locationType": 7, "location": ["x"]}}},
    {"clusterSource": {"kubeConfig": {"locationType": "Path", "location": None}}},
    {"clusterSource": {"kubeConfig": {"locationType": "Secret", "location": UNKNOWN}}},
    None,
]
KUBECONFIGS = [
    "clusters: {a: b}\nusers: 7\ncontexts: [1, 2]\ncurrent-context: [x]\n",
    "clusters: [{name: a, cluster: {server: 12, insecure-skip-tls-verify: 'true'}}]\n",
    "users: [{name: u, user: {exec: {command: x}}}]\n",
    "",
    "\x00\x01",
]


@pytest.mark.parametrize("spec", MALFORMED)
def test_malformed_multikueue_cluster_is_never_a_crash(spec: Any) -> None:
    broken = _obj("MultiKueueCluster", "worker-us", spec, MANAGER)
    for pol in POLICIES:
        result = run(pol, replace(program(), "manager-k8s-worker-us", broken))
        assert "internal error" not in result.text().lower(), (pol.name, result.text())


@pytest.mark.parametrize("text", KUBECONFIGS)
def test_malformed_kubeconfig_is_a_finding_never_a_crash(text: str) -> None:
    rule = next(p for p in POLICIES if p.name == "multikueue-worker-kubeconfig")
    result = run(rule, _with_kubeconfig(text))
    assert result.violations and "internal error" not in result.text().lower(), result.text()


def test_empty_or_contextless_kubeconfig_in_clientcmds_words() -> None:
    assert rejections("") == ["invalid configuration: no configuration has been provided"]
    text = TOKEN_KUBECONFIG.format(name="w").replace("current-context: w", "current-context: nope")
    assert rejections(text) == ["context was not found for specified context: nope"]
    assert rejections("clusters: {a: b}\n") == [
        "failed to parse kubeconfig(apiconfig): clusters is not a list"
    ]


def test_gang_that_fits_every_workers_quota_but_no_workers_pools() -> None:
    """8 one-GPU pods: each worker's quota (8) holds them, but each worker's DWS pools have 4
    nodes of one L4 each and a ProvisioningRequest scales ONE pool (``kueue-gang-fits-queue``'s
    logic, run per worker on that worker's GKE cluster's pools): flagged.  With 8-node pools the
    gang fits one pool of each worker: clean; so is the same 4-node layout for a 4-pod gang."""
    rule = next(p for p in POLICIES if p.name == "multikueue-gang-fits-a-worker")
    roomy = fired([*with_pools(max_nodes=8), _job(1, 8)])
    tight = fired([*with_pools(max_nodes=4), _job(1, 8)])
    assert set(tight) - set(roomy) == {rule.name}, sorted(set(tight) - set(roomy))
    assert rule.name not in roomy
    message = tight[rule.name].messages[0]
    assert "workers' quota holds it, but no worker's node pools can" in message
    assert "provider 'worker-us-k8s'" in message and "provider 'worker-eu-k8s'" in message
    # each worker is judged on its own GKE cluster's two pools, not the program's four
    assert message.count("('dws-0': 4 nodes x 1 GPUs, 'dws-1': 4 nodes x 1 GPUs)") == 2
    assert run(rule, [*with_pools(max_nodes=4), _job(1, 4)]).violations == []


def test_one_worker_whose_pools_hold_the_gang_is_enough() -> None:
    """Only worker-eu's pools are too small: worker-us takes the gang, nothing is flagged."""
    rule = next(p for p in POLICIES if p.name == "multikueue-gang-fits-a-worker")
    resources = with_pools(max_nodes=4)
    for r in resources:
        if r.name.startswith("worker-us-dws"):
            r.props["autoscaling"]["totalMaxNodeCount"] = 8.0
    assert run(rule, [*resources, _job(1, 8)]).violations == []
