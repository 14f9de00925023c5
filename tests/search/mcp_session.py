"""A real MCP client session with `docscrawl mcp OUT...` over stdio, as an assistant runs it."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from tests.conftest import ROOT


@asynccontextmanager
async def mcp_session(*outs: Path) -> AsyncIterator[Any]:
    """An initialized `mcp.ClientSession` with the server serving `outs`."""
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "docscrawl.cli", "mcp", *map(str, outs)],
                                   cwd=str(ROOT))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


async def call(session: Any, tool: str, **arguments: Any) -> str:
    """The text a tool call returns; a tool error fails with its message."""
    result = await session.call_tool(tool, arguments)
    text = result.content[0].text
    assert not result.is_error, text
    return str(text)
