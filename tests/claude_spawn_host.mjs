// A stand-in for Claude Code's hooks engine, just enough to drive hookbus's agent.spawn
// module (hookbus/hosts/claude/spawn.js, installed) with Node, outside Claude:
//
//   node claude_spawn_host.mjs MODULE.mjs PLUGIN_ROOT < spawn-event.json
//
// It loads the module, runs its session.start then its agent.spawn hook on the event read
// from stdin, the way the 2.1.332 engine calls them (hook($, e, next); a throw runs the
// hook's .catch($, e, next) with next.error), and prints one JSON object: what the hook
// returned ({next: e'} when it passed the spawn on, else its own answer), the variable
// HOOKBUS_CLAUDE_SPAWN_MOD after each step, and the $.ui.log lines. The engine's
// $.process.run is mirrored from its 2.1.332 code: argv without a shell, stdin, a bounded
// wait whose expiry kills the child and throws, {exitCode, stdout, stderr}. The real
// engine runs the module in tests/e2e/test_claude_spawn_mod.py.
import { spawn } from "node:child_process"
import { readFileSync } from "node:fs"
import { pathToFileURL } from "node:url"

const [modulePath, pluginRoot] = process.argv.slice(2)
const event = JSON.parse(readFileSync(0, "utf8"))
const env = new Map(Object.entries(process.env))
const logs = []

function run(argv, init = {}) {
  return new Promise((resolve, reject) => {
    let child
    try {
      child = spawn(argv[0], argv.slice(1), { stdio: ["pipe", "pipe", "pipe"], env: Object.fromEntries(env) })
    } catch (e) {
      return reject(new Error(`$.process.run (hookbus): ${argv[0]} ${e.message}`))
    }
    const out = []
    const err = []
    const wait = init.timeoutMs ?? 30000
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`$.process.run (hookbus): ${argv[0]} aborted: still running after ${wait}ms`))
    }, wait)
    child.on("error", (e) => { clearTimeout(timer); reject(new Error(`$.process.run (hookbus): ${argv[0]} ${e.code}`)) })
    child.stdout.on("data", (c) => out.push(c))
    child.stderr.on("data", (c) => err.push(c))
    child.on("close", (code) => {
      clearTimeout(timer)
      resolve({ exitCode: code ?? 1, stdout: Buffer.concat(out).toString(), stderr: Buffer.concat(err).toString() })
    })
    child.stdin.on("error", () => {})
    child.stdin.end(init.stdin ?? "")
  })
}

const $ = {
  plugin: { root: pluginRoot },
  env: {
    get: async (name) => env.get(name),
    set: async (name, value) => { if (value === undefined) env.delete(name); else env.set(name, value) },
  },
  process: { run },
  session: { info: async () => ({ transcriptPath: `/tmp/projects/x/${env.get("FAKE_SESSION") ?? "sess-1"}.jsonl` }) },
  ui: { log: (text, opts) => logs.push({ text, to: opts?.to }) },
}

const hooks = {}
const on = (name, hook) => {
  const entry = { hook, catch: undefined }
  hooks[name] = entry
  return { catch: (handler) => { entry.catch = handler } }
}

async function fire(name, e) {
  const origin = JSON.parse(env.get("FAKE_ORIGIN") ?? '{"plugin":"engine","tier":"core"}')
  let called = false
  const next = (x) => { called = true; return { next: x } }
  next.origin = origin
  const { hook, catch: caught } = hooks[name]
  try {
    return await hook($, e, next)
  } catch (error) {
    if (!caught) return { uncaught: String(error) }
    const again = (x) => ({ next: x })
    again.error = error
    again.called = called
    again.origin = origin
    return await caught($, e, again)
  }
}

const { register } = await import(pathToFileURL(modulePath).href)
register(on)
const started = await fire("session.start", {})
const afterStart = env.get("HOOKBUS_CLAUDE_SPAWN_MOD") ?? null
const result = await fire("agent.spawn", event)
const afterSpawn = env.get("HOOKBUS_CLAUDE_SPAWN_MOD") ?? null
process.stdout.write(JSON.stringify({ started, afterStart, result, afterSpawn, logs }) + "\n")
