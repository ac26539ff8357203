"""Per-team Workload Identity (issue 27 #8): a team's pods act as its own Google service account,
and only its own.  GKE how-to/workload-identity ("link a Kubernetes ServiceAccount to an IAM
service account"): the IAM member ``serviceAccount:<project>.svc.id.goog[<ns>/<ksa>]`` holds
``roles/iam.workloadIdentityUser`` on the account, the KSA carries
``iam.gke.io/gcp-service-account``, every node pool serves the GKE metadata server."""

from __future__ import annotations

import pytest

from preview.harness import RunResult
from stacks.errors import ConfigError
from tests.stack_runner import config_value, of_type, run_stack

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
SA_IAM = "gcp:serviceaccount/iAMMember:IAMMember"
BUCKET_IAM = "gcp:storage/bucketIAMMember:BucketIAMMember"
KSA = "kubernetes:core/v1:ServiceAccount"


@pytest.fixture(scope="module")
def prod() -> RunResult:
    teams = config_value("prod", "gpu-batch:teams")
    teams[0]["workloadIdentity"] = {
        "buckets": [{"bucket": "research-datasets"}, {"bucket": "research-checkpoints", "access": "write"}]
    }
    return run_stack("prod", {"gpu-batch:teams": teams})


def test_only_the_team_s_service_account_may_act_as_its_account(prod: RunResult) -> None:
    (binding,) = of_type(prod, SA_IAM)
    assert binding.inputs["role"] == "roles/iam.workloadIdentityUser"
    assert binding.inputs["member"] == "serviceAccount:gpu-batch-prod.svc.id.goog[research/workload]"
    (ksa,) = [r for r in of_type(prod, KSA) if r.inputs["metadata"]["namespace"] == "research"]
    assert ksa.inputs["metadata"]["name"] == "workload"
    assert "iam.gke.io/gcp-service-account" in ksa.inputs["metadata"]["annotations"]
    # applied asked for nothing: no account, no binding naming its namespace.
    assert not [r for r in of_type(prod, KSA) if r.inputs["metadata"]["namespace"] == "applied"]


def test_bucket_access_is_per_bucket_and_as_declared(prod: RunResult) -> None:
    roles = {r.inputs["bucket"]: r.inputs["role"] for r in of_type(prod, BUCKET_IAM)}
    assert roles == {
        "research-datasets": "roles/storage.objectViewer",
        "research-checkpoints": "roles/storage.objectUser",
    }


def test_every_pool_serves_the_gke_metadata_server(prod: RunResult) -> None:
    pools = of_type(prod, "gcp:container/nodePool:NodePool")
    assert pools and all(
        p.inputs["nodeConfig"]["workloadMetadataConfig"]["mode"] == "GKE_METADATA" for p in pools
    )


def test_a_wrong_access_is_one_config_line() -> None:
    teams = config_value("prod", "gpu-batch:teams")
    teams[0]["workloadIdentity"] = {"buckets": [{"bucket": "x", "access": "admin"}]}
    with pytest.raises(ConfigError, match=r"gpu-batch:teams\[0\]\.workloadIdentity\.buckets\[0\]\.access"):
        run_stack("prod", {"gpu-batch:teams": teams})
