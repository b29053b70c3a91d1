/**
 * Starts and stops real `redis-server` processes on free loopback ports, for the tests. A missing
 * `redis-server` is an error, never a reason to skip: the README's test command installs it.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import * as net from "node:net"

export interface RedisServer {
  readonly port: number
  readonly url: string
  /** Stops the server (SIGTERM, then SIGKILL after 2 s) and waits for it to exit. */
  readonly stop: () => Promise<void>
}

const sleep = (millis: number) => new Promise<void>((resolve) => setTimeout(resolve, millis))

export const assertRedisServerInstalled = (): void => {
  const probe = spawnSync("redis-server", ["--version"], { encoding: "utf8" })
  if (probe.error !== undefined || probe.status !== 0) {
    throw new Error(
      "redis-server is not on PATH: the Redis store's tests need a real Redis. Install it " +
        "(apt-get install redis-server) or run `bash scripts/test-all.sh`, which does."
    )
  }
}

export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = net.createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      server.close(() => resolve(port))
    })
  })

/** One PING over a raw socket: true when the server answers PONG within 500 ms. */
const ping = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const socket = net.connect({ port, host: "127.0.0.1" })
    const done = (ok: boolean) => {
      socket.destroy()
      resolve(ok)
    }
    socket.setTimeout(500, () => done(false))
    socket.once("error", () => done(false))
    socket.once("connect", () => socket.write("PING\r\n"))
    socket.once("data", (data) => done(data.toString().startsWith("+PONG")))
  })

const exited = (child: ChildProcess): Promise<void> =>
  child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise((resolve) => child.once("exit", () => resolve()))

/** Starts `redis-server` on `port` (default: a free one) and waits until it answers PING (≤ 10 s). */
export const startRedisServer = async (port?: number): Promise<RedisServer> => {
  assertRedisServerInstalled()
  const chosen = port ?? (await freePort())
  const child = spawn(
    "redis-server",
    ["--port", String(chosen), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--loglevel", "warning"],
    { stdio: ["ignore", "ignore", "pipe"] }
  )
  let stderr = ""
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString()
  })
  const killOnExit = () => child.kill("SIGKILL")
  process.once("exit", killOnExit)
  const stop = async () => {
    process.off("exit", killOnExit)
    if (child.exitCode !== null || child.signalCode !== null) return
    child.kill("SIGTERM")
    const timer = setTimeout(() => child.kill("SIGKILL"), 2000)
    await exited(child)
    clearTimeout(timer)
  }
  for (let attempt = 0; attempt < 100; attempt++) {
    if (child.exitCode !== null) break
    if (await ping(chosen)) return { port: chosen, url: `redis://127.0.0.1:${chosen}`, stop }
    await sleep(100)
  }
  await stop()
  throw new Error(`redis-server did not answer PING on port ${chosen} within 10 s: ${stderr.trim()}`)
}
