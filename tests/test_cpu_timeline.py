"""``benchmarks.cpu_timeline``: the preview's processes found and named, idle cores counted."""

from __future__ import annotations

from benchmarks.cpu_timeline import descendants, idle_core_seconds, role


def test_each_process_of_a_preview_is_named_by_its_command_line() -> None:
    assert role("/venv/bin/python -m preview.analysis_host") == "host"
    assert role("/venv/bin/python -u -m pulumi.policy 127.0.0.1:0 .") == "pack"
    assert role("helm template kueue oci://registry.k8s.io/kueue/charts/kueue") == "other"


def test_every_process_below_the_root_is_found_and_nothing_beside_it() -> None:
    parents = {1: 0, 10: 1, 11: 10, 12: 11, 13: 10, 20: 1, 21: 20}
    assert descendants(10, parents) == [10, 11, 12, 13]
    assert descendants(12, parents) == [12]


def test_idle_core_seconds_are_the_cores_left_over_in_each_sample() -> None:
    samples = [
        (1.0, {"preview": 1.0}),  # one of two cores idle
        (0.5, {"preview": 0.5, "pack": 0.5}),  # both busy
        (2.0, {"pack": 1.5}),  # 2.5 of 4 core-seconds idle
        (1.0, {"preview": 1.0, "host": 0.6, "pack": 0.6}),  # more than the cores (a late sample): none idle
    ]
    assert idle_core_seconds(samples, cores=2) == 1.0 + 0.0 + 2.5 + 0.0
