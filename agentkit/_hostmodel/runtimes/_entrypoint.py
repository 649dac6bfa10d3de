"""What a container runs when its runtime gives only the command: the image's ENTRYPOINT
followed by that command (Docker's ``command``/CMD, Compose's ``command``, ``docker run IMAGE
ARGS…``, a Kubernetes container's ``args`` without ``command``).

The ENTRYPOINT is in the image's config (``docker inspect --type image IMAGE``), which a file
does not show. Without it, a command starting with a program (``vllm serve …``, ``python3 …``,
``bash -c …``) is the whole command line only if the image sets no ENTRYPOINT: not
established, and said where the command is. vllm/vllm-openai's ENTRYPOINT changed across
releases (``python3 -m vllm.entrypoints.openai.api_server``, later ``vllm serve``): flags alone
mean the same to both, a program name after either is refused by vLLM's argument parser.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..._bounded import loads_json
from .._engines import engine_of

if TYPE_CHECKING:
    from ..._sandbox._context import RecipeContext

VLLM_IMAGE = re.compile(r"(^|/)vllm-openai(:|@|$)")
_VLLM_ENTRYPOINTS = "`vllm serve` (later releases) or `python3 -m " \
    "vllm.entrypoints.openai.api_server` (earlier ones)"
_PROGRAMS = ("bash", "sh", "python", "python3", "env")


@dataclass
class Entry:
    """The command line as far as it is known, and what the reading depends on."""

    argv: list[str]
    notes: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # what is not established
    refused: str = ""  # established: the engine refuses this command line, nothing runs


async def image_config(ctx: RecipeContext, image: str, cli: str = "docker"
                       ) -> dict[str, Any] | None:
    """The image's ``Config`` (ENTRYPOINT, CMD) from ``docker inspect --type image IMAGE``
    (live, or a snapshot's capture of it), or None where nothing shows it."""
    if not image:
        return None
    inspected = await ctx.tool("run_command", optional=True,
                               argv=[cli, "inspect", "--type", "image", image])
    if inspected is None or inspected.get("exit_code") != 0:  # or its other spelling
        inspected = await ctx.tool("run_command", optional=True,
                                   argv=[cli, "image", "inspect", image])
    if inspected is None or inspected.get("exit_code") != 0:
        return None
    try:
        data = loads_json(inspected["stdout"])
    except ValueError:
        return None
    items = [d for d in data if isinstance(d, dict)] if isinstance(data, list) else []
    config = items[0].get("Config") if len(items) == 1 else None
    return config if isinstance(config, dict) else None


def starts_program(command: list[str]) -> bool:
    """The command names a program (an engine, a shell, python) rather than arguments."""
    return engine_of(command) is not None or bool(
        command and command[0].rsplit("/", 1)[-1] in _PROGRAMS)


def with_entrypoint(image: str, command: list[str], where: str,
                    config: dict[str, Any] | None = None) -> Entry:
    """The command line a container of ``image`` runs with ``command`` (its CMD override)
    and no entrypoint override; ``where`` (file:line) is cited for what is not established;
    ``config`` is the image's inspected config, when a capture shows it."""
    if config is not None:
        entry = [str(a) for a in config.get("Entrypoint") or []]
        cmd = command or [str(a) for a in config.get("Cmd") or []]
        out = Entry([*entry, *cmd], [f"{image}'s ENTRYPOINT {entry or 'none'}, from "
                                     f"`docker inspect --type image {image}`"])
        if entry and _is_vllm_entry(entry) and (starts_program(cmd) or (
                _positional(cmd) and ("vllm.entrypoints.openai.api_server" in entry
                                      or _names_model(entry)))):
            out.refused = (
                f"{where}: the image's ENTRYPOINT `{' '.join(entry)}` gets the command as its "
                f"arguments (`{' '.join([*entry, *cmd[:2]])} …`), which vLLM's argument parser "
                "refuses (unrecognized arguments): the container exits at start")
        return out
    said = (f"{image}'s ENTRYPOINT is not shown here (no `docker inspect` of the image or of a "
            "container)")
    if VLLM_IMAGE.search(image):
        if starts_program(command):
            return Entry(command, [], [
                f"{where}: `{' '.join(command[:2])} …` is passed as arguments to the image's "
                f"ENTRYPOINT, {_VLLM_ENTRYPOINTS}, and vLLM refuses it after either; it runs as "
                f"written only on an image without that ENTRYPOINT. {said}: whether it starts "
                "the engine is not established"])
        if _positional(command):  # `vllm serve`'s model tag; api_server has no positional
            return Entry(["vllm", "serve", *command], [], [
                f"{where}: `{command[0]}` first is `vllm serve`'s positional model; after the "
                "earlier ENTRYPOINT (`python3 -m vllm.entrypoints.openai.api_server`, whose "
                f"parser takes no positional argument) vLLM refuses it. {said}: which one runs, "
                "and so whether the engine starts, is not established (read as `vllm serve`)"])
        return Entry(["vllm", "serve", *command], [
            f"{image}'s ENTRYPOINT is {_VLLM_ENTRYPOINTS}, not shown which: both run vLLM's "
            "OpenAI server with these arguments (read as `vllm serve`)"])
    if command and starts_program(command):
        return Entry(command, [], [
            f"{where}: `{' '.join(command[:2])} …` is the whole command line only if {image} "
            f"sets no ENTRYPOINT (else it is that ENTRYPOINT's arguments). {said}: whether it "
            "starts the engine is not established"])
    if command and command[0].startswith("-"):  # flags are no program: some ENTRYPOINT's
        return Entry(command, [f"{said}: these are its arguments, so what it runs is not known"])
    return Entry(command, [f"{said}: " + ("the command is read as the whole command line"
                                          if command else "what it runs is not known")])


def _positional(command: list[str]) -> bool:
    return bool(command) and not command[0].startswith("-")


def _names_model(entry: list[str]) -> bool:
    """``vllm serve MODEL …``: its one positional is taken, a second is refused. Only the word
    right after ``serve`` is surely the model (a later one may be a flag's value)."""
    names = [e.rsplit("/", 1)[-1] for e in entry]
    return any(names[i:i + 2] == ["vllm", "serve"] and _positional(names[i + 2:i + 3])
               for i in range(len(names)))


def _is_vllm_entry(entry: list[str]) -> bool:
    # flags after `vllm serve` (`--port 8000`) leave it the parser the command meets
    names = [e.rsplit("/", 1)[-1] for e in entry]
    return any(names[i:i + 2] == ["vllm", "serve"] for i in range(len(names))) \
        or "vllm.entrypoints.openai.api_server" in names
