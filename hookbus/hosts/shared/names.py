"""Event names one host reads in another's payload: Claude Code's, and how Copilot CLI
and Cursor name them when they run ``.claude/settings.json`` hooks. Read by each of
those hosts' drivers, and by a Claude command that gets another host's payload
(:mod:`hookbus.hosts.shared.native_install`)."""

#: Claude Code's events (hooks reference, 2.1.33x): read by its driver, and by the cold
#: path to tell a Claude payload from another host's that reaches a Claude command.
CLAUDE_EVENTS: tuple[str, ...] = (
    "SessionStart", "Setup", "InstructionsLoaded", "UserPromptSubmit", "UserPromptExpansion",
    "PreToolUse", "PermissionRequest", "PermissionDenied", "PostToolUse", "PostToolUseFailure",
    "PostToolBatch", "PreSkillShellCommand", "Notification", "MessageDisplay", "SubagentStart",
    "SubagentStop", "TaskCreated", "TaskCompleted", "TeammateIdle", "Stop", "StopFailure",
    "PreCompact", "PostCompact", "PreModelSwitch", "PostModelSwitch", "ConfigChange",
    "CwdChanged", "DirectoryAdded", "FileChanged", "WorktreeCreate", "WorktreeRemove",
    "Elicitation", "ElicitationResult", "SessionEnd",
)  # fmt: skip

#: Copilot CLI's camelCase events and their PascalCase aliases (the runtime's two name
#: lists, 1.0.102): read by its driver, and by a Claude command that gets a Copilot
#: payload (``hookbus.hosts.shared.native_install``).
COPILOT_EVENTS: dict[str, str] = {
    "sessionStart": "SessionStart", "userPromptSubmitted": "UserPromptSubmit",
    "preToolUse": "PreToolUse", "permissionRequest": "PermissionRequest",
    "postToolUse": "PostToolUse", "postToolUseFailure": "PostToolUseFailure",
    "agentStop": "Stop", "subagentStart": "SubagentStart", "subagentStop": "SubagentStop",
    "preCompact": "PreCompact", "errorOccurred": "ErrorOccurred", "sessionEnd": "SessionEnd",
}  # fmt: skip

#: Claude Code's event names as Cursor reads them in a ``.claude/settings.json`` it runs
#: (cursor.com/docs/hooks, "third-party hooks": PreToolUse is its preToolUse ...): read by
#: its driver, and by a Claude command that gets a Cursor payload.
CURSOR_EVENTS: dict[str, str] = {
    "SessionStart": "sessionStart", "SessionEnd": "sessionEnd",
    "UserPromptSubmit": "beforeSubmitPrompt", "PreToolUse": "preToolUse",
    "PostToolUse": "postToolUse", "PostToolUseFailure": "postToolUseFailure",
    "SubagentStart": "subagentStart", "SubagentStop": "subagentStop",
    "PreCompact": "preCompact", "Stop": "stop",
}  # fmt: skip
