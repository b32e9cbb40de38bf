"""VS Code agent hooks: its facts, driver, samples and manifest (:mod:`hookbus.hosts`)."""
