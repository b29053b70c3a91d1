/**
 * The HTTP pool's ledger on plain values: limits read from the option, reservations that add up
 * and are refused past a limit or a pool already created, the sizes pools get, what a preconnect
 * may open, and the counters read from undici's stats.
 */
import { assert, describe, it } from "vitest"
import * as HttpPoolLedger from "../src/HttpPoolLedger.js"
import * as HttpPreconnected from "../src/HttpPreconnected.js"

const a = "https://a.example"
const b = "http://b.example:8080"

/** The origin as the bindings read it; a key without one is refused by name. */
const originOf = (url: string, label = "URL"): string => {
  const origin = /^(https?:\/\/[^/]+)/.exec(url)?.[1]
  if (origin === undefined) throw new Error(`${label}: no origin in ${url}`)
  return origin
}

const ledgerOf = (option?: HttpPoolLedger.ConnectionsPerOrigin) => {
  const limits = HttpPoolLedger.limitsOf(option, originOf)
  assert(typeof limits !== "string", String(limits))
  return new HttpPoolLedger.Ledger(limits)
}

describe("HttpPoolLedger", () => {
  it("reads the limits by origin and for the others, and names a count that is not one", () => {
    const limits = HttpPoolLedger.limitsOf({ [`${a}/search`]: 4, "*": 2 }, originOf)
    assert(typeof limits !== "string")
    assert.deepStrictEqual([...limits.byOrigin], [[a, 4]])
    assert.strictEqual(limits.fallback, 2)
    assert.strictEqual(
      HttpPoolLedger.limitsOf(2.5, originOf),
      "HttpPool: connectionsPerOrigin must be an integer ≥ 1, got 2.5"
    )
    assert.strictEqual(
      HttpPoolLedger.limitsOf({ "*": 0 }, originOf),
      "HttpPool: connectionsPerOrigin[\"*\"] must be an integer ≥ 1, got 0"
    )
    assert.strictEqual(
      HttpPoolLedger.limitsOf({ [a]: -1 }, originOf),
      `HttpPool: connectionsPerOrigin["${a}"] must be an integer ≥ 1, got -1`
    )
    assert.throws(() => HttpPoolLedger.limitsOf({ "mailto:x": 2 }, originOf), /a connectionsPerOrigin key/)
  })

  it("reservations add up per provider; one past the limit is refused and leaves the ledger as it was", () => {
    const ledger = ledgerOf({ [a]: 5 })
    const first = ledger.reserve(a, "geo", 2)
    assert.strictEqual(first._tag, "Reserved")
    assert.strictEqual(ledger.reserve(a, "geo", 1)._tag, "Reserved")
    assert.deepStrictEqual(ledger.reserve(a, "llm", 3), {
      _tag: "TooSmall",
      refusal: { origin: a, connections: 5, required: 6, providers: { geo: 3, llm: 3 }, reason: "limit" }
    })
    assert.strictEqual(ledger.total(a), 3)
    if (first._tag === "Reserved") first.release()
    assert.strictEqual(ledger.total(a), 1)
    assert.strictEqual(ledger.reserve(a, "llm", 3)._tag, "Reserved")
  })

  it("a pool is created at the limit, else at what is reserved; later reservations must fit it", () => {
    const ledger = ledgerOf()
    assert.strictEqual(ledger.reserve(b, "geo", 3)._tag, "Reserved")
    assert.strictEqual(ledger.create(b), 3)
    assert.strictEqual(ledger.create("https://c.example"), null)
    assert.deepStrictEqual(ledger.reserve(b, "llm", 1), {
      _tag: "TooSmall",
      refusal: { origin: b, connections: 3, required: 4, providers: { geo: 3, llm: 1 }, reason: "created" }
    })
    assert.deepStrictEqual(ledger.reservations(), [
      { origin: b, providers: { geo: 3 }, reserved: 3, limit: undefined, poolSize: 3 },
      { origin: "https://c.example", providers: {}, reserved: 0, limit: undefined, poolSize: undefined }
    ])
    assert.strictEqual(ledgerOf(7).create(b), 7)
  })

  it("a preconnect opens no more than the pool could take, less what it holds and what waits", () => {
    const ledger = ledgerOf({ "*": 4 })
    assert.strictEqual(ledger.room(a, 10, 1, 1), 2)
    assert.strictEqual(ledger.room(a, 1, 0, 0), 1)
    assert.strictEqual(ledger.room(a, 10, 4, 1), 0)
    // nothing reserved and no limit: as many as asked
    assert.strictEqual(ledgerOf().room(a, 6, 2, 0), 4)
  })

  it("counters by origin from undici's stats, and the origins with connections waiting only", () => {
    const agentStats = {
      [`${a}/`]: { connected: 2, free: 1, running: 1, pending: 0, queued: 0, size: 4 },
      [b]: { connected: true }
    }
    const waiting = new Map([[a, 1], ["https://c.example", 2]])
    const stats = HttpPoolLedger.poolStats(agentStats, originOf, {
      count: (origin) => waiting.get(origin) ?? 0,
      origins: () => [...waiting.keys()]
    })
    assert.deepStrictEqual(stats, {
      [a]: { connected: 2, free: 1, running: 1, pending: 0, queued: 0, size: 4, preconnected: 1 },
      [b]: { connected: 1, free: 0, running: 0, pending: 0, queued: 0, size: 0, preconnected: 0 },
      "https://c.example": { connected: 0, free: 0, running: 0, pending: 0, queued: 0, size: 0, preconnected: 2 }
    })
    assert.strictEqual(HttpPoolLedger.pooledConnections(agentStats, originOf, a), 2)
    assert.strictEqual(HttpPoolLedger.pooledConnections(agentStats, originOf, "https://c.example"), 0)
  })

  it("connect options of an origin: its port, and an IPv6 host without brackets", () => {
    assert.deepStrictEqual(HttpPreconnected.connectOptions("http://[::1]:8080"), {
      host: "[::1]:8080",
      hostname: "::1",
      port: "8080",
      protocol: "http:"
    })
    assert.deepStrictEqual(HttpPreconnected.connectOptions(a), {
      host: "a.example",
      hostname: "a.example",
      port: "",
      protocol: "https:"
    })
  })
})
