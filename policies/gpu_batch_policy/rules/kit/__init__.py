"""The rule author's kit: how a rule is built, guarded and reports.

``builders`` turns a ``check(view_or_model, reporter, config)`` function into a CrossGuard policy
(one model per analyzer call, shared by its policies); ``rule_guard`` makes a rule that raises one
advisory finding instead of a crashed pack; ``report`` gives every finding one message shape and
the preview-safe "cannot check yet"; ``references`` judges a reference the stack does not resolve.
Every rule module imports these; nothing below the rules layer does.
"""
