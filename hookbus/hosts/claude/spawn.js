// @@MARK@@: written by 'hookbus install --host claude --plugin', removed by its uninstall; edits are overwritten.
//
// hookbus's hooks module (a "mod") for Claude Code 2.1.289 and later, named under "modules"
// in this plugin's hooks/hooks.json. It runs inside Claude Code's own engine: no Node, no
// require, nothing but the engine's `$` (docs/hosts/claude.md, "Plugin install and the
// agent.spawn module", says what we read in the 2.1.332 binary).
//
// agent.spawn: the engine raises it after PreToolUse, just before a subagent starts, with
// the resolved agent type, the requested model and the parent's effective model. The
// module hands that to `hookbus guard --json` (run by absolute path, no shell; the argv is
// baked in at install) and applies its answer: `model` set -> the child runs on it;
// `clear_model` -> the child's model is dropped (it inherits the parent); action refuse or
// block -> the spawn is refused with the message; anything else -> left as it is.
//
// One side decides each dispatch: session.start sets HOOKBUS_CLAUDE_SPAWN_MOD to this
// plugin's root in the Claude Code process, and the PreToolUse command guard (which
// Claude starts with CLAUDE_PLUGIN_ROOT set to the same root) then passes dispatches
// through. Processes the Bash tool starts inherit the variable but not the plugin root.
//
// Fails open: when hookbus cannot run, exits non-zero, prints no answer or outlives
// WAIT_MS (the engine kills it), the spawn proceeds, one "hookbus:" line goes to Claude's
// debug log, one spawn-mod-failed line is appended to hookbus's diagnostics log, and the
// variable is cleared so that the command guard decides the session's later dispatches.
// Forks, workflow agents, resumed agents and other plugins' own spawns are left alone.

// `hookbus guard --json`, by absolute path; how long to wait for it (ms).
const ARGV = @@ARGV@@
const WAIT_MS = @@WAIT_MS@@
const REFUSE_ACTIONS = ["refuse", "block"]

// Why this spawn is not ours to decide (undefined: it is).
function notOurs(e, next) {
  if (e.fork === true) return "a fork runs on its parent"
  if (e.workflow !== undefined) return "a workflow agent"
  if (e.resume !== undefined) return "a resumed agent"
  // Who caused the dispatch: {plugin: "engine", tier: "core"} when the model called the
  // Agent tool (seen in 2.1.332); a plugin's name when its hook called $.agent.spawn.
  const origin = next.origin?.plugin
  if (origin !== undefined && origin !== "engine") return "another plugin's own spawn"
  return undefined
}

async function sessionId($) {
  try {
    const path = (await $.session.info()).transcriptPath || ""
    const name = path.slice(path.lastIndexOf("/") + 1)
    return name.endsWith(".jsonl") ? name.slice(0, -6) : name
  } catch {
    return ""
  }
}

async function stateDir($) {
  const own = await $.env.get("HOOKBUS_STATE_DIR")
  if (own) return own
  const xdg = await $.env.get("XDG_STATE_HOME")
  if (xdg && xdg.startsWith("/")) return `${xdg}/hookbus`
  return `${await $.env.get("HOME")}/.local/state/hookbus`
}

// One "hookbus:" debug line, one diagnostics line appended (O_APPEND, as hookbus's own
// writers do: the engine's $.fs.write replaces a whole file), the variable cleared.
// Never throws. (The engine lists what a module reads and writes from literal names only.)
async function diagnose(code, $, problem, session) {
  const message = `${problem}; the spawn proceeds, and the PreToolUse guard decides from now on`
  try { $.ui.log(`hookbus: agent.spawn: ${message}`, { to: "debug" }) } catch {}
  try { await $.env.set("HOOKBUS_CLAUDE_SPAWN_MOD", undefined) } catch {}
  try {
    const line = { event: code, level: "warning", timestamp: new Date().toISOString(), message, host: "claude", native: "agent.spawn" }
    if (session) line.session_id = session
    const append = 'umask 077; mkdir -p "$1" && printf "%s\\n" "$2" >> "$1/diagnostics.jsonl"'
    await $.process.run(["/bin/sh", "-c", append, "sh", await stateDir($), JSON.stringify(line)], { timeoutMs: 5000 })
  } catch {}
}

// The guard's answer as an object, or a string saying why there is none.
async function decide($, e) {
  const session = await sessionId($)
  const request = {
    host: "claude",
    session_id: session,
    cwd: e.cwd ?? (await $.env.get("PWD")) ?? "",
    call_id: e.tool_use_id || null,
    agent_type: e.subagentType ?? null,
    model: e.model ?? null,
    parent_model: e.parentModel ?? null,
    prompt: e.prompt ?? null,
  }
  let ran
  try {
    ran = await $.process.run(ARGV, { stdin: JSON.stringify(request), timeoutMs: WAIT_MS })
  } catch (err) {
    return { session, problem: `hookbus guard did not answer (${err?.message ?? err})` }
  }
  if (ran.exitCode !== 0) return { session, problem: `hookbus guard exited ${ran.exitCode}` }
  let answer
  try { answer = JSON.parse(ran.stdout) } catch {}
  if (!answer || typeof answer !== "object" || Array.isArray(answer) || typeof answer.action !== "string") {
    return { session, problem: "hookbus guard printed no answer" }
  }
  return { session, answer }
}

/** @type {import('claude-code').Register} */
export const register = (on) => {
  on("session.start", async ($, e, next) => {
    await $.env.set("HOOKBUS_CLAUDE_SPAWN_MOD", $.plugin.root)
    return next(e)
  }).catch(($, e, next) => next(e))

  on("agent.spawn", async ($, e, next) => {
    if (notOurs(e, next) !== undefined) return next(e)
    const { session, answer, problem } = await decide($, e)
    if (problem !== undefined) {
      await diagnose("spawn-mod-failed", $, problem, session)
      return next(e)
    }
    if (REFUSE_ACTIONS.includes(answer.action)) return { deny: String(answer.message || "hookbus refused this subagent") }
    if (e.isTeammate === true) return next(e) // a teammate's model is not a hook's to set
    if (typeof answer.model === "string" && answer.model) return next({ ...e, model: answer.model })
    if (answer.clear_model === true) return next({ ...e, model: undefined })
    return next(e)
  }).catch(async ($, e, next) => {
    // Whatever went wrong above, the spawn is never refused for it.
    await diagnose("spawn-mod-failed", $, `the module failed (${next.error?.message ?? next.error})`, "")
    return next(e)
  })
}
