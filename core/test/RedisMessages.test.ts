/**
 * A Redis connection's checks on plain values: each refusal names the option and the value (a
 * redacted URL never shown, a password masked), a timeout is read in milliseconds by the decoder
 * given, and the reconnection backoff is capped.
 */
import { assert, describe, it } from "vitest"
import * as RedisMessages from "../src/RedisMessages.js"

/** A decoder standing in for a binding's `Duration`: numbers are milliseconds, `"<n> seconds"` text. */
const durations = {
  toMillis: (input: unknown) =>
    typeof input === "number"
      ? input
      : typeof input === "string" && /^\d+ seconds$/.test(input)
      ? Number.parseInt(input, 10) * 1000
      : undefined,
  showDuration: () => undefined
}

const reasonOf = <A>(reading: RedisMessages.Reading<A>): string =>
  reading._tag === "Refused" ? reading.reason : `read ${String(reading.value)}`

describe("RedisMessages", () => {
  it("a URL is read when it is redis:// or rediss:// and names a host; otherwise the reason shows it", () => {
    assert.deepStrictEqual(RedisMessages.readUrl("rediss://h:6380/2", false), {
      _tag: "Read",
      value: "rediss://h:6380/2"
    })
    assert.strictEqual(
      reasonOf(RedisMessages.readUrl(undefined, false)),
      "url is needed (redis://host:port), or cluster, or client"
    )
    assert.strictEqual(reasonOf(RedisMessages.readUrl("", false)), "url must be a non-empty string")
    assert.strictEqual(
      reasonOf(RedisMessages.readUrl("not a url", false)),
      `url must be a URL such as redis://host:6379, got "not a url"`
    )
    assert.strictEqual(
      reasonOf(RedisMessages.readUrl("http://user:secret@127.0.0.1:6379", false)),
      `url must use redis:// or rediss://, got "http://user:***@127.0.0.1:6379/"`
    )
    assert.strictEqual(
      reasonOf(RedisMessages.readUrl("http://user:secret@127.0.0.1:6379", true)),
      "url must use redis:// or rediss://, got (redacted)"
    )
    assert.strictEqual(
      reasonOf(RedisMessages.readUrl("redis://", false)),
      `url must name a host (redis://host:port), got "redis://"`
    )
  })

  it("a timeout is the fallback when absent, and refused when negative, unreadable, zero or infinite", () => {
    assert.deepStrictEqual(RedisMessages.readMillis("commandTimeout", undefined, 500, durations), {
      _tag: "Read",
      value: 500
    })
    assert.deepStrictEqual(RedisMessages.readMillis("commandTimeout", "3 seconds", 500, durations), {
      _tag: "Read",
      value: 3000
    })
    assert.strictEqual(
      reasonOf(RedisMessages.readMillis("commandTimeout", "-5 seconds", 500, durations)),
      `commandTimeout must be a finite duration > 0, got "-5 seconds"`
    )
    assert.strictEqual(
      reasonOf(RedisMessages.readMillis("connectTimeout", -1, 500, durations)),
      "connectTimeout must be a finite duration > 0, got -1"
    )
    assert.strictEqual(
      reasonOf(RedisMessages.readMillis("CONNECT_TIMEOUT", "soon", 500, durations)),
      `CONNECT_TIMEOUT must be a duration, got "soon"`
    )
    assert.strictEqual(
      reasonOf(RedisMessages.readMillis("commandTimeout", 0, 500, durations)),
      "commandTimeout must be a finite duration > 0, got 0"
    )
    assert.strictEqual(
      reasonOf(RedisMessages.readMillis("commandTimeout", Infinity, 500, durations)),
      "commandTimeout must be a finite duration > 0, got Infinity"
    )
  })

  it("Cluster nodes and clients are refused naming what was given; a failed command names itself", () => {
    assert.isUndefined(RedisMessages.clusterRefusal([7000]))
    assert.strictEqual(RedisMessages.clusterRefusal([]), "cluster must name at least one node, got []")
    assert.isUndefined(RedisMessages.clientRefusal({ evalsha: () => undefined }))
    assert.strictEqual(
      RedisMessages.clientRefusal("redis://127.0.0.1:6379"),
      "client must be an ioredis Redis or Cluster, got redis://127.0.0.1:6379"
    )
    assert.strictEqual(
      RedisMessages.commandFailed("script incr", new Error("Connection is closed.")),
      "Redis script incr failed: Connection is closed."
    )
    assert.strictEqual(
      RedisMessages.invalidOptions("url must be a non-empty string"),
      "Redis connection: url must be a non-empty string"
    )
  })

  it("the reconnection backoff grows by 100 ms per attempt up to 1 s", () => {
    assert.deepStrictEqual([1, 2, 5, 10, 11, 50].map(RedisMessages.retryStrategy), [100, 200, 500, 1000, 1000, 1000])
  })

  it("an address names host:port or the first Cluster nodes, never a password", () => {
    const node = (n: unknown) => RedisMessages.address({ _tag: "Node", node: n })
    assert.strictEqual(node("redis://user:hunter2@cache.internal:6380/2"), "cache.internal:6380")
    assert.strictEqual(node("rediss://:hunter2@cache.internal"), "cache.internal:6379")
    assert.strictEqual(node({ host: "10.0.0.5", port: 7000, password: "hunter2" }), "10.0.0.5:7000")
    assert.strictEqual(node({ path: "/run/redis.sock" }), "/run/redis.sock")
    assert.strictEqual(node(7001), "127.0.0.1:7001")
    assert.strictEqual(
      RedisMessages.address({
        _tag: "Cluster",
        nodes: ["a:7000", { host: "b", port: 7001 }, 7002, "redis://:hunter2@d"]
      }),
      "Cluster a:7000, b:7001 (+2 more)"
    )
    assert.strictEqual(RedisMessages.address({ _tag: "Cluster", nodes: ["a"] }), "Cluster a:6379")
  })

  it("a failure for want of a connection names where and the last connection error", () => {
    assert.isTrue(
      RedisMessages.isNoConnection(new Error("Stream isn't writeable and enableOfflineQueue options is false"))
    )
    assert.isTrue(RedisMessages.isNoConnection(new Error(RedisMessages.noConnection("connecting"))))
    assert.isTrue(
      RedisMessages.isNoConnection(new Error("Cluster isn't ready and enableOfflineQueue options is false"))
    )
    assert.isFalse(RedisMessages.isNoConnection(new Error("WRONGPASS invalid username-password pair")))
    const allFailed = Object.assign(new Error("Failed to refresh slots cache."), {
      lastNodeError: new Error("connect ECONNREFUSED 127.0.0.1:7002")
    })
    assert.strictEqual(
      RedisMessages.connectionErrorText(allFailed),
      "Failed to refresh slots cache. (last node error: connect ECONNREFUSED 127.0.0.1:7002)"
    )
    assert.strictEqual(
      RedisMessages.connectionErrorText(allFailed, new Error("connect ECONNREFUSED 127.0.0.1:7001")),
      "Failed to refresh slots cache. (last node error: connect ECONNREFUSED 127.0.0.1:7001)"
    )
    assert.strictEqual(RedisMessages.connectionErrorText(undefined, new Error("x")), "x")
    assert.strictEqual(RedisMessages.connectionErrorText(undefined), undefined)
    const refused = new Error("connect ECONNREFUSED 127.0.0.1:7001")
    const closed = new Error("Connection is closed.")
    assert.strictEqual(RedisMessages.keptError(refused, closed), refused)
    assert.strictEqual(RedisMessages.keptError(undefined, closed), closed)
    assert.strictEqual(RedisMessages.keptError(closed, refused), refused)
    assert.strictEqual(RedisMessages.connectionErrorText(new Error("connect ETIMEDOUT")), "connect ETIMEDOUT")
    assert.isFalse(RedisMessages.isNoConnection(new Error("Command timed out")))
    assert.strictEqual(RedisMessages.noConnection("reconnecting"), "no connection to Redis (reconnecting)")
    assert.strictEqual(
      RedisMessages.noConnection("reconnecting", "127.0.0.1:1", "connect ECONNREFUSED 127.0.0.1:1"),
      "no connection to Redis at 127.0.0.1:1 (last error: connect ECONNREFUSED 127.0.0.1:1; reconnecting)"
    )
    assert.strictEqual(
      RedisMessages.noConnection("connecting", "h:6379"),
      "no connection to Redis at h:6379 (connecting)"
    )
  })
})
