"""Dynamic providers that deserialise in any process: pickled by value, not by module reference.

Why: Pulumi keeps a dynamic resource's provider in the stack's state as a dill pickle
(pulumi/pulumi ``sdk/python/lib/pulumi/dynamic/dynamic.py`` ``serialize_provider``:
``dill.dumps(provider, recurse=True)``), and every later operation on the resource -- update,
refresh, delete -- unpickles it in a fresh ``python -m pulumi.dynamic`` process
(``dynamic/__main__.py`` ``get_provider``: ``dill.loads``).  dill pickles a class or function
*by reference* (module and qualified name) whenever it can import it from its ``__module__``
(uqfoundation/dill ``dill/_dill.py`` ``_locate_function``, used by ``save_type`` and
``save_function``, dill 0.4.1).  A provider written in an ordinary project module is therefore
stored as "import components.readiness_gate": moving or renaming that module, or running
``pulumi destroy`` from another directory where the project is not on ``sys.path``, makes the
resource impossible to update or delete.

``_locate_function`` treats anything whose ``__module__`` is ``"__main__"`` as not importable,
and dill then pickles it by value -- code, defaults and the globals it uses (``recurse=True``).
:func:`pickled_by_value` marks a provider class, its methods, and every helper class or function
its methods reach, that way.  What stays by reference is only the standard library, ``pulumi``
itself and the pinned PyPI packages (``kubernetes``, ``PyYAML``), which every process that runs
the program has.  ``tests/test_gate_portability.py`` unpickles the providers in an isolated
interpreter outside the checkout and runs them against a stand-in API server.
"""

from __future__ import annotations

import inspect
from typing import Any, TypeVar

T = TypeVar("T")

BY_VALUE_MODULE = "__main__"


def pickled_by_value(obj: T) -> T:
    """Mark a class (with its methods) or a function so dill pickles it by value (module doc)."""
    _mark(obj)
    if inspect.isclass(obj):
        for member in vars(obj).values():
            _mark(getattr(member, "__func__", member))  # staticmethod / classmethod
            if isinstance(member, property):
                for accessor in (member.fget, member.fset, member.fdel):
                    _mark(accessor)
    return obj


def _mark(member: Any) -> None:
    if inspect.isfunction(member) or inspect.isclass(member):
        member.__module__ = BY_VALUE_MODULE
