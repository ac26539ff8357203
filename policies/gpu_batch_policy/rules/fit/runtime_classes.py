"""runtime-and-priority-classes-exist: every runtime and priority class a pod uses exists.

The API server rejects a pod whose ``priorityClassName`` names no ``scheduling.k8s.io``
PriorityClass (Priority admission plugin), and the kubelet never starts a pod whose
``runtimeClassName`` names no ``node.k8s.io`` RuntimeClass (RuntimeClass admission /
``CreatePodSandbox`` "RuntimeHandler not found").  So each name a pod template uses must be
created by something in the stack (declared or chart-rendered), or be built in:
``system-cluster-critical`` and ``system-node-critical`` exist in every cluster (Kubernetes
"Pod Priority and Preemption"), and GKE creates the RuntimeClass ``gvisor`` only when some node
pool runs GKE Sandbox (``nodeConfig.sandboxConfig.sandboxType: gvisor``; GKE doc "GKE Sandbox").

KAI's admission webhook sets ``runtimeClassName`` on GPU pods itself (``kai_config.py`` has the
verified details): at v0.13.0 on every GPU pod (``gpuPodRuntimeClassName``, default ``nvidia``),
at v0.17.0 on GPU-fraction pods only (``gpuFractionRuntimeClassName``, default ``nvidia``).  GKE's
managed drivers create no such RuntimeClass; the NVIDIA GPU Operator creates it at run time, and the
model holds it whenever a rendered GPU Operator ClusterPolicy leads to it
(``charts/operator_runtime.py``), so this rule stays true to what will exist.  Fraction pods only
exist with ``global.gpuSharing`` on (KAI's gpusharing admission plugin rejects them otherwise), so
the fraction-only injection matters only then; the v0.13.0 one matters whenever GPU pods run.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_policy import Policy

from ...facts.fit import kai_config
from ...facts.model import StackModel, Subject
from ...facts.pod_templates import owned_templates
from ...primitives.values import Unknown, as_str, dig
from ..kit.builders import stack_policy
from ..kit.report import Reporter

BUILTIN_PRIORITY_CLASSES = frozenset({"system-cluster-critical", "system-node-critical"})
GVISOR = "gvisor"


def _gvisor_enabled(model: StackModel) -> bool | None:
    verdict: bool | None = False
    for pool in model.node_pools():
        sandbox = as_str(pool.res.get("nodeConfig", "sandboxConfig", "sandboxType"))
        if isinstance(sandbox, Unknown):
            verdict = None
        elif sandbox == GVISOR:
            return True
    return verdict


def _runtime_class(
    model: StackModel,
    name: str | Unknown,
    subject: Subject,
    reporter: Reporter,
    how: str,
    *,
    fix: str = "",
) -> None:
    if isinstance(name, Unknown):
        reporter.cannot_check(subject, f"runtimeClassName ({name.path})")
        return
    found = model.lookup("node.k8s.io", "RuntimeClass", name, near=subject)
    if found.status == "unknown":
        reporter.cannot_check(
            subject, f"RuntimeClass '{name}' (a RuntimeClass's name is unknown until apply)"
        )
        return
    if found.ok:
        return
    if name == GVISOR:
        sandbox = _gvisor_enabled(model)
        if sandbox is None:
            reporter.cannot_check(subject, "whether a node pool runs GKE Sandbox (gvisor)")
        if sandbox is not False:
            return
        reporter.violation(
            subject,
            f"{how} RuntimeClass 'gvisor', which GKE creates only with GKE Sandbox on a node pool",
            "set `nodeConfig.sandboxConfig.sandboxType: gvisor` on a pool, or drop runtimeClassName",
        )
        return
    reporter.violation(
        subject,
        f"{how} RuntimeClass '{name}', but nothing in the stack creates it and GKE has no such class",
        fix
        or f"declare a node.k8s.io/v1 RuntimeClass '{name}' with a handler the nodes have, or drop runtimeClassName",
    )


def _priority_class(model: StackModel, name: str | Unknown, subject: Subject, reporter: Reporter) -> None:
    if isinstance(name, Unknown):
        reporter.cannot_check(subject, f"priorityClassName ({name.path})")
        return
    if name in BUILTIN_PRIORITY_CLASSES:
        return
    found = model.lookup("scheduling.k8s.io", "PriorityClass", name, near=subject)
    if found.status == "unknown":
        reporter.cannot_check(
            subject, f"PriorityClass '{name}' (a PriorityClass's name is unknown until apply)"
        )
    elif not found.ok:
        reporter.violation(
            subject,
            f"its pods use priorityClassName '{name}', but no scheduling.k8s.io PriorityClass of that name "
            "exists in the stack and it is not built in; the API server rejects the pods",
            f"declare a PriorityClass '{name}' (or install the chart that ships it), or use an existing one",
        )


def _check_kai(model: StackModel, reporter: Reporter) -> None:
    for config in kai_config.kai_configs(model):
        field, name, pods = kai_config.injected_runtime_class(config)
        if pods == kai_config.FRACTION_ONLY:
            sharing = kai_config.gpu_sharing(config)
            if isinstance(sharing, Unknown):
                reporter.cannot_check(config, "spec.admission.gpuSharing")
                continue
            if sharing is not True:
                continue
        if name == "":
            continue
        _runtime_class(
            model,
            name,
            config,
            reporter,
            f"KAI's admission webhook (Config spec.admission.{field}) sets {pods} to",
            fix=f"install the NVIDIA GPU Operator, whose ClusterPolicy controller creates RuntimeClass '{name}' "
            "(GPU fractions need NVIDIA's runtime; GKE's managed drivers have none)"
            + (
                f' -- or, for whole-GPU pods only, `admission.{field}: ""`'
                if pods != kai_config.FRACTION_ONLY
                else ""
            ),
        )


def check_classes(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    if not model.gke_clusters():
        # The cluster is not created here: it may well have classes this stack cannot see (the
        # NVIDIA GPU Operator, for one, creates RuntimeClass nvidia), so nothing is proven.
        return
    for owned in owned_templates(model):
        spec = dig(owned.template.raw, "spec")
        runtime = as_str(dig(spec, "runtimeClassName"))
        if runtime is not None:
            _runtime_class(model, runtime, owned.owner, reporter, "its pods use")
        priority = as_str(dig(spec, "priorityClassName"))
        if priority is not None:
            _priority_class(model, priority, owned.owner, reporter)
    _check_kai(model, reporter)


POLICIES: list[Policy] = [
    stack_policy(
        "runtime-and-priority-classes-exist",
        "Every runtimeClassName and priorityClassName a pod template uses (or KAI's admission webhook "
        "injects) is created in the stack or built into GKE.",
        check_classes,
    ),
]
