"""Throwaway secrets for the offline preview, so a stack runs without a secrets provider.

Stack files commit no ``secure:`` values (ciphertext is bound to one backend's secrets provider;
a committed placeholder breaks every real ``pulumi preview``), so a stack that needs a secret
has no value for it here.  The offline preview fills each secret the program requires with a
fixed throwaway value and marks the key secret, exactly as the engine marks a decrypted
``secure:`` value: the program sees a secret Output, and the value never reaches plan.json,
the manifests, the report or the console (tests check that).  A key the stack file does set
is left alone.
"""

from __future__ import annotations

import json
from typing import Any

from stacks.config.tenancy import SKYPILOT_PASSWORDS_KEY
from stacks.errors import PROJECT_NAMESPACE

THROWAWAY_SECRET = "offline-preview-placeholder-secret"
_PASSWORDS = f"{PROJECT_NAMESPACE}:{SKYPILOT_PASSWORDS_KEY}"
_TEAMS = f"{PROJECT_NAMESPACE}:teams"


def supply_throwaway_secrets(config: dict[str, str], secret_keys: list[str]) -> None:
    """Add a throwaway password for every team with a SkyPilot server, when the key is unset.

    Malformed ``teams`` config is skipped here: the program reports it as a config error.
    """
    if _PASSWORDS in config:
        return
    teams = _skypilot_team_names(config.get(_TEAMS))
    if not teams:
        return
    config[_PASSWORDS] = json.dumps({team: THROWAWAY_SECRET for team in teams})
    secret_keys.append(_PASSWORDS)


def _skypilot_team_names(text: str | None) -> list[str]:
    try:
        teams: Any = json.loads(text) if text else []
    except ValueError:
        return []
    if not isinstance(teams, list):
        return []
    return [
        t["name"]
        for t in teams
        if isinstance(t, dict) and isinstance(t.get("name"), str) and t.get("skypilot") is not None
    ]
