"""A small agent loop of its own (plain httpx, OpenAI-compatible chat API) that offers
agentkit's `investigate` as one of its tools, through the published schema and handler.

    OPENAI_BASE_URL=http://127.0.0.1:8000/v1 MODEL=some-model \\
        python examples/embedding/agent_loop.py examples/blackwell-kimi "Is NCCL tuned?"
"""

from __future__ import annotations

import json
import os
import sys

import anyio
import httpx

from agentkit import handle_investigate, investigate_tool


async def main(root: str, question: str) -> str:
    base = os.environ["OPENAI_BASE_URL"].rstrip("/")
    model = os.environ.get("MODEL", "model")
    messages: list[dict[str, object]] = [
        {"role": "system", "content": "You are an SRE assistant. Use tools to find facts."},
        {"role": "user", "content": question}]
    async with httpx.AsyncClient(timeout=60) as client:
        for _ in range(5):
            resp = await client.post(f"{base}/chat/completions", json={
                "model": model, "messages": messages, "tools": [investigate_tool("openai")]})
            resp.raise_for_status()
            msg = resp.json()["choices"][0]["message"]
            messages.append(msg)
            calls = msg.get("tool_calls") or []
            if not calls:
                return str(msg.get("content") or "")
            for call in calls:
                result = await handle_investigate(call["function"]["arguments"], root=root,
                                                  catalog_only=True)
                messages.append({"role": "tool", "tool_call_id": call["id"],
                                 "content": json.dumps(result)[:20000]})
    return "no final answer within 5 turns"


if __name__ == "__main__":
    print(anyio.run(main, sys.argv[1], sys.argv[2]))
