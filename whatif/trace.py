"""The portable trace format (issue 14) and its validation.

```yaml
provisioningDelaySeconds: [120, 900]  # optional: seconds a ProvisioningRequest takes to be
                                     # provisioned, a number or [low, high] (uniform per
                                     # request, seeded); CLI --provisioning-delay wins
evictionDelaySeconds: 3              # optional: seconds from a preemption until the victim's job
                                     # is stopped and its quota released; CLI --eviction-delay wins
requeueBatchSeconds: 1               # optional: Kueue's requeueBatchPeriod, parked workloads back
                                     # in their heaps this long after a release (default 1; 0: at
                                     # once, the instant view); CLI --requeue-batch wins
workerProvisioningDelaySeconds:      # optional, MultiKueue: a worker's own DWS time, by
  us-east4: [3600, 14400]            # MultiKueueCluster name (others: provisioningDelaySeconds)
workloads:
  - name: a                 # unique per namespace
    namespace: team-a
    queue: user-queue       # a LocalQueue in that namespace
    priority: 100           # integer, or priorityClass: <WorkloadPriorityClass name>; default 0
    submit: 0               # seconds (may be negative: already running at 0)
    duration: 3600          # seconds it runs once admitted
    podSets:
      - {name: workers, count: 4, requests: {cpu: "8", memory: 32Gi, nvidia.com/gpu: "1"}}
```

A pod set may also carry ``tolerations``, ``nodeSelector`` and ``affinity`` as in a pod spec: what
Kueue's flavor assigner reads to skip flavors (``whatif.pod_spec``); and ``annotations``, as on
the pod template, of which Kueue's flavor assigner reads a topology request
(``kueue.x-k8s.io/podset-required-topology`` and the like: ``whatif.flavors``).

Every problem is one line: key path, value given, what is expected.  ``minCount`` on a pod set
(partial admission) is refused: it is not modelled.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from whatif.amounts import to_amount
from whatif.errors import NotModelledError, WhatIfError, trace_mapping
from whatif.errors import trace_error as _fail
from whatif.pack import quantity
from whatif.pod_spec import SPEC_KEYS, pod_spec
from whatif.workload import PodSet

Delay = float | tuple[float, float]  # seconds, or a uniform range [low, high]
WORKLOAD_KEYS = {"name", "namespace", "queue", "priority", "priorityClass", "submit", "duration", "podSets"}
POD_SET_KEYS = {"name", "count", "requests", "annotations", *SPEC_KEYS}
DELAY_KEYS = (
    "provisioningDelaySeconds",
    "evictionDelaySeconds",
    "requeueBatchSeconds",
    "workerProvisioningDelaySeconds",
)


@dataclass(frozen=True)
class TraceEntry:
    name: str
    namespace: str
    queue: str
    priority: int | None
    priority_class: str | None
    submit: float
    duration: float
    pod_sets: tuple[PodSet, ...]


@dataclass(frozen=True)
class Trace:
    entries: tuple[TraceEntry, ...]
    provisioning_delay: Delay | None = None
    eviction_delay: float | None = None
    # MultiKueue: a worker's own DWS provisioning time, by MultiKueueCluster name (others: the above)
    worker_delays: tuple[tuple[str, Delay], ...] = ()
    # ``requeueBatchSeconds``: the batching requeuer's period (``whatif.requeuer``); None: Kueue's 1 s
    requeue_batch: float | None = None


def _number(raw: Any, path: str, *, minimum: float | None = None) -> float:
    if isinstance(raw, bool) or not isinstance(raw, (int, float)):
        raise _fail(path, raw, "a number of seconds")
    if minimum is not None and raw < minimum:
        raise _fail(path, raw, f"a number >= {minimum:g}")
    return float(raw)


def _name(raw: Any, path: str) -> str:
    if not isinstance(raw, str) or not raw:
        raise _fail(path, raw, "a non-empty string")
    return raw


def _pod_set(raw: Any, path: str) -> PodSet:
    if isinstance(raw, dict) and "minCount" in raw:
        raise NotModelledError(f"trace {path}.minCount: partial admission is not modelled")
    raw = trace_mapping(raw, path, POD_SET_KEYS, "a mapping with name, count, requests")
    count = raw.get("count", 1)
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise _fail(f"{path}.count", count, "an integer >= 1")
    requests_raw = raw.get("requests") or {}
    if not isinstance(requests_raw, dict):
        raise _fail(f"{path}.requests", requests_raw, "a mapping of resource name to quantity")
    requests: dict[str, int] = {}
    for res, val in requests_raw.items():
        q = quantity(val)
        if q.value is None or q.value < 0:
            raise _fail(
                f"{path}.requests.{res}", val, "a non-negative Kubernetes quantity such as 8, 500m or 32Gi"
            )
        requests[str(res)] = to_amount(q.value)
    return PodSet(
        _name(raw.get("name"), f"{path}.name"), count, requests, pod_spec(raw, path), _annotations(raw, path)
    )


def _annotations(raw: dict[str, Any], path: str) -> dict[str, str] | None:
    """The pod template's ``annotations``: what Kueue reads of them is a topology request
    (``whatif.flavors``); None when unset."""
    notes = raw.get("annotations")
    if notes is None:
        return None
    if not isinstance(notes, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in notes.items()
    ):
        raise _fail(f"{path}.annotations", notes, "a mapping of annotation to string value")
    return dict(notes) or None


def _entry(raw: Any, path: str) -> TraceEntry:
    raw = trace_mapping(raw, path, WORKLOAD_KEYS, "a mapping")
    if "priority" in raw and "priorityClass" in raw:
        raise _fail(
            f"{path}.priorityClass", raw["priorityClass"], "either priority or priorityClass, not both"
        )
    priority = raw.get("priority")
    if priority is not None and (isinstance(priority, bool) or not isinstance(priority, int)):
        raise _fail(f"{path}.priority", priority, "an integer")
    pclass = raw.get("priorityClass")
    if pclass is not None:
        pclass = _name(pclass, f"{path}.priorityClass")
    pod_sets_raw = raw.get("podSets")
    if not isinstance(pod_sets_raw, list) or not pod_sets_raw:
        raise _fail(f"{path}.podSets", pod_sets_raw, "a non-empty list of pod sets")
    pod_sets = tuple(_pod_set(p, f"{path}.podSets[{i}]") for i, p in enumerate(pod_sets_raw))
    names = [p.name for p in pod_sets]
    if len(set(names)) != len(names):
        raise _fail(f"{path}.podSets", names, "unique pod set names")
    return TraceEntry(
        name=_name(raw.get("name"), f"{path}.name"),
        namespace=_name(raw.get("namespace"), f"{path}.namespace"),
        queue=_name(raw.get("queue"), f"{path}.queue"),
        priority=priority,
        priority_class=pclass,
        submit=_number(raw.get("submit", 0), f"{path}.submit"),
        duration=_number(raw.get("duration"), f"{path}.duration", minimum=0),
        pod_sets=pod_sets,
    )


def parse_trace(doc: Any) -> Trace:
    if not isinstance(doc, dict) or not isinstance(doc.get("workloads"), list):
        raise _fail(
            "workloads", None if not isinstance(doc, dict) else doc.get("workloads"), "a list of workloads"
        )
    extra = sorted(set(doc) - {"workloads", *DELAY_KEYS})
    if extra:
        raise _fail(
            extra[0],
            doc[extra[0]],
            "workloads, provisioningDelaySeconds, evictionDelaySeconds, requeueBatchSeconds or "
            "workerProvisioningDelaySeconds",
        )
    entries = tuple(_entry(w, f"workloads[{i}]") for i, w in enumerate(doc["workloads"]))
    seen: set[tuple[str, str]] = set()
    for i, e in enumerate(entries):
        if (e.namespace, e.name) in seen:
            raise _fail(f"workloads[{i}].name", e.name, f"a name unique in namespace {e.namespace}")
        seen.add((e.namespace, e.name))
    delay = doc.get("provisioningDelaySeconds")
    eviction = doc.get("evictionDelaySeconds")
    batch = doc.get("requeueBatchSeconds")
    return Trace(
        entries,
        None if delay is None else parse_delay(delay, "provisioningDelaySeconds"),
        None if eviction is None else _number(eviction, "evictionDelaySeconds", minimum=0),
        _worker_delays(doc.get("workerProvisioningDelaySeconds")),
        None if batch is None else _number(batch, "requeueBatchSeconds", minimum=0),
    )


def _worker_delays(raw: Any) -> tuple[tuple[str, Delay], ...]:
    """``workerProvisioningDelaySeconds``: ``{<MultiKueueCluster name>: delay}``."""
    if raw is None:
        return ()
    key = "workerProvisioningDelaySeconds"
    if not isinstance(raw, dict) or not all(isinstance(k, str) and k for k in raw):
        raise _fail(key, raw, "a mapping of MultiKueueCluster name to seconds or [low, high]")
    return tuple((name, parse_delay(raw[name], f"{key}.{name}")) for name in sorted(raw))


def parse_delay(raw: Any, path: str) -> Delay:
    """A number of seconds, or ``[low, high]`` with 0 <= low <= high (uniform)."""
    if isinstance(raw, list):
        if len(raw) != 2:
            raise _fail(path, raw, "a number of seconds or [low, high]")
        low, high = (_number(v, f"{path}[{i}]", minimum=0) for i, v in enumerate(raw))
        if high < low:
            raise _fail(path, raw, "[low, high] with low <= high")
        return (low, high)
    return _number(raw, path, minimum=0)


def load_trace(path: Path) -> Trace:
    try:
        doc = yaml.safe_load(path.read_text())
    except OSError as error:
        raise WhatIfError(f"--trace {path}: cannot read it ({error.strerror})") from None
    except yaml.YAMLError as error:
        raise WhatIfError(f"--trace {path}: not valid YAML ({str(error).splitlines()[0]})") from None
    return parse_trace(doc)
