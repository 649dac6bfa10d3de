"""agentkit: answers questions about ML serving deployments by finding out.

>>> import anyio
>>> from agentkit import Host, Orchestrator
>>> orch = Orchestrator.catalog(Host.at("examples/blackwell-kimi"))
>>> answer = anyio.run(orch.investigate, "Is NCCL tuned for this topology?")  # doctest: +SKIP
"""

from ._config import Settings, load_settings
from ._host import Host
from ._llm._messages import (
    Message,
    Model,
    ModelError,
    ModelRequest,
    ModelResponse,
    ToolCallRequest,
    ToolSpec,
)
from ._llm._openai import OpenAIChatModel
from ._orchestrator import Orchestrator
from ._render import to_markdown
from ._sandbox._sandbox import Sandbox, ToolCall
from ._tool import Tool, ToolContext, ToolError, ToolOutput, tool
from ._trace import Trace
from ._types import (
    SCHEMA_VERSION,
    Answer,
    Budget,
    Cell,
    Citation,
    Claim,
    Evidence,
    Fact,
    Finding,
    Plan,
    Section,
    SubQuestion,
    Table,
    TaskResult,
    TaskSpec,
    Usage,
)

__version__ = "0.1.0"

__all__ = [
    "SCHEMA_VERSION",
    "Answer",
    "Budget",
    "Cell",
    "Citation",
    "Claim",
    "Evidence",
    "Fact",
    "Finding",
    "Host",
    "Message",
    "Model",
    "ModelError",
    "ModelRequest",
    "ModelResponse",
    "OpenAIChatModel",
    "Orchestrator",
    "Plan",
    "Sandbox",
    "Section",
    "Settings",
    "SubQuestion",
    "Table",
    "TaskResult",
    "TaskSpec",
    "Tool",
    "ToolCall",
    "ToolCallRequest",
    "ToolContext",
    "ToolError",
    "ToolOutput",
    "ToolSpec",
    "Trace",
    "Usage",
    "load_settings",
    "to_markdown",
    "tool",
]
