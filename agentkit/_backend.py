"""Which async backend the caller runs on, for the two places that must choose (aiohttp or
httpx for model calls; an asyncio task or a trio system task for a stream's run).

>>> on_asyncio()  # no loop runs here
False
"""

from __future__ import annotations

import asyncio


def on_asyncio() -> bool:
    """Whether the caller runs on an asyncio loop. Asked of asyncio itself: trio runs no
    asyncio loop, and sniffio (which anyio no longer brings) is not a dependency."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True
