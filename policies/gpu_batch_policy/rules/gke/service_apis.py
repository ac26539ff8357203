"""A GCP resource whose Google API the program neither turns on nor lists as a prerequisite (issue 39).

Every ``gcp:`` resource is created through one Google API; a project where that API is off
refuses the call (``SERVICE_DISABLED``, "API has not been used in project ... or it is
disabled"), so the first ``pulumi up`` fails at that resource.  Which API serves a type is
``facts.gcp_apis`` (derived from terraform-provider-google-beta's per-resource metadata,
``api_service_name``).  An API counts as on when:

* the program turns it on: a ``gcp:projects/service:Service`` whose ``service`` is the API
  (terraform-provider-google-beta ``google_project_service``);
* the stack's policy config lists it as turned on outside the program (``prerequisites``: the
  APIs the runbook has the operator enable, or a platform team's project factory);
* Google turns it on in every new project (``facts.gcp_apis.ENABLED_BY_DEFAULT``).

**gcp-service-api-enabled** (advisory by default: a program cannot see what its project already
has turned on, so only a stack that lists its prerequisites knows the rest is missing; the repo
stacks' ``policies/config.<stack>.json`` make it mandatory): one finding per API, on the first resource needing it,
naming every type that needs it.  A ``Service`` whose ``service`` is unknown until apply makes
the rest "cannot check yet"; a type the providers map to no API is "cannot check" too, never a
pass.  The project is not compared: one program, one project (a resource in another project
whose API is off there is not caught).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_policy import EnforcementLevel, Policy, PolicyConfigSchema

from ...facts.gcp_apis import ENABLED_BY_DEFAULT, SERVICE_TYPE, api_of
from ...facts.model import Resource, StackModel
from ...primitives.values import Unknown
from ..kit.builders import stack_policy
from ..kit.report import Reporter

GCP_PREFIX = "gcp:"


def enabled_in_program(model: StackModel) -> tuple[set[str], list[Resource]]:
    """APIs the program's ``Service`` resources turn on, and the Services whose API is unknown."""
    known: set[str] = set()
    unknown: list[Resource] = []
    for service in model.of_type(SERVICE_TYPE):
        name = service.get("service")
        if isinstance(name, str):
            known.add(name)
        elif isinstance(name, Unknown):
            unknown.append(service)
    return known, unknown


def check_apis(model: StackModel, reporter: Reporter, config: Mapping[str, Any]) -> None:
    listed = config.get("prerequisites") or []
    prerequisites = {a for a in listed if isinstance(a, str)}
    enabled, unknown_services = enabled_in_program(model)
    on = enabled | prerequisites | ENABLED_BY_DEFAULT
    needs: dict[str, list[Resource]] = {}
    for res in model.resources:
        if not res.type.startswith(GCP_PREFIX):
            continue
        api = api_of(res.type)
        if api is None:
            reporter.cannot_check(res, f"the providers name no Google API for {res.type}")
            continue
        if api not in on:
            needs.setdefault(api, []).append(res)
    for api, resources in sorted(needs.items()):
        if unknown_services:
            reporter.cannot_check(resources[0], f"whether the program turns on {api} is unknown until apply")
            continue
        types = sorted({r.type for r in resources})
        reporter.violation(
            resources[0],
            f"{len(resources)} resource(s) of {', '.join(types)} call {api}, which the program neither "
            "turns on nor lists as a prerequisite: a project without it refuses them (SERVICE_DISABLED)",
            f"add a gcp.projects.Service with service={api} (and depend on it), or list {api} under "
            "gcp-service-api-enabled.prerequisites in the stack's policy config if it is turned on outside the program",
        )


POLICIES: list[Policy] = [
    stack_policy(
        "gcp-service-api-enabled",
        "Every GCP resource's Google API is turned on by the program or listed as a prerequisite.",
        check_apis,
        enforcement_level=EnforcementLevel.ADVISORY,
        config_schema=PolicyConfigSchema(
            properties={
                "prerequisites": {
                    "type": "array",
                    "items": {"type": "string", "pattern": r"^[a-z0-9-]+\.googleapis\.com$"},
                    "description": "Google APIs turned on outside the program (e.g. by the runbook's first step)",
                }
            }
        ),
    ),
]
