"""Realistic OpenCode payloads, one per native event, for ``hookbus try``: the shim's
(:mod:`hookbus.hosts.shared.opencode_samples`) from OpenCode 1.18.33."""

from functools import partial

from hookbus.hosts.shared import opencode_samples

TOOL_EVENTS = opencode_samples.TOOL_EVENTS
payload = partial(opencode_samples.payload, version="1.18.33")
