"""Typed stack config and the composition that turns it into components.

Nothing here knows Pulumi internals beyond reading config and calling components; nothing in
``components/`` knows this package exists.
"""
