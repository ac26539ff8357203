"""Objects Kueue would never run are refused, in one line, by the pack's own checks.

The API server validates a Kueue object by its CRD's schema and CEL rules, and Kueue's
validating webhooks add their own (kubernetes-sigs/kueue v0.19.2 ``pkg/webhooks/
clusterqueue_webhook.go`` ``ValidateClusterQueue``: ``validatePreemption`` rejects
``reclaimWithinCohort=Never and borrowWithinCohort.Policy!=Never``, ``validateFlavorFungibility``,
the resource-group and quota rules; ``cohort_webhook.go``).  A stack that holds such an object
never gets it created, so simulating it would report admissions of a queue that does not exist.
The pack states those rules once (``gpu_batch_policy.rules.kueue.api.API_CHECKS``, the
``kueue-*`` mandatory policies); here every one of them runs over the stack's Kueue objects and
the first rejection becomes the what-if's error.  Values unknown until apply are the pack's
"cannot check", not a refusal (the simulator asks for known values where it reads them).
"""

from __future__ import annotations

from whatif.errors import WhatIfError
from whatif.pack import API_CHECKS, Reporter, StackModel


def refuse_rejected(model: StackModel) -> None:
    """Raise :class:`WhatIfError` for the first Kueue object the API server or Kueue rejects."""
    found: list[str] = []
    reporter = Reporter(lambda message, _urn: found.append(message), stack=True)
    views = [
        *model.cluster_queues(),
        *model.cohorts(),
        *model.admission_checks(),
        *model.workload_priority_classes(),
    ]
    for rule in API_CHECKS:
        for view in views:
            if isinstance(view, rule.applies_to):
                rule.check(view, reporter, {})
                if found:
                    raise WhatIfError(
                        f"{found[0]} [{rule.name}] -- Kueue would refuse this object, so it is not simulated"
                    )
