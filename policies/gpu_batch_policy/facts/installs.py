"""Which schedulers a stack runs, in it or (``externalObjects``) elsewhere, and how Kueue is set.

Rules that depend on an install (issue 11 item 3) ask here: an install counts when the stack holds
its Helm release or any of its objects (a queue implies its controller runs somewhere), or lists
``{kind: Release, name: <chart>}`` in ``externalObjects``.
"""

from __future__ import annotations

from ..primitives.tokens import KAI_GROUP, KUEUE_GROUP
from ..primitives.values import as_bool, dig
from .model import StackModel
from .open_world import World

KAI_CHART = "kai-scheduler"
KUEUE_CHART = "kueue"


def kueue_installed(model: StackModel, world: World) -> bool:
    return bool(model.kueue_releases() or model.kube_objects(KUEUE_GROUP) or world.has_install(KUEUE_CHART))


def kai_installed(model: StackModel, world: World) -> bool:
    return bool(model.kai_releases() or model.kube_objects(KAI_GROUP) or world.has_install(KAI_CHART))


def manages_jobs_without_queue_name(model: StackModel) -> bool:
    """Whether a Kueue release of the stack sets ``manageJobsWithoutQueueName: true``."""
    return any(
        as_bool(dig(r.kueue_config().data, "manageJobsWithoutQueueName")) is True
        for r in model.kueue_releases()
    )
