"""Shared settings and strategies of the property-based fuzz tests (tests/test_fuzz_*.py).

Bounded in CI: each test runs ``AGENTKIT_FUZZ_EXAMPLES`` inputs (default 30), derandomized so
that a run is repeatable. The campaign of issue 12 is the same tests with a large count, and
random: ``AGENTKIT_FUZZ_EXAMPLES=20000 python -m pytest tests/test_fuzz_*.py -p no:randomly
--hypothesis-show-statistics`` (docs/testing.md). Every input must finish within the deadline
(a hang fails the test) and raise nothing but the documented error.
"""

from __future__ import annotations

import json
import os
from datetime import timedelta
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

EXAMPLES = int(os.environ.get("AGENTKIT_FUZZ_EXAMPLES", "30"))
CAMPAIGN = "AGENTKIT_FUZZ_EXAMPLES" in os.environ

FUZZ = settings(
    max_examples=EXAMPLES, deadline=timedelta(seconds=5), derandomize=not CAMPAIGN,
    database=None, print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                           HealthCheck.function_scoped_fixture, HealthCheck.filter_too_much])

# Text that matters to parsers and terminals: structure, quotes, escapes, controls, markup.
_SPECIAL = st.sampled_from([
    "[", "]", "{", "}", '"', "'", ":", ",", "=", "#", ";", "\\", "\n", "\r", "\t", " ", "-",
    "&a", "*a", "!!", "0x", "1:", "1e400", "NaN", "Infinity", "9" * 25, "\x1b[2J", "\x00",
    "\u202e", "[link=x]", "\udcff", "..", "/", "$", "%", "@", "true", "null", "é", "\ufeff"])
TEXT = st.lists(st.one_of(_SPECIAL, st.text(max_size=8)), max_size=40).map("".join)

SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(), st.integers(-(2**200), 2**200),
    st.floats(allow_nan=True, allow_infinity=True), TEXT)
VALUES: st.SearchStrategy[Any] = st.recursive(
    SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                     st.dictionaries(TEXT, inner, max_size=4)),
    max_leaves=12)


@st.composite
def nested(draw: st.DrawFn) -> str:
    """Text nested deep: the recursion limit of the parsers, not their grammar."""
    depth = draw(st.integers(0, 3000))
    o, c = draw(st.sampled_from([("[", "]"), ('{"a":', "}"), ("a:\n" + " ", ""),
                                 ("- ", ""), ("[[", "]]")]))
    return o * depth + draw(st.sampled_from(["1", "", "x"])) + c * draw(st.integers(0, depth))


def dumps(value: Any) -> str:
    """JSON as a careless writer would: NaN and Infinity included, ints of any size."""
    return json.dumps(value, allow_nan=True)
