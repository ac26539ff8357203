"""Dashboards and alert policies stay within Cloud Monitoring's limits, up to the 1,000-team stack.

The 1,000-team stack is the benchmark's (benchmarks/scale.py ``stack_document``: one ClusterQueue
with a DWS admission check per team, the ``make bench`` and deterministic-output stack).  Its
config is validated as a stack's is (``StackConfig``), then the same functions that declare the
dashboards and policies (stacks/compose/monitoring.py) lay them out -- no Pulumi run, so the test
is fast.  Limits: 1 to 6 conditions per policy (googleapis ``google/monitoring/v3/alert.proto``
``AlertPolicy.conditions``), a mosaic of at most 48 columns (``dashboard/v1/layouts.proto``
``MosaicLayout.columns``), and the budgets :data:`MAX_TILES` per dashboard and :data:`MAX_POLICIES`
per project (docs/monitoring.md says where those figures come from).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from benchmarks.scale import stack_document
from components.observability.alerts import MAX_CONDITIONS, MAX_POLICIES, alert_rules, policy_groups
from components.observability.dashboard import COLUMNS, MAX_TILES, QueueView, dashboard_documents
from stacks.compose.monitoring import alert_thresholds, queue_views
from stacks.config import StackConfig
from stacks.errors import ConfigError
from tests.stack_runner import plain_project_keys

TEAMS = 1000


def config(teams: int) -> StackConfig:
    document = stack_document(teams)["config"]
    return StackConfig.model_validate(
        {k.removeprefix("gpu-batch:"): v for k, v in document.items() if k.startswith("gpu-batch:")}
    )


def repo_config(stack: str) -> StackConfig:
    """A repo stack file's plain project keys, validated as the program validates them."""
    return StackConfig.model_validate(
        {key.removeprefix("gpu-batch:"): value for key, value in plain_project_keys(stack).items()}
    )


@pytest.fixture(scope="module")
def large() -> StackConfig:
    return config(TEAMS)


def tiles(doc: dict[str, Any]) -> list[dict[str, Any]]:
    tiles_: list[dict[str, Any]] = doc["mosaicLayout"]["tiles"]
    return tiles_


def test_the_large_stacks_dashboards_fit_and_show_every_queue_once(large: StackConfig) -> None:
    views = queue_views(large)
    assert len(views) == TEAMS
    docs = dashboard_documents("gpu-batch large", views)
    assert len(docs) > 1
    for doc in docs:
        assert 0 < len(tiles(doc)) <= MAX_TILES
        assert doc["mosaicLayout"]["columns"] <= COLUMNS
        assert all(t["xPos"] + t["width"] <= COLUMNS for t in tiles(doc))
    titles = [t["widget"]["title"] for doc in docs for t in tiles(doc)]
    queues_per_page = [{t["widget"]["title"].split(":")[0] for t in tiles(doc)} for doc in docs]
    for view in views:
        # Every queue's rows are on exactly one page, all six of them (DWS: the provisioning row).
        assert sum(view.name in page for page in queues_per_page) == 1
        assert sum(title.startswith(f"{view.name}:") for title in titles) == 6
    assert titles[-2:] == ["GPU utilisation (%)", "GPU memory used (MiB)"]
    assert [d["displayName"] for d in docs[:2]] == [
        f"gpu-batch large (1/{len(docs)})",
        f"gpu-batch large (2/{len(docs)})",
    ]


def test_a_stack_that_fits_keeps_its_single_dashboard() -> None:
    views = [QueueView(f"q{i}", ("t",), provisioning_check=True) for i in range(6)]
    (doc,) = dashboard_documents("small", views)
    assert doc["displayName"] == "small" and len(tiles(doc)) == 6 * 6 + 2
    # One more queue needs a second page; the first stays whole queues.
    first, second = dashboard_documents("small", [*views, QueueView("q6", ("t",), provisioning_check=True)])
    assert len(tiles(first)) == 36 and len(tiles(second)) == 6 + 2


def test_the_large_stacks_alerts_fit_and_keep_every_rule(large: StackConfig) -> None:
    rules = alert_rules(queue_views(large), alert_thresholds(large))
    assert len(rules) == 3 * TEAMS + 2  # per DWS queue: inactive, evictions, provisioning wait
    groups = policy_groups(rules)
    assert len(groups) <= MAX_POLICIES
    assert all(1 <= len(g.rules) <= MAX_CONDITIONS for g in groups)
    assert [r for g in groups for r in g.rules] == sorted(rules, key=lambda r: r.team)
    keys = Counter(g.key for g in groups)
    assert max(keys.values()) == 1  # resource names are unique
    for g in groups:
        assert all(r.team == g.team for r in g.rules)  # a policy's team label is every condition's


def test_a_team_with_more_rules_than_a_policy_holds_gets_a_second_policy() -> None:
    views = [QueueView(f"q{i}", ("big",), provisioning_check=True) for i in range(3)]
    rules = alert_rules(views, alert_thresholds(config(1)))
    groups = [g for g in policy_groups(rules) if g.team == "big"]
    assert [(g.key, len(g.rules)) for g in groups] == [("big", 6), ("big-2", 3)]
    assert groups[1].display_name() == "gpu-batch alerts: big (2)"


def test_teams_whose_policy_names_collide_are_refused_not_merged() -> None:
    views = [
        QueueView("a", ("ML",), provisioning_check=False),
        QueueView("b", ("ml",), provisioning_check=False),
    ]
    rules = alert_rules(views, alert_thresholds(config(1)))
    with pytest.raises(ConfigError) as refused:
        policy_groups(rules)
    assert str(refused.value) == (
        'config error: gpu-batch:teams: got ["ML", "ml"], expected team names whose alert policies do '
        "not share the name alert-ml (they differ only in case, punctuation, or past 63 characters): "
        "rename one team"
    )


@pytest.mark.parametrize("stack", ["prod", "gpudirect"])
def test_each_queue_view_lists_the_teams_whose_local_queues_point_at_it(stack: str) -> None:
    """``localQueue`` and ``gpuQueues`` both count, a team once per queue (prod's research team
    points two LocalQueues at queues of its own; gpudirect's a gpuQueue), sorted by name; a
    queue no team points at lists none.  Read per queue from the definition, against the one
    pass the views are built from (``stacks.config.tenancy.teams_by_queue``)."""
    config = repo_config(stack)
    views = queue_views(config)
    assert [v.name for v in views] == [cq.name for cq in config.kueue_queues.cluster_queues]
    for view in views:
        pointing = {t.name for t in config.teams if view.name in t.local_queues.values()}
        assert view.teams == tuple(sorted(pointing))
    assert any(len(v.teams) > 1 for v in views) or any(
        len(set(t.local_queues.values())) > 1 for t in config.teams
    ), f"{stack} no longer exercises a team with several queues or a queue with several teams"


def test_a_team_pointing_two_local_queues_at_one_queue_is_listed_once(large: StackConfig) -> None:
    team = large.teams[0]
    target = team.cluster_queue
    assert target is not None
    doubled = team.model_copy(update={"gpu_queues": {"extra": target}})
    assert list(doubled.local_queues.values()).count(target) == 2
    config = large.model_copy(update={"teams": [doubled, *large.teams[1:]]})
    (view,) = [v for v in queue_views(config) if v.name == target]
    assert view.teams == (team.name,)
