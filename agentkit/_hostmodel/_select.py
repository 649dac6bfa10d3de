"""Which server is the current deployment, decided from evidence or declared ambiguous.

Running (or crash-looping: meant to be up) beats enabled beats merely present. Two servers
that the evidence does not tell apart are both candidates; nothing is picked by order.
"""

from __future__ import annotations

from ._model import HostModel, Server


def _label(s: Server) -> str:
    enabled = {True: "enabled", False: "disabled", None: "enablement unknown"}[s.state.enabled]
    return f"{s.name} ({s.state.value}, {enabled})"


def select_current(model: HostModel) -> None:
    servers = model.servers
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
