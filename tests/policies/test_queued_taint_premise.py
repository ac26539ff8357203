"""The queued-provisioning taint on a Kueue-queued pod is an unsettled premise (issue 18 item 7).

Kueue v0.19.2 (``pkg/controller/admissionchecks/provisioning/controller.go`` ``podSetUpdates``)
gives a pod it admits through a ProvisioningRequest only annotations
(``autoscaling.x-k8s.io/consume-provisioning-request``, the class name) and the
ProvisioningRequestConfig's nodeSelector, never a toleration; GKE's DWS sample (ai-on-gke
``dws-examples/job.yaml``) does not tolerate ``cloud.google.com/gke-queued``, cluster-toolkit's
DWS README says workloads must.  No upstream source settles it, so ``pod-template-fits-a-node``
says so as an advisory, never as "no node pool accepts its pods".  A pod Kueue does not queue
never gets a ProvisioningRequest, so for it the taint still rejects the pool.
"""

from __future__ import annotations

from typing import Any

from gpu_batch_policy.facts.fit.placement import placement
from gpu_batch_policy.facts.model import StackModel
from gpu_batch_policy.facts.model.workloads import PodTemplate

from tests.policies.pack_harness import Res, policy, run
from tests.policies.pack_objects import gke_cluster, k8s, queued_pool

FIT = policy("pod-template-fits-a-node")
GPU_CONTAINER = {
    "name": "c",
    "image": "x",
    "resources": {"limits": {"nvidia.com/gpu": 1}, "requests": {"cpu": "1"}},
}


def job(labels: dict[str, str], tolerations: list[dict[str, Any]] | None = None) -> Res:
    spec: dict[str, Any] = {"containers": [GPU_CONTAINER], "restartPolicy": "Never"}
    if tolerations is not None:
        spec["tolerations"] = tolerations
    return k8s("batch/v1", "Job", "train", namespace="team", labels=labels, spec={"template": {"spec": spec}})


def test_a_kueue_queued_pod_leaves_the_queued_pool_undecided_not_rejected() -> None:
    model = StackModel.from_plain(
        [(r.type, r.props, r.urn, r.name) for r in (gke_cluster(), queued_pool())], render=False
    )
    pod = PodTemplate({"spec": {"containers": [GPU_CONTAINER]}}, "")
    queued = placement(model, pod, kueue_queued=True)
    assert not queued.rejected and [p.name for p in queued.unsettled] == ["gpu-pool"]
    plain = placement(model, pod)
    assert [p.name for p, _ in plain.rejected] == ["gpu-pool"] and not plain.unsettled


def test_the_finding_is_advisory_and_says_what_would_settle_it() -> None:
    result = run(
        FIT,
        [gke_cluster(removeDefaultNodePool=True), queued_pool(), job({"kueue.x-k8s.io/queue-name": "lq"})],
    )
    assert result.clean, result.text()
    assert result.cannot_check is not None
    assert "cloud.google.com/gke-queued=true:NoSchedule" in result.cannot_check
    assert "A GKE document or a run on GKE settles it" in result.cannot_check


def test_a_pod_that_tolerates_the_taint_gets_no_finding() -> None:
    toleration = {"key": "cloud.google.com/gke-queued", "operator": "Exists", "effect": "NoSchedule"}
    result = run(FIT, [gke_cluster(), queued_pool(), job({"kueue.x-k8s.io/queue-name": "lq"}, [toleration])])
    assert result.clean and (result.cannot_check is None or "gke-queued" not in result.cannot_check)


def test_a_pod_kueue_does_not_queue_is_still_rejected() -> None:
    result = run(FIT, [gke_cluster(removeDefaultNodePool=True), queued_pool(), job({})])
    assert "no node pool accepts its pods" in result.text()
    assert "cloud.google.com/gke-queued=true:NoSchedule is not tolerated" in result.text()
