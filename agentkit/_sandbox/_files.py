"""File tools: read_file, list_dir, glob, grep — all confined by ``_paths``."""

from __future__ import annotations

import time
from fnmatch import fnmatchcase
from typing import Annotated, Any

import re2
from pydantic import Field

from .._types import Evidence
from ._paths import PathRefused, list_entries, normalize, read_bytes, read_bytes_stat
from ._redact import redact_file
from ._redact._content import credential_refusal
from ._redact._decode import encoding_of, to_text
from ._tool import ToolContext, ToolError, ToolOutput, tool
from ._withheld import linked_notice

_MAX_LINES = 2000
_MAX_GLOB = 500
_MAX_FILES = 5000  # files one grep searches (a unit directory of a big host holds hundreds)
_MAX_WALK = 20_000
_BINARY_SNIFF = 8192
GREP_BYTES = 32 << 20
GREP_SECONDS = 10.0


def decode_text(data: bytes) -> tuple[str, bool]:
    """(text, is_binary): decoded before it is redacted (UTF-16/32 with or without a mark,
    NULs and escapes taken out: see _redact/_decode.py); NUL bytes in the head of what is
    not such a text mean binary."""
    if b"\0" in data[:_BINARY_SNIFF] and encoding_of(data) == "utf-8":
        return "", True
    return to_text(data), False


def read_text(ctx: ToolContext, path: str) -> tuple[str, str, bool]:
    """(redacted text, canonical path, truncated) of a text file, or a ToolError."""
    return read_text_links(ctx, path)[:3]


def read_text_links(ctx: ToolContext, path: str) -> tuple[str, str, bool, int]:
    """:func:`read_text` and the file's number of hard links (more than one: redacted
    strictly, and the result says so)."""
    try:
        data, st, host_path = read_bytes_stat(ctx.host.root, path, ctx.host.read_limit)
    except PathRefused as exc:
        raise ToolError(str(exc)) from None
    why = credential_refusal(host_path, data)
    if why:
        raise ToolError(why)
    text, binary = decode_text(data)
    if binary:
        raise ToolError(f"{host_path} is a binary file ({st.st_size} bytes); it has no text to "
                        "read")
    return (redact_file(host_path, text, st.st_nlink > 1), host_path, st.st_size > len(data),
            st.st_nlink)


@tool
def read_file(
    ctx: ToolContext,
    path: Annotated[str, Field(description="Absolute host path, e.g. /etc/nccl.conf")],
    start: Annotated[int, Field(ge=1, description="First line, 1-based")] = 1,
    end: Annotated[int | None, Field(ge=1, description="Last line (inclusive)")] = None,
) -> ToolOutput:
    """Read lines of a text file, numbered. Binary files and credential files are refused."""
    text, host_path, truncated, links = read_text_links(ctx, path)
    lines = text.splitlines()
    last = min(end or len(lines), len(lines), start + _MAX_LINES - 1)
    if start > max(len(lines), 1):
        raise ToolError(f"{host_path} has {len(lines)} lines; start={start} is past the end")
    chosen = lines[start - 1 : last]
    numbered = "\n".join(f"{i}: {line}" for i, line in enumerate(chosen, start))
    cut = truncated or last < (end or len(lines))
    locator = f"{host_path}:{start}-{last}" if last > start else f"{host_path}:{start}"
    ev = ctx.evidence("file", locator, "\n".join(chosen), "\n".join(chosen))
    data: dict[str, Any] = {
        "path": host_path,
        "start": start,
        "end": last,
        "total_lines": len(lines),
        "truncated": cut,
        "text": numbered + ("\n[… truncated: read further with start=…]" if cut else ""),
        "evidence_id": ev.id,
    }
    return ToolOutput(data=data, evidence=[ev],
                      withheld=[linked_notice(host_path, links)] if links > 1 else [])


@tool
def list_dir(
    ctx: ToolContext,
    path: Annotated[str, Field(description="Absolute host directory path")],
) -> ToolOutput:
    """List a directory's entries with their types (file, dir, link, other)."""
    try:
        entries = list_entries(ctx.host.root, path)
    except PathRefused as exc:
        raise ToolError(str(exc)) from None
    host_path = normalize(path)
    listing = "\n".join(f"{kind}\t{name}" for name, kind in entries)
    # an empty excerpt would show nothing: the emptiness is the fact, so it says so
    ev = ctx.evidence("listing", f"{host_path}/", listing or "(empty directory)", listing)
    return ToolOutput(
        data={"path": host_path, "entries": [{"name": n, "type": k} for n, k in entries],
              "evidence_id": ev.id},
        evidence=[ev],
    )


def glob_paths(ctx: ToolContext, pattern: str, limit: int = _MAX_GLOB) -> tuple[list[str], bool]:
    """Host paths matching a glob (``*``, ``?``, ``[..]`` per component, ``**`` for any depth)."""
    try:
        parts = [p for p in normalize(pattern).split("/") if p]
    except PathRefused as exc:  # an empty pattern, a NUL byte: the caller's mistake, said so
        raise ToolError(f"refused: {exc}") from None
    found: list[str] = []
    visited = 0

    def walk(prefix: str, rest: list[str]) -> None:
        nonlocal visited
        if len(found) >= limit or visited > _MAX_WALK:
            return
        if not rest:
            found.append(prefix or "/")
            return
        head, tail = rest[0], rest[1:]
        if not any(c in head for c in "*?["):
            # A literal component: the next listing (or the final check) proves it exists
            # and is allowed; listing it here would refuse the parents of an allowed subtree
            if (tail and any(c in "".join(tail) for c in "*?[")) or \
                    _exists(ctx, f"{prefix}/{head}", tail):
                walk(f"{prefix}/{head}", tail)
            return
        try:
            entries = list_entries(ctx.host.root, prefix or "/")
        except PathRefused:
            return
        visited += 1
        if head == "**":
            walk(prefix, tail)
            for name, kind in entries:
                if kind == "dir":
                    walk(f"{prefix}/{name}", rest)
                elif not tail and kind == "file" and len(found) < limit:
                    found.append(f"{prefix}/{name}")
            return
        for name, kind in entries:
            if fnmatchcase(name, head) and (tail == [] or kind in ("dir", "link")):
                walk(f"{prefix}/{name}", tail)

    walk("", parts)
    unique = sorted(set(found))
    return unique, len(unique) >= limit or visited > _MAX_WALK


def _exists(ctx: ToolContext, host_path: str, rest: list[str]) -> bool:
    try:
        if rest:
            list_entries(ctx.host.root, host_path)
        else:
            read_bytes(ctx.host.root, host_path, 0)
        return True
    except PathRefused:
        if rest:
            return False
        try:  # a directory as the last component
            list_entries(ctx.host.root, host_path)
            return True
        except PathRefused:
            return False


@tool
def glob(
    ctx: ToolContext,
    pattern: Annotated[str, Field(description="Host glob, e.g. /etc/systemd/system/*.service")],
    max_results: Annotated[int, Field(ge=1, le=_MAX_FILES)] = _MAX_GLOB,
) -> ToolOutput:
    """Find host paths matching a glob pattern (``**`` matches any depth)."""
    paths, capped = glob_paths(ctx, pattern, max_results)
    listing = "\n".join(paths)
    ev = ctx.evidence("listing", f"glob {normalize(pattern)}", listing or "(no path matches)",
                      listing)
    return ToolOutput(
        data={"pattern": pattern, "paths": paths, "capped": capped, "evidence_id": ev.id},
        evidence=[ev],
    )


@tool
def grep(
    ctx: ToolContext,
    pattern: Annotated[str, Field(description="Python regular expression")],
    path: Annotated[str, Field(description="A file, a directory, or a glob of files")],
    max_matches: Annotated[int, Field(ge=1, le=1000)] = 100,
    ignore_case: bool = False,
) -> ToolOutput:
    """Search files for a regular expression; each match is its own evidence (file:line)."""
    regex = compile_linear(pattern, ignore_case)
    files, files_capped = _grep_targets(ctx, path)
    matches: list[dict[str, Any]] = []
    evidence: list[Evidence] = []
    budget = _Budget()
    linked: list[str] = []  # a notice per file with other hard links (redacted strictly)
    for n, host_path in enumerate(files):
        if budget.spent():
            return ToolOutput(
                data={"matches": matches, "capped": True, "files_searched": n,
                      "files_capped": True, "stopped": budget.why(n, len(files))},
                evidence=evidence, withheld=linked)
        try:
            text, _, _, links = read_text_links(ctx, host_path)
        except ToolError:
            continue
        if links > 1:
            linked.append(linked_notice(host_path, links))
        budget.read += len(text)
        for lineno, line in enumerate(text.splitlines(), 1):
            if regex.search(line):
                ev = ctx.evidence("file", f"{host_path}:{lineno}", line, line)
                evidence.append(ev)
                matches.append({"path": host_path, "line": lineno, "text": line[:500],
                                "evidence_id": ev.id})
                if len(matches) >= max_matches:
                    return ToolOutput(
                        data={"matches": matches, "capped": True, "files_searched": len(files),
                              "files_capped": files_capped},
                        evidence=evidence, withheld=linked)
    return ToolOutput(
        data={"matches": matches, "capped": False, "files_searched": len(files),
              "files_capped": files_capped},
        evidence=evidence, withheld=linked,
    )


class _Budget:
    """What one grep may read and how long it may take: a tree of big files (or ``/``) read
    and redacted whole took a minute (issue 28); it stops and says where."""

    def __init__(self) -> None:
        self.read = 0
        self.start = time.monotonic()

    def spent(self) -> bool:
        return self.read > GREP_BYTES or time.monotonic() - self.start > GREP_SECONDS

    def why(self, n: int, total: int) -> str:
        return (f"budget spent ({self.read >> 20} MiB read, {time.monotonic() - self.start:.0f}"
                f" s; limits {GREP_BYTES >> 20} MiB, {GREP_SECONDS:g} s) after {n} of {total} "
                "files: give a narrower path or glob")


def compile_linear(pattern: str, ignore_case: bool = False) -> Any:
    """``pattern`` compiled by RE2, whose matching time is linear in the text: a pattern from
    a model (``(a+)+$``) runs in this process, on every subagent's event loop thread, where
    a backtracking engine could stall them all beyond any deadline."""
    options = re2.Options()
    options.log_errors = False  # the error is the ToolError below, not a line on stderr
    options.case_sensitive = not ignore_case
    options.max_mem = 32 << 20
    try:
        return re2.compile(pattern, options=options)
    except re2.error as exc:
        reason = exc.args[0].decode() if exc.args and isinstance(exc.args[0], bytes) else exc
        raise ToolError(f"invalid regular expression {pattern!r}: {reason} (the grep tool uses "
                        "RE2: no backreferences or lookaround; rewrite without them)") from None


def _grep_targets(ctx: ToolContext, path: str) -> tuple[list[str], bool]:
    """The files a grep searches, and whether there were more than it searches."""
    if any(c in path for c in "*?["):
        return glob_paths(ctx, path, _MAX_FILES)
    try:
        list_entries(ctx.host.root, path)
    except PathRefused:
        try:
            return [normalize(path)], False
        except PathRefused as exc:
            raise ToolError(f"refused: {exc}") from None
    found, capped = glob_paths(ctx, normalize(path).rstrip("/") + "/**", _MAX_FILES)
    return [p for p in found if _is_file(ctx, p)], capped


def _is_file(ctx: ToolContext, host_path: str) -> bool:
    try:
        read_bytes(ctx.host.root, host_path, 0)
        return True
    except PathRefused:
        return False
