"""Every GCP resource's Google API is on before the resource is created (issue 39).

"Complete, not sampled": every ``gcp:`` type that any repo stack (every ``Pulumi.*.yaml``, a
glob) registers -- the registrations ``build/<stack>/plan.json`` records, from the real program
under the preview's mocks -- has an API in the table derived from the providers
(``gpu_batch_policy.facts.gcp_apis``), and the APIs the stacks call but do not turn on are exactly
the runbook's first step and each stack's ``gcp-service-api-enabled.prerequisites``.
"""

from __future__ import annotations

import json
import re
from functools import cache

import pytest
from gpu_batch_policy.facts.gcp_apis import ENABLED_BY_DEFAULT, SERVICE_TYPE, api_of, source

from preview.records import RecordedResource
from tests.policies.pack_harness import UNKNOWN, Res, policy, run
from tests.stack_runner import ROOT, unedited_run

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

STACKS = sorted(p.name.removeprefix("Pulumi.").removesuffix(".yaml") for p in ROOT.glob("Pulumi.*.yaml"))
RULE = policy("gcp-service-api-enabled")
CERT = "gcp:certificatemanager/certificate:Certificate"
RUNBOOK = (ROOT / "docs" / "runbook.md").read_text()


@cache
def records(stack: str) -> tuple[RecordedResource, ...]:
    return tuple(unedited_run(stack).resources)


def needed_not_enabled(stack: str) -> set[str]:
    recs = records(stack)
    enabled = {r.inputs.get("service") for r in recs if r.type == SERVICE_TYPE}
    needed = {api_of(r.type) for r in recs if r.type.startswith("gcp:")}
    return {a for a in needed if a is not None} - enabled - ENABLED_BY_DEFAULT


@pytest.mark.parametrize("stack", STACKS)
def test_every_gcp_type_of_every_stack_has_an_api(stack: str) -> None:
    types = {r.type for r in records(stack) if r.type.startswith("gcp:")}
    assert types, stack
    assert not [t for t in sorted(types) if api_of(t) is None], stack


@pytest.mark.parametrize("stack", STACKS)
def test_each_stack_lists_exactly_the_apis_it_calls_and_does_not_turn_on(stack: str) -> None:
    config = json.loads((ROOT / "policies" / f"config.{stack}.json").read_text())
    listed = set(config["gcp-service-api-enabled"]["prerequisites"])
    assert needed_not_enabled(stack) <= listed, stack
    assert listed <= set().union(*(needed_not_enabled(s) for s in STACKS)), stack


def test_the_runbook_list_is_the_union_over_every_stacks_plan() -> None:
    block = RUNBOOK.split("<!-- apis:begin -->", 1)[1].split("<!-- apis:end -->", 1)[0]
    assert set(re.findall(r"`([a-z0-9-]+\.googleapis\.com)`", block)) == set().union(
        *(needed_not_enabled(s) for s in STACKS)
    )


def test_skypilot_turns_on_certificate_manager_and_dns_before_using_them() -> None:
    recs = records("skypilot")
    services = {r.inputs["service"]: r.urn for r in recs if r.type == SERVICE_TYPE}
    assert {"certificatemanager.googleapis.com", "dns.googleapis.com"} <= set(services)
    (cert,) = [r for r in recs if r.type == CERT]
    assert services["certificatemanager.googleapis.com"] in cert.dependencies
    for record in [r for r in recs if r.type == "gcp:dns/recordSet:RecordSet"]:
        assert services["dns.googleapis.com"] in record.dependencies


def test_the_table_comes_from_the_providers_at_their_pins() -> None:
    src = source()
    assert src["terraform"] == {"repository": "hashicorp/terraform-provider-google-beta", "tag": "v7.45.0"}
    replacement = json.loads((ROOT / "preview" / "replacement_facts" / "gcp.json").read_text())["source"]
    assert src["terraform"]["tag"] == replacement["tag"]  # the same provider build as the replacement facts
    assert api_of(CERT) == "certificatemanager.googleapis.com"
    assert api_of("gcp:projects/iAMMember:IAMMember") == "cloudresourcemanager.googleapis.com"


def _cert(name: str = "cert") -> Res:
    return Res(CERT, name, {"name": name, "location": "us-central1"})


def _service(api: str) -> Res:
    return Res(SERVICE_TYPE, api.split(".", maxsplit=1)[0], {"service": api, "project": "p"})


class TestRule:
    def test_a_resource_whose_api_nobody_turns_on_is_caught(self) -> None:
        result = run(RULE, [_cert(), _cert("other")])
        (message,) = result.messages
        assert "certificatemanager.googleapis.com" in message and "2 resource(s)" in message
        # The Service it needs makes it pass; so does listing the API as a prerequisite.
        assert run(RULE, [_cert(), _service("certificatemanager.googleapis.com")]).clean
        assert run(RULE, [_cert()], {"prerequisites": ["certificatemanager.googleapis.com"]}).clean

    def test_default_apis_need_nothing_and_unknown_services_are_not_a_pass(self) -> None:
        assert run(RULE, [Res("gcp:monitoring/dashboard:Dashboard", "d", {"dashboardJson": "{}"})]).clean
        unknown = run(RULE, [_cert(), Res(SERVICE_TYPE, "s", {"service": UNKNOWN})])
        assert unknown.clean and unknown.cannot_check and "unknown until apply" in unknown.cannot_check
        unmapped = run(RULE, [Res("gcp:container/registry:Registry", "r", {})])
        assert unmapped.clean and unmapped.cannot_check and "no Google API" in unmapped.cannot_check
