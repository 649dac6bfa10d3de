"""What a task's code sees: the tools through its sandbox, the facts established so far, the
evidence it cites, values built once per run, and the alerts any task must lead with.

Catalog recipes and their functions run in it, and so does the host model they build: it
sits here, in the sandbox layer below both, so the host model need not import the catalog.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar, cast

import anyio

from .._types import Evidence, EvidenceKind, Fact, Finding, TaskSpec
from ._sandbox import Sandbox
from ._tool import clip

T = TypeVar("T")


# A line that opens a value written on the lines below it: a key followed by nothing, an
# opening bracket or a YAML block indicator (`args:`, `"Args": [`, `command: >-`)
_OPENS = re.compile(r"""^(?:-\s+)?["']?[^\s"':=]+["']?\s*"""
                    r"""(?::\s*(?:[\[{]|[|>][-+]?\d*)?|=\s*[\[{(])\s*$""")


def node_end(lines: list[str], n: int) -> int:
    """The last line of what starts at line ``n``: ``n`` itself when the line holds its whole
    value; else the lines below it that are indented deeper (and, under a YAML ``key:``, the
    ``- `` items at its own indentation), so that a citation shows the value, not the line
    that only opens it. A closing bracket at the key's indentation is left out."""
    if not 0 < n <= len(lines):
        return n
    head = lines[n - 1]
    indent, text = len(head) - len(head.lstrip()), head.strip()
    opens = bool(_OPENS.match(text)) or text in ("{", "[")  # a JSON list's object too
    if not opens and not text.startswith("- "):
        return n
    last = n
    for m in range(n + 1, len(lines) + 1):
        line = lines[m - 1]
        if not line.strip():
            continue
        deeper = len(line) - len(line.lstrip())
        if deeper > indent or (opens and text.endswith(":") and deeper == indent
                               and line.lstrip().startswith("- ")):
            last = m
            continue
        break
    return last


class StepFailed(Exception):
    """A step could not establish what it needed; the message says what and why."""


class _Shared:
    def __init__(self) -> None:
        self.done = anyio.Event()
        self.value: Any = None
        self.error = ""
        self.evidence: list[Evidence] = []


class RecipeContext:
    """What a recipe function sees: tools (through the sandbox), facts so far, citations."""

    def __init__(self, box: Sandbox, spec: TaskSpec) -> None:
        self.box = box
        self.spec = spec
        self.facts: dict[str, Fact] = {}
        self.vars: dict[str, Any] = {}
        self.errors: list[str] = []
        self.alerts: list[Finding] = []
        self.step = 0
        self._index = 0

    async def tool(self, name: str, optional: bool = False, **args: Any) -> dict[str, Any] | None:
        """Call a sandbox tool; a failure raises :class:`StepFailed` unless ``optional``."""
        self._index += 1
        result = await self.box.call(name, args, step=self.step, index=self._index)
        if result.ok:
            return result.data
        if optional:
            return None
        raise StepFailed(f"{name}({_short(args)}) failed: {result.error}")

    async def tools(self, calls: list[tuple[str, dict[str, Any]]]
                    ) -> list[dict[str, Any] | None]:
        """Independent optional tool calls at once (None for one that fails). Indexes are
        given in list order before any runs, so a replay finds each one where it was."""
        results: list[dict[str, Any] | None] = [None] * len(calls)
        first = self._index + 1
        self._index += len(calls)

        async def one(i: int, name: str, args: dict[str, Any]) -> None:
            got = await self.box.call(name, args, step=self.step, index=first + i)
            results[i] = got.data if got.ok else None

        async with anyio.create_task_group() as tg:
            for i, (name, args) in enumerate(calls):
                tg.start_soon(one, i, name, args)
        return results

    async def read_lines(self, path: str, optional: bool = False) -> list[str] | None:
        """A file's lines through ``read_file`` (its line numbers taken off); None when an
        optional read fails."""
        data = await self.tool("read_file", optional=optional, path=path)
        if data is None:
            return None
        return [ln.split(": ", 1)[1] if ": " in ln else "" for ln in data["text"].split("\n")
                if re.match(r"^\d+:( |$)", ln)]

    def cite_output_line(self, out: dict[str, Any], n: int) -> str:
        """Line ``n`` of a command's output (a ``run_command`` result) as its own evidence;
        a line that opens a value written below it (``"Args": [``) with that value's lines."""
        lines = out["stdout"].splitlines()
        last = node_end(lines, n)
        text = "\n".join(lines[n - 1 : last]) if 0 < n <= len(lines) else ""
        where = f"line {n}" if last == n else f"line {n}-{last}"
        return self.cite("command", f"$ {' '.join(out['argv'])} [exit {out['exit_code']}] "
                         f"{where}", "\n".join(ln.strip() for ln in text.split("\n")), text)

    def cite_file_node(self, path: str, lines: list[str], n: int) -> str:
        """Line ``n`` of a file as evidence, with the lines of the value it opens (a YAML
        key whose list is below it, a list item whose mapping goes on below it)."""
        last = node_end(lines, n)
        text = "\n".join(lines[n - 1 : last]) if 0 < n <= len(lines) else ""
        where = f"{path}:{n}" if last <= n else f"{path}:{n}-{last}"
        return self.cite("file", where, "\n".join(ln.strip() for ln in text.split("\n")),
                         text)

    def cite(self, kind: EvidenceKind, locator: str, excerpt: str, content: str) -> str:
        """Register evidence derived from what a tool returned (e.g. one line of a file)."""
        # clipped as a tool's own excerpts are, with "…": a silent cut reads as the whole line
        ev = Evidence.of(kind, locator, clip(excerpt), content)
        self.box.add_evidence(ev)
        return ev.id

    def fact(self, name: str, value: Any, evidence: list[str] | None = None) -> Fact:
        f = Fact(value=value, evidence=sorted(set(evidence or [])))
        self.facts[name] = f
        return f

    async def shared(self, key: str, build: Callable[[RecipeContext], Awaitable[T]]) -> T:
        """``build`` once per run, in a sandbox of its own named ``key`` (so a replay answers
        its calls from the same place whichever task asked first); every task that asks gets
        the value and the evidence behind it."""
        memo = self.box.shared
        entry = memo.get(key)
        if entry is None:
            entry = memo[key] = _Shared()
            box = self.box.sibling(key)
            try:
                entry.value = await build(RecipeContext(box, self.spec))
                entry.evidence = box.evidence_list()
            except BaseException as exc:  # the waiters must not wait forever
                entry.error = f"{type(exc).__name__}: {exc}"
                raise
            finally:
                entry.done.set()
        else:
            await entry.done.wait()
        if entry.error:
            raise StepFailed(f"{key} could not be built: {entry.error}")
        for ev in entry.evidence:
            self.box.add_evidence(ev)
        return cast(T, entry.value)

    def alert(self, claim: str, evidence: list[str]) -> None:
        """A finding any task must lead with, whatever its template says (the server is
        down, the host does not decide which unit serves)."""
        if all(a.claim != claim for a in self.alerts):
            self.alerts.append(Finding(claim=claim, evidence=sorted(set(evidence)),
                                       headline=True))

    def need(self, name: str, producer: str) -> Fact:
        if name not in self.facts:
            raise StepFailed(f"needs fact {name!r}: add a `call: {producer}` step before this one")
        return self.facts[name]

    def scope(self) -> dict[str, Any]:
        return {"facts": self.facts, "vars": self.vars, "inputs": self.spec.inputs}


def _short(args: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in args.items())[:200]
