"""Every repo stack applied live: each ``Pulumi.<stack>.yaml``'s objects (declared and
Helm-rendered, what ``build/<stack>/manifests.yaml`` holds) go to a fresh kube-apiserver by
server-side apply, with Kueue's manager serving its webhooks, and none is refused.

One kube-apiserver per cluster of a stack (a MultiKueue stack has one per worker too), on a fresh
etcd prefix: starting one costs ~5 s, less than undoing a stack without a garbage collector or a
namespace controller.  See :mod:`tests.live.stacks` for the order and the stand-ins.
"""

from __future__ import annotations

import pytest

from preview.stack_files import stack_names
from tests.live.conftest import SHARED_STACK, next_test_uses
from tests.live.stacks import stack_clusters
from tests.stack_runner import ROOT

STACKS = stack_names(ROOT)


def test_every_stack_file_is_applied() -> None:
    assert set(STACKS) >= {"dev", "prod", "kai", "skypilot", "gpudirect", "multiregion"}


@pytest.mark.parametrize("stack", STACKS)
def test_stack_applies_with_no_rejection(stack: str, request: pytest.FixtureRequest) -> None:
    sections = stack_clusters(stack)
    assert sections, f"{stack} has no Kubernetes objects"
    report: list[str] = []
    # the session's shared deployment of prod, else the stack's deployments kept for the
    # stack's test_queues_live test that runs next (conftest.follow_stack_apply)
    shared = stack == SHARED_STACK and len(sections) == 1
    deployments = (
        [request.getfixturevalue("shared_stack")]
        if shared
        else request.getfixturevalue("stack_deployments").get(stack)
    )
    try:
        for objects, deployment in zip(sections, deployments, strict=True):
            applied = [r for r in deployment.results if r.accepted]
            # everything the section holds went in: declared, rendered, and the platform CRDs
            assert len(deployment.results) >= len(objects.declared) + sum(
                len(r.objects) for r in objects.releases
            )
            report += [f"{objects.title}: {r}" for r in deployment.refused]
            if any(r.chart == "kueue" for r in objects.releases):
                assert deployment.kueue is not None and deployment.kueue.process is not None
                deployment.kueue.process.check()  # still serving after every object went in
            assert applied
    finally:
        if not shared and not next_test_uses(request, stack):
            request.getfixturevalue("stack_deployments").stop()  # no later test needs them
    assert not report, f"{stack}: the API server refused {len(report)} object(s):\n" + "\n".join(report)
