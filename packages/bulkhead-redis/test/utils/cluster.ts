/**
 * A real Redis Cluster for the tests: three masters on free loopback ports, started from
 * `redis-server --cluster-enabled yes` and joined by `redis-cli --cluster create`, stopped (and
 * their files removed) afterwards. A missing `redis-server` or `redis-cli` is an error, never a skip.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { assertRedisServerInstalled, freePort } from "../../../rate-limiter-redis/test/utils/redisServer.js"

export interface RedisCluster {
  readonly nodes: ReadonlyArray<{ readonly host: string; readonly port: number }>
  readonly stop: () => Promise<void>
}

const sleep = (millis: number) => new Promise<void>((resolve) => setTimeout(resolve, millis))

const cli = (port: number, ...args: Array<string>) =>
  spawnSync("redis-cli", ["-h", "127.0.0.1", "-p", String(port), ...args], { encoding: "utf8" })

const exited = (child: ChildProcess): Promise<void> =>
  child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise((resolve) => child.once("exit", () => resolve()))

export const startCluster = async (masters = 3): Promise<RedisCluster> => {
  assertRedisServerInstalled()
  if (spawnSync("redis-cli", ["--version"]).status !== 0) {
    throw new Error("redis-cli is not on PATH: the Cluster tests need it (apt-get install redis-tools)")
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "sluice-cluster-"))
  const children: Array<ChildProcess> = []
  const ports: Array<number> = []
  const stop = async () => {
    for (const child of children) if (child.exitCode === null) child.kill("SIGTERM")
    const timer = setTimeout(() => children.forEach((c) => c.kill("SIGKILL")), 2000)
    await Promise.all(children.map(exited))
    clearTimeout(timer)
    fs.rmSync(dir, { recursive: true, force: true })
  }
  const killOnExit = () => children.forEach((c) => c.kill("SIGKILL"))
  process.once("exit", killOnExit)
  try {
    for (let i = 0; i < masters; i++) {
      // the bus port is given explicitly (Redis 7): port + 10000 may be past 65535
      const port = await freePort()
      const busPort = await freePort()
      ports.push(port)
      const child = spawn("redis-server", [
        "--port",
        String(port),
        "--cluster-port",
        String(busPort),
        "--bind",
        "127.0.0.1",
        "--cluster-enabled",
        "yes",
        "--cluster-config-file",
        `nodes-${port}.conf`,
        "--cluster-node-timeout",
        "5000",
        "--dir",
        dir,
        "--save",
        "",
        "--appendonly",
        "no",
        "--loglevel",
        "warning"
      ], { stdio: ["ignore", "ignore", "pipe"] })
      children.push(child)
    }
    for (const port of ports) {
      for (let attempt = 0;; attempt++) {
        if (cli(port, "PING").stdout.trim() === "PONG") break
        if (attempt > 100) throw new Error(`cluster node on port ${port} did not answer PING within 10 s`)
        await sleep(100)
      }
    }
    const create = spawnSync(
      "redis-cli",
      ["--cluster", "create", ...ports.map((p) => `127.0.0.1:${p}`), "--cluster-replicas", "0", "--cluster-yes"],
      { encoding: "utf8" }
    )
    if (create.status !== 0) throw new Error(`redis-cli --cluster create failed: ${create.stdout}${create.stderr}`)
    for (const port of ports) {
      for (let attempt = 0;; attempt++) {
        if (cli(port, "CLUSTER", "INFO").stdout.includes("cluster_state:ok")) break
        if (attempt > 200) throw new Error(`cluster node on port ${port} did not reach cluster_state:ok within 20 s`)
        await sleep(100)
      }
    }
  } catch (error) {
    await stop()
    throw error
  }
  return {
    nodes: ports.map((port) => ({ host: "127.0.0.1", port })),
    stop: async () => {
      process.off("exit", killOnExit)
      await stop()
    }
  }
}
