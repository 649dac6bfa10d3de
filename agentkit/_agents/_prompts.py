"""Prompt templates (jinja2, ``prompts/*.j2``), rendered with StrictUndefined so a missing
variable is an error, not an empty string in front of a model."""

from __future__ import annotations

import unicodedata
from functools import lru_cache
from typing import Any

import jinja2

from .._resources import bundled


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(bundled("prompts"))),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=False,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["untrusted"] = untrusted
    return env


def render(name: str, **context: Any) -> str:
    return environment().get_template(name).render(**context).strip()


# Chat-template control tokens that a server might tokenize as *special* tokens if they appear
# in message text (ChatML, Llama, Mistral): in data they are broken up with a space so they
# stay text (a space, not a backslash, keeps JSON in tool output valid).
_CONTROL = [("<|", "< |"), ("|>", "| >"), ("[INST]", "[ INST]"), ("[/INST]", "[ /INST]"),
            ("<<SYS>>", "<< SYS>>"), ("</s>", "< /s>"), ("<s>", "< s>")]


@lru_cache(maxsize=1)
def _visible() -> dict[int, str]:
    """Every Unicode format character (zero-width, joiners, bidi overrides, tags …) →
    ``<U+XXXX>``. All of them live in planes 0, 1 and 14; built on first non-ASCII text."""
    planes = (*range(0x20000), *range(0xE0000, 0xE0080))
    return {cp: f"<U+{cp:04X}>" for cp in planes if unicodedata.category(chr(cp)) == "Cf"}


def neutralize(text: str) -> str:
    """Make hidden or control text visible: format characters (zero-width, bidi overrides)
    become ``<U+200B>``, chat-template tokens are broken up, our own closing tag is escaped."""
    out = text if text.isascii() else text.translate(_visible())
    for token, safe in _CONTROL:
        if token in out:
            out = out.replace(token, safe)
    return out.replace("</untrusted", "< /untrusted")


def untrusted(text: str, source: str = "tool") -> str:
    """Wrap tool output so the model sees it as data: nothing inside can close the wrapper,
    hide from a reader, or pass for a chat-template control token."""
    return f'<untrusted source="{source}">\n{neutralize(str(text))}\n</untrusted>'
