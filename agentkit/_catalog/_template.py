"""Task templates: the declarative files under ``tasks/`` and their schema.

A template says what it investigates, which words in a question call for it, which tools it
may use, its recipe (steps), and the findings it can state. Loading validates every file and
names the file and field of any mistake.
"""

from __future__ import annotations

from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator

# libyaml's loader where PyYAML was built with it: the same safe constructor, a C scanner and
# parser, and the catalog loads 9x faster (34 ms -> 4 ms here), which `agentkit ask` pays on
# every start.
_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class TemplateError(ValueError):
    """A task template that does not load; the message names the file and the field."""


class _Strict(BaseModel):
    # built on first validation: the parts (Step, FindingSpec, ...) are only ever validated
    # inside a TaskTemplate, whose schema holds theirs, so theirs alone are never built
    model_config = ConfigDict(extra="forbid", defer_build=True)


class Triggers(_Strict):
    keywords: list[str] = Field(default_factory=list)
    phrases: list[str] = Field(default_factory=list)


class Step(_Strict):
    """One recipe step: exactly one of ``call`` (a registered function), ``tool`` (a sandbox
    tool with templated ``args``) or ``fact`` (a named value computed by an expression,
    citing the facts or saved tool results named in ``cite``)."""

    call: str | None = None
    tool: str | None = None
    fact: str | None = None
    args: dict[str, Any] = Field(default_factory=dict)
    value: str | None = None
    cite: list[str] = Field(default_factory=list)
    save: str | None = None
    when: str | None = None
    optional: bool = False

    @model_validator(mode="after")
    def _one_kind(self) -> Step:
        kinds = [k for k in ("call", "tool", "fact") if getattr(self, k)]
        if len(kinds) != 1:
            raise ValueError("a step needs exactly one of call, tool or fact")
        if self.fact and not self.value:
            raise ValueError("a fact step needs a value expression")
        return self


class FindingSpec(_Strict):
    """A claim the template can state, when its condition holds, citing facts' evidence."""

    claim: str
    when: str | None = None
    cite: list[str] = Field(default_factory=list)
    headline: bool = False
    # words that, named in the question, make this finding the answer to it: it then leads
    # the task's findings and the bottom line ("Which kernel version?" gets the kernel)
    answers: list[str] = Field(default_factory=list)


class Verdict(_Strict):
    """How the task answers a yes/no question about its subject: ``about`` lists the words
    that name the subject in a question, ``value`` is an expression over the facts that is
    true (the subject holds), false, none (not established) or a label such as
    ``already-on``. The answer's wording (yes/no, "not lost", …) follows the question."""

    about: list[str] = Field(min_length=1)
    value: str


class Compare(_Strict):
    """A fact a person compares across the hosts of a fleet (``compare:``): the fleet folds
    these, one line per differing one, rather than the task's raw structures.

    ``fact`` names the task fact; ``path`` a key inside its value (``verdict`` -> ``answer``);
    ``each`` says the fact is a list of settings (``name``, ``value``, ``where``), each
    compared on its own, a host whose list lacks a name having it unset; ``label`` is how the
    answer names it (default: the fact's name, or each setting's)."""

    fact: str
    path: str | None = None
    each: bool = False
    label: str | None = None


class TaskTemplate(_Strict):
    name: str = Field(pattern=r"^[a-z0-9][a-z0-9-]{0,63}$")
    title: str
    description: str
    triggers: Triggers = Field(default_factory=Triggers)
    companions: list[str] = Field(default_factory=list)
    tools: list[str]
    steps: list[Step] = Field(min_length=1)
    findings: list[FindingSpec] = Field(default_factory=list)
    verdict: Verdict | None = None
    compare: list[Compare] = Field(default_factory=list)
    summary: str = ""
    priority: int = 50
    llm_hints: str = ""
    source: str = ""
