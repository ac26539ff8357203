"""The capacity report shows the NAT / firewall / webhook-readiness facts of each stack (issue 10)."""

from __future__ import annotations

from preview.report import render_report
from tests.stack_runner import config_value, shared_unless_edited, unedited_run


def section(stack: str, edits: dict[str, object] | None = None) -> str:
    report = render_report(stack, shared_unless_edited(stack, edits).resources, None)
    start = report.index("### Network and webhook readiness")
    return report[start : report.index("###", start + 3)]


def test_prod_shows_nat_firewall_and_gate() -> None:
    text = section("prod")
    assert "private nodes, control plane `172.16.0.32/28`" in text
    assert "Cloud NAT `gpu-batch-prod-egress-nat` in `us-central1`" in text
    assert "| gpu-batch-prod-webhooks | 172.16.0.32/28 | 8082, 9443 | gpu-batch-prod-node | yes |" in text
    assert "| kueue-webhooks-ready | clusterqueues.kueue.x-k8s.io |" in text


def test_a_public_cluster_needs_no_nat_and_kai_has_its_gate() -> None:
    text = section("kai")
    assert "nodes with public IPs" in text and "no NAT needed" in text
    assert "| kai-webhooks-ready | queues.scheduling.run.ai |" in text
    # The KAI workloads also wait for the RuntimeClass the GPU Operator creates (issue 20).
    assert "| gpu-runtime-class-ready | RuntimeClass nvidia exists | gpu-operator-release," in text


def test_authorized_networks_are_shown() -> None:
    cluster = {
        **config_value("prod", "gpu-batch:cluster"),
        "masterAuthorizedNetworks": [],
        "dnsEndpoint": False,
    }
    assert "closed to all but Google" in section("prod", {"gpu-batch:cluster": cluster})


def test_missing_nat_and_firewall_are_called_out() -> None:
    """Another program's private cluster without them: the report says what will break."""
    kept = [
        r
        for r in unedited_run("prod").resources
        if r.type not in ("gcp:compute/routerNat:RouterNat", "gcp:compute/firewall:Firewall")
    ]
    report = render_report("prod", kept, None)
    assert "**no Cloud NAT in `us-central1`**" in report
    assert "**no firewall rule from the control plane**" in report


def test_the_dns_only_endpoint_and_groups_for_rbac_are_shown() -> None:
    """Issue 19 #1, #4: prod has no IP endpoint and binds Google Groups."""
    text = section("prod")
    assert "IP endpoints off; DNS-based endpoint only" in text
    assert "`gke-security-groups@example.com`: Group subjects of RoleBindings bind" in text


def test_the_tenancy_section_shows_who_may_create_what_and_what_holds_it_to_a_queue() -> None:
    report = render_report("kai", unedited_run("kai").resources, None)
    text = report[report.index("### Tenancy and access") :]
    assert (
        "| team-a/team-a-submitter | Group team-a@example.com | jobs, pods, rayclusters, rayjobs | "
        "`gpu-batch-queue-team-a` (Deny): queue label + kai-scheduler on jobs, pods, rayclusters, rayjobs |"
    ) in text
    assert "`group:team-a@example.com`" in text


def test_the_tenancy_section_shows_how_skypilot_is_exposed() -> None:
    report = render_report("skypilot", unedited_run("skypilot").resources, None)
    text = report[report.index("### Tenancy and access") :]
    assert "- Gateway `skypilot-gateway/skypilot` (class `gke-l7-rilb`, no team's): listeners HTTPS." in text
    assert (
        "- SkyPilot `team2/skypilot-team2`: HTTPS through the Gateway on `team2.skypilot.example.com`; "
        "the server authenticates every request (basic auth, user management); ClusterRole management off."
        in text
    )
    assert "ngress controller" not in text


def test_a_server_without_its_own_auth_is_marked() -> None:
    """The report decides as the pack's skypilot-server-unauthenticated does (server_auth)."""
    resources = unedited_run("skypilot").resources  # a private copy: the edit reaches no other test
    for release in resources:
        if release.type == "kubernetes:helm.sh/v3:Release" and release.inputs.get("name") == "skypilot-team1":
            release.inputs["values"]["apiService"]["enableUserManagement"] = False
    report = render_report("skypilot", resources, None)
    assert (
        "`team1/skypilot-team1`: HTTPS through the Gateway on `team1.skypilot.example.com`; **the server authenticates no request itself**"
        in report
    )


def test_the_section_does_not_depend_on_registration_order() -> None:
    """Registration order varies from run to run (outputs resolve concurrently); report.md must
    not: the kai stack's two readiness gates once swapped rows between two previews."""
    resources = unedited_run("kai").resources
    forward = render_report("kai", resources, None)
    backward = render_report("kai", list(reversed(resources)), None)
    assert forward == backward
