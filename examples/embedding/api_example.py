"""Drive agentkit from Python: stream progress events, then use the typed answer.

    python examples/embedding/api_example.py examples/blackwell-kimi
"""

from __future__ import annotations

import sys

import anyio

from agentkit import Orchestrator, to_markdown


async def main(root: str) -> None:
    question = "Would setting the KV cache to fp8 as the model recommends improve perf?"
    async with Orchestrator.from_env(root=root) as orch:
        async with orch.stream(question) as events:  # leaving early is safe
            async for event in events:
                match event.kind:
                    case "plan":
                        print("plan:", ", ".join(t.id for t in event.plan.tasks),
                              file=sys.stderr)
                    case "task_finished":
                        print(f"[{event.done}/{event.total}] {event.task_id}: {event.status}",
                              file=sys.stderr)
                    case "answer":
                        answer = event.answer
    for claim in answer.bottom_line:
        sources = ", ".join(c.locator for c in answer.citations if c.id in claim.evidence)
        print(f"- {claim.text}\n  sources: {sources}")
    print(to_markdown(answer).splitlines()[0])


if __name__ == "__main__":
    anyio.run(main, sys.argv[1] if len(sys.argv) > 1 else "examples/blackwell-kimi")
