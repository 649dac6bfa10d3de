"""Programs that print file contents read a redacted copy, never the file.

Redacting a program's *output* loses to a model that chooses the arguments: ``tail -c +9``
cuts ``API_KEY=`` off a line, ``grep -o '[A-Za-z0-9]{16,}'`` keeps only the value,
``sed -n 2,3p`` prints a private key's body without its ``BEGIN`` line. Each leaves a bare
string no rule can recognise. So the file is redacted whole, where the key name, the prefix
and the PEM header are all still beside the secret, and the program is given that copy:
whatever it slices, the secret is not in what it reads. Output is still redacted after.

Programs that print only metadata (``wc``, ``ls``, ``stat``, hashes) read the real file.
A file that is not a regular file (a FIFO, a device) is refused, as is anything the path
guard refuses.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from .. import _regex as re  # re, its compiled patterns kept on disk (_regex.py)
from ._paths import PathRefused, Root, opened
from ._redact import redact_file
from ._redact._content import credential_refusal
from ._redact._decode import encoding_of, to_text
from ._redact._formats import KEY_BEGIN, KEY_END
from ._tool import ToolError

CONTENT_PRINTERS = frozenset({"cat", "head", "tail", "grep", "sed", "sort", "uniq"})
# Redaction runs at 1-3 MB/s (a crafted file at the slow end): a whole copy stops at 8 MiB.
# head and tail print from one end, so 1 MiB from that end (four times the output limit)
# serves them whatever the size.
WHOLE_LIMIT = 8 << 20
WINDOW = 1 << 20
# All the copies of one command together: what one whole copy may cost. `grep -r` over a
# tree, or one file named 32 ways (`f`, `./f`, `././f` …), is redacted at most this much.
COMMAND_BUDGET = WHOLE_LIMIT
_KEY_END, _KEY_BEGIN = re.compile(KEY_END), re.compile(KEY_BEGIN)
# Bytes that hide text from the rules until it is decoded: NULs (UTF-16/32 text), escapes,
# a carriage return that overprints
_HIDDEN = re.compile(rb"[\x00\x1b\x9b]|\r(?!\n)")
# A Kubernetes manifest, and in a window of one, the first line at the top level and the
# values of the indented lines before it (`  key: value`, `    block line`, `  - item`).
_MANIFEST = re.compile(r"(?m)^[\"']?(?:apiVersion|kind)[\"']?[ \t]*:")
_TOP_LEVEL = re.compile(r"(?m)^(?=[^\s#])")
_ORPHAN_VALUE = re.compile(
    r"(?m)^([ \t]+(?:-[ \t]+)?(?:(?:\"[^\"\n]*\"|'[^'\n]*'|[^\s:#\"'][^:\n]*?)[ \t]*:[ \t]+)?)"
    r"(?!#)\S[^\n]*")


@dataclass(frozen=True)
class Copy:
    host_path: str  # the file the program would read, as the host names it


def window_of(argv: list[str]) -> str:
    """Which part of each file the program reads: 'head', 'tail' or 'whole'."""
    program, args = argv[0], argv[1:]
    if program == "head":
        return "head"
    if program == "tail":
        # tail -n +K / -c +K / --lines=+K read from a line near the start to the end
        from_start = any(a.startswith("+") or a.startswith(("-n+", "-c+", "--lines=+",
                                                             "--bytes=+")) for a in args)
        return "whole" if from_start else "tail"
    return "whole"


def redacted_text(data: bytes, part: str, size: int, host_path: str,
                  head: bytes = b"", linked: bool = False) -> bytes:
    """``data`` (the whole file, or the window ``part`` of it) redacted as one text. ``head``
    is the file's start, for a tail window: a manifest says what it is only at its top.
    ``linked``: the file has other hard links (see ``redact_file``)."""
    if encoding_of(data) != "utf-8" or _HIDDEN.search(data):
        # UTF-16/32 (with a mark or without), NULs between characters, escapes, carriage
        # returns: the program is given the decoded text, redacted, never the raw bytes
        data = to_text(data).encode("utf-8")
        head = to_text(head).encode("utf-8")
    text = data.decode("utf-8", "surrogateescape")
    if part == "tail" and size > len(data):
        return _tail_window(text, head.decode("utf-8", "replace"), host_path, linked).encode(
            "utf-8", "surrogateescape")
    if part == "head" and size > len(data):
        text = text[: text.rfind("\n") + 1] if "\n" in text else text
    return redact_file(host_path, text, linked).encode("utf-8", "surrogateescape")


def _tail_window(text: str, head: str, host_path: str, linked: bool) -> str:
    """A window that starts mid-file: what it begins with has lost its context. The cut line
    is dropped; a key body whose BEGIN fell before the window (its END comes first) is
    redacted up to that END; indented lines before the first top-level line, in a manifest,
    may be a Secret's data whose header fell before the window, and are redacted."""
    text = text[text.find("\n") + 1:]
    end, begin = _KEY_END.search(text), _KEY_BEGIN.search(text)
    lead = ""
    if end and (begin is None or end.start() < begin.start()):
        lead = "[REDACTED:private-key]" + "\n" * text[:end.end()].count("\n")
        text = text[end.end():]
    elif _MANIFEST.search(head) or _MANIFEST.search(text):
        top = _TOP_LEVEL.search(text)
        cut = top.start() if top else len(text)
        lead = _ORPHAN_VALUE.sub(r"\1[REDACTED:k8s-secret]", text[:cut])
        text = text[cut:]
    return lead + redact_file(host_path, text, linked)


def read_part(fd: int, size: int, name: str, part: str) -> bytes:
    """The bytes of the open regular file ``fd`` that the program will read."""
    if part == "whole" and size > WHOLE_LIMIT:
        raise ToolError(
            f"refused: {name} is {size >> 20} MiB; programs that print file contents read a "
            f"redacted copy, which stops at {WHOLE_LIMIT >> 20} MiB. Use head or tail (they "
            "read 1 MiB from the end they print) or a smaller file")
    if part == "tail" and size > WINDOW:
        os.lseek(fd, size - WINDOW, os.SEEK_SET)
    limit = WINDOW if part in ("head", "tail") else WHOLE_LIMIT
    chunks, left = [], limit
    while left > 0 and (chunk := os.read(fd, min(left, 1 << 20))):
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _not_a_credential(host_path: str, start: bytes) -> None:
    why = credential_refusal(host_path, start)
    if why:
        raise ToolError(f"refused: {why}")


def _check_budget(total: int) -> None:
    if total > COMMAND_BUDGET:
        raise ToolError(
            f"refused: the files of this command hold more than {COMMAND_BUDGET >> 20} MiB; "
            "programs that print file contents read redacted copies, at most that much per "
            "command. Name fewer or smaller files, or a narrower directory")


def make_copies(argv: list[str], operands: dict[str, Copy], scratch: str,
                root: Root, linked: dict[str, int] | None = None) -> dict[str, str]:
    """For each operand (argv text → file) the path the program reads instead: a redacted
    copy in ``scratch``. The file is opened through the path guard's resolver (links
    followed inside the root only, each component without following a link swapped in, the
    policy applied to what is opened), so what is copied is what the policy allowed, even
    while a writer on the host swaps the path. Always a copy, even when redaction changed
    nothing: the program reads the bytes that were redacted. ``linked`` gets the host path
    and link count of each file with other hard links (redacted strictly)."""
    part = window_of(argv)
    each = WINDOW if part in ("head", "tail") else WHOLE_LIMIT
    # every file is read, the budget checked on its size as it is opened, before any copy
    # is redacted: a command over the budget costs reads, not redaction
    parts: list[tuple[str, str, bytes, int, bytes, int]] = []
    spent = 0
    for text, copy in sorted(operands.items()):
        try:
            with opened(root, copy.host_path) as f:
                spent += min(f.st.st_size, each)
                _check_budget(spent)
                data = read_part(f.fd, f.st.st_size, copy.host_path, part)
                head = os.pread(f.fd, 64 << 10, 0) if part == "tail" else b""
                _not_a_credential(copy.host_path, head or data)
                parts.append((text, copy.host_path, data, f.st.st_size, head, f.st.st_nlink))
        except PathRefused as exc:
            raise ToolError(f"refused: {exc}") from None
    given: dict[str, str] = {}
    for n, (text, host_path, data, size, head, links) in enumerate(parts):
        clean = redacted_text(data, part, size, host_path, head, links > 1)
        if links > 1 and linked is not None:
            linked[host_path] = links
        path = os.path.join(scratch, f"{n}-{os.path.basename(host_path)[:100]}")
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        with os.fdopen(fd, "wb") as out:
            out.write(clean)
        given[text] = path
    return given
