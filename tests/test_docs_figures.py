"""The figures printed in docs/security.md are the ones the suite's own data gives."""

from __future__ import annotations

import re

from .conftest import REPO
from .security.attempts import ATTEMPTS, CONFIG_ATTEMPTS, FILE_ATTEMPTS, GIT
from .security.secrets_data import BENIGN, FORMATS, SECRETS


def test_security_doc_counts_match_the_suite() -> None:
    doc = (REPO / "docs" / "security.md").read_text()
    attempts = [a for a in ATTEMPTS + FILE_ATTEMPTS + CONFIG_ATTEMPTS
                if GIT is not None or not a.needs_git]
    total = re.search(r"\*\*total\*\* \| \*\*(\d+)\*\*", doc)
    assert total and int(total.group(1)) == len(attempts)
    assert f"| formats | {len(FORMATS)} |" in doc
    assert f"| planted samples | {len(SECRETS)} |" in doc
    assert f"| canary fragments planted | {sum(len(s.fragments) for s in SECRETS)} |" in doc
    assert f"| benign look-alike lines | {len(BENIGN)} |" in doc
