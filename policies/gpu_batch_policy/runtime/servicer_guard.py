"""The pack's last line of defence, around the SDK servicer's analyzer calls.

Two things no rule can do for itself, because they happen outside any rule:

* **Requests the SDK cannot decode.**  pulumi-policy decodes every resource's properties with
  recursive Python (``json_format.MessageToDict``, ``deserialize_properties``; pulumi_policy
  ``policy.py`` ``_PolicyAnalyzerServicer``) before any rule runs.  Protobuf itself decodes a
  Struct thousands of levels deep, but at the default recursion limit (1,000) the SDK's
  decoding fails at about 200 levels with ``RecursionError``, which the servicer turns into a
  gRPC error that fails the engine's whole preview.  Raising the limit only moves the cliff (and
  deep enough input then overflows the C stack: a segfault, far worse), so the limit stays, and
  an undecodable call is answered instead: ``Analyze`` with one advisory finding naming the
  resource; ``AnalyzeStack`` is re-run without the resources nested deeper than
  the resources it cannot decode (each named in one advisory finding), so one unreadable resource
  does not switch off every stack rule; ``Remediate`` with no remediation.
* **Secrets in finding messages.**  The servicer unwraps Pulumi secrets before the rules see
  the properties, so a rule cannot know that a value it quotes was secret.  Every string and
  number that arrived wrapped as a secret (``{4dabf1...: 1b4706..., value: v}``) is collected from
  the request, and each message of the response has them replaced by ``[secret]``, whatever rule
  wrote it.  A multi-line secret (a YAML document) is also redacted line by line and value by
  value, since rules quote pieces of parsed YAML.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from google.protobuf import json_format, struct_pb2
from pulumi.runtime.proto import analyzer_pb2
from pulumi_policy.deserialize import deserialize_properties

from ..primitives.values import SECRET_SIG, SECRET_SIG_KEY

REDACTED = "[secret]"
PACK_ERROR_POLICY = "gpu-batch-pack"
# Property nesting the SDK decodes at the default recursion limit (measured: 120 levels decode,
# 200 do not); a deeper resource is named with its depth.
MAX_DECODABLE_DEPTH = 120
_SIG = SECRET_SIG.encode()
_STATE = {"installed": False}


def _values(struct: struct_pb2.Struct) -> Iterator[tuple[struct_pb2.Value, int]]:
    """Every Value in ``struct`` with its nesting depth, without recursion."""
    stack: list[tuple[Any, int]] = [(v, 1) for v in struct.fields.values()]
    while stack:
        value, depth = stack.pop()
        yield value, depth
        kind = value.WhichOneof("kind")
        if kind == "struct_value":
            stack.extend((v, depth + 1) for v in value.struct_value.fields.values())
        elif kind == "list_value":
            stack.extend((v, depth + 1) for v in value.list_value.values)


def depth_of(struct: struct_pb2.Struct) -> int:
    return max((depth for _, depth in _values(struct)), default=0)


def _secret_leaves(value: struct_pb2.Value) -> Iterator[str]:
    stack = [value]
    while stack:
        item = stack.pop()
        kind = item.WhichOneof("kind")
        if kind == "string_value":
            yield item.string_value
        elif kind == "number_value":
            number = item.number_value
            yield str(int(number)) if number.is_integer() else repr(number)
        elif kind == "struct_value":
            stack.extend(item.struct_value.fields.values())
        elif kind == "list_value":
            stack.extend(item.list_value.values)


def secrets_in(structs: Iterable[struct_pb2.Struct]) -> set[str]:
    """The texts of every secret-wrapped leaf in ``structs`` (a cheap byte search first)."""
    found: set[str] = set()
    for struct in structs:
        if _SIG not in struct.SerializeToString():
            continue
        for value, _ in _values(struct):
            if value.WhichOneof("kind") != "struct_value":
                continue
            fields = value.struct_value.fields
            sig = fields.get(SECRET_SIG_KEY)
            if sig is not None and sig.string_value == SECRET_SIG and "value" in fields:
                found.update(_secret_leaves(fields["value"]))
    return found


def _needles(secrets: Iterable[str]) -> set[str]:
    out: set[str] = set()
    for text in secrets:
        out.add(text.strip())
        if "\n" in text:  # a YAML/JSON document: each line, and each line's value
            pieces: set[str] = set()
            for line in text.splitlines():
                item = line.strip()
                pieces.add(item)
                item = item[2:] if item.startswith("- ") else item
                pieces.add(item.split(": ", 1)[-1].strip().strip("'\","))
            # A document's one- and two-character values are its structure (``v1``, ``/``, ``-``),
            # not what makes it secret: replacing them garbled unrelated words of every message
            # (``oci:[secret]/registry``, ``apps/[secret]``).  A short secret on its own is still
            # replaced, as a whole word.
            out.update(p for p in pieces if len(p) >= 3)
        out.discard("")
    return out


def redactor(secrets: Iterable[str]) -> Callable[[str], str]:
    """A function that replaces every secret text in a message by ``[secret]``.

    Texts of three characters or more are replaced wherever they occur; shorter ones (a secret
    ``1``) only as a whole word, so the rest of the message stays readable, and only when they hold
    a letter or digit.
    """
    # A short secret with no letter or digit (a path ``/``) cannot be told from punctuation: as a
    # "whole word" it matched inside every URL (``oci:[secret]/registry``) and hid nothing.
    needles = sorted(
        (n for n in _needles(secrets) if len(n) >= 3 or any(c.isalnum() for c in n)), key=len, reverse=True
    )
    if not needles:
        return lambda message: message
    parts = [re.escape(n) if len(n) >= 3 else rf"(?<![\w.]){re.escape(n)}(?![\w.])" for n in needles]
    pattern = re.compile("|".join(parts))
    return lambda message: pattern.sub(REDACTED, message)


def _redact(response: analyzer_pb2.AnalyzeResponse, secrets: set[str]) -> None:
    if not secrets:
        return
    redact = redactor(secrets)
    for diagnostic in response.diagnostics:
        diagnostic.message = redact(diagnostic.message)


def _decodes(struct: struct_pb2.Struct) -> bool:
    """Whether the SDK's own decoding of ``struct`` succeeds (run only after a failed call)."""
    try:
        deserialize_properties(json_format.MessageToDict(struct))
    except Exception:
        return False
    return True


def _unreadable(urn: str, resource: str, error: BaseException, depth: int) -> analyzer_pb2.AnalyzeDiagnostic:
    """The advisory finding for a resource the SDK could not decode.

    Nesting past :data:`MAX_DECODABLE_DEPTH` is the input's shape, not a bug of the pack: it reads
    "cannot check" with the resource, its depth and the limit (issue 18 item 8).  Anything else
    that breaks decoding stays an internal error; its Python exception class goes to the pack's
    stderr (the engine's log), never into the finding, which a user reads.
    """
    if depth > MAX_DECODABLE_DEPTH:
        message = (
            f"cannot check resource {resource}: its properties are nested {depth} levels deep and the "
            f"pack reads at most {MAX_DECODABLE_DEPTH} levels (decoding the request went past it). "
            "No rule checked this resource. Fix: flatten the property, or pass deep "
            "data as a string"
        )
    elif isinstance(error, AssertionError):
        # pulumi_policy deserialize.py refuses a property map that carries the wire signature key
        # with an unrecognized or invalid value ("Unrecognized signature", "Invalid secret"):
        # malformed input, not a fault of the pack.
        message = (
            f"cannot check resource {resource}: a property is not in the Pulumi wire form (an object "
            "with the signature key whose value the SDK refuses while decoding the request). No rule "
            "checked this resource. Fix: send the property as the engine "
            "serializes it (secrets, assets and archives in their signature objects)"
        )
    else:
        print(f"gpu-batch: internal error decoding {resource}: {type(error).__name__}", file=sys.stderr)
        message = (
            f"internal error in the policy pack on resource {resource}: decoding a property of the "
            "request failed unexpectedly (the pack's log names the failure). No rule checked this resource"
        )
    return analyzer_pb2.AnalyzeDiagnostic(
        policyName=PACK_ERROR_POLICY,
        policyPackName="gpu-batch",
        message=message,
        urn=urn,
        description="The policy pack could not read a resource",
        enforcementLevel=analyzer_pb2.ADVISORY,
    )


def _guard_analyze(method: Callable[..., Any]) -> Callable[..., Any]:
    def analyze(servicer: Any, request: Any, context: Any) -> Any:
        secrets = secrets_in([request.properties])
        try:
            response = method(servicer, request, context)
        except Exception as exc:
            response = analyzer_pb2.AnalyzeResponse()
            where = f"{request.type} '{request.name}'"
            response.diagnostics.append(_unreadable(request.urn, where, exc, depth_of(request.properties)))
        _redact(response, secrets)
        return response

    return analyze


def _guard_analyze_stack(method: Callable[..., Any]) -> Callable[..., Any]:
    def analyze_stack(servicer: Any, request: Any, context: Any) -> Any:
        secrets = secrets_in(r.properties for r in request.resources)
        try:
            response = method(servicer, request, context)
        except Exception as exc:
            unreadable = [r for r in request.resources if not _decodes(r.properties)]
            kept = analyzer_pb2.AnalyzeStackRequest()
            kept.CopyFrom(request)
            del kept.resources[:]
            kept.resources.extend(r for r in request.resources if r not in unreadable)
            response = analyzer_pb2.AnalyzeResponse()
            if unreadable:
                try:
                    response = method(servicer, kept, context)
                except Exception:
                    response = analyzer_pb2.AnalyzeResponse()
            for r in unreadable:
                response.diagnostics.append(
                    _unreadable(r.urn, f"{r.type} '{r.name}'", exc, depth_of(r.properties))
                )
            if not unreadable:
                response.diagnostics.append(_unreadable("", "(none identified)", exc, 0))
        _redact(response, secrets)
        return response

    return analyze_stack


def _guard_remediate(method: Callable[..., Any]) -> Callable[..., Any]:
    def remediate(servicer: Any, request: Any, context: Any) -> Any:
        try:
            return method(servicer, request, context)
        except Exception:
            return analyzer_pb2.RemediateResponse()

    return remediate


def install() -> bool:
    """Wrap the running pulumi-policy servicer; True when the guard is active."""
    if _STATE["installed"]:
        return True
    try:
        from pulumi_policy import policy
    except ImportError:
        return False
    servicer: Any = getattr(policy, "_PolicyAnalyzerServicer", None)
    if servicer is None or not all(
        callable(getattr(servicer, m, None)) for m in ("Analyze", "AnalyzeStack", "Remediate")
    ):
        return False
    servicer.Analyze = _guard_analyze(servicer.Analyze)
    servicer.AnalyzeStack = _guard_analyze_stack(servicer.AnalyzeStack)
    servicer.Remediate = _guard_remediate(servicer.Remediate)
    _STATE["installed"] = True
    return True
