"""The subagent cost guard (``enable = ["guard"]``; docs/guard.md).

- :mod:`.models`: what a model id names (family, alias) and its price;
- :mod:`.options`: the ``[handlers.guard]`` section and per-host sections;
- :mod:`.decide`: the decision, a pure function (its table: tests/test_guard_decide.py);
- :mod:`.sites`: the rules of a spawn (as its host's capabilities declare them) and the
  reply of a verdict;
- :mod:`.claude_mod`: which side decides a Claude dispatch (the agent.spawn module or us);
- :mod:`.handler`: the bus functions, the parent-model cache and the dispatch rows.
"""
