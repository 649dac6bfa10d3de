"""LLM mode: a model plans the tasks (``_planner``), runs each one as a tool-using subagent
(``_subagent``, which submits its findings through ``_submission``) and writes the answer
(``_synthesizer``), with prompts from ``_prompts``. ``_runner`` runs a task either way: a
catalog recipe where one matches, a subagent otherwise. Catalog mode, beside it, needs no
model."""
