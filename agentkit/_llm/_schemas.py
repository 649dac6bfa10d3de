"""Tool schemas built per request from what is valid, in the shape strict backends accept.

A model that follows schemas to the letter (constrained decoding) can only be right when the
schema says what right is: the template names, tool names and evidence ids a submission may
use are enums here, built for each request, not prose in the prompt. The same schemas are
shaped for OpenAI's strict mode (every object closed, every property required, optional ones
nullable; no defaults or titles), which Anthropic's tool schemas accept unchanged; a null
for an optional value is dropped again before validation (:func:`drop_nulls`). Validation and
the repair loop stay as the net under a model that does not follow schemas.
"""

from __future__ import annotations

import copy
from typing import Any

# Annotations, and the size and format constraints that not every strict backend takes
# (Anthropic's strict tool use refuses them): validation checks those instead.
_DROP = ("title", "default", "description", "examples", "minItems", "maxItems", "minLength",
         "maxLength", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "pattern",
         "format", "multipleOf")


def strict(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` in OpenAI strict-mode shape (a copy).

    >>> strict({"type": "object", "properties": {"a": {"type": "string", "default": ""}},
    ...         "required": []})["properties"]["a"]
    {'anyOf': [{'type': 'string'}, {'type': 'null'}]}
    """
    return _shape(copy.deepcopy(schema))


def _shape(node: Any) -> Any:
    if isinstance(node, list):
        return [_shape(n) for n in node]
    if not isinstance(node, dict):
        return node
    for key in _DROP:
        node.pop(key, None)
    for key, value in list(node.items()):
        if key in ("properties", "$defs"):
            node[key] = {k: _shape(v) for k, v in value.items()}
        elif isinstance(value, dict | list):
            node[key] = _shape(value)
    if node.get("type") == "object" or "properties" in node:
        props = node.setdefault("properties", {})
        required = set(node.get("required", []))
        for name, sub in props.items():
            if name not in required and not _nullable(sub):
                props[name] = {"anyOf": [sub, {"type": "null"}]}
        node["required"] = list(props)
        node["additionalProperties"] = False
    return node


def _nullable(node: dict[str, Any]) -> bool:
    return node.get("type") == "null" or any(
        o.get("type") == "null" for o in node.get("anyOf", []) if isinstance(o, dict))


def restrict(schema: dict[str, Any], path: list[str], values: list[str]) -> None:
    """Make the string at ``path`` (property names, "$defs/Name", "items", "anyOf") one of
    ``values`` — or impossible to give when there are none (an array of them then empty)."""
    node: Any = schema
    if path[-1] == "items" and not values:  # nothing to name: the array is not offered
        parent = schema
        for key in path[:-3]:
            parent = parent[key]
        parent.get("properties", {}).pop(path[-2], None)
        if path[-2] in parent.get("required", []):
            parent["required"].remove(path[-2])
        return
    for key in path:
        node = node[key]
    target = node
    if "anyOf" in target:  # a nullable string: restrict the string branch
        target = next(o for o in target["anyOf"] if o.get("type") != "null")
    target.pop("type", None)
    target["enum"] = list(values)
    if values:
        target["type"] = "string"


def drop_nulls(value: Any) -> Any:
    """Nulls a strict-mode model sent for optional values, removed (the defaults apply)."""
    if isinstance(value, dict):
        return {k: drop_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [drop_nulls(v) for v in value]
    return value


def restrict_everywhere(schema: dict[str, Any], prop: str, values: list[str]) -> None:
    """Every ``prop`` that is an array of strings (``evidence`` in claims, findings, cells),
    wherever it is defined, restricted to ``values``."""
    for node in [schema, *schema.get("$defs", {}).values()]:
        sub = node.get("properties", {}).get(prop)
        if isinstance(sub, dict) and sub.get("type") == "array":
            restrict(node, ["properties", prop, "items"], values)
