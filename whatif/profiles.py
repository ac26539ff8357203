"""Per-stack load profiles (``whatif/<stack>.yaml``) and the default trace they generate.

A profile describes a stack's usual load, so that ``python -m whatif --stack <s>`` (and the
What-if section of the preview report) has a trace without one being written by hand:

```yaml
seed: 14                      # the generator's seed: the same profile gives the same trace
hours: 168                    # arrivals are generated over this many hours (a week)
provisioningDelaySeconds: [120, 900]  # optional: ProvisioningRequest time, seconds or [low, high]
evictionDelaySeconds: 3       # optional: preemption until the victim's quota is released (seconds)
workerProvisioningDelaySeconds: {us-east4: [7200, 21600]}  # optional, MultiKueue: per worker
arrivals:                     # one stream per team / queue
  - namespace: default
    queue: user-queue
    perHour: 1.5              # mean arrivals per hour (a Poisson process)
    priorityClass: dev-priority   # or priority: <int>; default 0
    durationMinutes: [10, 120]    # uniform between the two
    shapes:                   # each arrival picks one gang shape, uniformly
      - declared: pytorch-text-classifier   # the pod sets of a workload the stack declares
      - podSets: [{name: workers, count: 2, requests: {cpu: "4", nvidia.com/gpu: "1"}}]
```

``declared`` reads the RayJob / RayCluster the stack declares with that name, through the pack's
own pod-set arithmetic (``gpu_batch_policy.facts.workload_kinds.kueue_gangs``), so the trace uses the
gang Kueue would really see.  Generated names are ``<namespace>-<stream index>-<n>``; the output is
deterministic (seeded generator, stable order).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from whatif.amounts import fmt_amount, to_amount
from whatif.errors import WhatIfError
from whatif.pack import TAS_REQUEST_ANNOTATIONS, StackModel, Unknown, kueue_gangs
from whatif.pod_spec import SPEC_KEYS
from whatif.trace import DELAY_KEYS, Trace, parse_trace

PROFILE_DIR = Path(__file__).resolve().parent
RESOURCES = ("cpu", "memory", "nvidia.com/gpu")


def profile_path(stack: str) -> Path:
    return PROFILE_DIR / f"{stack}.yaml"


def load_profile(path: Path) -> dict[str, Any]:
    try:
        doc = yaml.safe_load(path.read_text())
    except OSError as error:
        raise WhatIfError(f"load profile {path.name}: cannot read it ({error.strerror})") from None
    except yaml.YAMLError as error:
        raise WhatIfError(
            f"load profile {path.name}: not valid YAML ({str(error).splitlines()[0]})"
        ) from None
    if not isinstance(doc, dict) or not isinstance(doc.get("arrivals"), list):
        raise WhatIfError(f"load profile {path.name} arrivals: expected a list of arrival streams")
    return doc


def declared_pod_sets(model: StackModel, name: str, where: str) -> list[dict[str, Any]]:
    """The pod sets Kueue makes of the workload the stack declares as ``name`` (any kind the pack
    counts: RayJob, RayCluster, Job, JobSet, PyTorchJob, ...), in trace form."""
    for counted in kueue_gangs(model):
        if getattr(counted.obj, "name", None) != name:
            continue
        if counted.error is not None:
            raise WhatIfError(f"{where}: {name}'s pod sets are unknown until apply ({counted.error})")
        out = []
        for ps in (p for gang in counted.gangs for p in gang.pod_sets):
            requests: dict[str, str] = {}
            for res in RESOURCES:
                value = ps.template.request(res)
                if isinstance(value, Unknown):
                    raise WhatIfError(f"{where}: {name} {res} request is unknown until apply")
                if value:
                    requests[res] = fmt_amount(to_amount(value))
            shape: dict[str, Any] = {"name": ps.name, "count": ps.count, "requests": requests}
            spec = ps.template.raw.get("spec") if isinstance(ps.template.raw, dict) else None
            for key in SPEC_KEYS:  # what Kueue's flavor assigner reads (``checkFlavorForPodSets``)
                given = spec.get(key) if isinstance(spec, dict) else None
                if _has_unknown(given):
                    raise WhatIfError(f"{where}: {name} pod set {ps.name} {key} is unknown until apply")
                if given:
                    shape[key] = given
            notes = {k: v for k, v in ps.template.annotations.items() if k in TAS_REQUEST_ANNOTATIONS}
            if any(isinstance(v, Unknown) for v in notes.values()):
                raise WhatIfError(
                    f"{where}: {name} pod set {ps.name} topology request is unknown until apply"
                )
            if notes:  # what ``checkPodSetAndFlavorMatchForTAS`` reads
                shape["annotations"] = notes
            out.append(shape)
        return out
    raise WhatIfError(f"{where}.declared: got {name!r}, expected a workload the stack declares")


def _has_unknown(value: Any) -> bool:
    if isinstance(value, Unknown):
        return True
    if isinstance(value, dict):
        return any(_has_unknown(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_unknown(v) for v in value)
    return False


def _number(raw: Any, where: str) -> float:
    if isinstance(raw, bool) or not isinstance(raw, (int, float)) or raw < 0:
        raise WhatIfError(f"{where}: got {raw!r}, expected a non-negative number")
    return float(raw)


# (model, declared workload name, key path) -> its pod sets in trace form
DeclaredPodSets = Callable[[StackModel, str, str], list[dict[str, Any]]]


def generate_trace(
    profile: dict[str, Any],
    model: StackModel,
    name: str = "profile",
    declared: DeclaredPodSets | None = None,
) -> Trace:
    """The seeded trace of ``profile``; a ``declared`` shape becomes the pod sets ``declared``
    gives (default: Kueue's gang, :func:`declared_pod_sets`; KAI's: ``whatif.kai.run``)."""
    pod_sets_of = declared or declared_pod_sets
    seed = profile.get("seed", 0)
    hours = _number(profile.get("hours", 168), f"{name} hours")
    workloads: list[dict[str, Any]] = []
    for i, stream in enumerate(profile["arrivals"]):
        where = f"{name} arrivals[{i}]"
        if not isinstance(stream, dict):
            raise WhatIfError(f"{where}: expected a mapping")
        rate = _number(stream.get("perHour"), f"{where}.perHour")
        low, high = stream.get("durationMinutes", [60, 60])
        low_s, high_s = (
            _number(low, f"{where}.durationMinutes") * 60,
            _number(high, f"{where}.durationMinutes") * 60,
        )
        shapes: list[list[dict[str, Any]]] = []
        for j, shape in enumerate(stream.get("shapes") or []):
            if isinstance(shape, dict) and "declared" in shape:
                shapes.append(pod_sets_of(model, str(shape["declared"]), f"{where}.shapes[{j}]"))
            elif isinstance(shape, dict) and isinstance(shape.get("podSets"), list):
                shapes.append(shape["podSets"])
            else:
                raise WhatIfError(f"{where}.shapes[{j}]: expected declared: <name> or podSets: [...]")
        if not shapes:
            raise WhatIfError(f"{where}.shapes: expected at least one gang shape")
        rng = random.Random(f"{seed}:{i}")
        t = 0.0
        n = 0
        while rate > 0:
            t += rng.expovariate(rate / 3600)
            if t >= hours * 3600:
                break
            entry: dict[str, Any] = {
                "name": f"{stream.get('namespace')}-{i}-{n}",
                "namespace": stream.get("namespace"),
                "queue": stream.get("queue"),
                "submit": round(t),
                "duration": round(rng.uniform(low_s, high_s)),
                "podSets": shapes[rng.randrange(len(shapes))],
            }
            if "priorityClass" in stream:
                entry["priorityClass"] = stream["priorityClass"]
            elif "priority" in stream:
                entry["priority"] = stream["priority"]
            workloads.append(entry)
            n += 1
    doc: dict[str, Any] = {"workloads": workloads}
    for key in DELAY_KEYS:
        if key in profile:
            doc[key] = profile[key]
    return parse_trace(doc)
