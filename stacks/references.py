"""One wording for "this name must refer to something declared elsewhere in the stack".

Every cross-key reference of the queue layer (a flavor, a ClusterQueue, a cohort, a team, a
priority class, a KAI queue) is reported the same way: the key path, the name given, where the
name must be declared, the closest declared name, and the declared names themselves -- enough
to fix the line without opening the docs.
"""

from __future__ import annotations

from collections.abc import Iterable

from stacks.errors import ConfigIssue, suggest


def unknown_reference(path: str, name: str, what: str, known: Iterable[str], why: str = "") -> ConfigIssue:
    """``<path>: got '<name>', expected <what> (did you mean X?) (a, b)[; why]``."""
    names = sorted(set(known))
    listed = ", ".join(names) if names else "none declared"
    return ConfigIssue(path, f"{what}{suggest(name, names)} ({listed}){'; ' + why if why else ''}", name)
