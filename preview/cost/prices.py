"""The node-hour price table: ``prices.yaml`` beside this module, then the stack's ``gpuPrices``.

A price is keyed by (machine type, region, provisioning model).  GKE queued provisioning and
flex-start both obtain Dynamic Workload Scheduler capacity, billed at DWS (flex-start) rates
(GKE docs "About GPU obtainability with flex-start"; "Deploy GPUs for batch workloads with
ProvisioningRequest"), so a queued pool is priced as ``flex-start``.  A pool consuming a
reservation is ``reservation``: capacity already committed, shown as committed cost.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import yaml
from gpu_batch_policy.primitives.yaml_loader import SAFE_LOADER
from pydantic import ValidationError

from stacks.config.cost import ClusterFeeConfig, GpuPriceConfig
from stacks.errors import ConfigError, ConfigIssue, issues_from_validation

TABLE = Path(__file__).with_name("prices.yaml")
CONFIG_KEY = "gpu-batch:gpuPrices"


@dataclass(frozen=True)
class Price:
    machine_type: str
    region: str
    provisioning: str
    node_hour: Decimal
    currency: str
    effective: str
    source: str

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.machine_type, self.region, self.provisioning)

    def cited(self) -> dict[str, str]:
        return {
            "machineType": self.machine_type,
            "region": self.region,
            "provisioning": self.provisioning,
            "nodeHour": f"{self.node_hour}",
            "currency": self.currency,
            "effective": self.effective,
            "source": self.source,
        }


def _parse(entries: Any, root: str) -> list[Price]:
    if not isinstance(entries, list):
        raise ConfigError([ConfigIssue(root, "a list of prices", entries)])
    out = []
    for i, entry in enumerate(entries):
        try:
            model = GpuPriceConfig.model_validate(entry)
        except ValidationError as error:
            raise ConfigError(issues_from_validation(f"{root}[{i}]", error, lambda _: [])) from None
        out.append(
            Price(
                model.machine_type,
                model.region,
                model.provisioning,
                Decimal(model.node_hour),
                model.currency,
                model.effective,
                model.source,
            )
        )
    return out


def _load(table: Path) -> dict[str, Any]:
    """The table as PyYAML's safe loader reads it, with libyaml's parser when PyYAML has it
    (the same values, ~10x faster than the pure-Python parser: the table is read twice a preview)."""
    loaded = yaml.load(table.read_text(), Loader=SAFE_LOADER)
    return loaded if isinstance(loaded, dict) else {}


def price_table(config: Mapping[str, str], table: Path = TABLE) -> dict[tuple[str, str, str], Price]:
    """The shipped table, then the stack's own entries (the stack's win on the same key)."""
    shipped = _load(table)
    prices = {p.key: p for p in _parse(shipped.get("prices", []), f"{table.name}: prices")}
    raw = config.get(CONFIG_KEY)
    if raw is not None:
        prices.update({p.key: p for p in _parse(json.loads(raw), CONFIG_KEY)})
    return prices


@dataclass(frozen=True)
class ClusterFee:
    per_cluster_hour: Decimal
    currency: str
    effective: str
    source: str

    def cited(self) -> dict[str, str]:
        return {
            "perClusterHour": f"{self.per_cluster_hour}",
            "currency": self.currency,
            "effective": self.effective,
            "source": self.source,
        }


def cluster_fee(table: Path = TABLE) -> ClusterFee | None:
    """GKE's cluster management fee from the shipped table (``clusterManagementFee``); None
    when the table cites none."""
    raw = _load(table).get("clusterManagementFee")
    if raw is None:
        return None
    try:
        model = ClusterFeeConfig.model_validate(raw)
    except ValidationError as error:
        root = f"{table.name}: clusterManagementFee"
        raise ConfigError(issues_from_validation(root, error, lambda _: [])) from None
    return ClusterFee(Decimal(model.per_cluster_hour), model.currency, model.effective, model.source)


def region_of(location: str) -> str:
    """``us-west1-b`` -> ``us-west1``; a region stays itself (Compute Engine zone names)."""
    parts = location.split("-")
    return "-".join(parts[:2]) if len(parts) == 3 else location


def currencies(prices: Iterable[Price]) -> set[str]:
    return {p.currency for p in prices}
