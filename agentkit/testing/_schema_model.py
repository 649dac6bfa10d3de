"""A model that follows the JSON schemas it is given to the letter, and knows nothing else.

Constrained decoding (vLLM's, SGLang's, llama.cpp's) makes a model emit only what the tool's
schema allows; with nothing else to go on, the choices inside it are arbitrary. This double
does exactly that, seeded: it picks a tool (the one required, else any offered), then builds
arguments by walking the schema (an enum's value, a string, a number, an array of allowed
length, every required property and some optional ones). An investigation that works with it
works because its schemas say what is valid, not because a model guessed right.

>>> import anyio
>>> from agentkit._llm._messages import ModelRequest, ToolSpec
>>> spec = ToolSpec("pick", "", {"type": "object", "properties": {"c": {"enum": ["a", "b"]}},
...                              "required": ["c"]})
>>> m = SchemaFollowingModel(seed=1)
>>> out = anyio.run(m.complete, ModelRequest(messages=[], tools=[spec]))
>>> out.tool_calls[0].parsed()["c"] in ("a", "b")
True
"""

from __future__ import annotations

import itertools
import json
import random
from typing import Any

import anyio

from .._llm._messages import ModelRequest, ModelResponse, TokenUsage, ToolCallRequest

_WORDS = ("nccl", "vllm", "gpu", "/etc", "config", "model", "x", "serving", "tp", "kv")


class SchemaFollowingModel:
    """Seeded; ``delay_s`` per call lets concurrent subagents overlap (``peak_in_flight``)."""

    def __init__(self, seed: int, delay_s: float = 0.002) -> None:
        self.rng = random.Random(seed)
        self.delay_s = delay_s
        self.calls = 0
        self.in_flight = 0
        self.peak_in_flight = 0
        self._ids = itertools.count(1)

    async def complete(self, request: ModelRequest) -> ModelResponse:
        self.calls += 1
        self.in_flight += 1
        self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
        try:
            await anyio.sleep(self.delay_s)
            if not request.tools:
                return ModelResponse(text="done", tool_calls=[], usage=TokenUsage(10, 5),
                                     finish_reason="stop", model="schema-following")
            tool = self.rng.choice(list(request.tools))
            args = self.value(tool.parameters, tool.parameters)
            call = ToolCallRequest(f"call_{next(self._ids)}", tool.name, json.dumps(args))
            return ModelResponse(text="", tool_calls=[call], usage=TokenUsage(10, 5),
                                 finish_reason="tool_calls", model="schema-following")
        finally:
            self.in_flight -= 1

    def value(self, schema: dict[str, Any], root: dict[str, Any], depth: int = 0) -> Any:
        """A value the schema allows, chosen at random."""
        rng = self.rng
        if "$ref" in schema:
            ref = schema["$ref"].rsplit("/", 1)[-1]
            return self.value(root.get("$defs", {}).get(ref, {}), root, depth)
        if "const" in schema:
            return schema["const"]
        if "enum" in schema:
            return rng.choice(schema["enum"])
        for key in ("anyOf", "oneOf"):
            if key in schema:
                options = schema[key]
                if depth > 4:  # prefer a null branch deep down, so values stay finite
                    options = [o for o in options if o.get("type") == "null"] or options
                return self.value(rng.choice(options), root, depth + 1)
        kind = schema.get("type")
        if isinstance(kind, list):
            kind = rng.choice(kind)
        if kind == "object" or "properties" in schema:
            return self._object(schema, root, depth)
        if kind == "array":
            low = int(schema.get("minItems", 0))
            high = int(schema.get("maxItems", low + 3))
            n = rng.randint(low, max(low, min(high, low + 3)))
            return [self.value(schema.get("items", {}), root, depth + 1) for _ in range(n)]
        if kind == "string":
            n = max(int(schema.get("minLength", 1)), 1)
            return " ".join(rng.choice(_WORDS) for _ in range(rng.randint(n, n + 2)))
        if kind == "integer":
            return rng.randint(int(schema.get("minimum", 0)), int(schema.get("maximum", 100)))
        if kind == "number":
            return round(rng.uniform(float(schema.get("minimum", 0)),
                                     float(schema.get("maximum", 100))), 3)
        if kind == "boolean":
            return rng.random() < 0.5
        if kind == "null":
            return None
        return rng.choice(_WORDS)  # {} allows anything

    def _object(self, schema: dict[str, Any], root: dict[str, Any], depth: int
                ) -> dict[str, Any]:
        props: dict[str, Any] = schema.get("properties", {})
        required = set(schema.get("required", []))
        out = {}
        for name, sub in props.items():
            if name in required or (depth < 3 and self.rng.random() < 0.5):
                out[name] = self.value(sub, root, depth + 1)
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict) and depth < 3 and self.rng.random() < 0.3:
            out[self.rng.choice(_WORDS)] = self.value(extra, root, depth + 1)
        return out
