/**
 * A redis-server of the benchmark's own on a free loopback port, stopped when the suite ends. A
 * missing redis-server is an error: the README's test command installs it.
 */
import { spawn, spawnSync } from "node:child_process"
import * as net from "node:net"

export interface RedisServer {
  readonly port: number
  readonly url: string
  readonly stop: () => Promise<void>
}

const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = net.createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      server.close(() => resolve(port))
    })
  })

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

export const startRedisServer = async (): Promise<RedisServer> => {
  const probe = spawnSync("redis-server", ["--version"], { encoding: "utf8" })
  if (probe.error !== undefined || probe.status !== 0) {
    throw new Error("redis-server is not on PATH (apt-get install redis-server, or run bash scripts/test-all.sh)")
  }
  const port = await freePort()
  const child = spawn(
    "redis-server",
    ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--loglevel", "warning"],
    { stdio: "ignore" }
  )
  const kill = () => child.kill("SIGKILL")
  process.once("exit", kill)
  const stop = async () => {
    process.off("exit", kill)
    if (child.exitCode !== null || child.signalCode !== null) return
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
    child.kill("SIGTERM")
    const timer = setTimeout(kill, 2000)
    await exited
    clearTimeout(timer)
  }
  for (let attempt = 0; attempt < 100 && child.exitCode === null; attempt++) {
    if (await ping(port)) return { port, url: `redis://127.0.0.1:${port}`, stop }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  await stop()
  throw new Error(`redis-server did not answer PING on port ${port} within 10 s`)
}
