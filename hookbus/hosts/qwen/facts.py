"""Qwen Code's facts: what the cold path knows of it before its driver loads
(:mod:`hookbus.hosts.shared.facts`)."""

from __future__ import annotations

from hookbus.hosts.shared.facts import HostFacts

# Qwen Code 0.24.4 (hooks/hookRunner.ts): hook_event_name in every input; 60000 ms per
# hook unless its entry says otherwise, configured in milliseconds. Hooks get
# QWEN_PROJECT_DIR (and GEMINI_PROJECT_DIR, CLAUDE_PROJECT_DIR), all = the input's cwd.
# Claude-style replies: exit 0 with nothing printed is the no-opinion of every event.
FACTS = HostFacts(
    "qwen",
    driver="hookbus.hosts.qwen.driver",
    manifest="hookbus.hosts.qwen.manifest",
    event_paths=(("hook_event_name",),),
    tool_paths=(("tool_name",),),
    project_env=("QWEN_PROJECT_DIR",),
    project_paths=(("cwd",),),
    default_timeout=60.0,
    timeout_unit="ms",
)
