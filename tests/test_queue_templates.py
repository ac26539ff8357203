"""ClusterQueue templates: many teams share one quota shape, so big stacks stay small.

Pulumi passes a program its whole stack config in one environment variable, capped at 128 KiB;
prod with its near-identical queues (two per GPU type) rewritten over a template per GPU type must plan exactly the same
objects, and a mistake in or about a template is still one line at a useful key path.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from preview.stack_files import PULUMI_CONFIG_LIMIT, StackFileError, load_stack_files
from stacks.errors import ConfigError
from tests.stack_runner import ROOT, config_value, custom_objects, run_stack, unedited_run

QUEUES = "gpu-batch:kueueQueues"


def _prod_over_template() -> dict[str, Any]:
    """prod's kueueQueues with its ClusterQueues expressed as one template per GPU type (the
    ``-l4`` / ``-h100`` name suffix) plus their names."""
    queues: dict[str, Any] = copy.deepcopy(config_value("prod", QUEUES))
    templates: dict[str, Any] = {}
    for q in queues["clusterQueues"]:
        templates.setdefault(q["name"].rsplit("-", 1)[1], {k: v for k, v in q.items() if k != "name"})
    queues["clusterQueueTemplates"] = templates
    queues["clusterQueues"] = [
        {"name": q["name"], "template": q["name"].rsplit("-", 1)[1]} for q in queues["clusterQueues"]
    ]
    return queues


def _by_name(objects: Any) -> str:
    """Registration order is not fixed (the SDK registers concurrently): compare by name."""
    return json.dumps({o["metadata"]["name"]: o for o in objects}, sort_keys=True)


def test_template_plans_the_same_cluster_queues() -> None:
    original = _by_name(custom_objects(unedited_run("prod"), "ClusterQueue"))
    templated = _by_name(custom_objects(run_stack("prod", {QUEUES: _prod_over_template()}), "ClusterQueue"))
    assert templated == original
    assert '"template"' not in templated


def test_own_keys_win_over_the_template() -> None:
    queues = _prod_over_template()
    assert queues["clusterQueues"][2]["name"] == "applied-l4"
    queues["clusterQueues"][2]["queueingStrategy"] = "StrictFIFO"
    planned = {
        q["metadata"]["name"]: q for q in custom_objects(run_stack("prod", {QUEUES: queues}), "ClusterQueue")
    }
    assert planned["applied-l4"]["spec"]["queueingStrategy"] == "StrictFIFO"
    assert planned["research-l4"]["spec"]["queueingStrategy"] == "BestEffortFIFO"


def _error(queues: dict[str, Any]) -> str:
    with pytest.raises(ConfigError) as caught:
        run_stack("prod", {QUEUES: queues})
    return str(caught.value)


def test_unknown_template_is_one_line_at_its_key() -> None:
    queues = _prod_over_template()
    queues["clusterQueues"][1]["template"] = "teem"
    assert _error(queues) == (
        "config error: gpu-batch:kueueQueues.clusterQueues[1].template: got 'teem', "
        "expected the name of a clusterQueueTemplates entry (h100, l4)"
    )


def test_typo_inside_a_template_is_caught_even_if_unused() -> None:
    queues = _prod_over_template()
    queues["clusterQueueTemplates"]["spare"] = {"cohrt": "ml"}
    message = _error(queues)
    assert len(message.splitlines()) == 1
    assert message.startswith(
        "config error: gpu-batch:kueueQueues.clusterQueueTemplates.spare.cohrt: got 'cohrt', "
        "expected a ClusterQueue key (did you mean cohort?); a template accepts "
    )


def test_a_bad_value_from_the_template_names_the_queue_using_it() -> None:
    queues = _prod_over_template()
    queues["clusterQueueTemplates"]["l4"]["queueingStrategy"] = "LIFO"
    lines = _error(queues).splitlines()
    assert {line.split(": got")[0] for line in lines} == {  # research-l4 and applied-l4
        "config error: gpu-batch:kueueQueues.clusterQueues[0].queueingStrategy",
        "config error: gpu-batch:kueueQueues.clusterQueues[2].queueingStrategy",
    }


def test_a_config_pulumi_cannot_pass_is_refused_before_running(tmp_path: Path) -> None:
    project = tmp_path / "p"
    project.mkdir()
    (project / "Pulumi.yaml").write_text((ROOT / "Pulumi.yaml").read_text())
    padding = "x" * PULUMI_CONFIG_LIMIT
    (project / "Pulumi.big.yaml").write_text(f"config:\n  gpu-batch:note: {padding}\n")
    with pytest.raises(
        StackFileError, match=r"Pulumi.big.yaml: the stack config is [\d,]+ bytes as Pulumi passes it"
    ):
        load_stack_files(project, "big")
