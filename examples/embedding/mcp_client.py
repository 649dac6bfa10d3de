"""An MCP client session against `agentkit mcp` over stdio (official `mcp` SDK).

    python examples/embedding/mcp_client.py examples/blackwell-kimi "Is NCCL tuned?"
"""

from __future__ import annotations

import sys

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


async def main(root: str, question: str) -> None:
    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "agentkit", "mcp", "--root", root])
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = await session.list_tools()
        print("tools:", ", ".join(t.name for t in tools.tools))

        async def progress(done: float, total: float | None, message: str | None) -> None:
            print(f"progress {done:g}/{total:g}: {message}", file=sys.stderr)

        result = await session.call_tool("investigate", {"question": question},
                                         progress_callback=progress)
        if result.is_error:
            raise SystemExit(f"investigate failed: {result.content}")
        answer = result.structured_content["answer"]  # compact: bottom line, table, citations
        for claim in answer["bottom_line"]:
            print("-", claim["text"])
        print("trace:", result.structured_content["trace"])


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], sys.argv[2])
