"""YAML with line numbers: every mapping records its own line (``__line__``) and each key's
(``__keys__``), so a setting read from a manifest or a compose file cites its line."""

from __future__ import annotations

import contextlib
from typing import Any

import yaml

from ..._bounded import MAX_DEPTH, LimitError, check_value, check_yaml


class _Loader(yaml.SafeLoader):
    """SafeLoader that remembers the line of each mapping and of each of its keys."""


def _mapping(loader: _Loader, node: yaml.MappingNode) -> dict[str, Any]:
    data: dict[str, Any] = {str(k): v for k, v in
                            loader.construct_mapping(node, deep=True).items()}
    data["__line__"] = node.start_mark.line + 1
    data["__keys__"] = {str(k.value): k.start_mark.line + 1 for k, _ in node.value
                        if isinstance(k, yaml.ScalarNode)}
    return data


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping)


def load_yaml(text: str) -> list[Any]:
    """Every document of a YAML (or JSON) text; what follows a syntax error is lost, what
    precedes it is kept. A text past the limits of :mod:`agentkit._bounded` (nesting,
    aliases, integers) has no documents: it is a host file, possibly crafted."""
    out: list[Any] = []
    try:
        with contextlib.suppress(yaml.YAMLError):  # loading stops at the same place
            check_yaml(text)
        for doc in yaml.load_all(text, Loader=_Loader):  # a SafeLoader
            check_value(doc, MAX_DEPTH + 1)
            out.append(doc)
    except LimitError:
        return []
    except (yaml.YAMLError, RecursionError, ValueError):
        return out
    return out
