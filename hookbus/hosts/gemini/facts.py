"""Gemini CLI's facts: what the cold path knows of it before its driver loads
(:mod:`hookbus.hosts.shared.facts`)."""

from __future__ import annotations

from hookbus.bus.output import HookOutput
from hookbus.hosts.shared.facts import HostFacts

# Gemini CLI 0.61.0 (hooks/hookRunner.ts): hook_event_name in every input; 60000 ms per
# hook unless its entry says otherwise, configured in milliseconds. Hooks get
# GEMINI_PROJECT_DIR (and CLAUDE_PROJECT_DIR, GEMINI_CWD), all = the input's cwd. Any
# text that is not JSON, with exit 2 or more, is a deny: "{}" is the no-opinion, except
# on BeforeToolSelection, where any output rewrites the tool config.
FACTS = HostFacts(
    "gemini",
    driver="hookbus.hosts.gemini.driver",
    manifest="hookbus.hosts.gemini.manifest",
    event_paths=(("hook_event_name",),),
    tool_paths=(("tool_name",),),
    project_env=("GEMINI_PROJECT_DIR",),
    project_paths=(("cwd",),),
    no_opinion=HookOutput(b"{}\n"),
    no_opinion_by_event={"BeforeToolSelection": HookOutput()},
    default_timeout=60.0,
    timeout_unit="ms",
)
