"""Pi's coding agent: its facts, driver, samples and manifest (:mod:`hookbus.hosts`)."""
