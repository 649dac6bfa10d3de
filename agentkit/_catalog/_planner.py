"""The catalog planner: deterministic matching of a question against the task templates.

A compound question is split into sub-questions; each is scored against every template's
keywords (1 point) and phrases (2 points) after normalizing spellings (``k/v`` → ``kv``,
``all-reduce`` → ``allreduce``). Matching templates become tasks, with their companions, and
every choice is explained. No network, no model.
"""

from __future__ import annotations

import re
from functools import lru_cache

from .._types import Plan, SubQuestion, TaskSpec
from ._template import TaskTemplate

_SPELLINGS = [
    (r"\bk\s*/\s*v\b", "kv"), (r"\ball[\s-]+reduce", "allreduce"),
    (r"\bkv[-_ ]?cache", "kv cache"), (r"\bnvlink", "nvlink"),
    # units and synonyms: an 8-bit float KV cache is fp8 whatever it is called
    (r"\b(?:fp8[\s_-]?)?e[45]m[23]\b|\b8[\s-]?bits?\b|\bfloat8\b|\bfp8[\s_-]?(?:e4m3|e5m2)\b",
     "fp8"),
    (r"\battention[\s-]+cache\b|\bkey[\s/-]*value[\s-]+cache\b", "kv cache"),
    (r"\bkv\b(?![\s_-]*cache)", "kv cache"),
    (r"\bcomms?\b|\bcommunication\b|\bcollectives?\b", "nccl"),
    (r"[_-]", " "),
]


class NoMatchingTask(Exception):
    """The catalog cannot answer the question; the message lists what it can answer."""


@lru_cache(maxsize=4096)
def normalize(text: str) -> str:
    text = text.lower()
    for pattern, repl in _SPELLINGS:
        text = re.sub(pattern, repl, text)
    return " ".join(text.split())


# "…, and what is X?" inside one sentence is a second question: split before the joining word.
_JOINED = re.compile(r"(?:,\s*|\s+)(?:and|but|also|plus|so)\s+(?=(?:what|which|how|why|where|"
                     r"when|who|is|are|does|do|did|would|will|can|could|should)\b)", re.I)


def split_question(question: str) -> list[str]:
    parts = re.split(r"(?<=\?)\s+|(?<=[.;!])\s+(?=[A-Z])", question.strip())
    parts = [q for p in parts for q in _JOINED.split(p)]
    return [p.strip() for p in parts if len(p.strip()) > 2]


_WORD = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")


def has_word(key: str, norm: str) -> bool:
    """``key`` occurs in ``norm`` with no ASCII letter or digit on either side: what
    ``re.search(r"(?<![a-z0-9])KEY(?![a-z0-9])")`` finds, without compiling a regex per keyword
    of every template (that was work growing with the catalog, on every question)."""
    i = norm.find(key)
    while i != -1:
        j = i + len(key)
        if (i == 0 or norm[i - 1] not in _WORD) and (j == len(norm) or norm[j] not in _WORD):
            return True
        i = norm.find(key, i + 1)
    return False


def score(text: str, tpl: TaskTemplate) -> tuple[int, list[str]]:
    norm = normalize(text)
    hits: dict[str, str] = {}
    points = 0
    for kw in tpl.triggers.keywords:
        key = normalize(kw)
        if key not in hits and has_word(key, norm):
            hits[key] = kw
            points += 1
    for phrase in tpl.triggers.phrases:
        key = normalize(phrase)
        if key not in hits and key in norm:
            hits[key] = phrase
            points += 2
    return points, list(hits.values())


class CatalogPlanner:
    """Plans from the catalog alone.

    >>> from agentkit._catalog._load import load_catalog
    >>> planner = CatalogPlanner(load_catalog())
    """

    def __init__(self, catalog: dict[str, TaskTemplate], max_tasks: int = 24) -> None:
        self.catalog = catalog
        self.max_tasks = max_tasks

    async def plan(self, question: str) -> Plan:
        subs = split_question(question)
        chosen: dict[str, str] = {}
        subquestions: list[SubQuestion] = []
        notes: list[str] = []
        for n, sub in enumerate(subs, 1):
            matched = []
            for tpl in sorted(self.catalog.values(), key=lambda t: t.priority):
                points, hits = score(sub, tpl)
                if points:
                    matched.append(tpl.name)
                    chosen.setdefault(tpl.name, f"matched {', '.join(repr(h) for h in hits)} "
                                                f"in question {n}")
            if not matched:
                notes.append(f"question {n} ({sub!r}) matched no catalog task; it is not "
                             "answered in catalog mode")
            subquestions.append(SubQuestion(text=sub, tasks=matched))
        if not chosen:
            raise NoMatchingTask(self._cannot(question))
        for name in list(chosen):
            for comp in self.catalog[name].companions:
                chosen.setdefault(comp, f"supports {name}")
        order = sorted(chosen, key=lambda name: self.catalog[name].priority)[: self.max_tasks]
        tasks = [self._task(name, chosen[name], question) for name in order]
        return Plan(question=question, mode="catalog", tasks=tasks,
                    subquestions=subquestions, notes=notes)

    def _task(self, name: str, reason: str, question: str) -> TaskSpec:
        tpl = self.catalog[name]
        # The question travels with the task: a recipe may need what it names (a model).
        return TaskSpec(id=name, title=tpl.title, objective=tpl.description, tools=tpl.tools,
                        template=name, reason=reason, inputs={"question": question})

    def _cannot(self, question: str) -> str:
        lines = [f"The task catalog has nothing that matches {question!r}. In catalog mode "
                 "(no LLM configured) agentkit can answer questions about:"]
        for tpl in sorted(self.catalog.values(), key=lambda t: t.name):
            lines.append(f"  - {tpl.name}: {tpl.title} (e.g. words: "
                         f"{', '.join(tpl.triggers.keywords[:4])})")
        lines.append("For open-ended questions configure an LLM endpoint, e.g. "
                     "AGENTKIT_BASE_URL=http://127.0.0.1:8000/v1 AGENTKIT_MODEL=<name> "
                     "(any OpenAI-compatible server), or --base-url/--model.")
        return "\n".join(lines)
