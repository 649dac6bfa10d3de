"""Answering a sub-question in its own terms: "Did we lose the NCCL env?" gets "Not lost",
"Is custom allreduce used?" gets "No", from the verdict of the task whose subject the
question names. Nothing here decides a fact; it only words a decision the task made.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from .._types import Claim, TaskResult
from ._planner import normalize

_YES_NO = re.compile(r"^(?:and |so |but |also )?(do|does|did|is|are|was|were|would|will|can|"
                     r"could|should|has|have|had|am|isn't|aren't|didn't|doesn't)\b")
# A question asked about losing or lacking the subject flips yes and no; these say it back.
_NEGATIVE = {
    "lose": ("Not lost", "Lost"), "lost": ("Not lost", "Lost"), "losing": ("Not lost", "Lost"),
    "missing": ("Not missing", "Missing"), "gone": ("Not gone", "Gone"),
    "dropped": ("Not dropped", "Dropped"), "removed": ("Not removed", "Removed"),
    "disabled": ("No, not disabled", "Yes, disabled"), "off": ("No", "Yes"),
    "broken": ("No", "Yes"), "without": ("No", "Yes"),
}
_LABELS = {"undetermined": "Not established", "already-on": "Already on", "partly": "Partly",
           "with-other-backend": "Only with another attention backend",
           "broken": "No (it is set and the server is failing)",
           "conflicting": "Not as tuned: one setting undoes another"}
_LOWER_FIRST = {"The", "With", "No", "It", "Its", "This", "These", "An", "A", "All", "Every",
                "Each", "None", "Nothing", "Whether"}


@dataclass
class Framed:
    claim: Claim
    task: str


_ASKS = re.compile(r"^(?:and |so |but |also |plus )?(what|which|how|why|where|when|who|whose)\b")


def is_question(text: str) -> bool:
    """A question, not context ("We moved this box from A to B.")."""
    return text.rstrip().endswith("?") or is_yes_no(text) or bool(_ASKS.match(normalize(text)))


def is_yes_no(question: str) -> bool:
    return bool(_YES_NO.match(normalize(question)))


def _hits(question: str, about: list[str]) -> int:
    norm = normalize(question)
    return sum(1 for w in about
               if re.search(rf"(?<![a-z0-9]){re.escape(normalize(w))}(?![a-z0-9])", norm))


def answer_word(question: str, label: str) -> str:
    words = set(re.findall(r"[a-z']+", normalize(question)))
    if "already" in words and label in ("yes", "no", "already-on", "broken"):
        # "is it already on?" asks about now, not about whether it could be
        return {"already-on": "Yes, already on", "broken": "Set, but the server is failing"
                }.get(label, "No")
    if label not in ("yes", "no"):
        return _LABELS.get(label, label.replace("-", " ").capitalize())
    neg = next((w for w in _NEGATIVE if w in words), None)
    if neg is None:
        return "Yes" if label == "yes" else "No"
    holds, lacks = _NEGATIVE[neg]
    return holds if label == "yes" else lacks


def frame(question: str, results: list[TaskResult]) -> Framed | None:
    """The lead claim for a yes/no sub-question: the verdict of the matched task whose
    subject words the question uses most (ties: the plan's order, which is the catalog's
    priority), worded in the question's terms."""
    if not is_yes_no(question):
        return None
    best: tuple[int, TaskResult, dict[str, Any]] | None = None
    for r in results:
        fact = r.facts.get("verdict")
        if fact is None or not isinstance(fact.value, dict):
            continue
        n = _hits(question, [str(a) for a in fact.value.get("about", [])])
        if n and (best is None or n > best[0]):
            best = (n, r, fact.value)
    if best is None:
        return None
    _, r, v = best
    label, text = str(v["answer"]), str(v.get("claim") or "")
    evidence = list(r.facts["verdict"].evidence)
    if not text:
        reason = r.errors[0].split(": ", 1)[-1] if r.errors else "the task found nothing to state"
        text = f"{r.task_id} could not decide it: {reason}"
    first, _, rest = text.partition(" ")
    if first in _LOWER_FIRST:
        text = f"{first.lower()} {rest}"
    return Framed(Claim(text=f"{answer_word(question, label)}: {text}", evidence=evidence),
                  r.task_id)
