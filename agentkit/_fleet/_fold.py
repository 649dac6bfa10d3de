"""Folding host outcomes the way operators read them (``clush -b``, ``dshbak -c``): hosts
with identical values as one node range, the outliers named, every host in one bucket.

The fold is streaming: each outcome is reduced as it arrives to, per fact, the value's
digest and the host's name, so a fleet of thousands is folded in memory linear in hosts times
facts and the per-host results need not be kept. Values are compared canonically (JSON with
sorted keys), never by their display text.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from .._bounded import check_value
from .._catalog._template import Compare
from .._fleet_model import Bucket, Fleet, FleetFact, FleetGroup, FleetProblem
from .._types import Evidence, TaskResult
from ._meaning import UNSET, each_facts, meanings
from ._outcome import HostOutcome

# Facts that describe this moment or this host's log rather than its configuration, or that
# repeat others whole ("host" is the model the other facts are drawn from): not compared.
NOT_COMPARED = frozenset({"host", "server_state", "log_lines", "log_covers_start"})
MAX_TEXT = 400  # characters of a value's text (the value itself is kept whole)
MAX_WHERE = 3  # distinct places a compared value was set, kept per group (the rest counted)
ABSENT = b"\x00absent"  # the digest key of "the task ran and did not establish this fact"
UNSET_KEY = b"\x00unset"  # a setting the host's list does not have (apart from the string)
_CANON = orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS


def canonical(value: Any) -> bytes:
    """The comparable form of a fact value: JSON, keys sorted, numbers as JSON sees them (1
    and 1.0 are one number, RFC 8259), and NaN and the infinities kept apart from null.

    >>> canonical({"b": 1, "a": [1, 2]}) == canonical({"a": [1, 2], "b": 1.0})
    True
    """
    return orjson.dumps(_numbers(value), option=_CANON, default=str)


def _numbers(value: Any) -> Any:
    # the depth is bounded by check_value before a value gets here
    if isinstance(value, float):
        if value != value or value in (math.inf, -math.inf):
            return {"\u0000non-finite": repr(value)}  # orjson would write null
        # the integers a host can send (-2**63 .. 2**64 - 1, what orjson writes): a float
        # equal to one of them is that number (1e19 is 10000000000000000000)
        if value.is_integer() and -(2**63) <= value < 2**64:
            return int(value)
        return value
    if isinstance(value, dict):
        return {k: _numbers(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_numbers(v) for v in value]
    return value


@dataclass
class _Seen:
    """One piece of evidence a group's hosts cite: what was looked at, and what was seen
    (at most two contents kept: enough to know whether the hosts saw the same)."""

    kind: Any
    locator: str
    seen: dict[str, str] = field(default_factory=dict)  # sha256 -> excerpt
    hosts: list[str] = field(default_factory=list)  # the hosts that cited it: not the group's


@dataclass
class _Group:
    value: Any
    key: bytes
    hosts: list[str] = field(default_factory=list)
    evidence: dict[str, _Seen] = field(default_factory=dict)
    where: dict[str, None] = field(default_factory=dict)  # where set: a few distinct places
    more: set[str] = field(default_factory=set)  # the other distinct places, only counted

    @property
    def where_more(self) -> int:
        return len(self.more)

    def seen_at(self, where: str) -> None:
        # distinct places: a fourth file seen on a hundred hosts is one more place, not 100
        if not where or where in self.where:
            return
        if len(self.where) < MAX_WHERE:
            self.where[where] = None
        else:
            self.more.add(where)


class Fold:
    """Outcomes in, a :class:`Fleet` out.

    >>> fold = Fold("snapshots", ["n1", "n2"])
    >>> fold.add(HostOutcome(host="n1", status="unreachable", error="connection refused"))
    >>> fold.add(HostOutcome(host="n2", status="timed-out", error="no reply in 5s"))
    >>> fold.fleet().recap
    'ok=0 differs=0 unreachable=1 timed-out=1'
    """

    def __init__(self, transport: str, hosts: Sequence[str],
                 tasks: Sequence[str] | None = None,
                 compare: dict[str, list[Compare]] | None = None) -> None:
        self.transport = transport
        self.expected = list(hosts)
        self.tasks = set(tasks) if tasks is not None else None  # None: any task is folded
        self.bucket: dict[str, Bucket] = {}
        self.problems: dict[tuple[Bucket, str], list[str]] = {}
        self.groups: dict[tuple[str, str], dict[bytes, _Group]] = {}
        self.ran: dict[str, list[str]] = {}  # task -> hosts that answered it
        self.duplicates: list[str] = []
        # the compared facts (templates' ``compare:``): groups by (task, label), the labels
        # an ``each`` list gave and the hosts that had that list (the others' are "unset")
        self.compare = compare or {}
        self.meant: dict[tuple[str, str], dict[bytes, _Group]] = {}
        self.each_of: dict[tuple[str, str], str] = {}
        self.had: dict[tuple[str, str], list[str]] = {}
        # node ranges by host set: every fact a uniform fleet agrees on has the same hosts,
        # and folding a thousand names is ClusterShell's slowest path (a parse per name)
        self._folded: dict[frozenset[str], str] = {}

    def add(self, outcome: HostOutcome) -> None:
        host = outcome.host
        if host in self.bucket:  # a transport that reports a host twice: the first counts
            self.duplicates.append(host)
            return
        bucket, error = _bucket(outcome)
        if bucket == "ok":
            bucket, error = _server(outcome.results)
        rows: list[tuple[TaskResult, list[tuple[str, Any, bytes, list[str]]]]] = []
        if bucket == "ok":
            try:  # all of a host's results are checked before any is folded
                rows = self._checked(outcome.results)
            except ValueError as exc:
                bucket, error = "failed", f"the host's results cannot be compared: {exc}"
        self.bucket[host] = bucket
        if bucket != "ok":
            self.problems.setdefault((bucket, error), []).append(host)
            return
        for r, facts in rows:
            self.ran.setdefault(r.task_id, []).append(host)
            index = {ev.id: ev for ev in r.evidence}
            for name, value, key, cites in facts:
                self._add(r.task_id, name, host, value, key, cites, index)
            self._mean(r, host, index)

    def _mean(self, r: TaskResult, host: str, index: dict[str, Evidence]) -> None:
        specs = self.compare.get(r.task_id)
        if not specs:
            return
        for fact in each_facts(specs):
            if fact in r.facts:
                self.had.setdefault((r.task_id, fact), []).append(host)
        for m in meanings(r, specs):
            if m.each:  # a setting of a list: hosts whose list lacks it have it unset
                self.each_of.setdefault((r.task_id, m.label), m.each)
            key = canonical(m.value)
            groups = self.meant.setdefault((r.task_id, m.label), {})
            group = groups.get(key)
            if group is None:
                group = groups[key] = _Group(m.value, key)
            group.hosts.append(host)
            group.seen_at(m.where)
            self._seen(group, host, list(m.cites), index)

    def _checked(self, results: Sequence[TaskResult]
                 ) -> list[tuple[TaskResult, list[tuple[str, Any, bytes, list[str]]]]]:
        """Each result with its compared facts and their canonical keys; ValueError for a
        reply that cannot be believed or compared: a task twice, a task not asked, a value
        past the nesting and integer limits (one host must not sink the fleet's fold)."""
        seen: set[str] = set()
        out = []
        for r in results:
            if r.task_id in seen:
                raise ValueError(f"task {r.task_id!r} is reported twice")
            if self.tasks is not None and r.task_id not in self.tasks:
                raise ValueError(f"task {r.task_id!r} was not asked")
            seen.add(r.task_id)
            facts = []
            for name, value, cites in _facts(r):
                check_value(value)
                facts.append((name, value, canonical(value), cites))
            out.append((r, facts))
        return out

    def _add(self, task: str, name: str, host: str, value: Any, key: bytes, cites: list[str],
             index: dict[str, Evidence]) -> None:
        groups = self.groups.setdefault((task, name), {})
        group = groups.get(key)
        if group is None:
            group = groups[key] = _Group(value, key)
        group.hosts.append(host)
        self._seen(group, host, cites, index)

    @staticmethod
    def _seen(group: _Group, host: str, cites: list[str], index: dict[str, Evidence]) -> None:
        for i in dict.fromkeys(cites):  # a host citing one id twice is still one host
            ev = index.get(i)
            if ev is None:
                continue
            seen = group.evidence.get(i)
            if seen is None:
                seen = group.evidence[i] = _Seen(ev.kind, ev.locator)
            seen.hosts.append(host)
            if len(seen.seen) < 2:
                seen.seen.setdefault(ev.sha256, ev.excerpt)

    def missing(self) -> list[str]:
        """Hosts asked for that no outcome has named yet."""
        return [h for h in self.expected if h not in self.bucket]

    def _nodes(self, hosts: list[str]) -> str:
        key = frozenset(hosts)
        got = self._folded.get(key)
        if got is None:
            from ._names import fold as fold_names

            got = self._folded[key] = fold_names(hosts)
        return got

    def fleet(self) -> Fleet:
        """The buckets and each compared fact's groups (largest first)."""
        facts, differs = self._facts()
        compared = self._compared(differs)
        for h in differs:
            self.bucket[h] = "differs"
        members: dict[str, list[str]] = {}
        for h, b in self.bucket.items():
            members.setdefault(b, []).append(h)
        from .._fleet_model import BUCKETS

        counts = {b: len(members.get(b, ())) for b in BUCKETS}
        problems = [FleetProblem(bucket=b, error=e, nodes=self._nodes(hs), count=len(hs))
                    for (b, e), hs in sorted(self.problems.items(),
                                             key=lambda kv: (-len(kv[1]), kv[0]))]
        return Fleet(transport=self.transport, hosts=len(self.bucket),
                     buckets={b: self._nodes(hs) for b, hs in members.items()},
                     counts=counts, facts=facts, compared=compared, problems=problems,
                     recap=" ".join(f"{b}={n}" for b, n in counts.items()
                                    if n or b in ("ok", "differs")))

    def evidence(self) -> dict[str, Evidence]:
        """Every group's citable evidence, by id (after :meth:`fleet`)."""
        return dict(self._index)

    def _facts(self) -> tuple[list[FleetFact], set[str]]:
        out: list[FleetFact] = []
        differs: set[str] = set()
        self._index: dict[str, Evidence] = {}
        for (task, name), by_key in self.groups.items():
            out.append(self._fact(task, name, list(by_key.values()), differs))
        return out, differs

    def _compared(self, differs: set[str]) -> list[FleetFact]:
        """The declared facts, one per (task, label); a setting missing from a host's list
        is "unset" there, a fact its task did not establish "(not established)"."""
        out: list[FleetFact] = []
        for (task, label), by_key in self.meant.items():
            groups = list(by_key.values())
            each = self.each_of.get((task, label))
            if each is not None:
                have = {h for g in groups for h in g.hosts}
                unset = [h for h in self.had.get((task, each), ()) if h not in have]
                if unset:
                    groups.append(_Group(UNSET, UNSET_KEY, unset))
            fact = self._fact(task, label, groups, differs)
            fact.label = label
            out.append(fact)
        return out

    def _fact(self, task: str, name: str, groups: list[_Group], differs: set[str]
              ) -> FleetFact:
        """One fact's groups, largest first (the tie rule: no majority, no outlier)."""
        have = {h for g in groups for h in g.hosts}
        absent = [h for h in self.ran.get(task, ()) if h not in have]
        if absent:
            groups.append(_Group(None, ABSENT, absent))
        groups.sort(key=lambda g: (-len(g.hosts), g.key))
        majority = len(groups) == 1 or len(groups[0].hosts) > len(groups[1].hosts)
        for g in groups[1:] if majority else (groups if len(groups) > 1 else ()):
            differs.update(g.hosts)
        rows = []
        for g in groups:
            nodes = self._nodes(g.hosts)
            rows.append(FleetGroup(value=g.value, text=_text(g), nodes=nodes,
                                   count=len(g.hosts), evidence=self._cite(g, nodes),
                                   where=sorted(g.where), where_more=g.where_more))
        return FleetFact(task=task, fact=name, groups=rows, majority=majority)

    def _cite(self, group: _Group, nodes: str) -> list[str]:
        ids = []
        from ._names import fold as fold_names

        for seen in group.evidence.values():
            same = len(seen.seen) == 1
            sha, excerpt = next(iter(seen.seen.items())) if same else ("", "")
            # stamped with the hosts that cited it (a group's other hosts may have cited
            # nothing), and keyed by what they saw too: two groups of the same hosts that
            # saw different content at one locator are two citations
            who = nodes if len(seen.hosts) == len(group.hosts) else fold_names(seen.hosts)
            key = f"{who}\0{','.join(sorted(seen.seen))}"
            ev = Evidence(id=Evidence.make_id(seen.kind, seen.locator, host=key),
                          kind=seen.kind, locator=seen.locator, sha256=sha, host=who,
                          excerpt=excerpt if same else "(what these hosts saw here differs "
                          "in content; each host's own is in the trace)")
            self._index[ev.id] = ev
            ids.append(ev.id)
        return ids


def _bucket(outcome: HostOutcome) -> tuple[Bucket, str]:
    """A host's bucket before comparing: its transport status, or "failed"/"timed-out" when
    it answered but not one of its tasks did (nothing to compare)."""
    if outcome.status != "ok":
        return outcome.status, outcome.error or outcome.status
    states = {r.status for r in outcome.results}
    if not outcome.results or states <= {"failed", "timed-out"}:
        why = sorted({r.summary for r in outcome.results}) or ["it returned no task results"]
        bucket: Bucket = "timed-out" if states == {"timed-out"} else "failed"
        return bucket, "every task failed: " + "; ".join(why)[:500]
    return "ok", ""


def _server(results: Sequence[TaskResult]) -> tuple[Bucket, str]:
    """"no-server" when the host model of the host's tasks found no model server at all (its
    tasks about a server have nothing to compare), with the model's own decision as reason;
    else "ok". A plan with no task about a server (GPU topology alone) is not asked this."""
    models = [r.facts["host"].value for r in results if "host" in r.facts]
    if not models or not all(isinstance(m, dict) and m.get("servers") == [] for m in models):
        return "ok", ""
    decisions = sorted({str(m.get("decision") or "") for m in models} - {""})
    return "no-server", "no model server found: " + ("; ".join(decisions) or
                                                     "the host model lists none")[:300]


def _facts(r: TaskResult) -> list[tuple[str, Any, list[str]]]:
    """(name, value, evidence ids) of what is compared in one task result: its status, its
    headline claims, and its facts but those in :data:`NOT_COMPARED`."""
    heads = [f for f in r.findings if f.headline]
    out: list[tuple[str, Any, list[str]]] = [
        ("status", r.status, []),
        ("findings", [f.claim for f in heads], list(dict.fromkeys(
            e for f in heads for e in f.evidence)))]
    out += [(n, f.value, f.evidence) for n, f in r.facts.items() if n not in NOT_COMPARED]
    return out


def _text(group: _Group) -> str:
    """The value in plain words: a string as itself, a number as JSON writes it, a list of
    claims joined; long values cut (never a hash: the table's value cell has it whole)."""
    if group.key == ABSENT:
        return "(not established)"
    if group.key == UNSET_KEY:
        return UNSET
    v = group.value
    if isinstance(v, list) and all(isinstance(x, str) for x in v):  # claims: read as text
        text = " / ".join(v) if v else "(none)"
    else:
        text = v if isinstance(v, str) else group.key.decode("utf-8", "replace")
        if isinstance(v, float) and not math.isfinite(v):
            text = repr(v)  # JSON has no such number: its key is a private marker
    return text if len(text) <= MAX_TEXT else text[:MAX_TEXT - 1] + "…"
