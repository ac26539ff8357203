"""The KAI ``kai.scheduler/v1 Config`` the chart renders, read for what the operator will create.

From v0.10 on the KAI chart installs an operator; the admission webhook, binder, scheduler and
other services are created at run time from the ``Config`` named ``kai-config`` (chart template
``templates/kai-config.yaml`` at v0.13.0, ``templates/_helpers.tpl`` at v0.17.0, in
``../shared/vendor/kai-scheduler-<version>``).  So their images, the admission webhook's target
port (``spec.admission.webhook.targetPort``, chart value ``admission.ports.webhookPort``, default
9443) and the runtime class the admission webhook injects into GPU pods
(``spec.admission.gpuPodRuntimeClassName`` at v0.13.0, ``gpuFractionRuntimeClassName`` at
v0.17.0; chart default ``nvidia``; an empty string turns injection off, KAI-Scheduler
``pkg/admission/webhook/v1alpha2/runtimeenforcement`` tests) are only visible here.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..model import KubeObject, StackModel
from ..values import Unknown, as_bool, as_int, as_str, dig

KAI_CONFIG_GROUP = "kai.scheduler"
RUNTIME_CLASS_KEYS = ("gpuFractionRuntimeClassName", "gpuPodRuntimeClassName")


def kai_configs(model: StackModel) -> list[KubeObject]:
    return model.kube_objects(KAI_CONFIG_GROUP, "Config")


def webhook_target_port(config: KubeObject) -> int | Unknown | None:
    return as_int(dig(config.props, "spec", "admission", "webhook", "targetPort"))


def gpu_sharing(config: KubeObject) -> bool | Unknown | None:
    return as_bool(dig(config.props, "spec", "admission", "gpuSharing"))


def injected_runtime_class(config: KubeObject) -> tuple[str, str | Unknown | None]:
    """(field, runtime class name) the admission webhook injects; name None/"" = no injection."""
    for key in RUNTIME_CLASS_KEYS:
        raw = dig(config.props, "spec", "admission", key)
        if raw is not None:
            return key, as_str(raw)
    return RUNTIME_CLASS_KEYS[0], None


def images(config: KubeObject) -> Iterator[str | Unknown]:
    """Every ``{repository, name, tag}`` image block under ``spec``, as ``repository/name:tag``."""
    yield from _images(dig(config.props, "spec"))


def _images(node: Any) -> Iterator[str | Unknown]:
    if isinstance(node, Unknown):
        yield node
    elif isinstance(node, dict):
        repo, name = node.get("repository"), node.get("name")
        if isinstance(repo, (str, Unknown)) and isinstance(name, (str, Unknown)) and "tag" in node:
            if isinstance(repo, Unknown) or isinstance(name, Unknown):
                yield repo if isinstance(repo, Unknown) else name
            else:
                yield f"{repo}/{name}:{node.get('tag')}"
            return
        for value in node.values():
            yield from _images(value)
    elif isinstance(node, list):
        for value in node:
            yield from _images(value)
