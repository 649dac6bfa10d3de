"""Rendering an :class:`Answer` for people: Markdown with numbered citations."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import jinja2

from ._types import Answer


@lru_cache(maxsize=1)
def _template() -> jinja2.Template:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(Path(__file__).parent / "_templates")),
        undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
        autoescape=False)
    return env.get_template("answer.md.j2")


def to_markdown(answer: Answer) -> str:
    """The answer as Markdown; ``[n]`` marks point into the Evidence list at the end.

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
    num = {c.id: n for n, c in enumerate(answer.citations, 1)}
    text = _template().render(a=answer, num=num)
    return "\n".join(line.rstrip() for line in text.splitlines()).strip() + "\n"
