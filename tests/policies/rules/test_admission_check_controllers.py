"""kueue-admissioncheck-controller: an AdmissionCheck needs a controller that runs.

From Kueue v0.19.2 ``cmd/kueue/main.go`` ``setupControllers`` (the provisioning controller; the
MultiKueue controllers behind the ``MultiKueue`` gate, ``pkg/features/kube_features.go``) and the
two controller names of ``apis/kueue/v1beta2`` (``pkg/util/admissioncheck/admissioncheck.go``
filters checks by ``spec.controllerName``).
"""

from __future__ import annotations

import yaml
from gpu_batch_policy.rules.kueue.admission_check_controllers import POLICIES

from tests.policies.workload_stack import UNKNOWN, Registration, helm_release, k8s, run

RULE = POLICIES[0]


def check(controller: str, name: str = "ac") -> Registration:
    return k8s("kueue.x-k8s.io/v1beta2", "AdmissionCheck", name, spec={"controllerName": controller})


def kueue(
    gates: list[dict[str, object]] | None = None, config_gates: dict[str, bool] | None = None
) -> Registration:
    values: dict[str, object] = {}
    if gates is not None:
        values["controllerManager"] = {"featureGates": gates}
    if config_gates is not None:
        config = {
            "apiVersion": "config.kueue.x-k8s.io/v1beta2",
            "kind": "Configuration",
            "featureGates": config_gates,
        }
        values["managerConfig"] = {"controllerManagerConfigYaml": yaml.safe_dump(config)}
    return helm_release("kueue", "oci://registry.k8s.io/kueue/charts/kueue", values, version="0.19.2")


def test_kueues_own_controllers_are_served() -> None:
    stack = [check("kueue.x-k8s.io/provisioning-request", "dws"), check("kueue.x-k8s.io/multikueue", "mk")]
    assert run(RULE, stack).violations == []
    assert run(RULE, [*stack, kueue()]).violations == []


def test_a_kueue_name_kueue_does_not_serve_is_caught() -> None:
    outcome = run(RULE, [check("kueue.x-k8s.io/provisioning-requests")])
    assert outcome.mentions(
        "AdmissionCheck 'ac'", "'kueue.x-k8s.io/provisioning-requests'", "never becomes Active"
    )


def test_multikueue_without_its_gate_is_caught() -> None:
    off = [{"name": "MultiKueue", "enabled": False}]
    assert run(RULE, [check("kueue.x-k8s.io/multikueue"), kueue(off)]).mentions(
        "MultiKueue feature gate is off"
    )
    in_config = kueue(config_gates={"MultiKueue": False})
    assert run(RULE, [check("kueue.x-k8s.io/multikueue"), in_config]).mentions("feature gate is off")
    on = [{"name": "MultiKueue", "enabled": True}]
    assert run(RULE, [check("kueue.x-k8s.io/multikueue"), kueue(on)]).violations == []


def test_an_external_controller_is_not_in_this_stack() -> None:
    outcome = run(RULE, [check("open-cluster-management.io/placement")])
    assert outcome.violations == []
    assert outcome.cannot_check is not None and "open-cluster-management.io/placement" in outcome.cannot_check
    unknown = run(RULE, [check(UNKNOWN)])
    assert unknown.violations == [] and unknown.cannot_check is not None
