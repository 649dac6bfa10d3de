"""Prompt templates (jinja2, ``prompts/*.j2``), rendered with StrictUndefined so a missing
variable is an error, not an empty string in front of a model."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import jinja2

from ._resources import bundled


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


def untrusted(text: str, source: str = "tool") -> str:
    """Wrap tool output so the model sees it as data: the closing tag cannot be forged."""
    body = str(text).replace("</untrusted", "<\\/untrusted")
    return f'<untrusted source="{source}">\n{body}\n</untrusted>'
