"""The readiness gate's wait: served only when a webhook is registered *and* answers."""

from __future__ import annotations

import pytest

from components.gates.runtime import NotServedError, Probe, served, wait_until_served

PROBE = Probe(group="scheduling.run.ai", version="v2", plural="queues", body={"kind": "Queue"})


class FakeCluster:
    """Replays what the API server answers on successive polls."""

    def __init__(self, rules: list[list[tuple[str, str]]], answers: list[Exception | None]) -> None:
        self.rules, self.answers, self.dry_runs = rules, answers, 0

    def webhook_rules(self) -> list[tuple[str, str]]:
        return self.rules.pop(0) if len(self.rules) > 1 else self.rules[0]

    def dry_run_create(self, probe: Probe) -> None:
        self.dry_runs += 1
        answer = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
        if answer is not None:
            raise answer


QUEUE_RULE = [("scheduling.run.ai", "queues")]
REFUSED = RuntimeError(
    'Internal error occurred: failed calling webhook "queues.scheduling.run.ai": connection refused'
)


def test_no_webhook_yet_is_not_served() -> None:
    cluster = FakeCluster([[]], [None])
    assert served(cluster, PROBE) == "no validating webhook for queues.scheduling.run.ai registered yet"
    assert cluster.dry_runs == 0


def test_unreachable_webhook_is_not_served_but_a_content_rejection_is() -> None:
    assert "not serving" in (served(FakeCluster([QUEUE_RULE], [REFUSED]), PROBE) or "")
    rejected = RuntimeError("admission webhook denied the request: parent queue missing")
    assert served(FakeCluster([QUEUE_RULE], [rejected]), PROBE) is None


def test_waits_through_registration_and_startup() -> None:
    cluster = FakeCluster([[], QUEUE_RULE], [REFUSED, REFUSED, None])
    ticks = iter(range(100))
    sleeps: list[float] = []
    wait_until_served(cluster, [PROBE], 60, clock=lambda: float(next(ticks)), sleep=sleeps.append)
    assert len(sleeps) == 3 and cluster.dry_runs == 3


def test_gives_up_at_the_deadline_saying_why() -> None:
    ticks = iter(range(0, 1000, 30))
    with pytest.raises(NotServedError, match=r"after 60s: webhook for queues.scheduling.run.ai not serving"):
        wait_until_served(
            FakeCluster([QUEUE_RULE], [REFUSED]),
            [PROBE],
            60,
            clock=lambda: float(next(ticks)),
            sleep=lambda _: None,
        )
