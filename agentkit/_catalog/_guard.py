"""Verdicts a model cannot overturn: a synthesized answer is checked against what the catalog's
recipes established in the same run.

A recipe decides from the host's files (custom allreduce used or not, an FP8 KV cache accepted
or refused, NCCL settings and their values, allreduces per decode step); a model that merges
the results may still write the opposite while citing a real evidence id, and citation checks
alone cannot see that. Here every claim of the answer is compared with those decisions:

- a yes/no verdict (the ``verdict`` fact of a catalog task): a clause that names the verdict's
  subject and states the opposite (a negation where the verdict is yes; an affirmative
  predicate and no negation where it is no) contradicts it;
- NCCL settings: ``NCCL_X=value`` with another value than the one in effect, or a variable
  that is not set at all;
- model arithmetic: a count of allreduces per step that neither model has.

A contradicting claim is taken out of the answer and named in a note, and the established
verdict stands in the bottom line (added, worded as the catalog words it, when no claim
there states it). Only results of catalog tasks (a template ran as a recipe) count: a model
subagent's facts are what is being checked, not the judge.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .. import _regex as re  # re, its compiled patterns kept on disk (_regex.py)
from .._citations import evidence_index, finalize
from .._types import Answer, Claim, Plan, TaskResult
from ._framing import answer_word
from ._planner import normalize

# Words that state the opposite of an affirmative verdict.
_NEGATION = re.compile(
    r"\b(?:no|not|never|cannot|can't|isn't|aren't|doesn't|don't|won't|wouldn't|didn't|"
    r"hasn't|haven't|without|neither|nor|none|lacks?|refuses?|refused|rejects?|rejected|"
    r"disabled|unsupported|unavailable|fails?|failed|off)\b")
# Predicates that assert the subject holds, works or helps (a clause with none of these and
# no negation states nothing that can contradict a verdict: "the checkpoint recommends fp8").
_AFFIRM = re.compile(
    r"\b(?:works?|working|supported|supports?(?! matrix)|used|uses?|using|enabled?|enables|"
    r"carr(?:y|ies|ied)|helps?|improves?|improved|appl(?:y|ies|ied)|active|possible|can|could|would|will|"
    r"accepts?|accepted|benefits?|in effect|is on|tuned|speeds? up|faster)\b")
_LEAD = re.compile(r"^\s*(yes|no)\b", re.I)
# Clause ends; a dot only before a space ("Model-K2.5", "0.11.0" are one word)
_CLAUSES = re.compile(r"[;:,\u2026]|\.(?:\s|$)|\s(?:and|but|so|while|whereas)\s")
# A conditional or general clause ("NCCL settings apply to whichever model the unit serves",
# "if it were enabled") states no fact about this host
_HYPOTHETICAL = re.compile(r"\b(?:whichever|whatever|if|unless|when|once)\b")
# What a checkpoint recommends is another fact than whether the server can use it
_ATTRIBUTED = re.compile(r"\b(?:recommends?|recommended|recommendation|asks? for|suggests?)\b")
# Parenthesized asides (locators, link types) are left out: "(NODE/SYS, no NVLink)"
_ASIDES = re.compile(r"\([^()]*\)")
_NCCL = re.compile(r"\b(NCCL_[A-Z0-9_]+)\s*=\s*([^\s,;'\"`]+)")
# "122 tensor-parallel allreduces per decode step" (per layer counts are another figure)
_ALLREDUCES = re.compile(r"(\d[\d,]*)\s+(?:tensor[- ]parallel\s+|TP\s+)?all[- ]?reduces\s+"
                         r"(?:per|each)\s+(?:decode\s+|generated\s+|decoding\s+)?(?:step|token)",
                         re.I)


# "about" terms that say what is asked (does it help, does it apply), not what it is about
_ASKING = {"help", "improve", "work", "possible", "enable", "apply", "carry over"}


@dataclass
class _Verdict:
    task: str
    label: str  # "yes" or "no"
    subject: str  # normalized: the verdict's first "about" term
    also: list[str]  # the clause must name one of these too ("nccl" and "tuning"), if any
    claim: str
    evidence: list[str]


def uphold(answer: Answer, plan: Plan, results: list[TaskResult]) -> Answer:
    """``answer`` with every claim that contradicts an established verdict or value taken
    out and named in a note, and those verdicts standing in its bottom line."""
    catalog = {t.id for t in plan.tasks if t.template}
    trusted = [r for r in results if r.task_id in catalog and r.status in ("ok", "partial")]
    verdicts = [v for r in trusted if (v := _verdict(r)) is not None]
    nccl = _nccl_values(trusted)
    counts = _allreduce_counts(trusted)
    if not (verdicts or nccl or counts):
        return answer
    # the catalog's own findings, as the model was given them, are the reference, not suspects
    own = {normalize(f.claim) for r in trusted for f in r.findings}

    def check(text: str) -> str:
        bare = normalize(text.split(": ", 1)[-1])  # "No: " + a verdict, as framing words it
        return "" if normalize(text) in own or bare in own else _contradiction(
            text, verdicts, nccl, counts)

    dropped: list[tuple[Claim, str]] = []
    bottom: list[Claim] = []
    stated: set[str] = set()
    for claim in answer.bottom_line:
        why = check(claim.text)
        if why:
            dropped.append((claim, why))
            continue
        bottom.append(claim)
        stated |= {v.task for v in verdicts if _polarity(claim.text, v) == v.label}
    for section in answer.sections:
        kept = []
        for claim in section.claims:
            why = check(claim.text)
            if why:
                dropped.append((claim, why))
            else:
                kept.append(claim)
        section.claims = kept
    if not dropped:
        return answer
    contradicted = {t for _, why in dropped for t in re.findall(r"what (\S+) established", why)}
    for v in verdicts:
        if v.task in contradicted and v.task not in stated:
            bottom.append(Claim(text=f"{answer_word(answer.question, v.label)}: {v.claim}",
                                evidence=list(v.evidence)))
    answer.bottom_line = bottom
    answer.notes += [f"The model's claim \u201c{c.text[:300]}\u201d contradicts {why}; the "
                     "established finding stands and the claim was left out" for c, why in dropped]
    return finalize(answer, evidence_index(results))


def _verdict(r: TaskResult) -> _Verdict | None:
    fact = r.facts.get("verdict")
    if fact is None or not isinstance(fact.value, dict):
        return None
    label, about = str(fact.value.get("answer")), fact.value.get("about") or []
    if label not in ("yes", "no") or not about or not fact.value.get("claim"):
        return None
    subject = normalize(str(about[0]))
    # refinements of the subject ("kv cache dtype") are no qualifier: the flag's name is not
    # the dtype asked about
    also = sorted({q for a in about[1:] if subject not in (q := normalize(str(a)))} - _ASKING)
    return _Verdict(r.task_id, label, subject, also, str(fact.value["claim"]),
                    list(fact.evidence))


def _names(text: str, term: str) -> bool:
    return bool(re.search(rf"(?<![a-z0-9]){re.escape(term)}(?![a-z0-9])", text))


def _polarity(text: str, v: _Verdict) -> str | None:
    """What ``text`` says about ``v``'s subject: "yes", "no", or None (it does not say)."""
    lead = _LEAD.match(text)
    said: str | None = None
    for clause in _CLAUSES.split(_ASIDES.sub("", text)):
        norm = normalize(clause)
        if not _names(norm, v.subject) or (v.also and not any(_names(norm, a) for a in v.also)):
            continue
        if _HYPOTHETICAL.search(norm) or _ATTRIBUTED.search(norm):
            continue
        if _NEGATION.search(norm):
            return "no"
        if _AFFIRM.search(norm):
            said = "yes"
        elif lead and said is None:
            said = lead.group(1).lower()
    return said


def _contradiction(text: str, verdicts: list[_Verdict], nccl: dict[str, set[str]],
                   counts: dict[str, int]) -> str:
    for v in verdicts:
        said = _polarity(text, v)
        if said is not None and said != v.label:
            return f"what {v.task} established ({v.label}: {v.claim[:200]})"
    for name, value in _NCCL.findall(text):
        # a name no source sets may be another unit's ("vllm-old sets NCCL_X=…"): not judged
        known = nccl.get(name)
        bare = value.rstrip(".),")
        # a value may hold the characters that end a match ("=mlx5_0,mlx5_1"): a prefix counts
        if known and not any(k == bare or k.startswith(value) for k in known):
            return (f"what nccl settings established ({name} is "
                    f"{' or '.join(sorted(known))} wherever it is set, not {value})")
    return _count_wrong(text, counts) if counts else ""


def _nccl_values(results: list[TaskResult]) -> dict[str, set[str]]:
    """NCCL_* name -> every value a source on the host gives it (the one in effect, those it
    overrides, those removed or not carried to the server)."""
    out: dict[str, set[str]] = {}

    def add(row: Any) -> None:
        if isinstance(row, dict) and "name" in row:
            out.setdefault(str(row["name"]), set()).add(str(row.get("value")))

    for r in results:
        for key in ("nccl_settings", "nccl_removed", "nccl_not_carried"):
            fact = r.facts.get(key)
            for row in fact.value if fact is not None and isinstance(fact.value, list) else []:
                add(row)
                # another server's tuning that did not carry over (nccl_not_carried)
                for inner in (row.get("missing") or []) + (row.get("differs") or []) if (
                        isinstance(row, dict)) else []:
                    add(inner)
    return out


def _allreduce_counts(results: list[TaskResult]) -> dict[str, int]:
    """Model display name -> allreduces per decode step, for the served and earlier model."""
    out: dict[str, int] = {}
    for r in results:
        fact = r.facts.get("allreduce")
        value: Any = fact.value if fact is not None else None
        if not isinstance(value, dict):
            continue
        for key, model in (("served", "served_model"), ("previous", "previous")):
            about = r.facts.get(model)
            name = about.value.get("name") if about is not None and isinstance(
                about.value, dict) else None
            if isinstance(value.get(key), int):
                out[str(name or key)] = int(value[key])
    return out


def _aliases(name: str) -> list[str]:
    """How a claim may name a model: "org/Model-K2.5-FP4", "Model-K2.5-FP4", "Model-K2.5"."""
    base = name.rsplit("/", 1)[-1]
    out = [name.lower(), base.lower()]
    if "-" in base and len(base.rsplit("-", 1)[0]) >= 4:
        out.append(base.rsplit("-", 1)[0].lower())
    return out


def _count_wrong(text: str, counts: dict[str, int]) -> str:
    """A count of allreduces per step that the model it is about does not do: the model named
    nearest to the number in its sentence ("A does 122 … against 156 for B"), or, when the
    sentence names neither, either model."""
    for sentence in re.split(r";|\.(?:\s|$)", text):
        low = sentence.lower()
        mentions = [(m.start(), name) for name in counts for a in _aliases(name)
                    for m in re.finditer(re.escape(a), low)]
        for hit in _ALLREDUCES.finditer(sentence):
            got = int(hit.group(1).replace(",", ""))
            if mentions:
                _, about = min(mentions, key=lambda p: abs(p[0] - hit.start()))
                wrong = got != counts[about]
            else:
                wrong = got not in counts.values()
            if wrong:
                per = "; ".join(f"{m} {c}" for m, c in counts.items())
                return f"what model arithmetic established (allreduces per step: {per})"
    return ""
