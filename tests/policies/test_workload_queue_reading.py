"""Issue 18 items 3 and 5: every kind Kueue 0.19.2 admits, with the queue label read where Kueue
or KAI v0.17.0 reads it, and explicit KAI PodGroups.  Each test cites the upstream code it follows."""

from __future__ import annotations

from typing import Any

import yaml
from gpu_batch_policy.rules.installs import wiring as rules_wiring
from gpu_batch_policy.rules.kai import min_member as rules_kai_min_member
from gpu_batch_policy.rules.kai import queues as rules_kai
from gpu_batch_policy.rules.kueue import config as kueue_config
from gpu_batch_policy.rules.kueue import queue_labels as rules_queue_labels
from gpu_batch_policy.rules.kueue import workload_gangs as rules_workload_gangs

from tests.policies.test_workload_kinds import counts
from tests.policies.workload_stack import (
    Registration,
    cluster_queue,
    flavor,
    helm_release,
    k8s,
    kai_queue,
    local_queue,
    pod,
    pytorch_job,
    run,
)

RULES = {
    p.name: p
    for m in (rules_workload_gangs, rules_wiring, rules_kai, rules_queue_labels, rules_kai_min_member)
    for p in m.POLICIES
}
KUEUE = {"kueue.x-k8s.io/queue-name": "user-queue"}


def queue(gpus: int = 4) -> list[Registration]:
    quota = {"cpu": 100, "memory": "1000Gi", "nvidia.com/gpu": gpus}
    return [flavor("gpu"), cluster_queue("cq", {"gpu": quota}), local_queue("user-queue", "ml", "cq")]


def mpijob(workers: int, *, labels: dict[str, str] | None = KUEUE, **spec: Any) -> Registration:
    replica_specs = {
        "Launcher": {"replicas": 1, "template": pod()},
        "Worker": {"replicas": workers, "template": pod(gpu=1)},
    }
    return k8s(
        "kubeflow.org/v2beta1",
        "MPIJob",
        "mpi",
        namespace="ml",
        labels=labels,
        spec={"mpiReplicaSpecs": replica_specs, **spec},
    )


# --- item 3: MPIJob ------------------------------------------------------------------------------
def test_mpijob_is_launcher_plus_workers() -> None:
    """kueue v0.19.2 pkg/controller/jobs/mpijob/mpijob_controller.go PodSets / orderedReplicaTypes /
    podsCount: a Launcher pod set, then a Worker pod set, replicas defaulting to 1;
    runLauncherAsWorker does not change the count."""
    assert counts([mpijob(3)]) == {"mpi": [("Launcher", 1), ("Worker", 3)]}
    assert counts([mpijob(3, runLauncherAsWorker=True)]) == {"mpi": [("Launcher", 1), ("Worker", 3)]}
    no_replicas = k8s(
        "kubeflow.org/v2beta1",
        "MPIJob",
        "mpi",
        spec={"mpiReplicaSpecs": {"Worker": {"template": pod(gpu=1)}}},
    )
    assert counts([no_replicas]) == {"mpi": [("Worker", 1)]}


def test_mpijob_gang_bigger_than_its_queue_is_caught() -> None:
    rule = RULES["workload-gang-fits-queue"]
    assert run(rule, [*queue(4), mpijob(8)]).mentions("MPIJob 'ml/mpi'", "never admits")
    assert run(rule, [*queue(4), mpijob(4)]).violations == []


# --- item 3: Deployment / StatefulSet read the pod template's label ------------------------------
def deployment(
    kind: str,
    *,
    owner: dict[str, str] | None,
    template: dict[str, str] | None,
    gpus: int = 1,
    replicas: int = 1,
) -> Registration:
    return k8s(
        "apps/v1",
        kind,
        "srv",
        namespace="ml",
        labels=owner,
        spec={"replicas": replicas, "template": pod(gpu=gpus, labels=template)},
    )


def test_deployment_template_label_queues_its_pods() -> None:
    """kueue v0.19.2 pkg/controller/jobs/pod/pod_webhook.go Default: a pod is suspended and queued
    when QueueNameForObject(pod) is set; the Deployment webhook only copies the owner's label into
    the template (deployment_webhook.go Default).  So a template label is a queue label."""
    rule = RULES["workload-gang-fits-queue"]
    broken = deployment("Deployment", owner=None, template=KUEUE, gpus=8)
    assert run(rule, [*queue(4), broken]).mentions("Deployment 'ml/srv'", "never admits")
    assert (
        run(rule, [*queue(4), deployment("Deployment", owner=None, template=KUEUE, gpus=2)]).violations == []
    )


def test_deployment_template_label_naming_a_missing_local_queue_is_caught() -> None:
    rule = RULES["kueue-queue-label-resolves"]
    typo = deployment("Deployment", owner=None, template={"kueue.x-k8s.io/queue-name": "user-queu"})
    assert run(rule, [*queue(), typo]).mentions("Deployment 'ml/srv'", "no LocalQueue 'user-queu'")
    assert run(rule, [*queue(), deployment("Deployment", owner=None, template=KUEUE)]).violations == []


def test_template_label_is_no_missing_queue_label() -> None:
    """The false alarm of issue 18: a GPU Deployment in a team namespace labelled on its template."""
    rule = RULES["workload-has-queue-label"]
    labelled = deployment("Deployment", owner=None, template=KUEUE)
    assert run(rule, [*queue(), labelled]).violations == []
    bare = deployment("Deployment", owner=None, template=None)
    assert run(rule, [*queue(), bare]).mentions("Deployment 'ml/srv'", "carries no queue label")


def test_statefulset_label_on_owner_is_one_gang_on_template_pod_by_pod() -> None:
    """statefulset_reconciler.go Reconcile (L198-209): a Workload of all replicas only when the
    StatefulSet itself has a queue name; otherwise its template-labelled pods are queued alone."""
    rule = RULES["workload-gang-fits-queue"]
    whole = deployment("StatefulSet", owner=KUEUE, template=None, replicas=5)
    assert run(rule, [*queue(4), whole]).mentions("StatefulSet 'ml/srv'", "never admits")
    pod_by_pod = deployment("StatefulSet", owner=None, template=KUEUE, replicas=5)
    assert counts([pod_by_pod]) == {"srv": [("main", 1)]}
    assert run(rule, [*queue(4), pod_by_pod]).violations == []


# --- item 5: KAI queue fallbacks and explicit PodGroups -----------------------------------------
KAI_QUEUES = [kai_queue("dept", gpu=(-1, 2)), kai_queue("team-a", parent="dept")]


def kai_job(
    *, owner: dict[str, str] | None, template: dict[str, str] | None, scheduler: bool = True
) -> Registration:
    tmpl = pod(gpu=1, labels=template)
    if scheduler:
        tmpl["spec"]["schedulerName"] = "kai-scheduler"
    return k8s(
        "batch/v1",
        "Job",
        "train",
        labels=owner,
        annotations={"kai.scheduler/batch-min-member": "4"},
        spec={"parallelism": 4, "template": tmpl},
    )


def test_kai_reads_the_pod_label_when_the_owner_has_none() -> None:
    """KAI v0.17.0 pkg/podgrouper/podgrouper/plugins/defaultgrouper/default_grouper.go
    CalcPodGroupQueue: the top owner's kai.scheduler/queue, else the pod's."""
    leaf = RULES["kai-workload-leaf-queue"]
    on_pod = kai_job(owner=None, template={"kai.scheduler/queue": "dept"})
    assert run(leaf, [*KAI_QUEUES, on_pod]).mentions("Job 'default/train'", "'dept' is a parent queue")
    good = kai_job(owner=None, template={"kai.scheduler/queue": "team-a"})
    assert run(leaf, [*KAI_QUEUES, good]).violations == []
    limits = RULES["kai-workload-gang-within-limits"]
    assert run(limits, [*KAI_QUEUES, good]).mentions("Job 'default/train'", "caps gpu at 2")


def test_kai_project_label_names_the_queue_for_kai_pods() -> None:
    """default_grouper.go calculateQueueName: the ``project`` label (owner, else pod) is the queue
    when no kai.scheduler/queue is set; read only for pods scheduled by kai-scheduler."""
    limits = RULES["kai-workload-gang-within-limits"]
    project = kai_job(owner={"project": "team-a"}, template=None)
    assert run(limits, [*KAI_QUEUES, project]).mentions("Job 'default/train'", "caps gpu at 2")
    not_kai = kai_job(owner={"project": "team-a"}, template=None, scheduler=False)
    assert run(limits, [*KAI_QUEUES, not_kai]).violations == []


def pod_group(name: str, queue: str, **spec: Any) -> Registration:
    return k8s("scheduling.run.ai/v2alpha2", "PodGroup", name, namespace="ml", spec={"queue": queue, **spec})


def member(name: str, group: str, *, subgroup: str | None = None) -> Registration:
    spec = pod(gpu=1)["spec"]
    spec["schedulerName"] = "kai-scheduler"
    labels = {"kai.scheduler/subgroup-name": subgroup} if subgroup else None
    return k8s(
        "v1", "Pod", name, namespace="ml", labels=labels, annotations={"pod-group-name": group}, spec=spec
    )


def test_explicit_pod_group_min_member_against_the_limit_chain() -> None:
    """KAI v0.17.0 pkg/scheduler/api/podgroup_info/job_info.go setSubGroups: without subgroups,
    max(minMember, 1) pods must start together; the queue is spec.queue."""
    limits = RULES["kai-workload-gang-within-limits"]
    members = [member(f"p{i}", "pg") for i in range(4)]
    out = run(limits, [*KAI_QUEUES, pod_group("pg", "team-a", minMember=3), *members])
    assert out.mentions("PodGroup 'ml/pg'", "caps gpu at 2")
    assert run(limits, [*KAI_QUEUES, pod_group("pg", "team-a", minMember=2), *members]).violations == []


def test_explicit_pod_group_leaf_subgroups_add_up() -> None:
    """job_info.go setSubGroups / subgroup_info.FromPodGroup: each leaf subgroup's minMember pods
    (labelled kai.scheduler/subgroup-name) are required."""
    limits = RULES["kai-workload-gang-within-limits"]
    subgroups = [{"name": "a", "minMember": 2}, {"name": "b", "minMember": 1}]
    members = [
        member("a1", "pg", subgroup="a"),
        member("a2", "pg", subgroup="a"),
        member("b1", "pg", subgroup="b"),
    ]
    assert run(limits, [*KAI_QUEUES, pod_group("pg", "team-a", subGroups=subgroups), *members]).mentions(
        "PodGroup 'ml/pg'", "caps gpu at 2"
    )
    smaller = [{"name": "a", "minMember": 1}, {"name": "b", "minMember": 1}]
    assert run(limits, [*KAI_QUEUES, pod_group("pg", "team-a", subGroups=smaller), *members]).violations == []


def test_explicit_pod_group_queue_reference() -> None:
    """podgroup_types.go PodGroupSpec.Queue: 'if queue does not exist, the PodGroup will not be
    scheduled'; KAI schedules only leaf queues."""
    leaf = RULES["kai-workload-leaf-queue"]
    assert run(leaf, [*KAI_QUEUES, pod_group("pg", "team-b")]).mentions(
        "PodGroup 'ml/pg'", "no KAI Queue 'team-b'"
    )
    assert run(leaf, [*KAI_QUEUES, pod_group("pg", "dept")]).mentions("PodGroup 'ml/pg'", "parent queue")
    assert run(leaf, [*KAI_QUEUES, pod_group("pg", "team-a")]).violations == []


# --- item 5: kai.scheduler/batch-min-member ------------------------------------------------------
def kai_template() -> dict[str, Any]:
    template = pod(gpu=1)
    template["spec"]["schedulerName"] = "kai-scheduler"
    return template


def annotated_job(value: str, *, on_kai: bool = True) -> Registration:
    template = kai_template() if on_kai else pod(gpu=1)
    spec = {"parallelism": 4, "template": template}
    return k8s("batch/v1", "Job", "train", annotations={"kai.scheduler/batch-min-member": value}, spec=spec)


def test_batch_min_member_must_parse_and_be_reachable() -> None:
    """KAI v0.17.0 plugins/job/job_grouper.go calcMinMember: ParseInt error -> no PodGroup; a
    minMember above the alive pods is never ready (subgroup_info/podset.go IsReadyForScheduling)."""
    rule = RULES["kai-batch-min-member"]
    assert run(rule, [annotated_job("four")]).mentions("Job 'default/train'", "is not an integer")
    assert run(rule, [annotated_job("8")]).mentions("Job 'default/train'", "only 4 can ever be alive")
    assert run(rule, [annotated_job("4")]).violations == []
    # Not scheduled by KAI: the annotation means nothing.
    assert run(rule, [annotated_job("8", on_kai=False)]).violations == []


def jobset(annotations: dict[str, str] | None = None, rj_min: str | None = None) -> Registration:
    job_template: dict[str, Any] = {"spec": {"parallelism": 2, "template": kai_template()}}
    if rj_min is not None:
        job_template["metadata"] = {"annotations": {"kai.scheduler/batch-min-member": rj_min}}
    rjs = [
        {"name": "workers", "replicas": 2, "template": job_template},
        {"name": "driver", "template": {"spec": {"template": kai_template()}}},
    ]
    return k8s(
        "jobset.x-k8s.io/v1alpha2",
        "JobSet",
        "js",
        labels={"kai.scheduler/queue": "team-a"},
        annotations=annotations,
        spec={"replicatedJobs": rjs},
    )


def test_jobset_batch_min_member_on_the_jobset_and_its_templates() -> None:
    """plugins/jobset/jobset_grouper.go computePodGroupMinSubGroup (JobSet annotation: how many
    replicatedJobs) and singleReplicaSubGroupMinMember (template annotation: each replica's pods,
    an integer >= 1)."""
    assert counts([jobset()], kai=True) == {"js": [("workers", 4), ("driver", 1)]}
    assert counts([jobset(rj_min="1")], kai=True) == {"js": [("workers", 2), ("driver", 1)]}
    assert counts([jobset({"kai.scheduler/batch-min-member": "1"})], kai=True) == {"js": [("driver", 1)]}
    rule = RULES["kai-batch-min-member"]
    assert run(rule, [jobset(rj_min="3")]).mentions("JobSet 'default/js'", "replicatedJobs[0]", "only 2")
    assert run(rule, [jobset({"kai.scheduler/batch-min-member": "0"})]).mentions("is not an integer >= 1")
    assert run(rule, [jobset(rj_min="2")]).violations == []


# --- item 3/6: every labelled kind needs its integration ------------------------------------------
def test_labelled_kind_needs_its_integration_in_the_release() -> None:
    """kueue v0.19.2 pkg/controller/jobframework/setup.go: only integrations listed in
    integrations.frameworks are set up; a labelled PyTorchJob under a release that leaves
    kubeflow.org/pytorchjob out runs ungated."""
    rule = next(p for p in kueue_config.POLICIES if p.name == "kueue-integrations-cover-workloads")

    def release(frameworks: list[str]) -> Registration:
        config = yaml.safe_dump({"integrations": {"frameworks": frameworks}})
        return helm_release(
            "kueue",
            "oci://registry.k8s.io/kueue/charts/kueue",
            {"managerConfig": {"controllerManagerConfigYaml": config}},
        )

    ptj = pytorch_job("ptj", 2, labels=KUEUE)
    assert run(rule, [release(["batch/job"]), ptj]).mentions("lacks 'kubeflow.org/pytorchjob'")
    assert run(rule, [release(["batch/job", "kubeflow.org/pytorchjob"]), ptj]).violations == []
    # A Deployment labelled only on its template needs the pod integration.
    template_only = deployment("Deployment", owner=None, template=KUEUE)
    assert run(rule, [release(["batch/job"]), template_only]).mentions("lacks 'pod'")
    assert run(rule, [release(["batch/job", "pod"]), template_only]).violations == []
    # 'deployment' enables 'pod' implicitly (deployment_controller.go ImplicitlyEnabledFrameworkNames).
    assert run(rule, [release(["batch/job", "deployment"]), template_only]).violations == []


def test_template_labelled_deployment_is_queued_by_the_pod_integration() -> None:
    """With only 'pod' enabled (no 'deployment'), a Deployment labelled on its template is still
    queued pod by pod (pod_webhook.go Default reads the pod's own label), so it is judged."""
    only_pod = helm_release(
        "kueue",
        "oci://registry.k8s.io/kueue/charts/kueue",
        {
            "managerConfig": {
                "controllerManagerConfigYaml": yaml.safe_dump({"integrations": {"frameworks": ["pod"]}})
            }
        },
    )
    rule = RULES["workload-gang-fits-queue"]
    template_only = deployment("Deployment", owner=None, template=KUEUE, gpus=8)
    assert run(rule, [only_pod, *queue(4), template_only]).mentions("Deployment 'ml/srv'", "never admits")
    owner_only = deployment("Deployment", owner=KUEUE, template=None, gpus=8)
    assert run(rule, [only_pod, *queue(4), owner_only]).violations == []
