"""gpu-batch CrossGuard policy pack: rules that reject stacks whose quotas or gangs can never work.

Layout: ``tokens``/``values``/``model`` (a package, one module per API family) read any
program's resources into typed views; ``report`` gives every rule the same message shape and
preview-safe "cannot check yet"; ``rules/`` (and ``fit/rules/``) define the policies, one module a
topic; ``registry.ALL_POLICIES`` lists them for ``policies/__main__.py``.
"""
