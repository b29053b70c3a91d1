/**
 * A real Redis Cluster for the tests: masters (three by default) with a replica each, on free
 * loopback ports, started from `redis-server --cluster-enabled yes` and joined by `redis-cli
 * --cluster create`, stopped (and their files removed) afterwards. A missing `redis-server` or
 * `redis-cli` is an error, never a skip. The tests of every Redis package of sluice use it.
 */
import { type ChildProcess, execFile, spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { assertRedisServerInstalled, freePort } from "./redisServer.js"

export interface ClusterNode {
  readonly host: string
  readonly port: number
}

export interface RedisCluster {
  /** Every node, masters and replicas: startup nodes for an ioredis `Cluster`. */
  readonly nodes: ReadonlyArray<ClusterNode>
  /**
   * A coordinated failover of the shard that holds `key` (`CLUSTER FAILOVER` on its replica):
   * resolves once the replica is its master, the old master its replica, the cluster state ok on
   * every node and the two in sync. Answers the ports before and after. Needs replicas.
   */
  readonly failover: (key: string) => Promise<{ readonly from: number; readonly to: number }>
  /** The ports of the master that holds `key` now and of its replicas. */
  readonly shard: (key: string) => Promise<{ readonly master: number; readonly replicas: ReadonlyArray<number> }>
  /** `INFO <section>` of the node on `port`, asked directly (no Cluster client's stale slot map). */
  readonly info: (port: number, section: string) => Promise<string>
  readonly stop: () => Promise<void>
}

const sleep = (millis: number) => new Promise<void>((resolve) => setTimeout(resolve, millis))

/** redis-cli without blocking the event loop: the tests' own Redis traffic goes on meanwhile. */
const cli = (port: number, ...args: Array<string>): Promise<string> =>
  new Promise((resolve) => {
    execFile("redis-cli", ["-h", "127.0.0.1", "-p", String(port), ...args], { encoding: "utf8" }, (_, stdout) =>
      resolve(stdout ?? ""))
  })

const exited = (child: ChildProcess): Promise<void> =>
  child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise((resolve) => child.once("exit", () => resolve()))

/** Polls `ok` every 100 ms until it holds; fails naming `what` after `seconds`. */
const until = async (what: string, seconds: number, ok: () => Promise<boolean>): Promise<void> => {
  for (let attempt = 0; attempt < seconds * 10; attempt++) {
    if (await ok()) return
    await sleep(100)
  }
  throw new Error(`Redis Cluster: ${what} within ${seconds} s`)
}

interface NodeLine {
  readonly id: string
  readonly port: number
  readonly master: boolean
  readonly masterId: string
  readonly slots: ReadonlyArray<readonly [number, number]>
}

/** `CLUSTER NODES`, read: one line per node. */
const clusterNodes = async (port: number): Promise<ReadonlyArray<NodeLine>> =>
  (await cli(port, "CLUSTER", "NODES")).trim().split("\n").filter((line) => line.length > 0).map((line) => {
    const [id, address, flags, masterId, , , , , ...slots] = line.split(" ")
    return {
      id,
      port: Number(/:(\d+)@/.exec(address)?.[1]),
      master: flags.split(",").includes("master"),
      masterId,
      slots: slots.filter((s) => /^\d/.test(s)).map((s) => {
        const [from, to] = s.split("-").map(Number)
        return [from, to ?? from] as const
      })
    }
  })

const stateOk = async (ports: ReadonlyArray<number>) =>
  (await Promise.all(ports.map((port) => cli(port, "CLUSTER", "INFO")))).every((info) =>
    info.includes("cluster_state:ok")
  )

const replicaInSync = async (port: number) => {
  const info = await cli(port, "INFO", "replication")
  return info.includes("role:slave") && info.includes("master_link_status:up")
}

export const startCluster = async (options?: {
  readonly masters?: number
  readonly replicas?: number
}): Promise<RedisCluster> => {
  const masters = options?.masters ?? 3
  const replicas = options?.replicas ?? 1
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
    for (let i = 0; i < masters * (1 + replicas); i++) {
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
      await until(
        `the node on port ${port} did not answer PING`,
        10,
        async () => (await cli(port, "PING")).trim() === "PONG"
      )
    }
    // redis-cli makes the first `masters` nodes masters and gives each `replicas` of the others
    const create = spawnSync(
      "redis-cli",
      [
        "--cluster",
        "create",
        ...ports.map((p) => `127.0.0.1:${p}`),
        "--cluster-replicas",
        String(replicas),
        "--cluster-yes"
      ],
      { encoding: "utf8" }
    )
    if (create.status !== 0) throw new Error(`redis-cli --cluster create failed: ${create.stdout}${create.stderr}`)
    await until("cluster_state:ok not reached on every node", 30, () => stateOk(ports))
    if (replicas > 0) {
      // the replicas are told their masters by gossip: until every node sees them all, a node may
      // still list a replica as an empty master (and `failover` would find no replica)
      const expected = masters * replicas
      await until(`not every node saw the ${expected} replicas`, 30, async () => {
        for (const port of ports) {
          if ((await clusterNodes(port)).filter((n) => !n.master).length !== expected) return false
        }
        return true
      })
      const replicaPorts = (await clusterNodes(ports[0])).filter((n) => !n.master).map((n) => n.port)
      for (const port of replicaPorts) {
        await until(`the replica on port ${port} did not sync`, 30, () => replicaInSync(port))
      }
    }
  } catch (error) {
    await stop()
    throw error
  }

  const shardOf = async (key: string) => {
    const slot = Number((await cli(ports[0], "CLUSTER", "KEYSLOT", key)).trim())
    const nodes = await clusterNodes(ports[0])
    const master = nodes.find((n) => n.master && n.slots.some(([from, to]) => slot >= from && slot <= to))
    return { slot, nodes, master, replicas: nodes.filter((n) => !n.master && n.masterId === master?.id) }
  }

  // every node sees every replica as one (no empty master left by a role change still gossiping)
  const settled = async () => {
    for (const port of ports) {
      if ((await clusterNodes(port)).filter((n) => !n.master).length !== masters * replicas) return false
    }
    return true
  }

  const failover = async (key: string) => {
    // a previous failover's demoted master may still be listed as an empty master for a moment
    await until("the cluster's roles did not settle before a failover", 30, settled)
    const { master, nodes, replicas: shardReplicas, slot } = await shardOf(key)
    const replica = shardReplicas[0]
    if (master === undefined || replica === undefined) {
      throw new Error(`Redis Cluster: no master with a replica for slot ${slot} (${JSON.stringify(nodes)})`)
    }
    const answer = (await cli(replica.port, "CLUSTER", "FAILOVER")).trim()
    if (answer !== "OK") throw new Error(`CLUSTER FAILOVER on port ${replica.port}: ${answer}`)
    await until(`port ${replica.port} did not become the master of slot ${slot}`, 30, async () => {
      const after = await clusterNodes(replica.port)
      return after.some((n) => n.port === replica.port && n.master) &&
        after.some((n) => n.port === master.port && !n.master)
    })
    await until("cluster_state:ok not reached after the failover", 30, () => stateOk(ports))
    await until(`the old master on port ${master.port} did not sync as a replica`, 30, () => replicaInSync(master.port))
    await until("the cluster's roles did not settle after the failover", 30, settled)
    return { from: master.port, to: replica.port }
  }

  return {
    nodes: ports.map((port) => ({ host: "127.0.0.1", port })),
    failover,
    shard: async (key) => {
      const { master, replicas, slot } = await shardOf(key)
      if (master === undefined) throw new Error(`Redis Cluster: no master for slot ${slot}`)
      return { master: master.port, replicas: replicas.map((n) => n.port) }
    },
    info: (port, section) => cli(port, "INFO", section),
    stop: async () => {
      process.off("exit", killOnExit)
      await stop()
    }
  }
}
