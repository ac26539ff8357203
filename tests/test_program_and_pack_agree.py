"""Facts the program and the policy pack must each carry, kept equal.

The pack runs on its own under ``pulumi preview --policy-pack`` (its own virtualenv, importing
nothing from the program), so a few upstream facts exist twice: the GPU machine table, the Kueue
framework names and removed feature gates, the first GKE version with queued provisioning.  These
tests fail the moment one copy is edited without the other.
"""

from __future__ import annotations

from gpu_batch_policy.facts.model import gke as model_gke
from gpu_batch_policy.rules.gke import node_pools as rules_gke
from gpu_batch_policy.rules.kueue import accelerator_mix as kueue_accelerator_mix
from gpu_batch_policy.rules.kueue import config as rules_kueue_config

from components import kueue_config, kueue_queues
from components.gpu_catalog import GPU_MACHINES
from stacks.config.cluster import QUEUED_PROVISIONING_MIN_VERSION


def test_gpu_machine_tables_match() -> None:
    program = {name: (m.accelerator_type, m.gpus_per_node) for name, m in GPU_MACHINES.items()}
    assert program == model_gke.MACHINE_TYPE_GPUS


def test_kueue_framework_names_match() -> None:
    assert set(kueue_config.KNOWN_FRAMEWORKS) == set(rules_kueue_config.KNOWN_FRAMEWORKS)


def test_removed_feature_gates_match() -> None:
    assert set(kueue_config.REMOVED_FEATURE_GATES) == set(rules_kueue_config.REMOVED_FEATURE_GATES)
    # A removed gate is never also offered as a valid or locked one.
    assert not set(kueue_config.REMOVED_FEATURE_GATES) & set(kueue_config.FEATURE_GATES)
    assert not set(kueue_config.REMOVED_FEATURE_GATES) & set(kueue_config.LOCKED_FEATURE_GATES)


def test_queued_provisioning_minimum_version_matches() -> None:
    assert QUEUED_PROVISIONING_MIN_VERSION == rules_gke.QUEUED_PROVISIONING_MIN_VERSION


def test_accelerator_mixing_annotation_matches() -> None:
    """The program writes it for ``mixAcceleratorTypes: true``; the pack's
    kueue-flavors-mix-accelerator-types reads it (issue 21)."""
    assert kueue_queues.ACCELERATOR_MIXING_ANNOTATION == kueue_accelerator_mix.MIXING_ANNOTATION
    assert kueue_queues.ACCELERATOR_MIXING_ALLOWED == kueue_accelerator_mix.MIXING_ALLOWED
