// @@MARK@@: written by 'hookbus install --host @@HOST@@', removed by its uninstall; edits are overwritten.
//
// hookbus's plugin for OpenCode (plugin API v1) and Kilo. It hands each hook an enabled
// hookbus handler wants to hookbus, run by absolute path without a shell, and applies
// hookbus's reply. Dependency-free on purpose: it imports nothing but Node's own modules.
//
// The wire format (hookbus/hosts/opencode/driver.py): one JSON object on the child's stdin,
// {hook, api, directory, input, output, parentID?, agent?}; one JSON object on its stdout:
// {} changes nothing; "block" throws (the call fails, the model reads the message);
// "args" replaces the call's input IN PLACE (assigning output.args has no effect in v1);
// "context" is appended to a tool's output, or pushed onto a compaction's context.
//
// With the server path (install's default; SERVER below not null), a call goes first to
// the warm server's socket (the part between the "warm server" lines,
// hookbus/hosts/shared/server.js); when no server answers, the event's command (the client's)
// runs as below. A bus event (the `event` hook, whose answer changes nothing) always runs
// its command: Kilo 7.7.7 ends a run without awaiting the plugin's event hook for its
// last session.idle, and a request on the host's own socket would end with it, where a
// child process lives on and answers.
//
// The commands, one per event:
@@COMMANDS@@
//
// When hookbus cannot answer (gone, crashed, unreadable output, past WAIT_MS) the hook gets
// the event's fallback, baked in at install: "change nothing", or the block a fail-closed
// handler owes. It leaves one line on stderr and one in hookbus's diagnostics log. This
// file never throws except to block on purpose.
import { spawn } from "node:child_process"
import { appendFileSync, closeSync, constants as fsConstants, lstatSync, mkdirSync, openSync, readlinkSync, statSync } from "node:fs"
import { connect } from "node:net"
import { homedir } from "node:os"
import { join, resolve as resolvePath } from "node:path"

// host, and per wanted native event: argv (hookbus run ... --event NATIVE, or the warm
// server's client), the wait in ms before the child is killed, the fallback reply, and the
// tools its handlers filter on (null: every tool); with the server path, each event's
// timeout (the client's --timeout) and `server` (what the request carries).
const CONFIG = @@CONFIG@@

const EVENTS = CONFIG.events
const SERVER = CONFIG.server || null
const TOOL_HOOKS = ["tool.execute.before", "tool.execute.after", "chat.message", "experimental.session.compacting"]
// Child sessions (a task's subagent): sessionID -> {parentID, agent}, from session.created.
const parents = new Map()
const PARENTS_MAX = 1000

function stateDir() {
  const env = process.env
  if (env.HOOKBUS_STATE_DIR) return env.HOOKBUS_STATE_DIR
  const base = env.XDG_STATE_HOME && env.XDG_STATE_HOME.startsWith("/") ? env.XDG_STATE_HOME : join(homedir(), ".local", "state")
  return join(base, "hookbus")
}

// One line to stderr and one JSON line appended to diagnostics.jsonl; never throws.
function diagnose(code, native, message, sessionID) {
  try {
    process.stderr.write(`hookbus: ${native}: ${message}\n`)
  } catch {}
  try {
    const dir = stateDir()
    mkdirSync(dir, { recursive: true, mode: 0o700 })
    const line = { event: code, level: "warning", timestamp: new Date().toISOString(), message, pid: process.pid, host: CONFIG.host, native }
    if (sessionID) line.session_id = sessionID
    appendFileSync(join(dir, "diagnostics.jsonl"), JSON.stringify(line) + "\n", { mode: 0o600, flag: "a" })
  } catch {}
}

@@SERVER_CLIENT@@

// Run hookbus on one payload: its reply, or the fallback (with a diagnostic). With the
// server path, the warm server is asked first; the command runs when it gives no answer.
function ask(native, payload, viaServer = true) {
  const spec = EVENTS[native]
  let body
  try {
    body = serialise(payload)
  } catch (e) {
    // A payload no JSON can hold must not let the call through unexamined: the
    // fallback is the refusal a fail-closed handler owes (as Pi's and Hermes's shims do).
    diagnose("hook-unavailable", native, `cannot serialise the payload (${e && e.message}); answered the fallback`)
    return Promise.resolve(spec.fallback)
  }
  return new Promise((resolve) => {
    let done = false
    let child
    let sock = null
    const out = []
    const finish = (reply, problem) => {
      if (done) return
      done = true
      clearTimeout(timer)
      if (sock) sock.destroy()
      if (problem) {
        if (child) try { process.kill(-child.pid, "SIGKILL") } catch {}
        diagnose("hook-unavailable", native, `${problem}; answered the fallback`, payload.input?.sessionID)
        reply = spec.fallback
      }
      resolve(reply)
    }
    // The reply hookbus printed (its stdout), as the command's or the server's.
    const read = (text) => {
      let reply
      try { reply = JSON.parse(text) } catch {}
      if (!reply || typeof reply !== "object" || Array.isArray(reply)) return finish(null, "hookbus printed no JSON object")
      finish(reply)
    }
    const timer = setTimeout(() => finish(null, child
      ? `no answer from hookbus in ${spec.wait_ms} ms, killed it`
      : `no answer from the warm server in ${spec.wait_ms} ms`), spec.wait_ms)
    const run = (argv = spec.argv) => {
      try {
        // detached: its own process group, so a kill takes hookbus's workers with it.
        child = spawn(argv[0], argv.slice(1), { stdio: ["pipe", "pipe", "ignore"], detached: true })
      } catch (e) {
        return finish(null, `cannot run ${spec.argv[0]} (${e.message})`)
      }
      child.on("error", (e) => finish(null, `cannot run ${spec.argv[0]} (${e.code || e.message})`))
      child.stdout.on("data", (chunk) => out.push(chunk))
      child.on("close", (code, signal) => {
        if (code !== 0) return finish(null, `hookbus exited ${signal || code}`)
        read(Buffer.concat(out).toString("utf8"))
      })
      child.stdin.on("error", () => {})
      try {
        child.stdin.end(body)
      } catch (e) {
        finish(null, `cannot send the payload (${e.message})`)
      }
    }
    if (!SERVER || !viaServer) return run()
    const began = Date.now()
    let waiting = true
    // The server took the call and gave no answer: the command answers what is owed.
    const owed = () => {
      if (done || !waiting) return
      waiting = false
      clearTimeout(late)
      if (sock) sock.destroy()
      sock = null
      run(owedArgv(spec.argv, spec.wait_ms - (Date.now() - began)))
    }
    const late = setTimeout(owed, serverWaitMs(spec.timeout, spec.wait_ms))
    sock = askServer(CONFIG.host, native, spec.timeout, body, (answer) => {
      if (done || !waiting) return
      if (answer.kind === "unanswered") return owed()
      waiting = false
      clearTimeout(late)
      sock = null
      if (answer.kind !== "answered") return run()
      if (answer.exit !== 0) return finish(null, `hookbus exited ${answer.exit}`)
      read(answer.stdout)
    })
  })
}

// The payload as JSON, whatever a tool's args hold: a BigInt becomes its decimal string
// and an object met again inside itself (a cycle) the string "[Circular]", where plain
// JSON.stringify throws. A getter or toJSON that throws still throws (ask answers the
// fallback then).
function serialise(payload) {
  const ancestors = []
  return JSON.stringify(payload, function (key, value) {
    if (typeof value === "bigint") return value.toString()
    if (typeof value !== "object" || value === null) return value
    // `this` is the object holding `value`: the ancestors are the chain down to it.
    while (ancestors.length > 0 && ancestors[ancestors.length - 1] !== this) ancestors.pop()
    if (ancestors.includes(value)) return "[Circular]"
    ancestors.push(value)
    return value
  })
}

// Whether a handler filters on this tool (tools: {names, prefixes}).
function wants(tools, tool) {
  return typeof tool === "string" && (tools.names.includes(tool) || tools.prefixes.some((p) => tool.startsWith(p)))
}

function payload(native, directory, input, output) {
  const sessionID = input?.sessionID || input?.event?.properties?.sessionID || input?.event?.properties?.info?.id
  const data = { hook: native, api: 1, directory, input, output }
  const parent = sessionID && parents.get(sessionID)
  if (parent) Object.assign(data, parent)
  return data
}

// Apply a reply to a hook's output; throws only to block.
function apply(native, reply, output) {
  if (typeof reply.block === "string" && native === "tool.execute.before") throw new Error(reply.block)
  try {
    edit(native, reply, output)
  } catch {}
}

function edit(native, reply, output) {
  if (reply.args && typeof reply.args === "object" && native === "tool.execute.before" && output?.args) {
    for (const key of Object.keys(output.args)) if (!(key in reply.args)) delete output.args[key]
    Object.assign(output.args, reply.args)
  }
  if (typeof reply.context === "string" && reply.context) {
    if (native === "tool.execute.after" && output) {
      output.output = typeof output.output === "string" && output.output ? `${output.output}\n\n${reply.context}` : reply.context
    } else if (native === "experimental.session.compacting" && Array.isArray(output?.context)) {
      output.context.push(reply.context)
    }
  }
}

export const HookbusPlugin = async (ctx) => {
  const directory = ctx?.directory || process.cwd()
  const hooks = {
    // Every bus event comes through here, streaming parts many times a second: look at
    // the type first, and only remember child sessions or forward a wanted event.
    event: async ({ event }) => {
      try {
        const type = event?.type
        if (type === "session.created") {
          const info = event.properties?.info
          if (info?.parentID) {
            if (parents.size >= PARENTS_MAX) parents.delete(parents.keys().next().value)
            parents.set(info.id, { parentID: info.parentID, agent: info.agent })
          }
        }
        if (!Object.hasOwn(EVENTS, type)) return
        await ask(type, payload(type, directory, { event }), false)
      } catch {}
    },
  }
  for (const native of TOOL_HOOKS) {
    if (!Object.hasOwn(EVENTS, native)) continue
    const tools = EVENTS[native].tools
    hooks[native] = async (input, output) => {
      if (tools && !wants(tools, input?.tool)) return
      let reply
      try {
        reply = await ask(native, payload(native, directory, input, output))
      } catch (e) {
        // Building the payload failed (a getter of the host's input threw): not a reason
        // to let the call through, so the event's fallback answers.
        diagnose("hook-unavailable", native, `the plugin failed (${e && e.message}); answered the fallback`)
        reply = EVENTS[native].fallback
      }
      apply(native, reply, output)
    }
  }
  return hooks
}
