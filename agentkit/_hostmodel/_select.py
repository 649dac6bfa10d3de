"""Which server is the current deployment, decided from evidence or declared ambiguous.

Running (or crash-looping: meant to be up) beats enabled beats merely present. Two servers
that the evidence does not tell apart are both candidates; nothing is picked by order.
"""

from __future__ import annotations

import re

from ._model import HostModel, Server

# Words that name no particular server: engines, packaging, formats.
_GENERIC = {"vllm", "sglang", "trtllm", "service", "server", "serve", "models", "model", "the",
            "nvidia", "org", "ai", "instruct", "chat", "fp8", "fp4", "nvfp4", "bf16", "awq",
            "gptq", "int4", "int8", "base", "hf", "opt", "venv", "unit"}


def _tokens(text: str) -> list[str]:
    return [t for t in re.split(r"[^a-z0-9]+", text.lower()) if t]


def _names(s: Server) -> set[str]:
    """The distinctive words of a server's unit name and model directory."""
    words = _tokens(s.name.rsplit(".", 1)[0]) + _tokens((s.model_path or "").rsplit("/", 1)[-1])
    return {w for w in words if len(w) >= 3 and w not in _GENERIC and not w.isdigit()}


def named(question: str, servers: list[Server]) -> list[Server]:
    """The servers a question names ("the foo server" → the unit serving Foo-7B): a word of
    the question that is, or begins, one of a server's distinctive words."""
    asked = [w for w in _tokens(question) if len(w) >= 3 and w not in _GENERIC]
    return [s for s in servers
            if any(n == w or n.startswith(w) or w.startswith(n) for n in _names(s) for w in asked)]


def _label(s: Server) -> str:
    enabled = s.state.enabled_word
    return f"{s.name} ({s.state.value}, {enabled})"


def select_current(model: HostModel, question: str = "") -> None:
    servers = model.servers
    chosen = named(question, servers) if len(servers) > 1 else []
    if len(chosen) == 1:
        model.current = chosen[0]
        model.decision = (f"the question names {chosen[0].name} (one of "
                          f"{', '.join(_label(s) for s in servers)})")
        return
    if not servers:
        model.decision = "no systemd unit starts vLLM, SGLang or TensorRT-LLM"
        return
    if len(servers) == 1:
        model.current = servers[0]
        model.decision = f"{servers[0].name} is the only unit that starts an inference server"
        return
    others = ", ".join(_label(s) for s in servers)
    up = [s for s in servers if s.state.up_or_meant_to_be]
    if len(up) == 1:
        model.current = up[0]
        model.decision = (f"{up[0].name} is the only one of {others} that is running or trying "
                          "to run")
        return
    if len(up) > 1:
        model.candidates = up
        model.decision = f"more than one server is up: {others}"
        return
    enabled = [s for s in servers if s.state.enabled]
    if len(enabled) == 1:
        model.current = enabled[0]
        model.decision = (f"{enabled[0].name} is the only enabled one of {others}; none is "
                          "shown running")
        return
    model.candidates = enabled or servers
    model.decision = (f"the host does not say which one serves: {others}"
                      + ("" if enabled else "; none is enabled or shown running"))
