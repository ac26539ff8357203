"""Key paths to stack-file lines, and resources to the config key that declared them."""

from __future__ import annotations

import re

import pytest
import yaml

from preview.findings.document import Locator
from preview.findings.locate import YamlPositions
from preview.findings.origins import COMPONENT_KEYS, TYPE_PREFIX_KEYS
from preview.records import RecordedResource
from preview.stack_files import stack_names
from tests.stack_runner import ROOT, unedited_run

STACK = """\
config:
  gpu-batch:pools:
    - name: a
      maxNodes: 3
    - name: b
      resources:
        nvidia.com/gpu: {nominalQuota: "4"}
        nvidia.com: {nominalQuota: "9"}
"""


def test_key_paths_reach_their_line_and_column() -> None:
    positions = YamlPositions("Pulumi.x.yaml", STACK)
    at = positions.locate("gpu-batch:pools[0].maxNodes")
    assert (at.line, at.column, at.found) == (4, 7, "gpu-batch:pools[0].maxNodes")
    # A key with dots: the longest key that is a prefix wins, not `nvidia.com`.
    quota = positions.locate("gpu-batch:pools[1].resources.nvidia.com/gpu.nominalQuota")
    assert (quota.line, quota.column) == (7, 26)
    assert positions.locate("gpu-batch:pools[1].resources.nvidia.com.nominalQuota").line == 8
    # Deeper than the file: the deepest node written; an index past the list: the list's key.
    assert positions.locate("gpu-batch:pools[1].borrowingLimit").line == 5
    assert positions.locate("gpu-batch:pools[7].name").line == 2
    missing = positions.locate("gpu-batch:teams[0]")
    assert (missing.line, missing.found) == (1, "")
    assert YamlPositions("bad.yaml", "config: [unclosed").locate("x").line == 1


def test_every_component_type_the_program_declares_has_an_origin_rule() -> None:
    declared = set()
    for path in (ROOT / "components").rglob("*.py"):
        declared |= set(
            re.findall(r'super\(\).__init__\(\s*"(gpu-batch:[A-Za-z]+:[A-Za-z]+)"', path.read_text())
        )
    assert declared and declared <= set(COMPONENT_KEYS), sorted(declared - set(COMPONENT_KEYS))


# Program-level resources no config entry declares: the stack, its provider, the readiness gates
# (dynamic resources) and the project IAM bindings every team member shares.
PROGRAM_LEVEL = (
    "pulumi:pulumi:Stack",
    "pulumi:providers:",
    "pulumi-python:dynamic:Resource",
    "gcp:projects/iAMMember:IAMMember",
)


def _layer_key(record: RecordedResource, by_urn: dict[str, RecordedResource]) -> str | None:
    """``gpu-batch:<key>`` of the nearest enclosing component with a layer key, if any."""
    current: RecordedResource | None = record
    while current is not None:
        if current.type in COMPONENT_KEYS:
            return f"gpu-batch:{COMPONENT_KEYS[current.type]}"
        for prefix, key in TYPE_PREFIX_KEYS.items():
            if current.type.startswith(prefix):
                return f"gpu-batch:{key}"
        current = by_urn.get(current.parent)
    return None


@pytest.mark.parametrize("stack", stack_names(ROOT))
def test_every_resource_of_a_repo_stack_points_at_a_line_someone_wrote(stack: str) -> None:
    result = unedited_run(stack)
    locator = Locator(ROOT, "gpu-batch", stack, result.resources)
    lines = (ROOT / f"Pulumi.{stack}.yaml").read_text().splitlines()
    written = set(yaml.safe_load((ROOT / f"Pulumi.{stack}.yaml").read_text())["config"])
    by_urn = {r.urn: r for r in result.resources}
    for record in result.resources:
        origin = locator.origins.origin(record.urn)
        where = locator.position(origin)
        if origin.file == "Pulumi.yaml":
            # Program-level, or a layer whose key the stack file leaves to the program's default.
            layer = _layer_key(record, by_urn)
            assert record.type.startswith(PROGRAM_LEVEL) or (layer and layer not in written), record.urn
            continue
        if origin.file == "charts.lock.yaml":
            assert record.type == "kubernetes:helm.sh/v3:Release"
            continue
        assert where.file == f"Pulumi.{stack}.yaml" and where.found == origin.path, record.urn
        if record.type.endswith(":ClusterQueue"):
            name = record.inputs["metadata"]["name"]
            assert lines[where.line - 1].strip() == f"- name: {name}", (record.urn, where)
