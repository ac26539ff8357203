"""gpu-batch CrossGuard policy pack: rules that reject stacks whose quotas or gangs can never work.

Layout, one way down (``tests/policies/test_layers.py``): ``runtime/`` serves the engine and lists
every policy (``runtime.registry.ALL_POLICIES``, for ``policies/__main__.py``); ``rules/`` holds the
policies, a subpackage per system they judge, on the author's kit ``rules/kit/``; ``facts/`` reads
any program's resources into what they mean; ``primitives/`` parses values that know no stack.
``policies/README.md`` ("Layout") has the map.
"""
