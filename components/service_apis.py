"""Turn on the Google APIs a component's resources call, in the program itself.

``gcp.projects.Service`` is terraform-provider-google's ``google_project_service`` (its
``*_meta.yaml``: ``api_service_name: serviceusage.googleapis.com``).  ``disable_on_destroy=False``:
destroying the stack leaves the API on, as other users of the project may need it.  Which API
each resource type calls is ``gpu_batch_policy.facts.gcp_apis`` (derived from the providers); the
pack's ``gcp-service-api-enabled`` flags a type whose API the program neither enables nor lists.
"""

from __future__ import annotations

from collections.abc import Sequence

import pulumi
import pulumi_gcp as gcp


def enable(
    name: str, project: str, apis: Sequence[str], opts: pulumi.ResourceOptions
) -> list[gcp.projects.Service]:
    """One ``Service`` per API, named ``<name>-<first label of the API>``."""
    return [
        gcp.projects.Service(
            f"{name}-{api.split('.', 1)[0]}",
            project=project,
            service=api,
            disable_on_destroy=False,
            opts=opts,
        )
        for api in apis
    ]
