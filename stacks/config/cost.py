"""Prices the cost estimate may use beyond the shipped table (``preview/cost/prices.yaml``).

The program itself bills nothing: these keys feed the offline preview's per-team GPU cost
(``preview/cost``).  Every price names its source and effective date, so each figure in the
report is traceable; a combination with no price stays "unpriced", never $0.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from stacks.base import ConfigModel, NonEmptyStr
from stacks.errors import pattern

# How GCP bills a GPU node: list price, Spot, DWS (flex-start and queued provisioning are both
# Dynamic Workload Scheduler capacity, billed at its rates), or a reservation already paid for.
PriceModel = Literal["on-demand", "spot", "flex-start", "reservation"]
Money = Annotated[
    str,
    StringConstraints(
        pattern=pattern(r"^[0-9]+(\.[0-9]+)?$", "a decimal amount as a string, such as '0.70683'")
    ),
]
Region = Annotated[
    str,
    StringConstraints(
        pattern=pattern(r"^[a-z]+-[a-z]+[0-9]+$", "a Compute Engine region such as 'us-central1'")
    ),
]


Currency = Annotated[
    str, StringConstraints(pattern=pattern(r"^[A-Z]{3}$", "an ISO 4217 currency code such as 'USD'"))
]
Effective = Annotated[
    str, StringConstraints(pattern=pattern(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$", "a date as YYYY-MM-DD"))
]
Source = Annotated[
    str, StringConstraints(pattern=pattern(r"^https://\S+$", "an https:// URL of the published price"))
]


class GpuPriceConfig(ConfigModel):
    """One node-hour price: a machine type in a region under one provisioning model."""

    machine_type: NonEmptyStr = Field(description="Compute Engine machine type, such as g2-standard-4.")
    region: Region = Field(description="Region the price applies to, such as us-central1.")
    provisioning: PriceModel = Field(description="on-demand, spot, flex-start (also queued) or reservation.")
    node_hour: Money = Field(description="Price of one node for one hour, as a decimal string.")
    currency: Currency = Field("USD", description="ISO 4217 currency of nodeHour.")
    effective: Effective = Field(description="Date the price was read from its source.")
    source: Source = Field(description="Where the price is published (a GCP pricing page or a contract).")


class ClusterFeeConfig(ConfigModel):
    """GKE's flat cluster management fee (``prices.yaml`` ``clusterManagementFee``): per cluster
    and hour, whatever its size; shipped data, not a stack key."""

    per_cluster_hour: Money = Field(description="Fee for one cluster for one hour, as a decimal string.")
    currency: Currency = Field("USD", description="ISO 4217 currency of perClusterHour.")
    effective: Effective = Field(description="Date the fee was read from its source.")
    source: Source = Field(description="Where the fee is published.")
