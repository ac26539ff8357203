"""The KAI ``kai.scheduler/v1 Config`` the chart renders, read for what the operator will create.

From v0.10 on the KAI chart installs an operator; the admission webhook, binder, scheduler and
other services are created at run time from the ``Config`` named ``kai-config`` (chart template
``templates/kai-config.yaml`` at v0.13.0, ``templates/_helpers.tpl`` at v0.17.0, in
``../shared/vendor/kai-scheduler-<version>``).  So their images, the admission webhook's target
port (``spec.admission.webhook.targetPort``, chart value ``admission.ports.webhookPort``, default
9443) and the runtime class the admission webhook injects are only visible here.

Runtime-class injection, verified in NVIDIA/KAI-Scheduler:

- **v0.13.0** (``cmd/admission/main.go`` ``registerPlugins``, ``pkg/admission/webhook/v1alpha2/
  runtimeenforcement/runtime_enforcement.go``, ``pkg/common/resources/gpu_sharing.go RequestsGPU``,
  ``pkg/apis/kai/v1/admission/admission.go``): ``spec.admission.gpuPodRuntimeClassName``, default
  ``nvidia`` (``constants.DefaultRuntimeClassName``) when unset, is set on **every pod that
  requests a GPU** -- whole (``nvidia.com/gpu``) or fractional (``gpu-fraction``/``gpu-memory``
  annotations) -- that has no runtimeClassName of its own, whether or not GPU sharing is on; an
  empty string unregisters the plugin.
- **v0.17.0** (the Config CRD the chart ships, ``crds/kai.scheduler_configs.yaml``):
  ``gpuFractionRuntimeClassName`` (chart default ``nvidia``) applies to **GPU-fraction pods
  only**, "Whole-GPU pods are not affected"; it wins over the deprecated
  ``gpuPodRuntimeClassName``; an empty string disables it.  (The v0.17.0 Go source is not in the
  mirror available here; the CRD text is the chart's own statement.)
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import yaml

from ...primitives.values import Unknown, as_bool, as_int, as_str, dig
from ..model import KubeObject, StackModel
from ..model.base import build_resource

KAI_CONFIG_GROUP = "kai.scheduler"
RUNTIME_CLASS_KEYS = ("gpuFractionRuntimeClassName", "gpuPodRuntimeClassName")
CONFIG_MANIFEST_KEY = "kai-config.yaml"
DEFAULT_RUNTIME_CLASS = "nvidia"  # KAI constants.DefaultRuntimeClassName


def kai_configs(model: StackModel) -> list[KubeObject]:
    """Configs rendered as objects (v0.13.0, or v0.17.0 with ``kaiConfig.render``) and the one
    v0.17.0 ships inside the hook ConfigMap ``kai-config-manifest`` (key ``kai-config.yaml``,
    ``templates/hooks/post/kai-config-deployer/configmap.yaml``), which a post-install Job
    applies."""
    return model.memo("fit.kai_configs", lambda: _kai_configs(model))


def _kai_configs(model: StackModel) -> list[KubeObject]:
    found = model.kube_objects(KAI_CONFIG_GROUP, "Config")
    for cm in model.kube_objects("", "ConfigMap"):
        text = dig(cm.props, "data", CONFIG_MANIFEST_KEY)
        if not isinstance(text, str):
            continue
        try:
            docs = list(yaml.safe_load_all(text))
        except yaml.YAMLError:
            continue
        for doc in docs:
            if (
                isinstance(doc, dict)
                and doc.get("kind") == "Config"
                and doc.get("apiVersion") == f"{KAI_CONFIG_GROUP}/v1"
            ):
                obj = build_resource(f"kubernetes:{KAI_CONFIG_GROUP}/v1:Config", doc, cm.urn, cm.pulumi_name)
                if isinstance(obj, KubeObject):
                    found.append(obj)
    return found


def webhook_target_port(config: KubeObject) -> int | Unknown | None:
    return as_int(dig(config.props, "spec", "admission", "webhook", "targetPort"))


def gpu_sharing(config: KubeObject) -> bool | Unknown | None:
    return as_bool(dig(config.props, "spec", "admission", "gpuSharing"))


FRACTION_ONLY, EVERY_GPU_POD = "GPU-fraction pods", "every GPU pod"


def injected_runtime_class(config: KubeObject) -> tuple[str, str | Unknown, str]:
    """(Config field, runtime class name, which pods get it); an empty name = no injection.

    The fraction-only field wins when present (v0.17.0); otherwise ``gpuPodRuntimeClassName``
    with the operator's default ``nvidia`` applies to every GPU pod (v0.13.0).
    """
    fraction = dig(config.props, "spec", "admission", RUNTIME_CLASS_KEYS[0])
    if fraction is not None:
        return RUNTIME_CLASS_KEYS[0], as_str(fraction) or "", FRACTION_ONLY
    pod = dig(config.props, "spec", "admission", RUNTIME_CLASS_KEYS[1])
    name = DEFAULT_RUNTIME_CLASS if pod is None else (as_str(pod) or "")
    return RUNTIME_CLASS_KEYS[1], name, EVERY_GPU_POD


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
