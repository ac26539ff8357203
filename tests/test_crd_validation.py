"""Strict CRD validation: what passes, each class of error it must catch, and the seed verdicts.

Every assertion names the exact path (and usually the exact message) so that a validator that
stops checking something -- or reports it somewhere else -- fails here.
"""

from __future__ import annotations

import copy
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from gpu_batch_policy.facts.schema.markers import SECRET_DISPLAY, UNKNOWN_DISPLAY

from preview import crd_validation
from preview.crd_validation import (
    MARKERS,
    SCHEMA_DIR_ENV,
    CrdCatalog,
    Outcome,
    SchemaDirError,
    ValidationResult,
    default_schema_dir,
    format_path,
    get_catalog,
    validate_object,
    validate_objects,
)

SEEDS = Path(__file__).parent / "fixtures" / "seeds"
SEED_FILES = (
    "kueue-provisioning.yaml",
    "kueue-priority.yaml",
    "kai.yaml",
    "skypilot-shared-queue.yaml",
    "skypilot-cohort.yaml",
)
KUEUE = "kueue.x-k8s.io"


def load_seed(name: str) -> list[dict[str, Any]]:
    with (SEEDS / name).open(encoding="utf-8") as handle:
        return [doc for doc in yaml.safe_load_all(handle) if doc is not None]


def paths(result: ValidationResult) -> list[str]:
    return [v.path for v in result.violations]


def message_at(result: ValidationResult, path: str) -> str:
    found = [v.message for v in result.violations if v.path == path]
    assert found, f"no violation at {path}; got {result.messages()}"
    return found[0]


# --------------------------------------------------------------------------------------------
# Valid objects


def cluster_queue_v1beta2() -> dict[str, Any]:
    """A v1beta2 ClusterQueue using most of the spec: valid as it stands."""
    return {
        "apiVersion": f"{KUEUE}/v1beta2",
        "kind": "ClusterQueue",
        "metadata": {"name": "team-a", "labels": {"gpu-batch/team": "team-a"}},
        "spec": {
            "cohortName": "research",
            "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "team-a"}},
            "queueingStrategy": "BestEffortFIFO",
            "resourceGroups": [
                {
                    "coveredResources": ["cpu", "memory", "nvidia.com/gpu"],
                    "flavors": [
                        {
                            "name": "l4",
                            "resources": [
                                {"name": "cpu", "nominalQuota": 40, "borrowingLimit": "8"},
                                {"name": "memory", "nominalQuota": "160Gi", "lendingLimit": "16Gi"},
                                {"name": "nvidia.com/gpu", "nominalQuota": 4},
                            ],
                        }
                    ],
                }
            ],
            "admissionChecksStrategy": {"admissionChecks": [{"name": "dws", "onFlavors": ["l4"]}]},
            "preemption": {
                "reclaimWithinCohort": "Any",
                "withinClusterQueue": "LowerPriority",
                "borrowWithinCohort": {"policy": "LowerPriority", "maxPriorityThreshold": 100},
            },
            "flavorFungibility": {"whenCanBorrow": "MayStopSearch", "whenCanPreempt": "TryNextFlavor"},
            "fairSharing": {"weight": "2"},
            "stopPolicy": "None",
        },
    }


def valid_v1beta2_objects() -> list[dict[str, Any]]:
    v1beta2 = f"{KUEUE}/v1beta2"
    return [
        {
            "apiVersion": v1beta2,
            "kind": "ResourceFlavor",
            "metadata": {"name": "l4"},
            "spec": {
                "nodeLabels": {"cloud.google.com/gke-nodepool": "gpu-node-pool"},
                "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
            },
        },
        {
            "apiVersion": v1beta2,
            "kind": "AdmissionCheck",
            "metadata": {"name": "dws"},
            "spec": {
                "controllerName": "kueue.x-k8s.io/provisioning-request",
                "parameters": {"apiGroup": KUEUE, "kind": "ProvisioningRequestConfig", "name": "dws-config"},
            },
        },
        {
            "apiVersion": v1beta2,
            "kind": "ProvisioningRequestConfig",
            "metadata": {"name": "dws-config"},
            "spec": {
                "provisioningClassName": "queued-provisioning.gke.io",
                "managedResources": ["nvidia.com/gpu"],
                "retryStrategy": {"backoffLimitCount": 2},
            },
        },
        cluster_queue_v1beta2(),
        {
            "apiVersion": v1beta2,
            "kind": "LocalQueue",
            "metadata": {"name": "user-queue", "namespace": "team-a"},
            "spec": {"clusterQueue": "team-a"},
        },
        {
            "apiVersion": v1beta2,
            "kind": "Cohort",
            "metadata": {"name": "research"},
            "spec": {"parentName": "org"},
        },
        {
            "apiVersion": v1beta2,
            "kind": "WorkloadPriorityClass",
            "metadata": {"name": "prod-priority"},
            "value": 1000,
            "description": "Priority class for prod jobs",
        },
    ]


@pytest.mark.parametrize("obj", valid_v1beta2_objects(), ids=lambda o: o["kind"])
def test_valid_v1beta2_objects_pass(obj: dict[str, Any]) -> None:
    result = validate_object(obj)
    assert result.outcome is Outcome.VALID, result.messages()
    assert result.ok
    assert result.schema == f"{KUEUE}/v1beta2"
    assert result.violations == ()


def test_v1beta1_objects_pass_against_v1beta1() -> None:
    cluster_queue = next(o for o in load_seed("skypilot-cohort.yaml") if o["kind"] == "ClusterQueue")
    assert cluster_queue["spec"]["cohort"] == "skypilot-cohort"
    result = validate_object(cluster_queue)
    assert result.outcome is Outcome.VALID, result.messages()
    assert result.schema == f"{KUEUE}/v1beta1"


def test_v1beta1_fields_on_a_v1beta2_cluster_queue_are_errors_with_path_and_hint() -> None:
    seed_queue = next(o for o in load_seed("kueue-provisioning.yaml") if o["kind"] == "ClusterQueue")
    promoted = copy.deepcopy(seed_queue)
    promoted["apiVersion"] = f"{KUEUE}/v1beta2"
    promoted["spec"]["cohort"] = "shared"
    result = validate_object(promoted)
    assert result.outcome is Outcome.INVALID
    assert not result.ok
    assert sorted(paths(result)) == ["spec.admissionChecks", "spec.cohort"]
    assert sorted(result.messages(), reverse=True) == [
        "ClusterQueue/cluster-queue: spec.cohort: field not declared in schema kueue.x-k8s.io/v1beta2 "
        "(did you mean cohortName?); it is declared in v1beta1; the API server would prune it",
        "ClusterQueue/cluster-queue: spec.admissionChecks: field not declared in schema "
        "kueue.x-k8s.io/v1beta2 (did you mean admissionChecksStrategy?); it is declared in v1beta1; "
        "the API server would prune it",
    ]


# --------------------------------------------------------------------------------------------
# Each class of error, on an otherwise valid object

Mutation = Callable[[dict[str, Any]], None]


def _set(path: list[str | int], value: Any) -> Mutation:
    def mutate(obj: dict[str, Any]) -> None:
        node: Any = obj
        for seg in path[:-1]:
            node = node[seg]
        node[path[-1]] = value

    return mutate


def _delete(path: list[str | int]) -> Mutation:
    def mutate(obj: dict[str, Any]) -> None:
        node: Any = obj
        for seg in path[:-1]:
            node = node[seg]
        del node[path[-1]]

    return mutate


RESOURCES: list[str | int] = ["spec", "resourceGroups", 0, "flavors", 0, "resources"]
RES_PATH = "spec.resourceGroups[0].flavors[0].resources"

CLUSTER_QUEUE_ERRORS: list[tuple[str, Mutation, str, str]] = [
    (
        "unknown-nested-field",
        _set([*RESOURCES, 0, "nominalQuotaa"], 4),
        f"{RES_PATH}[0].nominalQuotaa",
        "field not declared in schema kueue.x-k8s.io/v1beta2 (did you mean nominalQuota?)",
    ),
    (
        "wrong-type",
        _set(["spec", "resourceGroups"], {"coveredResources": ["cpu"]}),
        "spec.resourceGroups",
        "expected array, got object",
    ),
    (
        "wrong-type-scalar",
        _set(["spec", "preemption", "borrowWithinCohort", "maxPriorityThreshold"], "100"),
        "spec.preemption.borrowWithinCohort.maxPriorityThreshold",
        'expected integer, got string "100"',
    ),
    (
        "bad-enum",
        _set(["spec", "queueingStrategy"], "FIFO"),
        "spec.queueingStrategy",
        'unsupported value "FIFO"; supported values: "StrictFIFO", "BestEffortFIFO"',
    ),
    (
        "missing-required",
        _delete([*RESOURCES, 2, "nominalQuota"]),
        f"{RES_PATH}[2].nominalQuota",
        "required field missing",
    ),
    (
        "int-or-string-fraction",
        _set([*RESOURCES, 2, "nominalQuota"], 0.5),
        f"{RES_PATH}[2].nominalQuota",
        "must be an integer or a string (x-kubernetes-int-or-string), got number 0.5",
    ),
    (
        "int-or-string-bool",
        _set([*RESOURCES, 2, "nominalQuota"], True),
        f"{RES_PATH}[2].nominalQuota",
        "must be an integer or a string (x-kubernetes-int-or-string), got boolean true",
    ),
    (
        "quantity-pattern",
        _set([*RESOURCES, 1, "nominalQuota"], "160 GiB"),
        f"{RES_PATH}[1].nominalQuota",
        '"160 GiB" does not match pattern',
    ),
    (
        "name-pattern",
        _set(["spec", "cohortName"], "Research_Org"),
        "spec.cohortName",
        '"Research_Org" does not match pattern',
    ),
    (
        "max-length",
        _set(["spec", "cohortName"], "a" * 254),
        "spec.cohortName",
        "must be at most 253 characters long (has 254)",
    ),
    (
        "max-items",
        _set(["spec", "resourceGroups", 0, "coveredResources"], [f"example.com/r{i}" for i in range(65)]),
        "spec.resourceGroups[0].coveredResources",
        "must have at most 64 items (has 65)",
    ),
    (
        "min-items",
        _set(["spec", "resourceGroups", 0, "flavors"], []),
        "spec.resourceGroups[0].flavors",
        "must have at least 1 items (has 0)",
    ),
    (
        "list-map-duplicate",
        _set([*RESOURCES, 1, "name"], "cpu"),
        f"{RES_PATH}[1]",
        'duplicate entry with name="cpu" (list-map keys)',
    ),
    (
        # A null list item is never pruned (apiextensions-apiserver prunenulls.go), so the
        # server's validation refuses it; a null field is pruned first (test_stored_object.py).
        "null-not-allowed",
        _set(["spec", "resourceGroups", 0, "coveredResources", 0], None),
        "spec.resourceGroups[0].coveredResources[0]",
        "null is not allowed here",
    ),
    (
        "int32-range",
        _set(["spec", "preemption", "borrowWithinCohort", "maxPriorityThreshold"], 2**31),
        "spec.preemption.borrowWithinCohort.maxPriorityThreshold",
        "2147483648 is out of range for int32",
    ),
]


@pytest.mark.parametrize(
    ("mutate", "path", "expected"),
    [case[1:] for case in CLUSTER_QUEUE_ERRORS],
    ids=[case[0] for case in CLUSTER_QUEUE_ERRORS],
)
def test_cluster_queue_error_classes_are_caught_at_their_path(
    mutate: Mutation, path: str, expected: str
) -> None:
    obj = cluster_queue_v1beta2()
    mutate(obj)
    result = validate_object(obj)
    assert result.outcome is Outcome.INVALID
    # Schema errors come first; a CRD CEL rule may also fail on the same change (65 covered
    # resources vs a flavor's 3 resources), as the API server would report too.
    assert paths(result)[0] == path, result.messages()
    assert all(v.message.startswith("Invalid value: ") for v in result.violations[1:]), result.messages()
    assert message_at(result, path).startswith(expected)
    assert result.messages()[0].startswith(f"ClusterQueue/team-a: {path}: ")


METADATA_ERRORS: list[tuple[str, Mutation, str, str]] = [
    (
        "name-not-dns1123",
        _set(["metadata", "name"], "Team_A"),
        "metadata.name",
        '"Team_A" is not a DNS-1123 subdomain',
    ),
    (
        "name-too-long",
        _set(["metadata", "name"], "a" * 254),
        "metadata.name",
        "is not a DNS-1123 subdomain",
    ),
    ("name-missing", _delete(["metadata", "name"]), "metadata.name", "required field missing"),
    ("name-wrong-type", _set(["metadata", "name"], 7), "metadata.name", "expected string, got integer"),
    (
        "label-value-int",
        _set(["metadata", "labels", "priority"], 100),
        "metadata.labels.priority",
        "expected string, got integer 100 (quote it in YAML)",
    ),
    (
        "label-value-invalid",
        _set(["metadata", "labels", "team"], "team a"),
        "metadata.labels.team",
        'invalid label value "team a"',
    ),
    (
        "label-key-invalid",
        _set(["metadata", "labels", "Bad_Prefix/x"], "y"),
        'metadata.labels["Bad_Prefix/x"]',
        "invalid key: prefix 'Bad_Prefix' must be a DNS-1123 subdomain",
    ),
    (
        "annotations-not-a-map",
        _set(["metadata", "annotations"], ["a"]),
        "metadata.annotations",
        "expected object of strings, got array",
    ),
    (
        "unknown-metadata-field",
        _set(["metadata", "label"], {"a": "b"}),
        "metadata.label",
        "field not declared in ObjectMeta (did you mean labels?)",
    ),
    (
        "namespace-on-cluster-scoped",
        _set(["metadata", "namespace"], "team-a"),
        "metadata.namespace",
        "set on a cluster-scoped kind; the API server ignores it",
    ),
]


@pytest.mark.parametrize(
    ("mutate", "path", "expected"),
    [case[1:] for case in METADATA_ERRORS],
    ids=[case[0] for case in METADATA_ERRORS],
)
def test_metadata_gets_object_meta_rules(mutate: Mutation, path: str, expected: str) -> None:
    obj = cluster_queue_v1beta2()
    mutate(obj)
    result = validate_object(obj)
    assert result.outcome is Outcome.INVALID
    assert paths(result) == [path], result.messages()
    assert expected in message_at(result, path)


def test_namespace_must_be_a_dns1123_label_on_namespaced_kinds() -> None:
    local_queue = valid_v1beta2_objects()[4]
    assert local_queue["kind"] == "LocalQueue"
    local_queue["metadata"]["namespace"] = "team.a"
    result = validate_object(local_queue)
    assert paths(result) == ["metadata.namespace"]
    assert message_at(result, "metadata.namespace").startswith('"team.a" is not a DNS-1123 label')
    assert result.ref == "LocalQueue/team.a/user-queue"


def test_top_level_fields_are_checked_too() -> None:
    priority_class = valid_v1beta2_objects()[-1]
    priority_class["descripton"] = "typo"
    priority_class["value"] = "1000"
    result = validate_object(priority_class)
    assert paths(result) == ["value", "descripton"]
    assert message_at(result, "value") == 'expected integer, got string "1000"'
    assert "did you mean description?" in message_at(result, "descripton")


def test_minimum_and_max_items_on_other_crds() -> None:
    pod_group = {
        "apiVersion": "scheduling.run.ai/v2alpha2",
        "kind": "PodGroup",
        "metadata": {"name": "pg", "namespace": "team-a"},
        "spec": {"minMember": 0, "queue": "team-a"},
    }
    result = validate_object(pod_group)
    assert result.messages() == ["PodGroup/team-a/pg: spec.minMember: must be >= 1, got 0"]
    workload = {
        "apiVersion": f"{KUEUE}/v1beta2",
        "kind": "Workload",
        "metadata": {"name": "w", "namespace": "team-a"},
        "spec": {
            "podSets": [
                {"name": f"ps{i}", "count": 1, "template": {"spec": {"containers": [{"name": "c"}]}}}
                for i in range(19)
            ]
        },
    }
    result = validate_object(workload)
    assert paths(result) == ["spec.podSets"]
    assert message_at(result, "spec.podSets") == "must have at most 18 items (has 19)"


def test_kai_queue_quota_must_be_a_number() -> None:
    queue = next(o for o in load_seed("kai.yaml") if o["metadata"]["name"] == "team-a")
    queue["spec"]["resources"]["gpu"]["quota"] = "-1"
    result = validate_object(queue)
    assert result.messages() == ['Queue/team-a: spec.resources.gpu.quota: expected number, got string "-1"']


def test_deep_pod_template_typos_are_caught() -> None:
    cluster = next(o for o in load_seed("kai.yaml") if o["metadata"]["name"] == "raycluster-half-gpu")
    container = cluster["spec"]["workerGroupSpecs"][0]["template"]["spec"]["containers"][0]
    container["resource"] = container.pop("resources")
    result = validate_object(cluster)
    path = "spec.workerGroupSpecs[0].template.spec.containers[0].resource"
    assert paths(result) == [path]
    assert "(did you mean resources?)" in message_at(result, path)


def test_required_fields_with_a_schema_default_are_not_missing() -> None:
    # KubeRay requires workerGroupSpecs[].maxReplicas but defaults it; the API server defaults
    # before it validates, so the upstream sample (which omits it) is valid.
    cluster = next(o for o in load_seed("kai.yaml") if o["metadata"]["name"] == "raycluster-sample")
    assert "maxReplicas" not in cluster["spec"]["workerGroupSpecs"][0]
    assert validate_object(cluster).outcome is Outcome.VALID
    # groupName is required without a default.
    del cluster["spec"]["workerGroupSpecs"][0]["groupName"]
    assert paths(validate_object(cluster)) == ["spec.workerGroupSpecs[0].groupName"]


def test_integral_floats_count_as_integers_as_on_the_wire() -> None:
    priority_class = valid_v1beta2_objects()[-1]
    priority_class["value"] = 1000.0
    assert validate_object(priority_class).outcome is Outcome.VALID
    priority_class["value"] = 1000.5
    assert paths(validate_object(priority_class)) == ["value"]


# --------------------------------------------------------------------------------------------
# Display markers, CEL, kinds without a schema


def test_display_markers_are_accepted_for_any_type_and_counted() -> None:
    assert {UNKNOWN_DISPLAY, SECRET_DISPLAY} == MARKERS
    obj = cluster_queue_v1beta2()
    obj["metadata"]["name"] = UNKNOWN_DISPLAY
    obj["spec"]["resourceGroups"][0]["flavors"][0]["resources"][2]["nominalQuota"] = UNKNOWN_DISPLAY
    obj["spec"]["namespaceSelector"] = UNKNOWN_DISPLAY  # an object
    obj["spec"]["preemption"]["borrowWithinCohort"]["maxPriorityThreshold"] = SECRET_DISPLAY  # int
    obj["spec"]["queueingStrategy"] = UNKNOWN_DISPLAY  # an enum
    result = validate_object(obj)
    assert result.outcome is Outcome.VALID, result.messages()
    assert result.unchecked_values == 5
    # Anything else that is merely string-shaped still fails.
    obj["spec"]["queueingStrategy"] = "(not known)"
    assert paths(validate_object(obj)) == ["spec.queueingStrategy"]


def test_cel_rules_run_only_on_present_nodes_and_are_counted() -> None:
    # ClusterQueue v1beta2 carries CEL rules on spec, spec.preemption, spec.flavorFungibility
    # and each resourceGroups item: four apply to this object, and all four run.
    result = validate_object(cluster_queue_v1beta2())
    assert (result.cel_rules_checked, result.cel_rules_unchecked) == (4, 0)
    # ResourceFlavor.spec has 4 rules: 1 runs, 3 read oldSelf (transition rules, not checked).
    flavor = valid_v1beta2_objects()[0]
    flavor["spec"] = {"nodeLabels": {"a": "b"}}
    result = validate_object(flavor)
    assert (result.cel_rules_checked, result.cel_rules_unchecked) == (1, 3)
    assert result.cel_unchecked_reasons == ("transition rule (oldSelf): runs only on update (3)",)
    # An object that populates none of those nodes runs none.
    del flavor["spec"]
    result = validate_object(flavor)
    assert (result.cel_rules_checked, result.cel_rules_unchecked) == (0, 0)


@pytest.mark.parametrize(
    ("api_version", "kind", "outcome", "note"),
    [
        ("v1", "Namespace", Outcome.NOT_CUSTOM_RESOURCE, "v1 is the core API group"),
        ("apps/v1", "Deployment", Outcome.NOT_CUSTOM_RESOURCE, "no CRD for API group apps"),
        (f"{KUEUE}/v1beta2", "ClusterQeue", Outcome.NO_SCHEMA, "(did you mean ClusterQueue?)"),
        (f"{KUEUE}/v1beta2", "MultiKueueWidget", Outcome.NO_SCHEMA, "no CRD for kind MultiKueueWidget"),
    ],
)
def test_kinds_without_a_crd_are_not_errors(api_version: str, kind: str, outcome: Outcome, note: str) -> None:
    result = validate_object({"apiVersion": api_version, "kind": kind, "metadata": {"name": "x"}})
    assert result.outcome is outcome
    assert result.ok
    assert result.violations == ()
    assert note in result.note


def test_missing_api_version_or_kind_is_invalid() -> None:
    result = validate_object({"kind": "ClusterQueue", "metadata": {"name": "x"}})
    assert result.outcome is Outcome.INVALID
    assert paths(result) == ["apiVersion"]


def test_unserved_version_is_invalid() -> None:
    result = validate_object({"apiVersion": f"{KUEUE}/v1alpha1", "kind": "Cohort", "metadata": {"name": "c"}})
    assert result.outcome is Outcome.INVALID
    assert result.messages() == [
        "Cohort/c: apiVersion: version v1alpha1 of Cohort (cohorts.kueue.x-k8s.io) does not exist; "
        "served versions: v1beta1, v1beta2 (CRD kueue.x-k8s.io_cohorts.yaml)"
    ]


def test_format_path_quotes_keys_that_are_not_identifiers() -> None:
    assert format_path(["metadata", "labels", "kueue.x-k8s.io/queue-name"]) == (
        'metadata.labels["kueue.x-k8s.io/queue-name"]'
    )
    assert format_path(["spec", "resourceGroups", 0, "flavors"]) == "spec.resourceGroups[0].flavors"
    assert format_path([]) == "<root>"


# --------------------------------------------------------------------------------------------
# Schema directory and caching


def test_default_schema_dir_is_shared_schemas_beside_the_repo(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(SCHEMA_DIR_ENV, raising=False)
    repo = Path(crd_validation.__file__).resolve().parents[1]
    assert default_schema_dir() == repo.parent / "shared" / "schemas"
    assert (default_schema_dir() / "kueue" / "kueue.x-k8s.io_clusterqueues.yaml").is_file()


def test_env_var_and_argument_override_the_schema_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    only_queues = tmp_path / "only-queues"
    only_queues.mkdir()
    shutil.copy(default_schema_dir() / "kueue" / "kueue.x-k8s.io_localqueues.yaml", only_queues)
    local_queue = valid_v1beta2_objects()[4]
    cluster_queue = cluster_queue_v1beta2()

    monkeypatch.setenv(SCHEMA_DIR_ENV, str(only_queues))
    assert default_schema_dir() == only_queues
    assert validate_object(local_queue).outcome is Outcome.VALID
    assert validate_object(cluster_queue).outcome is Outcome.NO_SCHEMA

    # An explicit argument wins over the environment.
    monkeypatch.setenv(SCHEMA_DIR_ENV, str(tmp_path / "nowhere"))
    assert validate_object(local_queue, schema_dir=only_queues).outcome is Outcome.VALID


def test_missing_schema_dir_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SCHEMA_DIR_ENV, str(tmp_path / "nowhere"))
    with pytest.raises(SchemaDirError, match=f"does not exist.*{SCHEMA_DIR_ENV}"):
        validate_object(cluster_queue_v1beta2())


def test_each_crd_file_is_parsed_once_and_only_when_needed(monkeypatch: pytest.MonkeyPatch) -> None:
    parsed: list[str] = []
    real_load_all = yaml.load_all

    def counting_load_all(stream: Any, Loader: Any) -> Any:  # noqa: N803 - PyYAML's spelling
        parsed.append(Path(stream.name).name)
        return real_load_all(stream, Loader=Loader)

    cluster = next(o for o in load_seed("kai.yaml") if o["kind"] == "RayCluster")
    monkeypatch.setattr(yaml, "load_all", counting_load_all)
    catalog = CrdCatalog(default_schema_dir())
    results = [catalog.validate(obj) for obj in [cluster, cluster_queue_v1beta2()] * 50]
    assert all(r.outcome is Outcome.VALID for r in results)
    # The RayJob (1.4 MB) and Workload (1.4 MB) CRDs are never parsed for these objects.
    assert parsed == ["ray.io_rayclusters.yaml", "kueue.x-k8s.io_clusterqueues.yaml"]


def test_catalogs_are_cached_per_directory() -> None:
    assert get_catalog(default_schema_dir()) is get_catalog(default_schema_dir())
    assert get_catalog() is get_catalog()


def test_the_default_catalog_is_the_pinned_charts_crds_and_matches_shared_schemas(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Strict validation reads the CRDs the pinned charts ship, not ../shared/schemas; the two
    agree on every schema the shared folder holds (same versions, served flags, schemas)."""
    monkeypatch.delenv(SCHEMA_DIR_ENV, raising=False)
    charts = get_catalog()
    assert "pinned charts" in charts.label
    # ../shared/schemas/kai holds KAI v0.13.0's CRDs (its SOURCE.txt); the pin is v0.17.0, whose
    # PodGroup schema changed, so the KAI group is compared in the KAI render test instead.
    shared = [c for c in CrdCatalog(default_schema_dir()).crds() if c.group in ("kueue.x-k8s.io", "ray.io")]
    assert len(shared) >= 10
    for crd in shared:
        from_chart = charts.crd(crd.group, crd.kind)
        assert from_chart is not None, (crd.group, crd.kind)
        assert {v.name: (v.served, v.storage) for v in from_chart.versions.values()} == {
            v.name: (v.served, v.storage) for v in crd.versions.values()
        }
        for name, version in crd.versions.items():
            assert from_chart.versions[name].schema == version.schema, (crd.kind, name)


# --------------------------------------------------------------------------------------------
# The seed documents


@pytest.mark.parametrize("name", SEED_FILES)
def test_seed_fixtures_load_and_name_their_source(name: str) -> None:
    header = (SEEDS / name).read_text(encoding="utf-8").split("apiVersion:", 1)[0]
    assert "Source" in header and "../shared/seeds/" in header
    docs = load_seed(name)
    assert docs
    for doc in docs:
        assert isinstance(doc.get("apiVersion"), str) and isinstance(doc.get("kind"), str)
        assert doc["metadata"]["name"]


EXPECTED_SEED_OBJECTS = {
    "kueue-provisioning.yaml": [
        "ResourceFlavor/default-flavor",
        "AdmissionCheck/rayjob-gpu",
        "ProvisioningRequestConfig/rayjob-gpu-config",
        "ClusterQueue/cluster-queue",
        "LocalQueue/default/user-queue",
        "RayJob/pytorch-text-classifier",
    ],
    "kueue-priority.yaml": [
        "WorkloadPriorityClass/prod-priority",
        "WorkloadPriorityClass/dev-priority",
        "RayJob/pytorch-text-classifier-dev",
    ],
    "kai.yaml": [
        "Queue/department-1",
        "Queue/team-a",
        "RayCluster/raycluster-sample",
        "RayCluster/raycluster-half-gpu",
    ],
    "skypilot-shared-queue.yaml": [
        "Namespace/team1",
        "Namespace/team2",
        "ResourceFlavor/default-flavor",
        "AdmissionCheck/skypilot-kueue-prov",
        "ProvisioningRequestConfig/skypilot-kueue-config",
        "ClusterQueue/skypilot-cluster-queue",
        "LocalQueue/team1/skypilot-local-queue-team1",
        "LocalQueue/team2/skypilot-local-queue-team2",
    ],
    "skypilot-cohort.yaml": [
        "Namespace/team1",
        "Namespace/team2",
        "ResourceFlavor/default-flavor",
        "AdmissionCheck/skypilot-kueue-prov",
        "ProvisioningRequestConfig/skypilot-kueue-config",
        "Cohort/skypilot-cohort",
        "ClusterQueue/skypilot-cluster-queue-team1",
        "ClusterQueue/skypilot-cluster-queue-team2",
        "LocalQueue/team1/skypilot-local-queue-team1",
        "LocalQueue/team2/skypilot-local-queue-team2",
    ],
}


@pytest.mark.parametrize("name", SEED_FILES)
def test_seed_verdicts_under_strict_validation(name: str) -> None:
    results = validate_objects(load_seed(name))
    assert [r.ref for r in results] == EXPECTED_SEED_OBJECTS[name]
    failing = {r.ref: r.messages() for r in results if not r.ok}
    if name == "skypilot-cohort.yaml":
        # The real finding: the seed's Cohort is v1alpha1, which Kueue 0.19.2 does not serve.
        assert failing == {
            "Cohort/skypilot-cohort": [
                "Cohort/skypilot-cohort: apiVersion: version v1alpha1 of Cohort (cohorts.kueue.x-k8s.io) "
                "does not exist; served versions: v1beta1, v1beta2 (CRD kueue.x-k8s.io_cohorts.yaml)"
            ]
        }
    else:
        assert failing == {}
    for result in results:
        if result.kind == "Namespace":
            assert result.outcome is Outcome.NOT_CUSTOM_RESOURCE
        elif result.ok:
            assert result.outcome is Outcome.VALID
    assert all(r.schema.endswith("/v1beta1") for r in results if r.api_version.startswith(KUEUE) and r.ok)


def test_seed_cluster_queues_lose_fields_when_relabelled_v1beta2() -> None:
    # What the API server would prune if someone only bumped apiVersion on the seed documents.
    queues = [o for o in load_seed("skypilot-cohort.yaml") if o["kind"] == "ClusterQueue"]
    for queue in queues:
        queue["apiVersion"] = f"{KUEUE}/v1beta2"
    results = validate_objects(queues)
    assert [sorted(paths(r)) for r in results] == [["spec.admissionChecks", "spec.cohort"]] * 2


# --------------------------------------------------------------------------------------------
# Schema keywords the upstream CRDs do not use (yet), on a synthetic CRD

WIDGET_CRD = """
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {kind: Widget, plural: widgets}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          apiVersion: {type: string}
          kind: {type: string}
          metadata: {type: object}
          spec:
            type: object
            x-kubernetes-validations: [{rule: "true"}]
            properties:
              free:
                type: object
                x-kubernetes-preserve-unknown-fields: true
                properties: {size: {type: integer}}
              template: {type: object, x-kubernetes-embedded-resource: true, x-kubernetes-preserve-unknown-fields: true}
              tags: {type: array, items: {type: string}, x-kubernetes-list-type: set}
              when: {type: string, format: date-time, nullable: true}
              ratio: {type: number, minimum: 0, maximum: 1, exclusiveMaximum: true}
              mode: {type: string, allOf: [{minLength: 2}], oneOf: [{enum: [aa]}, {enum: [bb]}]}
              scale: {type: integer, multipleOf: 5}
              options: {type: object, additionalProperties: {type: integer}, maxProperties: 2}
              name: {type: string, pattern: "^(?i)[a-z]+$"}
  - name: v2
    served: false
    storage: false
    schema:
      openAPIV3Schema: {type: object}
"""


@pytest.fixture
def widget_catalog(tmp_path: Path) -> CrdCatalog:
    (tmp_path / "example.com_widgets.yaml").write_text(WIDGET_CRD, encoding="utf-8")
    return CrdCatalog(tmp_path)


def widget(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": spec}


def test_generic_schema_keywords_pass_when_satisfied(widget_catalog: CrdCatalog) -> None:
    result = widget_catalog.validate(
        widget(
            free={"size": 3, "anything": {"goes": True}},
            template={"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"x": 1}},
            tags=["a", "b"],
            when=None,
            ratio=0.5,
            mode="aa",
            scale=10,
            options={"a": 1, "b": 2},
            name="ABC",
        )
    )
    assert result.outcome is Outcome.VALID, result.messages()
    assert result.cel_rules_checked == 1


@pytest.mark.parametrize(
    ("spec", "path", "expected"),
    [
        ({"free": {"size": "3"}}, "spec.free.size", 'expected integer, got string "3"'),
        ({"template": {"metadata": {"name": "Bad_"}}}, "spec.template.metadata.name", "is not a DNS-1123"),
        ({"tags": ["a", "a"]}, "spec.tags[1]", 'duplicate value "a" (x-kubernetes-list-type: set)'),
        ({"when": "yesterday"}, "spec.when", '"yesterday" is not an RFC 3339 date-time'),
        ({"ratio": 1}, "spec.ratio", "must be < 1, got 1"),
        ({"ratio": -0.1}, "spec.ratio", "must be >= 0, got -0.1"),
        ({"mode": "cc"}, "spec.mode", "must match exactly one oneOf alternative (matches 0)"),
        ({"scale": 7}, "spec.scale", "must be a multiple of 5"),
        ({"options": {"a": 1, "b": "x"}}, "spec.options.b", 'expected integer, got string "x"'),
        ({"options": {"a": 1, "b": 2, "c": 3}}, "spec.options", "must have at most 2 entries (has 3)"),
        ({"name": "a1"}, "spec.name", '"a1" does not match pattern'),
        ({"colour": "red"}, "spec.colour", "field not declared in schema example.com/v1"),
    ],
)
def test_generic_schema_keywords_catch_violations(
    widget_catalog: CrdCatalog, spec: dict[str, Any], path: str, expected: str
) -> None:
    result = widget_catalog.validate(widget(**spec))
    assert paths(result) == [path], result.messages()
    assert expected in message_at(result, path)


def test_all_of_branches_report_their_own_errors(widget_catalog: CrdCatalog) -> None:
    result = widget_catalog.validate(widget(mode="a"))
    assert [v.message for v in result.violations] == [
        "must be at least 2 characters long",
        "must match exactly one oneOf alternative (matches 0)",
    ]


def test_a_version_that_exists_but_is_not_served_is_invalid(widget_catalog: CrdCatalog) -> None:
    result = widget_catalog.validate(
        {"apiVersion": "example.com/v2", "kind": "Widget", "metadata": {"name": "w"}}
    )
    assert result.outcome is Outcome.INVALID
    assert (
        "version v2 of Widget (widgets.example.com) is not served; served versions: v1"
        in result.messages()[0]
    )
