"""What a Role's rules grant (``gpu_batch_policy/facts/rbac.py`` ``RuleSet``), as the API server's
authorizer reads them: kubernetes/kubernetes v1.34.0 ``pkg/apis/rbac/v1/evaluation_helpers.go``
(``VerbMatches``, ``APIGroupMatches``, ``ResourceMatches``, ``ResourceNameMatches``) and
``plugin/pkg/auth/authorizer/rbac/rbac.go`` ``RuleAllows`` (all four must match; any rule allowing
is enough)."""

from __future__ import annotations

from typing import Any

import pytest
from gpu_batch_policy.facts.rbac import RuleSet, rules_grant
from gpu_batch_policy.primitives.values import Unknown

JOBS = {"apiGroups": ["batch"], "resources": ["jobs"], "verbs": ["create"]}
EVERYTHING = {"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}
ONE_NAME = {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["update"], "resourceNames": ["kueue"]}
UNKNOWN_RULE = {"apiGroups": Unknown("apiGroups"), "resources": ["jobs"], "verbs": ["create"]}


@pytest.mark.parametrize(
    ("rules", "ask", "granted"),
    [
        ([JOBS], ("batch", "jobs", ("create",)), True),
        ([JOBS], ("batch", "jobs", ("delete",)), False),
        ([JOBS], ("", "pods", ("create",)), False),
        ([EVERYTHING], ("ray.io", "rayjobs", ("create",)), True),
        ([ONE_NAME], ("", "configmaps", ("update",)), False),  # limited to a name, asked for all
        ([ONE_NAME], ("", "configmaps", ("update",), "kueue"), True),
        ([ONE_NAME], ("", "configmaps", ("update",), "other"), False),
        ([UNKNOWN_RULE], ("batch", "jobs", ("create",)), None),  # might grant: unknown until apply
        ([UNKNOWN_RULE, JOBS], ("batch", "jobs", ("create",)), True),  # another rule does
        ([JOBS, UNKNOWN_RULE], ("batch", "jobs", ("create",)), True),
        (Unknown("rules"), ("batch", "jobs", ("create",)), None),
        (
            [{"apiGroups": ["batch"], "resources": ["jobs"], "verbs": [{"bad": 1}]}],
            ("batch", "jobs", ("create",)),
            False,
        ),
        ("not a list", ("batch", "jobs", ("create",)), False),
    ],
)
def test_what_rules_grant(rules: Any, ask: tuple[Any, ...], granted: bool | None) -> None:
    assert rules_grant(rules, *ask) is granted


def test_one_reading_answers_many_questions() -> None:
    # pod-bypass asks one binding's rules about every workload kind
    read_once = RuleSet([ONE_NAME, {"apiGroups": ["ray.io"], "resources": ["*"], "verbs": ["create"]}])
    answers: list[tuple[tuple[Any, ...], bool | None]] = [
        (("ray.io", "rayjobs", ("create",)), True),
        (("ray.io", "rayclusters", ("create",)), True),
        (("batch", "jobs", ("create",)), False),
        (("", "configmaps", ("update",), "kueue"), True),
        (("", "configmaps", ("update",)), False),
    ]
    assert [read_once.grants(*ask) for ask, _ in answers] == [granted for _, granted in answers]
