"""An AdmissionCheck is served by a controller, or it never becomes Active.

Kueue marks a ClusterQueue inactive while any of its AdmissionChecks is not Active
(``AdmissionCheckInactive``), and only the controller named by ``spec.controllerName`` sets an
AdmissionCheck Active (kubernetes-sigs/kueue v0.19.2 ``pkg/util/admissioncheck/admissioncheck.go``
filters checks by ``ac.Spec.ControllerName == controllerName``).  Kueue itself serves exactly two
names (``apis/kueue/v1beta2``: ``ProvisioningRequestControllerName`` =
``kueue.x-k8s.io/provisioning-request``, ``MultiKueueControllerName`` = ``kueue.x-k8s.io/multikueue``),
set up in ``cmd/kueue/main.go`` ``setupControllers``:

* the provisioning controller whenever the cluster serves the ProvisioningRequest API
  (``provisioning.ServerSupportsProvisioningRequest``; GKE does, see the ``dws-*`` rules);
* the MultiKueue controllers only with the ``MultiKueue`` feature gate (beta, on by default since
  0.9: ``pkg/features/kube_features.go``); a gate turned off in the chart's
  ``controllerManager.featureGates`` or the Configuration's ``featureGates`` leaves its checks
  unserved.

Any other name under Kueue's own ``kueue.x-k8s.io/`` prefix is served by nothing Kueue ships: a
mandatory finding.  A name outside it belongs to an external controller (Open Cluster
Management's ``open-cluster-management.io/placement``, a custom check) that may run in another
stack or be installed by hand, so the finding is the advisory "not in this stack".
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_policy import Policy, PolicyConfigSchema

from ...facts.kueue_install import INSTALL_PROPERTIES, feature_gate
from ...facts.model import StackModel
from ...facts.model.kueue import MULTIKUEUE_CONTROLLER, PROVISIONING_REQUEST_CONTROLLER
from ...primitives.values import Unknown
from ..kit.builders import stack_policy
from ..kit.report import Reporter

KUEUE_PREFIX = "kueue.x-k8s.io/"
KUEUE_CONTROLLERS = (PROVISIONING_REQUEST_CONTROLLER, MULTIKUEUE_CONTROLLER)
MULTIKUEUE_GATE = "MultiKueue"


def check_admission_check_controllers(
    model: StackModel, reporter: Reporter, config: Mapping[str, Any]
) -> None:
    for check in model.admission_checks():
        name = check.controller_name
        if isinstance(name, Unknown):
            reporter.cannot_check(check, "spec.controllerName")
            continue
        if not isinstance(name, str) or name == PROVISIONING_REQUEST_CONTROLLER:
            continue  # a missing name is the CRD schema's finding
        if name == MULTIKUEUE_CONTROLLER:
            enabled = feature_gate(model, config, MULTIKUEUE_GATE)
            if isinstance(enabled, Unknown):
                reporter.cannot_check(check, "whether Kueue's MultiKueue feature gate is on")
            elif not enabled:
                reporter.violation(
                    check,
                    f"names controller '{name}', but Kueue's MultiKueue feature gate is off, so no MultiKueue "
                    "controller runs: the check never becomes Active and every ClusterQueue using it stays "
                    "inactive",
                    "turn the MultiKueue feature gate on (it is on by default), or drop the check",
                )
        elif name.startswith(KUEUE_PREFIX):
            reporter.violation(
                check,
                f"names controller '{name}', which Kueue does not run (its controllers are "
                f"{' and '.join(KUEUE_CONTROLLERS)}): the check never becomes Active and every ClusterQueue "
                "using it stays inactive",
                f"use {' or '.join(KUEUE_CONTROLLERS)}, or the name of the external controller that serves it",
            )
        else:
            reporter.not_in_stack(
                check,
                f"controller '{name}' that must set it Active (an external admission-check controller: "
                "nothing in this program runs it; without it every ClusterQueue using the check stays inactive)",
            )


POLICIES: list[Policy] = [
    stack_policy(
        "kueue-admissioncheck-controller",
        "Every AdmissionCheck names a controller that runs: Kueue's provisioning-request controller, its "
        "MultiKueue controller with the MultiKueue gate on, or an external controller (advisory).",
        check_admission_check_controllers,
        config_schema=PolicyConfigSchema(properties=INSTALL_PROPERTIES),
    ),
]
