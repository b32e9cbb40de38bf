"""End-to-end tests: real host programs, offline, against scripted fake models."""
