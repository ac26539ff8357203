"""htpasswd lines (``user:$2y$...``) for ingress-nginx basic auth, hashed with bcrypt.

Why bcrypt: ingress-nginx checks basic-auth files through the C library's ``crypt``, which on
its Alpine image (musl) understands ``$2y$`` bcrypt -- the format ``htpasswd -B`` writes --
and bcrypt is the strongest scheme htpasswd offers (SkyPilot's docs use ``htpasswd -nb``,
i.e. apr1-MD5).

Why a deterministic salt: the hash lands in a Helm release's values, and a fresh random salt
on every ``pulumi up`` would show the release as changed (and roll the ingress) on every run.
The salt is derived from the *user identity* (a caller-chosen scope such as
``<project>/<stack>/<namespace>``, plus the user name), never from the password: a salt computed
from the password would let anyone holding the hash test guesses at SHA-256 speed, bypassing
bcrypt's cost.  Distinct users still get distinct salts, so equal passwords hash differently.
"""

from __future__ import annotations

import base64
import hashlib

import bcrypt

# bcrypt's cost: 2^10 rounds, ~0.1 s per hash here; htpasswd -B defaults to 5.
COST = 10
_STANDARD = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
_BCRYPT = b"./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"


def bcrypt_salt(scope: str, user: str, cost: int = COST) -> bytes:
    """``$2y$<cost>$`` + 22 characters of bcrypt base64 encoding 16 bytes derived from the identity."""
    raw = hashlib.sha256(f"gpu-batch-htpasswd\0{scope}\0{user}".encode()).digest()[:16]
    encoded = base64.b64encode(raw)[:22].translate(bytes.maketrans(_STANDARD, _BCRYPT))
    return b"$2y$%02d$" % cost + encoded


def htpasswd_line(user: str, password: str, scope: str) -> str:
    """``user:<bcrypt hash>``, the form ``htpasswd -nbB user password`` prints."""
    if ":" in user:
        raise ValueError("an htpasswd user name cannot contain ':'")
    hashed = bcrypt.hashpw(password.encode(), bcrypt_salt(scope, user))
    return f"{user}:{hashed.decode()}"
