"""The toy host (a test's, never shipped): its facts, driver and samples (:mod:`hookbus.hosts`)."""
