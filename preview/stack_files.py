"""Read ``Pulumi.yaml`` and ``Pulumi.<stack>.yaml`` into the config map the CLI would pass.

The CLI merges project-level config defaults into every stack and hands the program strings
(structured values as JSON).  Offline there is no secrets provider to decrypt ``secure:``
values, so each is replaced by a placeholder and its key marked secret: the program still
sees a secret Output, and nothing pretends to know the real value.  Secrets the stack file does
not set at all (the repository commits none) get throwaway values (``preview.offline_secrets``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from gpu_batch_policy.primitives.yaml_loader import SAFE_LOADER

from preview.offline_secrets import THROWAWAY_SECRET, supply_throwaway_secrets

# What a committed ``secure:`` value (from a user's own stack file) reads as offline.
SECRET_PLACEHOLDER = THROWAWAY_SECRET
# The engine hands a program (and a policy pack) the whole stack config as one environment
# variable, PULUMI_CONFIG; Linux refuses any single environment string over 32 pages (128 KiB,
# MAX_ARG_STRLEN), so a larger config cannot start under `pulumi preview` at all.
PULUMI_CONFIG_LIMIT = 128 * 1024


@dataclass(frozen=True)
class StackFiles:
    project: str
    stack: str
    config: dict[str, str]
    secret_keys: list[str]


class StackFileError(Exception):
    """A stack file that cannot be read; the message is one line."""


def stack_names(project_dir: Path) -> list[str]:
    """Every stack with a ``Pulumi.<stack>.yaml`` in the project."""
    return sorted(p.name[len("Pulumi.") : -len(".yaml")] for p in project_dir.glob("Pulumi.*.yaml"))


def load_stack_files(project_dir: Path, stack: str) -> StackFiles:
    project_doc = _read_yaml(project_dir / "Pulumi.yaml")
    project = project_doc.get("name")
    if not isinstance(project, str):
        raise StackFileError("Pulumi.yaml: missing, expected a project `name`")
    stack_path = project_dir / f"Pulumi.{stack}.yaml"
    if not stack_path.exists():
        known = ", ".join(stack_names(project_dir))
        raise StackFileError(f"{stack_path.name}: no such stack file, expected one of: {known}")
    stack_doc = _read_yaml(stack_path)
    raw: dict[str, Any] = {}
    for key, declared in (project_doc.get("config") or {}).items():
        # Project-level config: `{default: v}` / `{value: v}` objects or plain values.
        is_spec = isinstance(declared, dict) and ("default" in declared or "value" in declared)
        raw[_qualify(project, key)] = declared.get("value", declared.get("default")) if is_spec else declared
    for key, value in (stack_doc.get("config") or {}).items():
        raw[_qualify(project, key)] = value
    config: dict[str, str] = {}
    secret_keys: list[str] = []
    for key, value in raw.items():
        cleaned, secret = _strip_secure(value)
        if secret:
            secret_keys.append(key)
        config[key] = cleaned if isinstance(cleaned, str) else json.dumps(cleaned)
    supply_throwaway_secrets(config, secret_keys)
    size = len(f"PULUMI_CONFIG={json.dumps(config)}".encode()) + 1
    if size > PULUMI_CONFIG_LIMIT:
        raise StackFileError(
            f"{stack_path.name}: the stack config is {size:,} bytes as Pulumi passes it (PULUMI_CONFIG), "
            f"expected at most {PULUMI_CONFIG_LIMIT:,}: Linux caps one environment variable at 128 KiB, so "
            "neither the program nor the policy pack could start; share quota shapes with "
            "kueueQueues.clusterQueueTemplates or split the stack"
        )
    return StackFiles(project, stack, config, secret_keys)


def _qualify(project: str, key: str) -> str:
    return key if ":" in key else f"{project}:{key}"


def _strip_secure(value: Any) -> tuple[Any, bool]:
    """Replace every ``{secure: ...}`` leaf with a placeholder; report whether any was found."""
    if isinstance(value, dict):
        if set(value) == {"secure"}:
            return SECRET_PLACEHOLDER, True
        found = False
        out = {}
        for k, v in value.items():
            out[k], secret = _strip_secure(v)
            found = found or secret
        return out, found
    if isinstance(value, list):
        items = [_strip_secure(v) for v in value]
        return [v for v, _ in items], any(s for _, s in items)
    return value, False


def _read_yaml(path: Path) -> dict[str, Any]:
    try:
        doc = yaml.load(path.read_text(), Loader=SAFE_LOADER)
    except FileNotFoundError:
        raise StackFileError(f"{path.name}: not found") from None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark else ""
        raise StackFileError(
            f"{path.name}{where}: not valid YAML ({getattr(error, 'problem', error)})"
        ) from None
    if doc is None:
        return {}
    if not isinstance(doc, dict):
        raise StackFileError(f"{path.name}: expected a mapping at the top level")
    return doc
