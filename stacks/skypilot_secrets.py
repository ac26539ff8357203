"""The SkyPilot servers' basic-auth passwords: one secret config key, team -> password.

Set per team with ``pulumi config set --secret --path 'skypilotPasswords.<team>' <password>``,
which stores ``skypilotPasswords: {<team>: {secure: ...}}`` in the stack file; the engine hands
the program the decrypted mapping and marks the key secret.  No stack file in the repository
commits a ``secure:`` value: ciphertext is bound to one stack's secrets provider, so a committed
placeholder cannot be decrypted by any real backend and made every cloud preview fail.  A stack
without the key fails with one line per team naming the exact command; the offline preview
supplies throwaway secrets itself (``preview/offline_secrets.py``).

The key's *shape* is checked here (present, secret, a non-empty string per SkyPilot team, no
stray teams) so a mistake is one config-error line; no message ever includes a value.  Each
team's password is then taken from ``pulumi.Config().require_secret_object``, so it is a secret
``Output`` from the moment it is read and everything computed from it (the htpasswd hash) is
secret too.
"""

from __future__ import annotations

import pulumi

from stacks.errors import PROJECT_NAMESPACE, ConfigError, ConfigIssue
from stacks.loader import _decode, raw_project_config, secret_project_keys
from stacks.tenancy_config import SKYPILOT_PASSWORDS_KEY, TeamConfig

KEY = f"{PROJECT_NAMESPACE}:{SKYPILOT_PASSWORDS_KEY}"
SET_HINT = f"pulumi config set --secret --path '{SKYPILOT_PASSWORDS_KEY}.<team>' <password>"


def set_command(team: str) -> str:
    """The exact command that stores ``team``'s password as a secret in the current stack file."""
    return f"pulumi config set --secret --path '{SKYPILOT_PASSWORDS_KEY}.{team}' <password>"


def _missing_password(team: str) -> ConfigIssue:
    return ConfigIssue(
        f"{KEY}.{team}", f"a secret password for team {team}'s SkyPilot server: run {set_command(team)}"
    )


def password_issues(teams: list[TeamConfig]) -> list[ConfigIssue]:
    """What is wrong with the passwords key for ``teams`` (the SkyPilot teams)."""
    raw = raw_project_config().get(SKYPILOT_PASSWORDS_KEY)
    if raw is None:
        # Nothing committed (no fake ciphertext in stack files): one line per team, each naming
        # the exact command that sets its password.
        return [_missing_password(team) for team in sorted(t.name for t in teams)]
    if SKYPILOT_PASSWORDS_KEY not in secret_project_keys():
        return [
            ConfigIssue(
                KEY, f"a secret value ({SET_HINT}); plain text would sit in the stack file", "plain text"
            )
        ]
    mapping = _decode(raw)
    if not isinstance(mapping, dict):
        return [
            ConfigIssue(KEY, f"a mapping team -> password ({SET_HINT})", "a secret that is not a mapping")
        ]
    issues = []
    wanted = {t.name for t in teams}
    for team in sorted(wanted):
        value = mapping.get(team)
        if not isinstance(value, str) or not value:
            issues.append(_missing_password(team))
    for extra in sorted(set(mapping) - wanted):
        issues.append(
            ConfigIssue(
                f"{KEY}.{extra}", "only teams with a skypilot server (gpu-batch:teams[].skypilot)", extra
            )
        )
    return issues


def skypilot_passwords(teams: list[TeamConfig]) -> dict[str, pulumi.Output[str]]:
    """Each SkyPilot team's password as a secret Output; raises :class:`ConfigError` if the key is wrong."""
    if not teams:
        return {}
    issues = password_issues(teams)
    if issues:
        raise ConfigError(issues)
    everything = pulumi.Config().require_secret_object(SKYPILOT_PASSWORDS_KEY)

    def pick(name: str) -> pulumi.Output[str]:
        return everything.apply(lambda mapping: str(mapping[name]))

    return {team.name: pick(team.name) for team in teams}
