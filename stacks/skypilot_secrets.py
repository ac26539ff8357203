"""The SkyPilot servers' basic-auth passwords: one secret config key, team -> password.

Set per team with ``pulumi config set --secret --path 'skypilotPasswords.<team>' <password>``,
which stores ``skypilotPasswords: {<team>: {secure: ...}}`` in the stack file; the engine hands
the program the decrypted mapping and marks the key secret.  No stack file in the repository
commits a ``secure:`` value: ciphertext is bound to one stack's secrets provider, so a committed
placeholder cannot be decrypted by any real backend and made every cloud preview fail.  A stack
without the key fails with one line per team naming the exact command; the offline preview
supplies throwaway secrets itself (``preview/offline_secrets.py``).

The key's *shape* is checked here (present, secret, a non-empty string per SkyPilot team, no
stray teams) so a mistake is one config-error line; no message ever includes a value.

Secret *per entry*: the engine marks the whole key secret as soon as one entry is ``secure:``, and
hands the program every entry decrypted, so a team whose password was typed in plain text next to
another team's ``secure:`` one is invisible in the config the program receives.  The stack file
is the only place that says it, so it is read (``Pulumi.<stack>.yaml`` beside ``Pulumi.yaml``):
every entry must be a ``{secure: ...}`` mapping.  A stack whose config does not come from a stack
file (none there) keeps the whole-key check only.  Each
team's password is then taken from ``pulumi.Config().require_secret_object``, so it is a secret
``Output`` from the moment it is read and everything computed from it (the htpasswd hash) is
secret too.
"""

from __future__ import annotations

from pathlib import Path

import pulumi
import yaml

from stacks.config.tenancy import SKYPILOT_PASSWORDS_KEY, TeamConfig
from stacks.errors import PROJECT_NAMESPACE, ConfigError, ConfigIssue
from stacks.loader import _decode, raw_project_config, secret_project_keys

KEY = f"{PROJECT_NAMESPACE}:{SKYPILOT_PASSWORDS_KEY}"
SET_HINT = f"pulumi config set --secret --path '{SKYPILOT_PASSWORDS_KEY}.<team>' <password>"


def set_command(team: str) -> str:
    """The exact command that stores ``team``'s password as a secret in the current stack file."""
    return f"pulumi config set --secret --path '{SKYPILOT_PASSWORDS_KEY}.{team}' <password>"


def _missing_password(team: str) -> ConfigIssue:
    return ConfigIssue(
        f"{KEY}.{team}", f"a secret password for team {team}'s SkyPilot server: run {set_command(team)}"
    )


# Where Pulumi.<stack>.yaml lives: the project root, beside stacks/ (DESIGN.md "Layout").
STACK_FILE_DIR = Path(__file__).resolve().parents[1]


def plain_text_entries(stack: str, directory: Path | None = None) -> list[str]:
    """Teams whose password entry in ``Pulumi.<stack>.yaml`` is not a ``{secure: ...}`` value."""
    path = (directory or STACK_FILE_DIR) / f"Pulumi.{stack}.yaml"
    try:
        document = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError):  # no stack file (or the loader reports it): nothing to add
        return []
    config = document.get("config") if isinstance(document, dict) else None
    if not isinstance(config, dict):
        return []
    entry = config.get(KEY, config.get(SKYPILOT_PASSWORDS_KEY))
    if not isinstance(entry, dict):
        return []
    return sorted(
        str(team)
        for team, value in entry.items()
        if not (isinstance(value, dict) and set(value) == {"secure"})
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
    plain = plain_text_entries(pulumi.get_stack())
    if plain:
        return [
            ConfigIssue(
                f"{KEY}.{team}",
                f"a secret value ({SET_HINT}); plain text would sit in the stack file",
                "plain text",
            )
            for team in plain
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
