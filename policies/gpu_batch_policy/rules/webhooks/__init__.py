"""Admission webhooks and API-server admission, at the pinned tags: one module per webhook family.

A workload or queue object these refuse never exists on the cluster, so every rule here is
mandatory.  Modules (each cites its upstream file and function):

* :mod:`.kueue_objects` -- Kueue v0.19.2 ``pkg/webhooks`` (ClusterQueue limits, served versions);
* :mod:`.kueue_workload` -- Kueue v0.19.2 ``pkg/webhooks/workload_webhook.go`` (declared Workloads);
* :mod:`.kueue_jobs` -- Kueue v0.19.2 ``pkg/controller/jobframework/validation.go``,
  ``tas_validation.go`` and the integration webhooks under ``pkg/controller/jobs/``;
* :mod:`.kueue_ray` -- Kueue v0.19.2's RayJob/RayCluster/RayService webhooks;
* :mod:`.kuberay` -- KubeRay v1.7.0 ``ray-operator/controllers/ray/utils/validation.go``;
* :mod:`.kuberay_features` -- the rest of that file (GCS FT, auth, network policy, TLS, priority,
  upgrade strategy, RayJob deletion strategy) and its ``COVERAGE``;
* :mod:`.kai` -- KAI Scheduler's PodGroup webhook (``podgroup_webhook.go`` ``validateSubGroups``);
* :mod:`.priority_class` -- the API server's PriorityClass validation and priority admission;
* :mod:`.appwrapper` -- AppWrapper's webhook (``internal/webhook/appwrapper_webhook.go``);
* :mod:`.jobset` -- JobSet v0.12.0 ``pkg/webhooks/jobset_webhook.go`` (Kueue v0.19.2's pin);
* :mod:`.lws` -- LeaderWorkerSet v0.9.0 ``pkg/webhooks/leaderworkerset_webhook.go`` (Kueue's pin);
* :mod:`.mpi` -- MPI operator v0.8.2 ``pkg/apis/kubeflow/validation/validation.go`` (Kueue's pin);
* :mod:`.trainer` -- Kubeflow Trainer v2.2.1 ``pkg/webhooks`` and the runtime plugins' ``Validate`` (Kueue's pin);
* :mod:`.spark` -- Spark operator v2.5.1 ``internal/webhook/sparkapplication_validator.go`` (Kueue's pin).

:mod:`.port` holds what the project ports share (reads that refuse to guess, the wording of a
refusal with the version judged, and ``COVERAGE``: every upstream function, ported or why not).

More ClusterQueue/Cohort webhook rules live in :mod:`..kueue_api` (quotas, limits, preemption).
"""

from __future__ import annotations

from pulumi_policy import Policy

from .appwrapper import POLICIES as APPWRAPPER
from .jobset import POLICIES as JOBSET
from .kai import POLICIES as KAI
from .kuberay import POLICIES as KUBERAY
from .kuberay_features import POLICIES as KUBERAY_FEATURES
from .kueue_jobs import POLICIES as KUEUE_JOBS
from .kueue_objects import POLICIES as KUEUE_OBJECTS
from .kueue_ray import POLICIES as KUEUE_RAY
from .kueue_workload import POLICIES as KUEUE_WORKLOAD
from .lws import POLICIES as LWS
from .mpi import POLICIES as MPI
from .priority_class import POLICIES as PRIORITY_CLASS
from .spark import POLICIES as SPARK
from .trainer import POLICIES as TRAINER

POLICIES: list[Policy] = [
    *KUEUE_RAY,
    *KUBERAY,
    *KUBERAY_FEATURES,
    *KUEUE_OBJECTS,
    *KUEUE_JOBS,
    *KUEUE_WORKLOAD,
    *KAI,
    *PRIORITY_CLASS,
    *APPWRAPPER,
    *JOBSET,
    *LWS,
    *MPI,
    *TRAINER,
    *SPARK,
]
