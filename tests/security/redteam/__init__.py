"""The red-team suite: ~2 000 escape and leak attempts run against the sandbox in both modes.

Run ``python -m tests.security.redteam [--quick] [--json OUT]``; pytest runs the quick subset
(``test_redteam.py``).
"""
