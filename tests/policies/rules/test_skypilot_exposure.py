"""ingress-nginx-retired and skypilot-server-unauthenticated (issue 27, Build 4), for any program.

Upstream: kubernetes.io blog 2025-11-11 "Ingress NGINX Retirement"; skypilot chart 0.13.0
templates/_helpers.tpl (skypilot.enableBasicAuthInAPIServer, skypilot.apiArgs) and values.yaml
(ingress-nginx.enabled: true, apiService.enableUserManagement: false, the default
initialBasicAuthCredentials); skypilot 0.13.0 sky/server/server.py (BasicAuthMiddleware only with
ENABLE_BASIC_AUTH and without SKYPILOT_DISABLE_BASIC_AUTH_MIDDLEWARE).
"""

from __future__ import annotations

from typing import Any

import pytest
from gpu_batch_policy.rules.tenancy.skypilot import CHART_DEFAULT_BASIC_AUTH
from pulumi_policy import EnforcementLevel

from tests.policies.pack_harness import UNKNOWN, Res, run, run_all
from tests.policies.pack_harness import policy as get_policy
from tests.policies.pack_objects import helm_release
from tests.test_tenancy_findings import level as configured_level

RETIRED = get_policy("ingress-nginx-retired")
UNAUTHENTICATED = get_policy("skypilot-server-unauthenticated")
EXPOSURE_RULES = [
    "ingress-nginx-retired",
    "skypilot-server-unauthenticated",
    "skypilot-ingress-owned-by-a-team",
    "skypilot-shared-ingress",
    "basic-auth-plain-http-public",
    "ingress-nginx-snippet-annotations",
]
SECURE: dict[str, Any] = {
    "ingress-nginx": {"enabled": False},
    "ingress": {"enabled": False},
    "apiService": {"enableUserManagement": True, "initialBasicAuthSecret": "team1-basic-auth"},
}


def sky(values: dict[str, Any]) -> Res:
    return helm_release("skypilot-team1", "skypilot", values, namespace="team1")


def nginx(chart: str = "ingress-nginx") -> Res:
    return helm_release(
        "ingress", chart, {"controller": {"allowSnippetAnnotations": False}}, namespace="ingress"
    )


class TestIngressNginxRetired:
    def test_levels(self) -> None:
        assert RETIRED.enforcement_level == EnforcementLevel.ADVISORY
        assert configured_level("ingress-nginx-retired", "skypilot") == "mandatory"

    @pytest.mark.parametrize(
        "chart",
        ["ingress-nginx", "ingress-nginx/ingress-nginx", "oci://registry.example/charts/ingress-nginx"],
    )
    def test_any_release_of_the_chart_is_caught(self, chart: str) -> None:
        result = run(RETIRED, [nginx(chart)])
        assert len(result.violations) == 1 and "2025-11-11" in result.text()

    def test_a_skypilot_release_with_its_bundled_controller_is_caught(self) -> None:
        result = run(RETIRED, [sky({**SECURE, "ingress-nginx": {}})])  # the chart's default: enabled
        assert len(result.violations) == 1 and "bundled" in result.text()

    def test_other_charts_and_a_gateway_served_server_are_clean(self) -> None:
        assert run(RETIRED, [helm_release("traefik", "traefik"), sky(SECURE)]).clean

    def test_unknown_is_cannot_check(self) -> None:
        result = run(RETIRED, [sky({**SECURE, "ingress-nginx": {"enabled": UNKNOWN}})])
        assert result.clean and result.cannot_check is not None

    def test_the_fixture_fires_exactly_this_rule(self) -> None:
        runs = run_all([nginx()], EXPOSURE_RULES)
        assert {n for n, r in runs.items() if not r.clean} == {"ingress-nginx-retired"}


class TestServerUnauthenticated:
    def test_levels(self) -> None:
        assert UNAUTHENTICATED.enforcement_level == EnforcementLevel.ADVISORY
        assert configured_level("skypilot-server-unauthenticated", "skypilot") == "mandatory"

    @pytest.mark.parametrize(
        "api_service",
        [
            {},  # the chart's default: enableUserManagement false
            {"enableUserManagement": False, "initialBasicAuthSecret": "s"},
        ],
    )
    def test_no_user_management_is_caught_even_with_ingress_basic_auth(
        self, api_service: dict[str, Any]
    ) -> None:
        values = {
            **SECURE,
            "apiService": api_service,
            "ingress": {"enabled": True, "authCredentials": "u:$2y$x"},
        }
        result = run(UNAUTHENTICATED, [sky(values)])
        assert len(result.violations) == 1 and "authenticates no request itself" in result.text()

    @pytest.mark.parametrize(
        "edit",
        [
            {
                "ingress": {"enabled": False, "oauth2-proxy": {"enabled": True}}
            },  # the chart then drops --enable-basic-auth
            {"auth": {"disableBasicAuthMiddleware": True}},
        ],
    )
    def test_user_management_the_chart_or_server_switch_off_is_caught(self, edit: dict[str, Any]) -> None:
        result = run(UNAUTHENTICATED, [sky({**SECURE, **edit})])
        assert len(result.violations) == 1

    @pytest.mark.parametrize("credentials", [None, CHART_DEFAULT_BASIC_AUTH])
    def test_the_charts_default_user_is_caught(self, credentials: str | None) -> None:
        api: dict[str, Any] = {"enableUserManagement": True}
        if credentials is not None:
            api["initialBasicAuthCredentials"] = credentials
        result = run(UNAUTHENTICATED, [sky({**SECURE, "apiService": api})])
        assert len(result.violations) == 1 and "default user" in result.text()

    @pytest.mark.parametrize(
        "values",
        [
            SECURE,
            {
                **SECURE,
                "apiService": {"enableUserManagement": True, "initialBasicAuthCredentials": "team1:$2y$10$x"},
            },
            {**SECURE, "apiService": {}, "auth": {"oauth": {"enabled": True}}},
        ],
    )
    def test_server_side_auth_is_clean(self, values: dict[str, Any]) -> None:
        assert run(UNAUTHENTICATED, [sky(values)]).clean

    def test_unknown_is_cannot_check(self) -> None:
        result = run(UNAUTHENTICATED, [sky({**SECURE, "apiService": {"enableUserManagement": UNKNOWN}})])
        assert result.clean and result.cannot_check is not None

    def test_the_fixture_fires_exactly_this_rule(self) -> None:
        fixture = sky({**SECURE, "apiService": {}})
        runs = run_all([fixture], EXPOSURE_RULES)
        assert {n for n, r in runs.items() if not r.clean} == {"skypilot-server-unauthenticated"}
