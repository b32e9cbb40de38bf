// Drives installed JS shims the way their hosts do, for shim_roundtrip.py.
//
// usage: node shim_driver.mjs CASES.json   (prints {"samples": {key: [ms...]}} on stdout)
//
// CASES.json: {"rounds", "seed", "warmup", "cases": [{key, kind, path?, argv?}]}, kind
// being "opencode" (an OpenCode/Kilo plugin module: HookbusPlugin(ctx) -> hooks), "pi"
// (a Pi extension module: default(pi) registers pi.on handlers) or "spawn" (argv run
// with an empty stdin: the cost of a process from this runtime). Every round calls each
// case once, in a fresh shuffled order, with the allow payload; the deny payload is
// checked once before timing.
import { spawn } from "node:child_process"
import { readFileSync } from "node:fs"

const spec = JSON.parse(readFileSync(process.argv[2], "utf8"))
const ALLOW = "npm test -- --runInBand"
const DENY = "rm -rf /"

// A small seeded generator (mulberry32): the order is reproducible with --seed.
function random(seed) {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = Math.imul(a ^ (a >>> 15), 1 | a)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

function run(argv) {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0], argv.slice(1), { stdio: ["pipe", "ignore", "ignore"] })
    child.on("error", reject)
    child.on("close", (code) => (code === 0 ? resolve("allow") : reject(new Error(`exit ${code}`))))
    child.stdin.end("")
  })
}

// One call of a case: resolves "allow" or "deny" (what the host would do).
async function caller(c) {
  if (c.kind === "spawn") return () => run(c.argv)
  const mod = await import(c.path)
  if (c.kind === "opencode") {
    const hooks = await mod.HookbusPlugin({ directory: process.cwd(), worktree: process.cwd() })
    let n = 0
    return async (command = ALLOW) => {
      const output = { args: { command, description: "Run the test suite" } }
      try {
        await hooks["tool.execute.before"]({ tool: "bash", sessionID: "ses_bench", callID: `call_${n++}` }, output)
      } catch {
        return "deny"
      }
      return output.args.command === command ? "allow" : "rewritten"
    }
  }
  const handlers = {}
  mod.default({ on: (name, f) => { handlers[name] = f } })
  const ctx = {
    cwd: process.cwd(),
    model: { provider: "fake", id: "fake-model" },
    sessionManager: { getSessionId: () => "bench-session", getSessionFile: () => null },
  }
  let n = 0
  return async (command = ALLOW) => {
    const event = { type: "tool_call", toolName: "bash", toolCallId: `call_${n++}`, input: { command } }
    const result = await handlers.tool_call(event, ctx)
    return result && result.block ? "deny" : event.input.command === command ? "allow" : "rewritten"
  }
}

const calls = {}
for (const c of spec.cases) calls[c.key] = await caller(c)
for (const c of spec.cases) {
  for (let i = 0; i < spec.warmup; i++) await calls[c.key]()
  const allowed = await calls[c.key]()
  const denied = c.kind === "spawn" ? "deny" : await calls[c.key](DENY)
  if (allowed !== "allow" || denied !== "deny") {
    process.stderr.write(`${c.key}: allow payload gave ${allowed}, deny payload gave ${denied}\n`)
    process.exit(1)
  }
}
const next = random(spec.seed)
const samples = Object.fromEntries(spec.cases.map((c) => [c.key, []]))
const order = spec.cases.map((c) => c.key)
for (let r = 0; r < spec.rounds; r++) {
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1))
    ;[order[i], order[j]] = [order[j], order[i]]
  }
  for (const key of order) {
    const started = performance.now()
    const verdict = await calls[key]()
    samples[key].push(performance.now() - started)
    if (verdict !== "allow") {
      process.stderr.write(`${key}: round ${r} gave ${verdict}\n`)
      process.exit(1)
    }
  }
}
process.stdout.write(JSON.stringify({ samples }) + "\n")
