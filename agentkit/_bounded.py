"""Parsing host files within limits: nesting, integer size and YAML aliases.

A host file is data, possibly crafted: a 200k-deep array overflows the parsers' recursion, a
5000-digit integer raises ValueError (Python's ``int_max_str_digits``), a YAML sexagesimal
integer (``1:2:3:…``) costs quadratic time, and an integer past 64 bits makes the trace
writer (orjson) fail the whole tool call. Each is a :class:`LimitError` here, which the
callers turn into "this file cannot be parsed", one line.
"""

from __future__ import annotations

import json
from typing import Any

import yaml

MAX_DEPTH = 64
INT_MIN, INT_MAX = -(2**63), 2**64 - 1  # what orjson writes
_INT_DIGITS = 20  # INT_MAX has 20 decimal digits
MAX_YAML_ALIASES = 100
_YAML_INT_CHARS = 100  # a 64-bit integer in binary with underscores fits, 1:2:3… does not
_INT_TAG = "tag:yaml.org,2002:int"
_RESOLVER = yaml.resolver.Resolver()


class LimitError(ValueError):
    """A value past the limits of this module; the message says which."""


def _parse_int(text: str) -> int:
    # the length first: int() of a long digit string is what costs (and raises past 4300)
    if len(text.lstrip("-")) > _INT_DIGITS:
        raise LimitError(f"an integer of {len(text)} digits (more than 64 bits)")
    return int(text)


def loads_json(text: str | bytes) -> Any:
    """``json.loads`` within the limits; every failure is a ValueError."""
    try:
        value = json.loads(text, parse_int=_parse_int)
    except RecursionError:
        raise LimitError(f"nested deeper than {MAX_DEPTH} levels") from None
    check_value(value)
    return value


def check_value(value: Any, max_depth: int = MAX_DEPTH) -> None:
    """Nesting at most ``max_depth`` and integers within 64 bits, walked without recursion
    (aliased YAML nodes are walked once)."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    seen: set[int] = set()
    while stack:
        v, depth = stack.pop()
        if isinstance(v, int) and not isinstance(v, bool) and not INT_MIN <= v <= INT_MAX:
            raise LimitError(f"an integer of {v.bit_length()} bits (more than 64)")
        if not isinstance(v, dict | list) or id(v) in seen:
            continue
        if depth >= max_depth:
            raise LimitError(f"nested deeper than {max_depth} levels")
        seen.add(id(v))
        items = [*v.keys(), *v.values()] if isinstance(v, dict) else v
        stack.extend((x, depth + 1) for x in items)


def check_yaml(text: str) -> None:
    """Before composing (which recurses) or constructing (where integers are computed): the
    nesting, the number of aliases and the length of every integer literal, from events."""
    aliases = depth = 0
    for ev in yaml.parse(text, Loader=yaml.SafeLoader):
        if isinstance(ev, yaml.AliasEvent):
            aliases += 1
            if aliases > MAX_YAML_ALIASES:
                raise LimitError(f"more than {MAX_YAML_ALIASES} YAML aliases (a possible "
                                 "alias bomb)")
        elif isinstance(ev, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_DEPTH:
                raise LimitError(f"nested deeper than {MAX_DEPTH} levels")
        elif isinstance(ev, yaml.CollectionEndEvent):
            depth -= 1
        elif (isinstance(ev, yaml.ScalarEvent) and len(ev.value) > _YAML_INT_CHARS
              and _yaml_tag(ev) == _INT_TAG):
            raise LimitError(f"an integer literal of {len(ev.value)} characters")


def _yaml_tag(ev: yaml.ScalarEvent) -> str:
    # the parser has expanded "!!int" already; an untagged scalar gets the composer's tag
    if ev.tag not in (None, "!"):
        return str(ev.tag)
    return str(_RESOLVER.resolve(yaml.ScalarNode, ev.value, ev.implicit))
