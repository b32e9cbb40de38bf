// -- the warm server (inlined by hookbus's manifests from hookbus/shims/server.js) --------
//
// With the server path (install's default), SERVER is {proto, version} and a call is first
// handed to a running `hookbus serve` over its Unix socket, in wire protocol v1
// (docs/client.md): no interpreter starts when it answers. The rules are client.py's:
// the socket is $XDG_RUNTIME_DIR/hookbus/server.sock when that names an absolute folder
// of this user's, else <state root>/run/server.sock; a socket folder that is not a
// folder, not this user's, or writable by group or others is never connected to; the
// request carries the host's whole environment, as the client's. Whoever asks treats
// anything but an answer (no socket, a stale one, a refusal, a reply cut short) by
// running the event's command, the client's, which runs the cold path and starts a
// server for the next call under its lock: the host sees no difference but time.
const CONNECT_WAIT_MS = 200 // client.py CONNECT_WAIT: a server with no room is not waited for
const MAX_FRAME = 4 << 20
// sockaddr_un holds 108 bytes: a longer path is reached through /proc/self/fd/N of its
// folder, as client.py does (Node's net.connect cannot connect relative to a folder fd,
// but the kernel resolves the /proc link in this same process).
const ADDRESS_MAX = 100

function workingFolder() {
  try {
    return process.cwd()
  } catch {
    return process.env.PWD || "/"
  }
}

// client.py _absolute: ~ expanded, relative to the working folder, normalised.
function absolute(path) {
  if (path === "~" || path.startsWith("~/")) path = (process.env.HOME || homedir()) + path.slice(1)
  return resolvePath(workingFolder(), path)
}

// client.py socket_dir (hookbus serve binds by the same rule).
function socketDir() {
  const env = process.env
  const runtime = env.XDG_RUNTIME_DIR || ""
  if (runtime.startsWith("/")) {
    try {
      const st = statSync(runtime)
      if (st.isDirectory() && st.uid === process.geteuid()) return join(runtime, "hookbus")
    } catch {}
  }
  const root = env.HOOKBUS_STATE_DIR
    ? absolute(env.HOOKBUS_STATE_DIR)
    : join(absolute(env.XDG_STATE_HOME || "~/.local/state"), "hookbus")
  return join(root, "run")
}

// client.py dir_problem: why the folder must not be used (null: this user's alone, or absent).
function dirProblem(folder) {
  let st
  try {
    st = lstatSync(folder)
  } catch (e) {
    return e.code === "ENOENT" ? null : `cannot be read: ${e.code || e.message}`
  }
  if (!st.isDirectory()) return "is not a folder"
  if (st.uid !== process.geteuid()) return `is owned by uid ${st.uid}`
  if (st.mode & 0o022) return "is writable by group or others"
  return null
}

function framed(data) {
  const size = Buffer.alloc(4)
  size.writeUInt32BE(data.length)
  return [size, data]
}

// The request's first frame: client.py header(), the same fields, and the host's whole
// environment (the call's handlers see exactly it, as a command the host ran would).
function requestHeader(host, native, timeout) {
  return { proto: SERVER.proto, version: SERVER.version, op: "run", host, event: native,
    timeout, cwd: workingFolder(), env: { ...process.env } }
}

// Hand one call to the server. `answer` is called once: {kind: "answered", exit, stdout}
// or {kind: "absent" | "refused" | "broken" | "unanswered", reason}. Returns the socket (the caller
// destroys it at its own bound: a server that took the call and never answers is the
// caller's timeout), or null when nothing was connected.
function askServer(host, native, timeout, body, answer) {
  let done = false
  const end = (result) => {
    if (done) return
    done = true
    clearTimeout(timer)
    if (folderFd >= 0) try { closeSync(folderFd) } catch {}
    folderFd = -1
    if (sock) sock.destroy()
    answer(result)
  }
  let timer, sock = null, folderFd = -1
  const folder = socketDir()
  const problem = dirProblem(folder)
  if (problem) {
    end({ kind: "refused", reason: `its folder ${problem}` })
    return null
  }
  let path = join(folder, "server.sock")
  if (Buffer.byteLength(path) > ADDRESS_MAX) {
    try {
      folderFd = openSync(folder, fsConstants.O_RDONLY | fsConstants.O_DIRECTORY | fsConstants.O_CLOEXEC)
    } catch (e) {
      end({ kind: e.code === "ENOENT" ? "absent" : "refused", reason: `cannot open ${folder}: ${e.code}` })
      return null
    }
    path = `/proc/self/fd/${folderFd}/server.sock`
  }
  let connected = false, status = null, got = Buffer.alloc(0)
  const frames = []
  timer = setTimeout(() => end({ kind: "refused", reason: `no room to connect within ${CONNECT_WAIT_MS} ms` }), CONNECT_WAIT_MS)
  sock = connect({ path })
  sock.on("connect", () => {
    connected = true
    clearTimeout(timer)
    if (folderFd >= 0) try { closeSync(folderFd) } catch {}
    folderFd = -1
    const head = Buffer.from(JSON.stringify(requestHeader(host, native, timeout)))
    // One write, as the client sends its frames (the server reads the header first).
    sock.write(Buffer.concat([...framed(head), ...framed(Buffer.from(body))]))
  })
  sock.on("data", (chunk) => {
    got = Buffer.concat([got, chunk])
    while (got.length >= 4) {
      const size = got.readUInt32BE(0)
      if (size > MAX_FRAME) return end({ kind: "broken", reason: "frame too large" })
      if (got.length < 4 + size) break
      frames.push(got.subarray(4, 4 + size))
      got = got.subarray(4 + size)
    }
    if (status === null && frames.length) {
      try { status = JSON.parse(frames[0].toString("utf8")) } catch {}
      if (!status || typeof status !== "object") return end({ kind: "broken", reason: "the server's status is not an object" })
      // "unanswered": the call ran and its worker ended without an answer (past its
      // deadline): it must not run again, the caller answers the fallback.
      if (status.ok !== true) return end({ kind: status.refused === "unanswered" ? "unanswered" : "refused", reason: String(status.message || status.refused) })
      if (!Number.isInteger(status.exit)) return end({ kind: "broken", reason: "the server's status has no exit" })
    }
    if (frames.length >= 3) end({ kind: "answered", exit: status.exit, stdout: frames[1].toString("utf8") })
  })
  sock.on("error", (e) => {
    // No socket, or one nobody listens on (stale): no server; the client starts one.
    if (!connected && (e.code === "ENOENT" || e.code === "ECONNREFUSED")) return end({ kind: "absent", reason: e.code })
    end({ kind: connected ? "broken" : "refused", reason: `${connected ? "" : "cannot connect: "}${e.code || e.message}` })
  })
  sock.on("close", () => end({ kind: "broken", reason: "the server closed the connection" }))
  return sock
}
// -- end of the warm server -----------------------------------------------------------------
