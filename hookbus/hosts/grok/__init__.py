"""xAI Grok Build: its facts, driver, samples and manifest (:mod:`hookbus.hosts`)."""
