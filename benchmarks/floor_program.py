"""The benchmark's floor: a Pulumi program that only registers ``count`` bare resources.

No components, no providers, no policy pack -- what the SDK mocks cost per registration, which
is the least any program with that many resources can cost under the same harness.
"""

import pulumi

count = int(pulumi.Config().require("count"))
for index in range(count):
    pulumi.CustomResource("bench:index:Bare", f"bare-{index}", {"value": index, "name": f"bare-{index}"})
