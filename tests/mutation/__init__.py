"""Mutation testing of the core modules with mutmut: ``python -m tests.mutation [NAME …]``."""
