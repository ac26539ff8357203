"""One GPU type per ClusterQueue unless the queue opts in (issue 21 item 7).

Kueue v0.19.2 leaves a resource group's flavor for the next one whenever the workload does not fit
and nothing there can be preempted (``pkg/scheduler/flavorassigner/flavorassigner.go``
``shouldTryNextFlavor``), so prod's former layout -- l4 then h100 in one group -- admitted L4 jobs
on H100.  The program refuses that layout with one line; ``mixAcceleratorTypes: true`` plans it with
the annotation the pack's ``kueue-flavors-mix-accelerator-types`` accepts, and the pack flags the
same objects without it.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from preview.harness import RunResult
from stacks.errors import ConfigError
from tests.policies.pack_harness import Res, run
from tests.policies.pack_harness import policy as get_policy
from tests.stack_runner import config_value, run_stack, unedited_run

QUEUES = "gpu-batch:kueueQueues"
RULE = get_policy("kueue-flavors-mix-accelerator-types")


def _mixed_prod() -> dict[str, Any]:
    """prod's queues with research-l4 listing h100 (research's H100 quota) after l4, as before."""
    queues: dict[str, Any] = copy.deepcopy(config_value("prod", QUEUES))
    by_name = {q["name"]: q for q in queues["clusterQueues"]}
    research = by_name["research-l4"]
    research["resourceGroups"][0]["flavors"].append(
        by_name["research-h100"]["resourceGroups"][0]["flavors"][1]
    )
    research["admissionChecks"][0]["onFlavors"] = ["l4", "h100"]
    return queues


def _errors(edits: dict[str, Any]) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        run_stack("prod", edits)
    return str(caught.value).splitlines()


def _pack_resources(result: RunResult) -> list[Res]:
    return [Res(r.type, r.name, r.inputs, urn=r.urn) for r in result.resources]


def test_mixing_gpu_types_in_one_group_is_one_config_error() -> None:
    assert _errors({QUEUES: _mixed_prod()}) == [
        f"config error: {QUEUES}.clusterQueues[0].resourceGroups[0].flavors: got "
        "'l4 (nvidia-l4), h100 (nvidia-h100-80gb)', expected flavors of one GPU type: Kueue admits a "
        "job that does not fit the first on the next type; give each GPU type its own ClusterQueue "
        f"(and teams[].gpuQueues a LocalQueue per type), or set {QUEUES}.clusterQueues[0]."
        "mixAcceleratorTypes: true"
    ]


def test_a_flavor_naming_its_accelerator_counts_too() -> None:
    """A flavor without a pool that selects GKE's gke-accelerator label is that type."""
    queues = _mixed_prod()
    queues["resourceFlavors"][2] = {
        "name": "h100",
        "nodeLabels": {"cloud.google.com/gke-accelerator": "nvidia-h100-80gb"},
    }
    lines = _errors({QUEUES: queues})
    assert any("'l4 (nvidia-l4), h100 (nvidia-h100-80gb)'" in line for line in lines), lines


def test_opting_in_plans_the_annotation_the_pack_accepts() -> None:
    queues = _mixed_prod()
    queues["clusterQueues"][0]["mixAcceleratorTypes"] = True
    result = run_stack("prod", {QUEUES: queues})
    cq = next(
        r
        for r in result.resources
        if r.type.endswith(":ClusterQueue") and r.inputs["metadata"]["name"] == "research-l4"
    )
    assert cq.inputs["metadata"]["annotations"] == {"gpu-batch/accelerator-mixing": "allowed"}
    resources = _pack_resources(result)
    assert run(RULE, resources).clean
    # The same objects without the annotation: the pack flags exactly that queue.
    for res in resources:
        res.props.get("metadata", {}).pop("annotations", None)
    found = run(RULE, resources)
    assert len(found.violations) == 1
    assert found.messages[0].startswith("ClusterQueue 'research-l4'")


def test_prod_as_planned_is_clean_for_the_pack() -> None:
    assert run(RULE, _pack_resources(unedited_run("prod"))).clean


def test_a_bad_opt_in_value_is_one_line() -> None:
    queues = _mixed_prod()
    queues["clusterQueues"][0]["mixAcceleratorTypes"] = "yes"
    (line,) = _errors({QUEUES: queues})
    assert line.startswith(
        f"config error: {QUEUES}.clusterQueues[0].mixAcceleratorTypes: got 'yes', expected "
    )
