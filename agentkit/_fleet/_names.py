"""Host names: validated before ClusterShell folds them, expanded from ranges, folded back.

ClusterShell's ``NodeSet`` is a parser: ``h,1`` is two nodes to it, ``a[1-3]`` three, ``@x``
a group looked up in its configuration files. A host name that reaches it must therefore be a
plain name, checked here, and it is always called without group resolution (no file on this
machine changes what a fleet answer says).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

# RFC 1123 labels, plus "_" (seen in ~/.ssh/config aliases) and ":" is not allowed (NodeSet
# reads nothing special into it, but an address with a port is not a host name)
_NAME = re.compile(r"^[A-Za-z0-9_](?:[A-Za-z0-9_.-]{0,252})$")
MAX_HOSTS = 100_000  # a range that expands past this is a typo, not a fleet


class InventoryError(ValueError):
    """The host list is not usable; the message says what was wrong and what to do."""


def check_name(name: str) -> str:
    """``name`` if it is a plain host name, else :class:`InventoryError`.

    >>> check_name("gpu07")
    'gpu07'
    >>> try:
    ...     check_name("h,1")  # NodeSet would read two nodes, "h" and "1"
    ... except InventoryError as exc:
    ...     print(str(exc)[:40])
    host name 'h,1' is not a plain host name
    """
    if not _NAME.match(name) or name.endswith((".", "-")):
        raise InventoryError(
            f"host name {name!r} is not a plain host name (letters, digits, '.', '-', '_'); "
            "give ranges as gpu[01-64] and lists as gpu01,gpu02")
    return name


def _nodeset(spec: str | None = None) -> Any:
    from ClusterShell.NodeSet import RESOLVER_NOGROUP, NodeSet

    return NodeSet(spec, resolver=RESOLVER_NOGROUP)


def expand(spec: str) -> list[str]:
    """The hosts a range or list names, in NodeSet order, each checked.

    >>> expand("gpu[01-03],login1")
    ['gpu01', 'gpu02', 'gpu03', 'login1']
    """
    from ClusterShell.NodeSet import NodeSetException

    if not spec.strip() or "@" in spec:
        raise InventoryError(f"{spec!r} names no hosts: give a range such as gpu[01-64] or a "
                             "comma-separated list (node groups, @name, are not read)")
    try:
        nodes = _nodeset(spec)
    except NodeSetException as exc:
        raise InventoryError(f"cannot read the host range {spec!r}: {exc}") from None
    if len(nodes) > MAX_HOSTS:
        raise InventoryError(f"{spec!r} expands to {len(nodes)} hosts, more than {MAX_HOSTS}: "
                             "check the range")
    return [check_name(n) for n in nodes]


def fold(names: Iterable[str]) -> str:
    """Names folded into one node range, as ``clush -b`` prints them.

    >>> fold(["gpu03", "gpu01", "gpu02", "login1"])
    'gpu[01-03],login1'
    """
    from ClusterShell.NodeSet import RESOLVER_NOGROUP, NodeSet

    return str(NodeSet.fromlist([check_name(n) for n in names], resolver=RESOLVER_NOGROUP))


def unique(names: Iterable[str]) -> list[str]:
    """Checked names, each once, in the order given (a repeated host is one host).

    >>> unique(["b", "a", "b"])
    ['b', 'a']
    """
    return list(dict.fromkeys(check_name(n) for n in names))
