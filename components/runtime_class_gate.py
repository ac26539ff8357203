"""A resource that completes only when a RuntimeClass exists on the cluster.

Why: the NVIDIA GPU Operator creates RuntimeClass ``nvidia`` at run time, from its ClusterPolicy
controller's *pre-requisites* state (NVIDIA/gpu-operator ``controllers/object_controls.go``
``RuntimeClasses`` -> ``transformRuntimeClass`` @ v26.7.0), some time after ``helm install``
returned -- it is not a Helm object.  KAI's admission webhook sets ``runtimeClassName: nvidia``
on GPU-fraction pods, and the API server's RuntimeClass admission refuses a pod whose class does
not exist yet ("pod rejected: RuntimeClass "nvidia" not found",
reference/gpu-sharing-on-gke.md §2).  So the KAI workloads depend on this gate, not on the release.

How: like :mod:`components.readiness_gate` (which says why no pulumi-kubernetes mechanism fits), a
Pulumi dynamic provider, pickled by value (:mod:`components.portable_provider`), whose ``create``
-- and ``update``, when the operator release's fingerprint changed -- polls
``GET /apis/node.k8s.io/v1/runtimeclasses/<name>`` with the stack's kubeconfig; nothing runs
during ``pulumi preview``, and under the offline preview's mocks the registration is recorded so
the order (operator release -> gate -> KAI workloads) shows in plan.json.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pulumi
from pulumi import dynamic

from components.portable_provider import pickled_by_value
from components.readiness_gate import (
    DEFAULT_POLL_SECONDS,
    DEFAULT_TIMEOUT_SECONDS,
    kubeconfig_document,
    must_wait_again,
)
from components.webhook_probe import poll_until_done


@pickled_by_value
class RuntimeClassMissingError(Exception):
    """The RuntimeClasses did not appear before the deadline; the message names them."""


@pickled_by_value
def wait_for_runtime_classes(
    exists: Callable[[str], bool],
    names: Sequence[str],
    timeout_seconds: float,
    *,
    interval_seconds: float = 5.0,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> None:
    """Block until ``exists(name)`` for every name; raise :class:`RuntimeClassMissingError` at the deadline."""
    missing = poll_until_done(
        lambda: [n for n in names if not exists(n)],
        timeout_seconds,
        interval_seconds=interval_seconds,
        clock=clock,
        sleep=sleep,
    )
    if missing:
        raise RuntimeClassMissingError(
            f"after {timeout_seconds:.0f}s RuntimeClass {', '.join(missing)} does not exist; "
            "check the GPU Operator's ClusterPolicy status (kubectl get clusterpolicy)"
        )


@pickled_by_value
def runtime_class_exists(kubeconfig: Mapping[str, Any]) -> Callable[[str], bool]:
    """``exists(name)`` over the official ``kubernetes`` client."""
    from kubernetes import client, config
    from kubernetes.client.exceptions import ApiException

    api = client.NodeV1Api(config.new_client_from_config_dict(dict(kubeconfig)))  # type: ignore[no-untyped-call]

    def exists(name: str) -> bool:
        try:
            api.read_runtime_class(name)
        except ApiException as error:
            if error.status == 404:
                return False
            raise
        return True

    return exists


@pickled_by_value
class _RuntimeClassProvider(dynamic.ResourceProvider):
    def _wait(self, props: Mapping[str, Any]) -> None:
        exists = runtime_class_exists(kubeconfig_document(props["kubeconfig"]))
        wait_for_runtime_classes(
            exists,
            [str(n) for n in props["names"]],
            float(props["timeoutSeconds"]),
            interval_seconds=float(props.get("pollSeconds", DEFAULT_POLL_SECONDS)),
        )

    def create(self, props: dict[str, Any]) -> dynamic.CreateResult:
        self._wait(props)
        return dynamic.CreateResult(id_="-".join(str(n) for n in props["names"]), outs=props)

    def update(self, _id: str, _olds: dict[str, Any], _news: dict[str, Any]) -> dynamic.UpdateResult:
        if must_wait_again(_olds, _news) or _olds.get("names") != _news.get("names"):
            self._wait(_news)
        return dynamic.UpdateResult(outs=_news)


class RuntimeClassReadiness(dynamic.Resource):
    """Completes when every named RuntimeClass exists (see module doc)."""

    def __init__(
        self,
        name: str,
        kubeconfig: pulumi.Input[str],
        runtime_classes: Sequence[str],
        *,
        installed: pulumi.Input[str] = "",
        timeout_seconds: int = DEFAULT_TIMEOUT_SECONDS,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__(
            _RuntimeClassProvider(),
            name,
            {
                "kubeconfig": pulumi.Output.secret(kubeconfig),
                "names": list(runtime_classes),
                "installed": installed,
                "timeoutSeconds": timeout_seconds,
                "pollSeconds": DEFAULT_POLL_SECONDS,
            },
            pulumi.ResourceOptions.merge(
                pulumi.ResourceOptions(additional_secret_outputs=["kubeconfig"]), opts
            ),
        )
