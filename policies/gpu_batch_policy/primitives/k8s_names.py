"""Kubernetes name grammars the admission webhooks apply, as apimachinery states them.

Source: kubernetes/apimachinery ``pkg/util/validation/validation.go`` (the release Kueue v0.19.2
and KubeRay v1.7.0 vendor): ``IsDNS1123Subdomain`` (<= 253, lowercase alphanumerics, '-' and
'.', alphanumeric at both ends of every dot-separated part), ``IsDNS1123Label`` (<= 63, no '.'),
``IsDNS1035Label`` (<= 63, starts with a letter), ``IsQualifiedName`` (label keys and topology
level names: ``[prefix/]name``, prefix a DNS-1123 subdomain, name <= 63 of alphanumerics, '-',
'_', '.', alphanumeric at both ends) and ``IsValidLabelValue`` (<= 63, empty or the name part's
grammar).  Each function returns None when the value is valid, else the reason in one phrase.
"""

from __future__ import annotations

import re

_DNS1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_DNS1035_LABEL = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")
_QUALIFIED_NAME_PART = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")

# A shell/envsubst placeholder such as ``${JOB_ID}``: published manifests that are templates carry
# them, and their value is only known once substituted (like a Pulumi unknown).
_PLACEHOLDER = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*\}")

DNS1123_SUBDOMAIN_MAX = 253
LABEL_MAX = 63


def has_placeholder(value: str) -> bool:
    """Whether ``value`` holds an unsubstituted ``${NAME}`` template placeholder."""
    return _PLACEHOLDER.search(value) is not None


def dns1123_subdomain_error(value: str) -> str | None:
    if len(value) > DNS1123_SUBDOMAIN_MAX:
        return f"must be no more than {DNS1123_SUBDOMAIN_MAX} characters"
    if not _DNS1123_SUBDOMAIN.fullmatch(value):
        return (
            "must be a lowercase RFC 1123 subdomain: lowercase alphanumerics, '-' or '.', starting and "
            "ending with an alphanumeric"
        )
    return None


def dns1123_label_error(value: str) -> str | None:
    if len(value) > LABEL_MAX:
        return f"must be no more than {LABEL_MAX} characters"
    if not _DNS1123_LABEL.fullmatch(value):
        return "must be an RFC 1123 label: lowercase alphanumerics or '-', starting and ending with an alphanumeric"
    return None


def dns1035_label_error(value: str) -> str | None:
    if len(value) > LABEL_MAX:
        return f"must be no more than {LABEL_MAX} characters"
    if not _DNS1035_LABEL.fullmatch(value):
        return (
            "must be an RFC 1035 label: lowercase alphanumerics or '-', starting with a letter and ending "
            "with an alphanumeric"
        )
    return None


def qualified_name_error(value: str) -> str | None:
    prefix, slash, name = value.rpartition("/")
    if slash and not prefix:
        return "has an empty prefix before '/'"
    if prefix and dns1123_subdomain_error(prefix) is not None:
        return f"has prefix '{prefix}', which must be a DNS-1123 subdomain"
    if not name or len(name) > LABEL_MAX or not _QUALIFIED_NAME_PART.fullmatch(name):
        return (
            f"must be [prefix/]name with a name of 1-{LABEL_MAX} alphanumerics, '-', '_' or '.', starting "
            "and ending with an alphanumeric"
        )
    return None


def label_value_error(value: str) -> str | None:
    if len(value) > LABEL_MAX:
        return f"must be no more than {LABEL_MAX} characters"
    if value and not _QUALIFIED_NAME_PART.fullmatch(value):
        return "must be empty or alphanumerics, '-', '_' or '.', starting and ending with an alphanumeric"
    return None


def go_atoi(text: str) -> int | None:
    """Go's ``strconv.Atoi`` (base 10, optional sign, no spaces/underscores, int64 range); None on error."""
    if not re.fullmatch(r"[+-]?[0-9]+", text):
        return None
    value = int(text)
    return value if -(2**63) <= value < 2**63 else None
