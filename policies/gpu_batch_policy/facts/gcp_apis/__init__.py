"""Which Google API serves each ``gcp:`` resource type, and which APIs a program turns on itself.

``table.json`` is derived from the providers by :mod:`.derive` (terraform-provider-google-beta's
per-resource ``*_meta.yaml`` ``api_service_name``, joined to pulumi-gcp's bridge metadata), never
written by hand.  A program enables an API with ``gcp:projects/service:Service`` (Terraform
``google_project_service``; its ``service`` input is the API's name).

A new project already has some APIs on: Google's "Services enabled by default" list
(cloud.google.com/service-usage/docs/enabled-service, "Default services").  Those never need a
``Service`` or a prerequisite entry.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any, Final

TABLE: Final = Path(__file__).resolve().parent / "table.json"
SERVICE_TYPE: Final = "gcp:projects/service:Service"
# cloud.google.com/service-usage/docs/enabled-service, "Default services": every new project has
# these on unless its creator turned them off.
ENABLED_BY_DEFAULT: Final = frozenset(
    {
        "analyticshub.googleapis.com",
        "bigquery.googleapis.com",
        "bigqueryconnection.googleapis.com",
        "bigquerydatapolicy.googleapis.com",
        "bigquerymigration.googleapis.com",
        "bigqueryreservation.googleapis.com",
        "bigquerystorage.googleapis.com",
        "cloudapis.googleapis.com",
        "cloudtrace.googleapis.com",
        "dataform.googleapis.com",
        "dataplex.googleapis.com",
        "datastore.googleapis.com",
        "logging.googleapis.com",
        "monitoring.googleapis.com",
        "servicemanagement.googleapis.com",
        "serviceusage.googleapis.com",
        "sql-component.googleapis.com",
        "storage-api.googleapis.com",
        "storage-component.googleapis.com",
        "storage.googleapis.com",
    }
)


@cache
def _table() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(TABLE.read_text())
    return data


def api_of(type_token: str) -> str | None:
    """The API serving ``type_token``; None when the providers name none (see ``unmapped``)."""
    entry = _table()["types"].get(type_token)
    return str(entry["api"]) if isinstance(entry, dict) else None


def unmapped() -> frozenset[str]:
    """``gcp:`` types the providers name no API for (no metadata file, no IAM parent)."""
    return frozenset(_table()["unmapped"])


def source() -> dict[str, Any]:
    src: dict[str, Any] = _table()["source"]
    return src
