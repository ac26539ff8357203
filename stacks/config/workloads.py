"""Config of Ray workloads declared as code (key ``gpu-batch:workloads``), and their checks.

Optional per stack.  Each entry is a RayJob or RayCluster for one team, either written out
(image, head, workerGroups, entrypoint ...) or taken from the built-in catalogue with
``template: <name>`` and overridden key by key (:mod:`stacks.workload_templates`).  The queue
is never written here: it is the team's LocalQueue (``scheduler: kueue``) or the team's leaf KAI
queue (``scheduler: kai``), so a workload cannot jump into another team's quota.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Literal

from gpu_batch_policy.facts.tas.annotations import webhook_problems
from pydantic import Field, ModelWrapValidatorHandler, ValidationError, model_validator
from pydantic_core import InitErrorDetails

from stacks.base import ConfigModel, DnsLabel, NonEmptyStr, NonNegativeInt, PositiveInt
from stacks.config.kai_queues import KAI_PRIORITY_CLASSES
from stacks.config.queues import KueueQueuesConfig
from stacks.config.tenancy import TeamConfig
from stacks.config.topology import TopologyRequestConfig
from stacks.errors import ConfigIssue
from stacks.quantity import Quantity
from stacks.references import unknown_reference
from stacks.workload_templates import TEMPLATES, merge

WORKLOADS_KEY = "gpu-batch:workloads"
# KubeRay refuses a RayJob whose name is longer (the RayCluster it creates appends a suffix);
# such a RayJob sits in ValidationFailed holding its Kueue quota (anchors.md §4.10, kueue#13413).
MAX_RAYJOB_NAME = 47
# A Kueue Workload holds at most 18 pod sets (0.19 CRD): the head plus 17 worker groups.
MAX_KUEUE_WORKER_GROUPS = 17
RAYJOB_ONLY = (
    "entrypoint",
    "runtime_env_yaml",
    "submission_mode",
    "shutdown_after_job_finishes",
    "ttl_seconds_after_finished",
    "active_deadline_seconds",
)
TemplateName = Literal["pytorch-text-classifier", "kai-ray-cluster", "kai-half-gpu-cluster"]


class RayPodConfig(ConfigModel):
    """Resources of one Ray pod (requests = limits, so the pod is Guaranteed and gangs are exact)."""

    cpu: Quantity = Field(description="CPU per pod, e.g. '2' or '500m'.")
    memory: Quantity = Field(description="Memory per pod, e.g. '8G' or '16Gi'.")
    gpu: NonNegativeInt = Field(0, description="Whole GPUs per pod (nvidia.com/gpu).")
    gpu_fraction: float | None = Field(
        None, gt=0, lt=1, description="KAI only: a share of one GPU (pod annotation gpu-fraction), e.g. 0.5."
    )
    image: NonEmptyStr | None = Field(
        None, description="Image for this group; default: the workload's image."
    )
    ray_start_params: dict[str, str] = Field(default_factory=dict, description="`ray start` parameters.")
    topology: TopologyRequestConfig | None = Field(
        None,
        description="Topology-aware placement of this group's pods (see topology.* keys): Kueue TAS "
        "annotations (needs a flavor with topology: true), or with scheduler: kai KAI's annotations on the "
        "stack's one KAI Topology (required / preferred; no slices).",
    )


class WorkerGroupConfig(RayPodConfig):
    """A group of identical Ray workers."""

    group_name: DnsLabel = Field(description="Worker group name.")
    replicas: NonNegativeInt = Field(1, description="Workers to start.")
    min_replicas: NonNegativeInt | None = Field(
        None, description="Fewest workers (gang size); default replicas."
    )
    max_replicas: NonNegativeInt | None = Field(None, description="Most workers under autoscaling.")


class WorkloadConfig(ConfigModel):
    """One RayJob or RayCluster."""

    name: DnsLabel = Field(description="Object name (a RayJob's at most 47 characters).")
    template: TemplateName | None = Field(
        None, description="Catalogue preset whose keys this entry overrides (stacks/workload_templates.py)."
    )
    kind: Literal["RayJob", "RayCluster"] = Field(
        description="RayJob (runs an entrypoint) or RayCluster; a template sets it."
    )
    team: DnsLabel = Field(description="Team whose namespace and queue the workload uses.")
    scheduler: Literal["kueue", "kai"] = Field(
        description="kueue: labelled to the team's LocalQueue; kai: to the team's KAI queue."
    )
    priority_class: str | None = Field(
        None, description="Kueue WorkloadPriorityClass, or KAI PriorityClass (train, build, ...)."
    )
    image: NonEmptyStr = Field(
        description="Ray image of every pod, e.g. rayproject/ray:2.50.1; a template sets it."
    )
    ray_version: NonEmptyStr | None = Field(None, description="Ray version of the image, e.g. 2.46.0.")
    head: RayPodConfig = Field(description="The head pod (see head.* keys); a template sets it.")
    worker_groups: list[WorkerGroupConfig] = Field(default_factory=list, description="Worker groups.")
    entrypoint: NonEmptyStr | None = Field(None, description="RayJob: the command to run.")
    runtime_env_yaml: NonEmptyStr | None = Field(
        None, description="RayJob: Ray runtime environment (YAML text)."
    )
    submission_mode: Literal["K8sJobMode", "HTTPMode", "SidecarMode", "InteractiveMode"] | None = Field(
        None, description="RayJob: how the job is submitted; omitted: KubeRay's K8sJobMode (not with KAI)."
    )
    shutdown_after_job_finishes: bool | None = Field(
        None, description="RayJob: delete the Ray cluster when the job ends; default true (Kueue needs it)."
    )
    ttl_seconds_after_finished: NonNegativeInt | None = Field(
        None, description="RayJob: seconds before a finished job's cluster is deleted."
    )
    active_deadline_seconds: PositiveInt | None = Field(
        None, description="RayJob: run-time limit in seconds."
    )

    @model_validator(mode="wrap")
    @classmethod
    def _apply_template(cls, data: Any, handler: ModelWrapValidatorHandler[WorkloadConfig]) -> WorkloadConfig:
        """Merge the entry over its template, then validate.

        With an unknown template name only that is reported: the keys the template would have
        supplied are missing too, and listing them would bury the one mistake.
        """
        template = data.get("template") if isinstance(data, dict) else None
        if isinstance(template, str) and template in TEMPLATES:
            return handler(merge(TEMPLATES[template], data))
        try:
            return handler(data)
        except ValidationError as error:
            only = [e for e in error.errors() if template is not None and e["loc"][:1] == ("template",)]
            if not only:
                raise
            details: list[InitErrorDetails] = []
            for e in only:
                detail = InitErrorDetails(type=e["type"], loc=e["loc"], input=e["input"])
                if "ctx" in e:
                    detail["ctx"] = e["ctx"]
                details.append(detail)
            raise ValidationError.from_exception_data(error.title, details) from None

    @property
    def shuts_down(self) -> bool:
        return self.shutdown_after_job_finishes is not False


def check_workloads(
    workloads: list[WorkloadConfig], teams: list[TeamConfig], kueue: KueueQueuesConfig
) -> Iterator[ConfigIssue]:
    by_team = {t.name: t for t in teams}
    # One name per namespace across kinds: a RayJob creates a RayCluster named after itself, and
    # one name per namespace keeps ``kubectl get ray -n <ns>`` unambiguous.
    seen: set[tuple[str, str]] = set()
    for index, workload in enumerate(workloads):
        at = f"{WORKLOADS_KEY}[{index}]"
        team = by_team.get(workload.team)
        if team is None:
            yield unknown_reference(
                f"{at}.team", workload.team, "a team declared under gpu-batch:teams", by_team
            )
        else:
            key = (team.namespace_name, workload.name)
            if key in seen:
                yield ConfigIssue(
                    f"{at}.name", f"a workload name used once in namespace {key[0]}", workload.name
                )
            seen.add(key)
            yield from _check_queue(at, workload, team, kueue)
        yield from _check_kind(at, workload)
        for g_at, group in _groups(at, workload):
            yield from _check_group(g_at, group, workload.scheduler)


def _groups(at: str, workload: WorkloadConfig) -> Iterator[tuple[str, RayPodConfig]]:
    yield f"{at}.head", workload.head
    for index, group in enumerate(workload.worker_groups):
        yield f"{at}.workerGroups[{index}]", group


def _check_queue(
    at: str, workload: WorkloadConfig, team: TeamConfig, kueue: KueueQueuesConfig
) -> Iterator[ConfigIssue]:
    if workload.scheduler == "kueue":
        if team.local_queue is None:
            yield ConfigIssue(f"{at}.team", "a team with a localQueue (scheduler: kueue)", workload.team)
        classes = [p.name for p in kueue.priority_classes]
        kind = "a WorkloadPriorityClass under gpu-batch:kueueQueues.priorityClasses"
    else:
        if team.kai_queue is None:
            yield ConfigIssue(f"{at}.team", "a team with a kaiQueue (scheduler: kai)", workload.team)
        classes = list(KAI_PRIORITY_CLASSES)
        kind = "a PriorityClass the KAI chart installs"
    pc = workload.priority_class
    if pc is not None and pc not in classes:
        yield unknown_reference(f"{at}.priorityClass", pc, kind, classes)
    elif pc is not None and team.priority_classes is not None and pc not in team.priority_classes:
        yield ConfigIssue(
            f"{at}.priorityClass",
            f"one of team {team.name}'s priorityClasses ({', '.join(team.priority_classes) or 'none'}): "
            "its admission policy refuses any other",
            pc,
        )


def _check_kind(at: str, workload: WorkloadConfig) -> Iterator[ConfigIssue]:
    if workload.kind == "RayCluster":
        for field in RAYJOB_ONLY:
            value = getattr(workload, field)
            if value is not None:
                alias = WorkloadConfig.model_fields[field].alias or field
                yield ConfigIssue(f"{at}.{alias}", "no value: only a RayJob takes it", value)
        return
    if workload.entrypoint is None and workload.submission_mode != "InteractiveMode":
        yield ConfigIssue(
            f"{at}.entrypoint", "the command the RayJob runs (or submissionMode: InteractiveMode)"
        )
    if len(workload.name) > MAX_RAYJOB_NAME:
        yield ConfigIssue(
            f"{at}.name",
            f"at most {MAX_RAYJOB_NAME} characters (KubeRay refuses longer RayJob names)",
            workload.name,
        )
    if workload.scheduler == "kai" and workload.submission_mode in (None, "K8sJobMode"):
        yield ConfigIssue(
            f"{at}.submissionMode",
            "HTTPMode, SidecarMode or InteractiveMode: KubeRay's KAI integration refuses K8sJobMode "
            "(the default) and the RayJob requeues forever",
            workload.submission_mode or "K8sJobMode (default)",
        )
    if workload.scheduler == "kueue":
        if not workload.shuts_down:
            yield ConfigIssue(
                f"{at}.shutdownAfterJobFinishes",
                "true: Kueue does not support RayJobs that keep their cluster after finishing",
                False,
            )
        if len(workload.worker_groups) > MAX_KUEUE_WORKER_GROUPS:
            yield ConfigIssue(
                f"{at}.workerGroups",
                f"at most {MAX_KUEUE_WORKER_GROUPS} groups (a Kueue Workload has at most 18 pod sets)",
                len(workload.worker_groups),
            )


def _check_group(at: str, group: RayPodConfig, scheduler: str) -> Iterator[ConfigIssue]:
    if group.topology is not None:
        yield from _check_topology(f"{at}.topology", group, scheduler)
    if group.gpu_fraction is not None:
        if scheduler != "kai":
            yield ConfigIssue(
                f"{at}.gpuFraction", "no value: GPU fractions are a KAI Scheduler feature", group.gpu_fraction
            )
        if group.gpu:
            yield ConfigIssue(
                f"{at}.gpu",
                "0 with gpuFraction (KAI rejects a fraction next to a whole-GPU limit)",
                group.gpu,
            )
    if isinstance(group, WorkerGroupConfig):
        low = group.min_replicas if group.min_replicas is not None else group.replicas
        high = group.max_replicas
        if group.min_replicas is not None and group.min_replicas > group.replicas:
            yield ConfigIssue(f"{at}.minReplicas", f"at most replicas ({group.replicas})", group.min_replicas)
        if high is not None and (high < group.replicas or high < low):
            yield ConfigIssue(
                f"{at}.maxReplicas", f"at least replicas ({group.replicas}) and minReplicas", high
            )


def _check_topology(at: str, group: RayPodConfig, scheduler: str) -> Iterator[ConfigIssue]:
    """Kueue's own webhook rules on the annotations the request writes (one code path with the pack)."""
    request = group.topology
    assert request is not None
    if request.mode != "unconstrained" and request.level is None:
        yield ConfigIssue(f"{at}.level", f"a level for mode {request.mode}")
    if request.mode == "unconstrained" and request.level is not None:
        yield ConfigIssue(f"{at}.level", "no value with mode unconstrained", request.level)
    if scheduler != "kueue":
        # KAI: required / preferred on its own Topology (stacks.checks.topology checks the level).
        for key, value in (("sliceLevel", request.slice_level), ("sliceSize", request.slice_size)):
            if value is not None:
                yield ConfigIssue(
                    f"{at}.{key}", "no value: slices are Kueue TAS annotations (scheduler: kueue)", value
                )
        return
    count = group.replicas if isinstance(group, WorkerGroupConfig) else 1
    for problem in webhook_problems(request.annotations(), count):
        yield ConfigIssue(
            at, f"a request Kueue accepts ({problem})", request.model_dump(by_alias=True, exclude_none=True)
        )
