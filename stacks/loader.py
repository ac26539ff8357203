"""Read the stack's config from the Pulumi runtime into a validated :class:`StackConfig`.

The Pulumi SDK hands the program every config value as a string (structured YAML values as
JSON).  This module enumerates *all* keys of the project namespace, so that a key the program
does not know (a typo at the top level) is an error instead of being ignored, and parses each
into the typed model.  Secret keys are never read here: components get them as secret
Outputs straight from ``pulumi.Config``.
"""

from __future__ import annotations

import json
import types
import typing
from typing import Any

import pulumi
from pulumi.runtime import config as runtime_config
from pydantic import BaseModel, ValidationError

from stacks.base import known_keys
from stacks.checks import semantic_issues
from stacks.config import StackConfig
from stacks.config.tenancy import SKYPILOT_PASSWORDS_KEY
from stacks.errors import (
    PROJECT_NAMESPACE,
    ConfigError,
    ConfigIssue,
    issues_from_validation,
    suggest,
)


def raw_project_config() -> dict[str, str]:
    """Every ``gpu-batch:*`` config value the runtime holds, by bare key."""
    merged: dict[str, Any] = {**runtime_config.get_config_env(), **runtime_config.CONFIG.get()}
    prefix = f"{PROJECT_NAMESPACE}:"
    return {key[len(prefix) :]: value for key, value in merged.items() if key.startswith(prefix)}


def secret_project_keys() -> set[str]:
    """Bare names of the project keys the stack file marks secret."""
    keys = set(runtime_config.get_config_secret_keys_env()) | set(runtime_config._SECRET_KEYS.get())
    prefix = f"{PROJECT_NAMESPACE}:"
    return {key[len(prefix) :] for key in keys if key.startswith(prefix)}


# Keys the program reads as secrets (never parsed here): the SkyPilot servers' passwords.
SECRET_KEYS = frozenset({SKYPILOT_PASSWORDS_KEY})


def load_stack_config(secret_keys: frozenset[str] = SECRET_KEYS) -> StackConfig:
    """Parse and validate the stack config, or raise :class:`ConfigError` (one line per issue).

    ``secret_keys`` are keys read elsewhere as secrets; they are accepted here but not parsed.
    """
    raw = raw_project_config()
    fields = {(f.alias or n): n for n, f in StackConfig.model_fields.items()}
    issues: list[ConfigIssue] = []
    document: dict[str, Any] = {}
    for key, text in raw.items():
        if key in secret_keys:
            continue
        if key not in fields:
            hint = suggest(key, [*fields, *secret_keys])
            issues.append(
                ConfigIssue(
                    f"{PROJECT_NAMESPACE}:{key}",
                    f"a known key{hint}; known keys: {', '.join(sorted([*fields, *secret_keys]))}",
                    key,
                )
            )
            continue
        document[key] = _decode(text)
    if issues:
        raise ConfigError(issues)
    try:
        config = StackConfig.model_validate(document)
    except ValidationError as error:
        raise ConfigError(_validation_issues(error)) from None
    semantic = list(semantic_issues(config))
    if semantic:
        raise ConfigError(semantic)
    return config


def require_gcp_project() -> str:
    """The GCP project id, which every GCP resource is created in."""
    project = pulumi.Config("gcp").get("project")
    if not project:
        raise ConfigError(
            [ConfigIssue("gcp:project", "the GCP project id (pulumi config set gcp:project <id>)")]
        )
    return project


def _decode(text: Any) -> Any:
    """Structured values arrive as JSON text; plain scalars arrive as their YAML text."""
    if not isinstance(text, str):
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text


def _validation_issues(error: ValidationError) -> list[ConfigIssue]:
    # The first location part is the top-level key; render it as "gpu-batch:<key>".
    issues = issues_from_validation(PROJECT_NAMESPACE, error, _accepted_keys)
    return [
        ConfigIssue(
            issue.path.replace(f"{PROJECT_NAMESPACE}.", f"{PROJECT_NAMESPACE}:", 1),
            issue.expected,
            issue.given,
        )
        for issue in issues
    ]


def _accepted_keys(loc: tuple[str | int, ...]) -> list[str]:
    """The keys the mapping at ``loc`` accepts, found by walking the model's annotations."""
    model: Any = StackConfig
    for part in loc:
        model = _unwrap(model)
        if isinstance(model, type) and issubclass(model, BaseModel) and isinstance(part, str):
            fields = {(f.alias or n): f.annotation for n, f in model.model_fields.items()}
            model = fields.get(part)
        else:  # a list index or a dict key
            model = _item_type(model)
    model = _unwrap(model)
    if isinstance(model, type) and issubclass(model, BaseModel):
        return known_keys(model)
    return []


def _unwrap(annotation: Any) -> Any:
    """``X | None`` -> ``X``."""
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        members = [a for a in typing.get_args(annotation) if a is not type(None)]
        return members[0] if len(members) == 1 else annotation
    return annotation


def _item_type(annotation: Any) -> Any:
    """``list[X]`` / ``dict[str, X]`` -> ``X``."""
    args = typing.get_args(_unwrap(annotation))
    return _unwrap(args[-1]) if args else annotation
