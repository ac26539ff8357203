"""Seeded scenarios for the what-if's differential against Kueue's own scheduler (issue 41).

One scenario is a small cluster (v1beta2 manifests, the documents ``python -m whatif
--manifests`` reads) and a trace (``whatif/README.md`` "Trace format") that runs to its end:
arrivals, finishes, preemptions with the victims' release after ``evictionDelaySeconds``, and,
in the provisioning family, a ProvisioningRequest check that turns Ready after
``provisioningDelaySeconds``.  Every object is one Kueue v0.19.2's webhooks accept (the
``clusterqueue_webhook.go`` rules the what-if also refuses on: a borrowing limit only in a
cohort, no borrowWithinCohort without reclaimWithinCohort, lending limit within nominal quota).

Families: ``classical`` (flat cohorts, priority and reclaim preemption, borrowing limits,
fungibility), ``fair`` (Configuration fairSharing, weights, both preemption strategies),
``hierarchical`` (a root Cohort with two child Cohorts holding quota), ``tainted`` (flavors with
taints and node labels, pod sets tolerating or selecting them), ``strictfifo``, ``provisioning``.
All times are whole seconds, so Kueue's 1 s requeue batch and the what-if meet on the same
instants.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

API = "kueue.x-k8s.io/v1beta2"
GPU = "nvidia.com/gpu"
FAMILIES = ("classical", "fair", "hierarchical", "tainted", "strictfifo", "provisioning")
PRIORITIES = (0, 50, 100)
Doc = dict[str, Any]


def _meta(name: str, namespace: str | None = None) -> dict[str, str]:
    return {"name": name, "namespace": namespace} if namespace else {"name": name}


def _flavor(name: str, spec: Doc | None = None) -> Doc:
    return {"apiVersion": API, "kind": "ResourceFlavor", "metadata": _meta(name), "spec": spec or {}}


def _resource(rng: random.Random, name: str, nominal: int, cohort: bool) -> Doc:
    out: Doc = {"name": name, "nominalQuota": str(nominal)}
    if cohort and rng.random() < 0.3:
        out["borrowingLimit"] = str(rng.randint(0, nominal + 2))
    if cohort and rng.random() < 0.2:
        out["lendingLimit"] = str(rng.randint(0, nominal))
    return out


def _groups(rng: random.Random, flavors: list[str], cohort: bool, scale: int) -> list[Doc]:
    """cpu and GPU in one group (flavors in order), each flavor with its own quota."""
    return [
        {
            "coveredResources": ["cpu", GPU],
            "flavors": [
                {
                    "name": f,
                    "resources": [
                        _resource(rng, "cpu", rng.randint(2, 8) * scale, cohort),
                        _resource(rng, GPU, rng.randint(1, 4) * scale, cohort),
                    ],
                }
                for f in flavors
            ],
        }
    ]


def _preemption(rng: random.Random, cohort: bool) -> Doc:
    within = rng.choice(["Never", "LowerPriority", "LowerPriority", "LowerOrNewerEqualPriority"])
    reclaim = rng.choice(["Never", "LowerPriority", "Any", "Any"]) if cohort else "Never"
    borrow: Doc = {"policy": "Never"}
    if reclaim != "Never" and rng.random() < 0.3:
        borrow = {"policy": "LowerPriority"}
        if rng.random() < 0.5:
            borrow["maxPriorityThreshold"] = rng.choice(PRIORITIES[:2])
    return {"withinClusterQueue": within, "reclaimWithinCohort": reclaim, "borrowWithinCohort": borrow}


def _cluster_queue(
    rng: random.Random,
    name: str,
    flavors: list[str],
    cohort: str | None,
    *,
    strategy: str = "BestEffortFIFO",
    fair: bool = False,
    checks: list[str] | None = None,
) -> Doc:
    spec: Doc = {
        "namespaceSelector": {},
        "queueingStrategy": strategy,
        "resourceGroups": _groups(rng, flavors, cohort is not None, 1),
        "preemption": _preemption(rng, cohort is not None),
        "flavorFungibility": {
            "whenCanBorrow": rng.choice(["MayStopSearch", "TryNextFlavor"]),
            "whenCanPreempt": rng.choice(["TryNextFlavor", "MayStopSearch"]),
        },
    }
    if cohort:
        spec["cohortName"] = cohort
    if fair:
        spec["fairSharing"] = {"weight": rng.choice(["1", "1", "2", "0.5"])}
    if checks:
        spec["admissionChecksStrategy"] = {"admissionChecks": [{"name": c} for c in checks]}
    return {"apiVersion": API, "kind": "ClusterQueue", "metadata": _meta(name), "spec": spec}


def _local_queue(cq: str) -> Doc:
    return {
        "apiVersion": API,
        "kind": "LocalQueue",
        "metadata": _meta("lq", f"ns-{cq}"),
        "spec": {"clusterQueue": cq},
    }


def _cohort(name: str, parent: str | None, groups: list[Doc] | None = None, weight: str | None = None) -> Doc:
    spec: Doc = {}
    if parent:
        spec["parentName"] = parent
    if groups:
        spec["resourceGroups"] = groups
    if weight:
        spec["fairSharing"] = {"weight": weight}
    return {"apiVersion": API, "kind": "Cohort", "metadata": _meta(name), "spec": spec}


def _fair_config(strategies: list[str]) -> Doc:
    import yaml

    config = {
        "apiVersion": "config.kueue.x-k8s.io/v1beta2",
        "kind": "Configuration",
        "fairSharing": {"preemptionStrategies": strategies},
    }
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": _meta("kueue-manager-config", "kueue-system"),
        "data": {"controller_manager_config.yaml": yaml.safe_dump(config)},
    }


def _pod_set(rng: random.Random, name: str, taint_keys: list[str], labels: dict[str, list[str]]) -> Doc:
    ps: Doc = {
        "name": name,
        "count": rng.randint(1, 2),
        "requests": {"cpu": str(rng.randint(1, 3))},
    }
    if rng.random() < 0.8:
        ps["requests"][GPU] = str(rng.randint(1, 2))
    if taint_keys and rng.random() < 0.5:
        ps["tolerations"] = [
            {"key": k, "operator": "Exists", "effect": "NoSchedule"} for k in taint_keys if rng.random() < 0.7
        ]
    if labels and rng.random() < 0.3:
        key = rng.choice(sorted(labels))
        ps["nodeSelector"] = {key: rng.choice(labels[key])}
    return ps


def _workloads(
    rng: random.Random, queues: list[tuple[str, str]], taint_keys: list[str], labels: dict[str, list[str]]
) -> list[Doc]:
    out = []
    for i in range(rng.randint(4, 10)):
        namespace, queue = rng.choice(queues)
        pod_sets = [_pod_set(rng, "main", taint_keys, labels)]
        if rng.random() < 0.25:
            pod_sets.append(_pod_set(rng, "workers", taint_keys, labels))
        out.append(
            {
                "name": f"w{i}",
                "namespace": namespace,
                "queue": queue,
                "priority": rng.choice(PRIORITIES),
                "submit": rng.randint(0, 240),
                "duration": rng.randint(20, 300),
                "podSets": pod_sets,
            }
        )
    return out


def scenario(seed: int, index: int, family: str) -> Doc:
    """One scenario of ``family``, drawn from ``seed`` and ``index`` alone."""
    rng = random.Random(f"{seed}/{index}/{family}")
    docs: list[Doc] = []
    flavor_names = ["f0", "f1"][: rng.randint(1, 2)]
    taint_keys: list[str] = []
    labels: dict[str, list[str]] = {}
    if family == "tainted":
        for f in flavor_names:
            spec: Doc = {"nodeLabels": {"pool": f}}
            if rng.random() < 0.6:
                key = f"dedicated-{f}"
                spec["nodeTaints"] = [
                    {"key": key, "value": "true", "effect": rng.choice(["NoSchedule", "NoExecute"])}
                ]
                taint_keys.append(key)
            docs.append(_flavor(f, spec))
        labels = {"pool": list(flavor_names)}
    else:
        docs.extend(_flavor(f) for f in flavor_names)
    n_cqs = rng.randint(1, 3) if family in ("classical", "strictfifo", "tainted") else rng.randint(2, 3)
    cq_names = [f"cq{i}" for i in range(n_cqs)]
    cohort_of: dict[str, str | None] = {}
    fair = family == "fair" or (family == "hierarchical" and rng.random() < 0.3)
    if family == "hierarchical":
        docs.append(_cohort("root", None))
        for child in ("left", "right"):
            groups = _groups(rng, flavor_names, True, 1) if rng.random() < 0.5 else None
            docs.append(_cohort(child, "root", groups, rng.choice(["1", "2"]) if fair else None))
        for i, cq in enumerate(cq_names):
            cohort_of[cq] = "left" if i % 2 == 0 else "right"
    else:
        in_cohort = n_cqs > 1 and (family in ("fair", "provisioning") or rng.random() < 0.8)
        for cq in cq_names:
            cohort_of[cq] = "all" if in_cohort else None
    checks: list[str] = []
    if family == "provisioning":
        docs.append(
            {
                "apiVersion": API,
                "kind": "ProvisioningRequestConfig",
                "metadata": _meta("dws-config"),
                "spec": {"provisioningClassName": "queued-provisioning.gke.io", "managedResources": [GPU]},
            }
        )
        docs.append(
            {
                "apiVersion": API,
                "kind": "AdmissionCheck",
                "metadata": _meta("dws"),
                "spec": {
                    "controllerName": "kueue.x-k8s.io/provisioning-request",
                    "parameters": {
                        "apiGroup": "kueue.x-k8s.io",
                        "kind": "ProvisioningRequestConfig",
                        "name": "dws-config",
                    },
                },
            }
        )
        checks = ["dws"]
    for i, cq in enumerate(cq_names):
        strategy = (
            "StrictFIFO" if family == "strictfifo" and (i == 0 or rng.random() < 0.5) else "BestEffortFIFO"
        )
        with_checks = checks if (i == 0 or rng.random() < 0.5) else None
        docs.append(
            _cluster_queue(
                rng, cq, flavor_names, cohort_of[cq], strategy=strategy, fair=fair, checks=with_checks
            )
        )
        docs.append(_local_queue(cq))
    fair_sharing = None
    if fair:
        strategies = rng.choice(
            [
                ["LessThanOrEqualToFinalShare", "LessThanInitialShare"],
                ["LessThanOrEqualToFinalShare"],
                ["LessThanInitialShare"],
            ]
        )
        fair_sharing = {"preemptionStrategies": strategies}
        docs.append(_fair_config(strategies))
    queues = [(f"ns-{cq}", "lq") for cq in cq_names]
    return {
        "id": f"{family}-{seed}-{index}",
        "family": family,
        "fairSharing": fair_sharing,
        "objects": docs,
        "workloads": _workloads(rng, queues, taint_keys, labels),
        "evictionDelaySeconds": rng.choice([1, 1, 5, 15, 30]),
        "provisioningDelaySeconds": rng.randint(5, 90) if family == "provisioning" else 0,
    }


def generate(count: int, seed: int) -> list[Doc]:
    """``count`` scenarios, the families in turn."""
    return [scenario(seed, i, FAMILIES[i % len(FAMILIES)]) for i in range(count)]


def write_jsonl(scenarios: list[Doc], path: Path) -> None:
    path.write_text("".join(json.dumps(s, sort_keys=True) + "\n" for s in scenarios))
