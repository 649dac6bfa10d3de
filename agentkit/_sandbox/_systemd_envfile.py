"""Environment files as systemd reads them (``EnvironmentFile=``), and shell-style dotenv
files (``parse_config`` format dotenv)."""

from __future__ import annotations

from dataclasses import dataclass

from ._systemd_syntax import env_name_valid, parse_env_file_text


class UnitSyntaxError(ValueError):
    """A line systemd (or a dotenv reader) refuses, with its file and line."""

    def __init__(self, source: str, line: int, msg: str) -> None:
        super().__init__(f"{source}:{line}: {msg}")
        self.line = line


@dataclass
class EnvVar:
    name: str
    value: str
    source: str
    line: int
    raw: str
    comment: str = ""


def parse_dotenv(text: str, source: str, *, ignored: list[str] | None = None,
                 unresolved: list[str] | None = None, dropped: list[EnvVar] | None = None
                 ) -> list[EnvVar]:
    """NAME=value lines. With ``ignored`` (systemd's EnvironmentFile= reading), the file is
    read as systemd's parse_env_file does (quotes, escapes, continuation lines; a name that is
    not valid, such as ``export NAME``, is dropped and named in ``ignored``); otherwise (a
    shell-style dotenv) ``export`` is dropped."""
    if ignored is not None:
        return _env_file(text, source, ignored, ignored if unresolved is None else unresolved,
                         [] if dropped is None else dropped)
    out: list[EnvVar] = []
    comment: list[str] = []
    lines = text.removeprefix("\ufeff").splitlines()
    n = 0
    while n < len(lines):
        raw = lines[n]
        n += 1
        line = raw.strip()
        if not line:
            comment = []
            continue
        if line.startswith(("#", ";")):
            comment.append(line.lstrip("#; "))
            continue
        if line.startswith("export "):
            line = line[7:].lstrip()
        name, eq, val = line.partition("=")
        # the error names the line and what it lacks, never its text: a line that is not
        # an assignment may be a secret's (the second line of a quoted value; issue 28)
        if not eq:
            raise UnitSyntaxError(source, n, "expected NAME=value, the line has no '='")
        if not name.strip().replace("_", "").isalnum():
            raise UnitSyntaxError(source, n, "expected NAME=value, the text before '=' is "
                                  "not a variable name")
        first = n
        val = val.strip()
        if _opens(val):  # a quoted value going on over lines, as python-dotenv reads it
            val, n = _quoted_lines(raw.partition("=")[2].lstrip(), lines, n, source)
            raw = "\n".join(lines[first - 1:n])
        elif len(val) >= 2 and val[0] == val[-1] and val[0] in "'\"":
            val = val[1:-1]
        out.append(EnvVar(name.strip(), val, source, first, raw, " ".join(comment)))
        comment = []
    return out


def _close(text: str, quote: str) -> int:
    """Where ``quote`` closes in ``text`` (a backslash escapes it), or -1."""
    i = 0
    while (i := text.find(quote, i)) >= 0:
        if (len(text[:i]) - len(text[:i].rstrip("\\"))) % 2 == 0:
            return i
        i += 1
    return -1


def _opens(val: str) -> bool:
    """Whether ``val`` (an assignment's value) opens a quote it does not close."""
    return bool(val) and val[0] in "'\"" and _close(val[1:], val[0]) < 0


def _quoted_lines(val: str, lines: list[str], n: int, source: str) -> tuple[str, int]:
    """The value of a quoted value opened on line ``n`` (``val``: from its quote on), read on
    to its closing quote, and the number of the line it closes on."""
    quote, parts, first = val[0], [val[1:]], n
    while n < len(lines):
        line = lines[n]
        n += 1
        end = _close(line, quote)
        if end >= 0:
            return "\n".join([*parts, line[:end]]), n
        parts.append(line)
    kind = "single" if quote == "'" else "double"
    raise UnitSyntaxError(source, first, f"the {kind}-quoted value opened here is never closed")


def _env_file(text: str, source: str, ignored: list[str], unresolved: list[str],
              dropped: list[EnvVar]) -> list[EnvVar]:
    """systemd's reading; an assignment it drops (``export NAME=…``: not a valid name) goes to
    ``dropped`` under the name it was meant to set, with its line."""
    lines = text.splitlines()
    got, version_dependent = parse_env_file_text(text)
    for n in version_dependent:
        unresolved.append(f"{source}:{n}: follows a comment ending in a backslash: systemd before "
                       "254 reads it as part of the comment, 254 and later as a line of its own "
                       "(not established which)")
    out = []
    for e in got:
        raw = lines[e.line - 1] if 0 < e.line <= len(lines) else ""
        if not e.valid:
            # named by line, not quoted: a line with no valid name may be a secret's part
            # (issue 28); ``export NAME``, the usual case, is said as such
            what = "'export NAME' is" if e.name.startswith("export") else "the name is"
            ignored.append(f"{source}:{e.line}: systemd ignores this line ({what} "
                           "not a valid variable name)")
            meant = e.name.removeprefix("export").strip(" \t")
            if meant != e.name and env_name_valid(meant):
                dropped.append(EnvVar(meant, e.value, source, e.line, raw, e.name))
            continue
        out.append(EnvVar(e.name, e.value, source, e.line, raw, _comment_above(lines, e.line)))
    return out


def _comment_above(lines: list[str], line: int) -> str:
    block: list[str] = []
    i = line - 2
    while i >= 0 and lines[i].strip().startswith(("#", ";")):
        block.insert(0, lines[i].strip().lstrip("#; "))
        i -= 1
    return " ".join(block)
