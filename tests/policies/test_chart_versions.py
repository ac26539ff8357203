"""Chart version strings of any length are a finding, never an ``OSError`` (issue 18 item 8).

The chart cache names a chart's folder ``<name>-<version>`` (``charts/resolver.py``); a version
long enough to push that past the file system's 255-byte name limit used to surface as ``OSError:
File name too long`` from the cache lookup.  Helm chart versions are SemVer 2 (helm.sh/docs,
"The Chart.yaml File") and an OCI tag, how an ``oci://`` chart version is published, is at most
128 characters (opencontainers/distribution-spec ``spec.md``), so such a version names no chart.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from gpu_batch_policy.facts.charts import ChartReference, ChartResolver, ChartUnavailableError
from gpu_batch_policy.facts.charts.reference import UnsupportedChartError, reference_from_release

from tests.policies.pack_harness import policy, run
from tests.policies.pack_objects import kueue_release

KUEUE_OCI = "oci://registry.k8s.io/kueue/charts/kueue"
LONG = "1." + "9" * 400


@pytest.mark.parametrize("version", [LONG, "9" * 300, "../../etc", "1.0.0/evil", "..", "1.0.0\x00"])
def test_a_version_no_chart_folder_can_hold_is_unsupported(version: str) -> None:
    with pytest.raises(UnsupportedChartError, match="chart kueue version"):
        reference_from_release(KUEUE_OCI, version, None)


def test_a_pinned_version_is_a_reference() -> None:
    assert reference_from_release(KUEUE_OCI, "0.19.2", None) == ChartReference("kueue", "0.19.2", KUEUE_OCI)


def test_the_resolver_turns_file_system_errors_into_unavailable(tmp_path: Path) -> None:
    resolver = ChartResolver(tmp_path, mirror_dir=None, offline=True)
    with pytest.raises(ChartUnavailableError, match="chart cache"):
        resolver.resolve(ChartReference("kueue", "9" * 300, KUEUE_OCI))


def test_the_release_rule_reports_it_as_a_finding() -> None:
    release = kueue_release()
    release.props["version"] = LONG
    result = run(policy("helm-release-renders"), [release])
    assert result.cannot_check is not None and "402 characters long" in result.cannot_check
