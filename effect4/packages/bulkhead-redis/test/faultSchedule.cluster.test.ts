/**
 * The fault schedule on a Redis Cluster (three masters with a replica each, started here): the
 * fleet of test/faultSchedule.test.ts on Cluster connections; two faults of a process drawn from a
 * seed (SIGKILL, or SIGSTOP past the TTL; printed on failure, FAULT_SEED replays one), then two
 * coordinated failovers of the name's shard (`CLUSTER FAILOVER` on its replica, which takes over
 * once it has every write of the master: nothing is lost). Checked:
 *
 * - never more than K requests in flight, leaving out calls a process started before it was stopped;
 * - after a death, K in flight again within the lease TTL + 1 s;
 * - after a failover, K in flight again within 1 s (+ the slack for this test process) of the new
 *   master serving the slot, and at least 30 calls in the TTL after (the fleet's pace, not its
 *   beats'): the fleet's grant subscriptions (SSUBSCRIBE) follow the shard;
 * - strict FIFO: the grants, as the shard's two nodes ran them (MONITOR on both), in ticket order.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { startCluster } from "../../../../core/testing/cluster.js"
import { RedisBulkhead } from "../src/index.js"
import { generator, grantLog, PROCESSES, seedOf, startFleet, STARVED, TTL } from "./utils/faultSchedule.js"
import { uniqueName } from "./utils/helpers.js"

describe("a fault schedule on a Redis Cluster", () => {
  it.live(
    "three processes, K permits, failovers of the name's shard, kills and stops: the invariants hold",
    () => {
      const seed = seedOf()
      return Effect.gen(function*() {
        const random = generator(seed)
        const cluster = yield* Effect.acquireRelease(
          Effect.promise(() => startCluster()),
          (cluster) => Effect.promise(() => cluster.stop())
        )
        const name = uniqueName("cfaults")
        const { keys } = RedisBulkhead.keysOf("sluice:bh:", name)
        // the shard of the name: its master and its replica, which swap at each failover
        const { master, replicas } = yield* Effect.promise(() => cluster.shard(keys[0]))
        const log = grantLog([master, ...replicas], keys[4], keys[2])
        yield* log.attach
        yield* Effect.addFinalizer(() => log.detach)
        const fleet = yield* startFleet(seed, name, { url: "", cluster: cluster.nodes })
        const { server } = fleet
        // two faults of a process (seeded), then two failovers of the name's shard
        const faults = [random() < 0.5 ? "kill" : "stop", random() < 0.5 ? "kill" : "stop", "failover", "failover"]
        for (const [round, fault] of faults.entries()) {
          const victim = Math.floor(random() * PROCESSES)
          const at = `round ${round} (${faults.slice(0, round + 1).join(", ")})`
          server.resetPeak()
          if (fault === "kill") {
            const { bound, recovery } = yield* fleet.kill(victim, at)
            fleet.check(at, `kill of p${victim}`, recovery, bound)
          } else if (fault === "stop") {
            const { bound, recovery } = yield* fleet.stop(victim, at)
            fleet.check(at, `stop of p${victim}`, recovery, bound)
          } else {
            const asked = Date.now()
            const { from, to } = yield* Effect.promise(() => cluster.failover(keys[0]))
            // the new master serves the slot, the cluster state is ok on every node
            const served = Date.now()
            server.mark()
            // what is promised: K in flight again within 1 s of the new master serving the slot
            const bound = 1000 + STARVED
            const recovery = yield* fleet.fullAgain(served, bound, `${at}: after the failover`)
            // and the fleet at its pace after it (K calls of 60 ms at a time: about 50 a second), not
            // at its beats' (waiters woken every TTL / 3 only: about 10 a second)
            const total = server.counts.total
            yield* Effect.sleep(TTL)
            const calls = server.counts.total - total
            // the bound, and never more than K in flight over the round
            fleet.check(at, `failover ${from} -> ${to} in ${served - asked} ms`, recovery, bound)
            assert.isAtLeast(calls, 30, fleet.say(`${at}: ${calls} calls in the ${TTL} ms after K in flight again`))
            console.log(fleet.say(`${at}: ${calls} calls in the ${TTL} ms after K in flight again`))
          }
        }
        const grants = yield* fleet.finish(log)
        console.log(fleet.say(`${grants} grants, in ticket order`))
      }).pipe(Effect.tapDefect(() => Effect.sync(() => console.log(`fault schedule failed with seed ${seed}`))))
    },
    120_000
  )
})
