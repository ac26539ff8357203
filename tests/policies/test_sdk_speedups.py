"""The pack's SDK speed-up decodes each message once per analyzer call and changes no answer.

It patches pulumi-policy's servicer module, so it is exercised in a child process here (the
end-to-end tests run the real pack, which installs it, and compare findings).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

POLICIES = Path(__file__).resolve().parents[2] / "policies"

PROBE = textwrap.dedent(
    """
    from google.protobuf import struct_pb2
    from pulumi_policy import policy as sdk
    from gpu_batch_policy import sdk_speedups

    assert sdk_speedups.install() and sdk_speedups.install()  # idempotent
    a, b = struct_pb2.Struct(), struct_pb2.Struct()
    a.update({"x": 1}); b.update({"x": 1})
    first = sdk.json_format.MessageToDict(a)
    assert sdk.json_format.MessageToDict(a) is first          # same message: decoded once
    assert sdk.json_format.MessageToDict(b) is not first      # another message: its own value
    assert sdk.json_format.MessageToDict(b) == first
    decoded = sdk.deserialize_properties(first)
    assert sdk.deserialize_properties(first) is decoded
    assert sdk.deserialize_properties(first, True) is not decoded   # keep-unknowns form not memoised
    proxy = sdk.unknown_checking_proxy(decoded)
    assert sdk.unknown_checking_proxy(decoded) is proxy and proxy["x"] == 1

    # Runtime settings: applied once per thread while the environment stays the same.
    import os, pulumi.runtime
    os.environ.update(PULUMI_CONFIG='{"p:k": "v"}', PULUMI_PROJECT="p", PULUMI_STACK="s", PULUMI_DRY_RUN="true")
    configure = sdk._PolicyAnalyzerServicer._configure_runtime_settings
    configure(None)
    assert pulumi.runtime.get_config("p:k") == "v"
    def refuse():
        raise AssertionError("re-parsed the config")
    pulumi.runtime.get_config_env = refuse
    configure(None)                                             # same environment: not re-applied
    os.environ["PULUMI_CONFIG"] = '{"p:k": "w"}'
    try:
        configure(None)                                         # changed: applied again
    except AssertionError:
        pass
    else:
        raise SystemExit("a changed environment was not re-applied")
    print("ok")
    """
)


def test_memoises_per_message_and_passes_other_forms_through() -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=POLICIES, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
