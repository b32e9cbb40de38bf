// -- the warm server (inlined by hookbus's manifests from hookbus/hosts/shared/server.js) --------
//
// With the server path (install's default), SERVER is {proto, version} and a call is first
// handed to a running `hookbus serve` over its Unix socket, in wire protocol v1
// (docs/client.md): no interpreter starts when it answers. The rules are client.py's:
// the socket is $XDG_RUNTIME_DIR/hookbus/server-<identity>.sock when that names an absolute
// folder of this user's, else <state root>/run/server-<identity>.sock (serverFile: the
// digest of the variables that pick the configuration and state, so that the host's calls
// reach the server of the host's own configuration); a path to it that another user could
// change, or a socket file of another user's, is never connected to (dirProblem,
// socketProblem); the request carries the host's whole environment, as the client's. Whoever
// asks treats anything but an answer (no socket, a stale one, a refusal, a reply cut
// short) by running the event's command, the client's, which runs the cold path and
// starts a server for the next call under its lock: the host sees no difference but time.
// A server that took the call and gives no answer (it says the call's worker ended, or
// the wait ends) gets the command run with --unanswered (owedArgv).
const CONNECT_WAIT_MS = 200 // client.py CONNECT_WAIT: a server with no room is not waited for
const MARGIN_MS = 250 // client.py MARGIN: the client waits for the server until its timeout less this
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

// client.py IDENTITY_ENV, identity and digest: the variables that decide which
// configuration and state a call uses (unset is not empty), their bytes read as one
// big-endian integer modulo the largest prime below 2**64, in the server's file names.
const IDENTITY_ENV = ["HOME", "HOOKBUS_CONFIG", "HOOKBUS_STATE_DIR", "XDG_CONFIG_HOME", "XDG_STATE_HOME"]
const PRIME = (1n << 64n) - 59n
function digest(bytes) {
  return (BigInt(`0x${bytes.toString("hex") || "0"}`) % PRIME).toString(16).padStart(16, "0")
}
function serverFile(kind) {
  const env = process.env
  const text = IDENTITY_ENV.map((name) => (env[name] === undefined ? `${name}\0` : `${name}=${env[name]}\0`)).join("")
  return `server-${digest(Buffer.from(text, "utf8"))}.${kind}`
}

// client.py dir_problem, the same rule (hookbus serve binds only where it holds): why the
// socket's folder must not be used (null: nobody but this user and root can have made it
// what it is, or it is absent). The folder is a real one of this user's that nobody else
// may write; every folder above is root's or this user's and writable by nobody else,
// except a root sticky folder (/tmp) whose next component is this user's; a symbolic link
// above is root's or this user's, and the path it names is checked the same way.
function dirProblem(folder) {
  const me = process.geteuid()
  const parts = folder.split("/").filter((p) => p && p !== ".")
  const last = parts.pop()
  const todo = parts.reverse()
  let real = [], links = 0, at = "/"
  try {
    let st = lstatSync(at)
    for (;;) {
      if (st.uid !== 0 && st.uid !== me) return `${at} is owned by uid ${st.uid}`
      const openToOthers = (st.mode & 0o022) !== 0
      if (openToOthers && !((st.mode & 0o1000) && st.uid === 0)) return `${at} is writable by group or others`
      if (!todo.length) break
      const name = todo.pop()
      if (name === "..") {
        real = real.slice(0, -1)
        at = "/" + real.join("/")
        st = lstatSync(at)
        continue
      }
      at = "/" + [...real, name].join("/")
      st = lstatSync(at)
      if (openToOthers && st.uid !== me) return `${at} is owned by uid ${st.uid}, in a folder others may write`
      if (st.isSymbolicLink()) {
        if (++links > 40 || (st.uid !== 0 && st.uid !== me)) return `${at} is a symbolic link of uid ${st.uid}`
        const target = readlinkSync(at)
        todo.push(...target.split("/").filter((p) => p && p !== ".").reverse())
        if (target.startsWith("/")) real = []
        at = "/" + real.join("/")
        st = lstatSync(at)
        continue
      }
      if (!st.isDirectory()) return `${at} is not a folder`
      real.push(name)
    }
    at = "/" + [...real, last].join("/")
    st = lstatSync(at)
    if (!st.isDirectory()) return `${at} is not a folder`
    if (st.uid !== me) return `${at} is owned by uid ${st.uid}`
    if (st.mode & 0o022) return `${at} is writable by group or others`
  } catch (e) {
    return e.code === "ENOENT" ? null : `${at} cannot be read: ${e.code || e.message}`
  }
  return null
}

// Who listens on the socket. Node cannot read a connected socket's peer credentials
// (SO_PEERCRED), so the shim trusts the path instead: dirProblem has found every folder
// on it writable by this user and root only (or a root sticky folder whose next one is
// this user's), so no other user can rename, replace or add any component of it, and the
// socket file itself is this user's. Another user could only listen on a socket they
// bound, in a folder they can write: a socket file they own, or one reached through a
// folder they can change, both refused here. (client.py also asks the kernel.)
function socketProblem(path) {
  let st
  try {
    st = lstatSync(path)
  } catch (e) {
    return null // absent (or not to be read): connect says which
  }
  if (!st.isSocket()) return null // junk: connect refuses it
  if (st.uid !== process.geteuid()) return `its socket is owned by uid ${st.uid}`
  return null
}

// How long a shim waits for the server that took its call: as long as the client would
// (the command's --timeout less MARGIN_MS), within the shim's own wait.
function serverWaitMs(timeout, waitMs) {
  return Number.isFinite(timeout) ? Math.max(0, Math.min(timeout * 1000 - MARGIN_MS, waitMs)) : waitMs
}

// The command to run when the server took the call and gave no answer: the client with
// --unanswered answers what the subscription index owes, as it does for its own call: the
// refusal of a fail-closed handler that may want the call, even one enabled after the
// install (this file's fallback was baked before it), else exit 1 (the fallback); the call
// runs again only when no index can be read (the cold path). Its --timeout is what is left
// of the shim's wait (the last --timeout counts).
function owedArgv(argv, leftMs) {
  return [...argv, "--unanswered", "--timeout", String(Math.max(leftMs, 1) / 1000)]
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
// destroys it at serverWaitMs: a server that took the call and never answers is the
// caller's to end), or null when nothing was connected.
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
  const name = serverFile("sock")
  let path = join(folder, name)
  const problem = dirProblem(folder) || socketProblem(path)
  if (problem) {
    end({ kind: "refused", reason: `its path: ${problem}` })
    return null
  }
  if (Buffer.byteLength(path) > ADDRESS_MAX) {
    try {
      folderFd = openSync(folder, fsConstants.O_RDONLY | fsConstants.O_DIRECTORY | fsConstants.O_CLOEXEC)
    } catch (e) {
      end({ kind: e.code === "ENOENT" ? "absent" : "refused", reason: `cannot open ${folder}: ${e.code}` })
      return null
    }
    path = `/proc/self/fd/${folderFd}/${name}`
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
      // An exit status is a byte (client.py's rule): anything else is a reply not to trust.
      if (!Number.isInteger(status.exit) || status.exit < 0 || status.exit > 255) return end({ kind: "broken", reason: "the server's status has no exit status" })
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
