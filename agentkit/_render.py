"""Rendering an :class:`Answer` for people: Markdown with numbered citations.

Text from hosts is not Markdown: ``/etc/systemd/system/*.service`` must print its asterisk,
so every text is escaped except what the claim itself puts in backticks (a command line)."""

from __future__ import annotations

import hashlib
import re
from functools import lru_cache
from pathlib import Path

import jinja2
from jinja2.bccache import Bucket

from ._cachefiles import read, write
from ._types import Answer


class _Bytecode(jinja2.BytecodeCache):
    """Jinja's own bytecode cache (the template's source checksum and the bytecode format are
    checked on load), its entries in the user's cache (``_cachefiles``: only files of the
    user's own that no one else can write): compiling the answer template was 7-8 ms of every
    ``agentkit ask``. The key adds the options the compiled code depends on."""

    def get_bucket(self, environment: jinja2.Environment, name: str, filename: str | None,
                   source: str) -> Bucket:
        options = (environment.trim_blocks, environment.lstrip_blocks,
                   environment.undefined.__name__, environment.autoescape)
        text = f"{jinja2.__version__}\0{options!r}\0{name}\0{filename}"
        key = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
        bucket = Bucket(environment, key, self.get_source_checksum(source))
        self.load_bytecode(bucket)
        return bucket

    def load_bytecode(self, bucket: Bucket) -> None:
        data = read(f"{bucket.key}.jinja")
        if data is not None:
            try:
                bucket.bytecode_from_string(data)
            except Exception:  # a damaged entry: compiled afresh
                bucket.reset()

    def dump_bytecode(self, bucket: Bucket) -> None:
        write(f"{bucket.key}.jinja", bucket.bytecode_to_string())


@lru_cache(maxsize=2)
def _template(escape: bool = True) -> jinja2.Template:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(Path(__file__).parent / "_templates")),
        undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
        autoescape=False, bytecode_cache=_Bytecode())
    # plain text (a pipe, a file) has no Markdown to protect: only controls are made visible
    env.filters["md"] = md_escape if escape else lambda t: visible_controls(str(t))
    return env.get_template("answer.md.j2")


# `_` between letters or digits is no emphasis in CommonMark (hidden_size stays as it is);
# `#` matters only where a line starts.
_SPECIAL = re.compile(r"[\\*\[\]<>|~]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])|^#")


# C0 and C1 controls but newline and tab, DEL, and the bidirectional overrides (which reorder
# what a terminal shows)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def visible_controls(text: str) -> str:
    """Control characters as their escapes: host text must not drive the terminal it is
    printed on (``\\x1b[2J`` clears it, ``\\x1b]8;;`` makes links).

    >>> visible_controls("NCCL_DEBUG=WARN\\x1b[2J")
    'NCCL_DEBUG=WARN\\\\x1b[2J'
    """
    return _CONTROL.sub(lambda m: ascii(m.group(0))[1:-1], text)


_JSON_UNSAFE = re.compile(r"[\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def json_safe(text: str) -> str:
    """JSON text for a terminal: the characters JSON leaves raw that a terminal acts on (C1
    controls, bidi overrides, which reorder what is shown) written as \\u escapes, which
    decode to the same string.

    >>> json_safe('{"path": "a\u202eb"}')
    '{"path": "a\\\\u202eb"}'
    """
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text)


def md_escape(text: str) -> str:
    """Markdown's special characters escaped, outside `code spans` (kept as written);
    control characters shown as escapes, inside them too.

    >>> md_escape("/etc/systemd/system/*.service and `vllm serve *`, hidden_size")
    '/etc/systemd/system/\\\\*.service and `vllm serve *`, hidden_size'
    """
    parts = re.split(r"(`[^`\n]*`)", visible_controls(str(text)))
    return "".join(p if p.startswith("`") and p.endswith("`") and len(p) > 1
                   else _SPECIAL.sub(lambda m: "\\" + m.group(0), p) for p in parts)


def to_markdown(answer: Answer, brief: bool = False, *, escape: bool = True) -> str:
    """The answer as Markdown; ``[n]`` marks point into the Evidence list at the end.
    ``escape=False``: the same layout as plain text, host text as it was written (no
    ``\\[`` for a bracket), for a reader that is not a Markdown renderer.

    >>> from agentkit import Answer, Claim
    >>> print(to_markdown(Answer(question="Q?", mode="catalog", bottom_line=[Claim(text="A.")])))
    # Q?
    <BLANKLINE>
    ## Bottom line
    - A.
    <BLANKLINE>
    ## Evidence
    <BLANKLINE>
    """
    citations = answer.citations
    if brief:  # the bottom line and the table, and only the evidence they cite
        cited = {e for c in answer.bottom_line for e in c.evidence} | {
            e for row in (answer.table.rows if answer.table else []) for cell in row
            for e in cell.evidence}
        citations = [c for c in citations if c.id in cited]
    num = {c.id: n for n, c in enumerate(citations, 1)}
    said = {c.text for c in answer.bottom_line}
    text = _template(escape).render(a=answer, num=num, citations=citations, brief=brief, said=said)
    return "\n".join(line.rstrip() for line in text.splitlines()).strip() + "\n"
