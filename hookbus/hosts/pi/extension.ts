// @@MARK@@: written by 'hookbus install --host pi', removed by its uninstall; edits are overwritten.
//
// hookbus's Pi extension: hands each event an enabled handler wants to the hookbus that
// installed it (by absolute path, no shell) and applies its answer. Plain JavaScript
// (Pi loads extensions with jiti), Node's standard library only. See docs/hosts/pi.md.
//
// In: one JSON object on the child's stdin, {event, sessionId, sessionFile, cwd, model,
// payload}. Out: one JSON object on its stdout, {} for no opinion, else any of
//   result: what this handler returns to Pi (Pi's own shape: {block, reason}, {cancel},
//           {message}),
//   input:  tool_call only: the new tool input, written into event.input in place (Pi
//           runs the object it passed us and does not validate it again),
//   append: tool_result only: content parts added after the tool's own.
//
// Pi waits for an extension without any limit, and a tool_call handler that throws
// blocks the tool: so nothing here throws, and each call is bounded. When hookbus cannot
// answer (gone, failed, unreadable, too slow) the event's fallback applies, baked in at
// install: {} (nothing changes), or the block a fail-closed handler owes; and one
// diagnostic is left, a line on stderr and one in hookbus's diagnostics log.
//
// With the server path (install's default; SERVER not null), a call goes first to the
// warm server's socket (the part between the "warm server" lines,
// hookbus/hosts/shared/server.js); when no server answers, the event's command (the client's)
// runs as below; `install --no-server` bakes `hookbus run` only.
import { spawn } from "node:child_process";
import { appendFileSync, closeSync, constants as fsConstants, lstatSync, mkdirSync, openSync, readlinkSync, statSync } from "node:fs";
import { connect } from "node:net";
import { homedir } from "node:os";
import { join, resolve as resolvePath } from "node:path";

// Per native event: argv (hookbus run, or the warm server's client), waitMs (this
// extension's own bound), fallback (the answer when hookbus cannot give one), tools (names
// forwarded; null: every tool); with the server path, timeout (the client's --timeout).
// The same commands, to run by hand (the payload on stdin; `hookbus try --host pi` too):
@@COMMANDS@@
const WANTED = @@WANTED@@;
// What a request to the warm server carries besides the call (null: the server path is off).
const SERVER = @@SERVER@@;

// What Pi's event objects hold that cannot or need not be sent (see docs/hosts/pi.md):
// the compaction's signal and history, all messages but the last, images' bytes (hookbus
// reads at most 1 MiB).
const last = (messages) => (Array.isArray(messages) ? messages.slice(-1) : messages);
const noBytes = (parts) => (Array.isArray(parts)
  ? parts.map((p) => (p && p.type === "image" ? { type: "image", mimeType: p.mimeType } : p)) : parts);

function slim(name, event) {
  const { signal, ...rest } = event;
  if (name === "agent_end") return { ...rest, messages: last(rest.messages) };
  if (name === "before_agent_start") return { ...rest, images: noBytes(rest.images) };
  if (name === "tool_result") {
    const details = rest.details && Array.isArray(rest.details.results)
      ? { ...rest.details, results: rest.details.results.map((r) => ({ ...r, messages: last(r.messages) })) }
      : rest.details;
    return { ...rest, content: noBytes(rest.content), details };
  }
  if (name === "session_before_compact") {
    const { branchEntries, preparation: p = {}, ...kept } = rest;
    return { ...kept, preparation: { firstKeptEntryId: p.firstKeptEntryId, tokensBefore: p.tokensBefore,
      isSplitTurn: p.isSplitTurn, previousSummary: p.previousSummary } };
  }
  return rest;
}

function wanted(spec, event) {
  const t = spec.tools;
  if (!t || typeof event.toolName !== "string") return true;
  const name = event.toolName;
  if (t.names.includes(name) || t.prefixes.some((p) => name.startsWith(p))) return true;
  return t.unknown && !t.known.includes(name) && !t.known_prefixes.some((p) => name.startsWith(p));
}

@@SERVER_CLIENT@@

// The one place hookbus is reached: the warm server first when the server path is on,
// else (or when it gives no answer) the event's command.
function ask(name, spec, input) {
  const { argv, waitMs } = spec;
  return new Promise((resolve) => {
    let out = "", done = false, child, sock = null;
    const end = (why, reply) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      if (sock) sock.destroy();
      resolve({ why, reply });
    };
    // hookbus's stdout, the command's or the server's.
    const read = (text) => {
      try {
        const reply = JSON.parse(text);
        if (reply && typeof reply === "object" && !Array.isArray(reply)) return end(null, reply);
      } catch {}
      end(`unreadable answer from hookbus: ${JSON.stringify(text.slice(0, 200))}`);
    };
    const timer = setTimeout(() => {
      if (!child) return end(`no answer from the warm server in ${waitMs / 1000} s`);
      try { process.kill(-child.pid, "SIGKILL"); } catch { try { child.kill("SIGKILL"); } catch {} }
      end(`no answer in ${waitMs / 1000} s; hookbus was killed`);
    }, waitMs);
    const run = (command = argv) => {
      try {
        child = spawn(command[0], command.slice(1), { stdio: ["pipe", "pipe", "ignore"], detached: true });
      } catch (e) {
        return end(`cannot run ${command[0]}: ${e && e.message}`);
      }
      child.on("error", (e) => end(`cannot run ${command[0]}: ${e && e.message}`));
      child.stdout.setEncoding("utf8");
      child.stdout.on("data", (chunk) => { out += chunk; });
      child.on("close", (code, sig) => {
        if (code !== 0) return end(`hookbus ${sig ? `was killed by ${sig}` : `exited ${code}`}`);
        read(out);
      });
      child.stdin.on("error", () => {});
      child.stdin.end(input);
    };
    if (!SERVER) return run();
    const began = Date.now();
    let waiting = true;
    // The server took the call and gave no answer: the command answers what is owed.
    const owed = () => {
      if (done || !waiting) return;
      waiting = false;
      clearTimeout(late);
      if (sock) sock.destroy();
      sock = null;
      run(owedArgv(argv, waitMs - (Date.now() - began)));
    };
    const late = setTimeout(owed, serverWaitMs(spec.timeout, waitMs));
    sock = askServer("pi", name, spec.timeout, input, (answer) => {
      if (done || !waiting) return;
      if (answer.kind === "unanswered") return owed();
      waiting = false;
      clearTimeout(late);
      sock = null;
      if (answer.kind !== "answered") return run();
      if (answer.exit !== 0) return end(`hookbus exited ${answer.exit}`);
      read(answer.stdout);
    });
  });
}

// One line on stderr, one in the diagnostics log (docs/diagnostics.md); never throws.
function diagnose(name, spec, why, sessionId) {
  const blocks = !!(spec.fallback.result && spec.fallback.result.block);
  const message = `pi ${name}: ${why}; ${blocks ? "blocked (a fail-closed handler wants it)" : "nothing changed"}`;
  try { process.stderr.write(`hookbus: ${message}\n`); } catch {}
  try {
    const env = process.env;
    const dir = env.HOOKBUS_STATE_DIR || join(env.XDG_STATE_HOME || join(homedir(), ".local", "state"), "hookbus");
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const line = { event: "hook-unavailable", level: "warning", timestamp: new Date().toISOString(), message,
      pid: process.pid, host: "pi", native: name, session_id: sessionId, argv: spec.argv };
    appendFileSync(join(dir, "diagnostics.jsonl"), JSON.stringify(line) + "\n", { flag: "a", mode: 0o600 });
  } catch {}
}

function apply(name, reply, event) {
  if (name === "tool_call" && reply.input && typeof reply.input === "object" && event.input) {
    for (const key of Object.keys(event.input)) if (!(key in reply.input)) delete event.input[key];
    Object.assign(event.input, reply.input);
  }
  if (name === "tool_result" && Array.isArray(reply.append) && reply.append.length) {
    return { ...(reply.result || {}), content: [...(event.content || []), ...reply.append] };
  }
  return reply.result || undefined;
}

// The session's facts, from the handler's ctx. A ctx throws once Pi replaced or shut
// down its session (print mode compacts after session_shutdown): what a ctx said last
// is kept.
let session = { sessionId: "", sessionFile: null, cwd: process.cwd(), model: null };
function facts(ctx) {
  try {
    const sm = ctx.sessionManager;
    const model = ctx.model ? `${ctx.model.provider}/${ctx.model.id}` : null;
    session = { sessionId: sm.getSessionId() || "", sessionFile: sm.getSessionFile() || null,
      cwd: ctx.cwd || session.cwd, model };
  } catch {}
  return session;
}

async function handle(name, spec, event, ctx) {
  const known = facts(ctx);
  try {
    if (!wanted(spec, event)) return undefined;
    const input = JSON.stringify({ event: name, ...known, payload: slim(name, event) });
    const { why, reply } = await ask(name, spec, input);
    if (why === null) return apply(name, reply, event);
    diagnose(name, spec, why, known.sessionId);
  } catch (e) {
    diagnose(name, spec, `the extension failed: ${e && e.message}`, known.sessionId);
  }
  try { return apply(name, spec.fallback, event); } catch { return undefined; }
}

export default function hookbus(pi) {
  for (const [name, spec] of Object.entries(WANTED)) pi.on(name, (event, ctx) => handle(name, spec, event, ctx));
}
