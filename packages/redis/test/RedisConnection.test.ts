/**
 * The connection on one redis-server: a script survives a flushed script cache (NOSCRIPT), a
 * connection it opened is closed with its scope while an application's client is left open, a
 * client that would queue commands while Redis is down is warned about, nothing hangs while Redis
 * is down, and invalid options are refused naming the option and the value.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import { closed, inspector } from "@sluice/test-utils/clients"
import { startRedisServer } from "@sluice/test-utils/redisServer"
import { Config, ConfigProvider, Context, Effect, Either, Exit, Layer, Logger, Redacted, Scope } from "effect"
import { Redis } from "ioredis"
import { inject } from "vitest"
import { RedisConnection } from "../src/index.js"

const url = inject("redisUrl")

/** INCRBY on one key, answering the new value: a script whose effect can be counted. */
const incr = RedisConnection.script("incr", "return redis.call('INCRBY', KEYS[1], ARGV[1])")

const uniqueKey = (label: string) => `t-${label}-${globalThis.crypto.randomUUID().slice(0, 8)}`

const capturingLogs = (lines: Array<string>) =>
  Logger.replace(
    Logger.defaultLogger,
    Logger.make(({ logLevel, message }) => {
      lines.push(`${logLevel.label} ${Array.isArray(message) ? message.join(" ") : String(message)}`)
    })
  )

const ownServer = Effect.acquireRelease(
  Effect.promise(() => startRedisServer()),
  (server) => Effect.promise(() => server.stop())
)

describe("RedisConnection", () => {
  it.scopedLive("a command refused for want of a connection names the address (a Cluster: its first nodes) and the refused connect", () =>
    Effect.gen(function*() {
      // a port nothing listens on: the connection never becomes ready
      const connection = yield* RedisConnection.make({ url: "redis://127.0.0.1:1", connectTimeout: "300 millis" })
      const error = yield* Effect.flip(connection.runScript(incr, [uniqueKey("refused")], ["1"]))
      assert.match(
        String(error),
        /^RedisCommandError: Redis script incr failed: no connection to Redis at 127\.0\.0\.1:1 \(last error: connect ECONNREFUSED 127\.0\.0\.1:1; (re)?connecting\)$/
      )
      // ioredis' own error stays the cause
      assert.match(String((error.cause as Error).cause), /Stream isn't writeable/)
      const loading = yield* Effect.flip(connection.loadScripts([incr]))
      assert.include(loading.message, "no connection to Redis at 127.0.0.1:1 (last error: connect ECONNREFUSED")
      // a Cluster: its first startup nodes, and ioredis' "Cluster isn't ready" explained alike
      const cluster = yield* RedisConnection.make({
        cluster: [1, 2, 3].map((port) => ({ host: "127.0.0.1", port })),
        connectTimeout: "300 millis"
      })
      const clusterError = yield* Effect.flip(cluster.runScript(incr, [uniqueKey("refused")], ["1"]))
      assert.match(
        clusterError.message,
        /^Redis script incr failed: no connection to Redis at Cluster 127\.0\.0\.1:1, 127\.0\.0\.1:2 \(\+1 more\) \(last error: Failed to refresh slots cache\./
      )
    }))

  it.scopedLive("a refused password is the last error a command names, and the password is never shown", () =>
    Effect.gen(function*() {
      const server = yield* ownServer
      const admin = yield* inspector(server.url)
      yield* Effect.promise(() => admin.config("SET", "requirepass", "right-secret"))
      const at = `127.0.0.1:${server.port}`
      const wrong = `redis://:wrong-secret@${at}`
      const messages: Array<string> = []
      for (const url of [wrong, Redacted.make(wrong)]) {
        const connection = yield* RedisConnection.make({ url, connectTimeout: "300 millis" })
        const error = yield* Effect.flip(connection.runScript(incr, [uniqueKey("auth")], ["1"]))
        assert.include(
          error.message,
          `no connection to Redis at ${at} (last error: WRONGPASS invalid username-password pair`
        )
        messages.push(String(error), error.message, String(error.cause))
      }
      for (const message of messages) {
        assert.notInclude(message, "wrong-secret")
        assert.notInclude(message, "right-secret")
      }
    }))

  it.scopedLive("NOSCRIPT (a restarted or failed-over node) is answered by EVAL, once, and cached again", () =>
    Effect.gen(function*() {
      const server = yield* ownServer
      const redis = yield* inspector(server.url)
      const connection = yield* RedisConnection.make({ url: server.url })
      const key = uniqueKey("noscript")
      yield* connection.loadScripts([incr])
      assert.deepStrictEqual(yield* Effect.promise(() => redis.script("EXISTS", incr.sha)), [1])
      assert.strictEqual(yield* connection.runScript(incr, [key], ["1"]), 1)
      yield* Effect.promise(() => redis.script("FLUSH"))
      yield* Effect.promise(() => redis.config("RESETSTAT"))
      assert.strictEqual(yield* connection.runScript(incr, [key], ["1"]), 2)
      assert.strictEqual(yield* Effect.promise(() => connection.unsafeRunScript(incr, 1, [key, "1"])), 3)
      // ran once per call: the NOSCRIPT reply means the script never ran
      assert.strictEqual(yield* Effect.promise(() => redis.get(key)), "3")
      const stats = yield* Effect.promise(() => redis.info("commandstats"))
      expect(stats).toMatch(/cmdstat_evalsha:calls=2,/)
      expect(stats).toMatch(/cmdstat_eval:calls=1,/)
      assert.deepStrictEqual(yield* Effect.promise(() => redis.script("EXISTS", incr.sha)), [1])
    }))

  it.scopedLive("the ioredis options given reach the client: one socket write per turn with auto-pipelining", () =>
    Effect.gen(function*() {
      const writesOf = (options: RedisConnection.FromUrl) =>
        Effect.gen(function*() {
          const connection = yield* RedisConnection.make(options)
          const client = connection.client as Redis
          yield* connection.runScript(incr, [uniqueKey("warm")], ["1"])
          const write = client.stream.write.bind(client.stream)
          let writes = 0
          client.stream.write = ((...args: Parameters<typeof write>) => {
            writes++
            return write(...args)
          }) as typeof client.stream.write
          const key = uniqueKey("pipelined")
          const replies = yield* Effect.all(
            Array.from({ length: 20 }, () => connection.runScript(incr, [key], ["1"])),
            { concurrency: "unbounded" }
          )
          client.stream.write = write
          assert.deepStrictEqual(
            [...replies].sort((a, b) => Number(a) - Number(b)),
            Array.from({ length: 20 }, (_, i) => i + 1)
          )
          return writes
        }).pipe(Effect.scoped)
      // ioredis' default: one write per command
      assert.strictEqual(yield* writesOf({ url }), 20)
      // an application that turns auto-pipelining on: the 20 EVALSHA leave together
      assert.strictEqual(yield* writesOf({ url, redis: { enableAutoPipelining: true } }), 1)
    }))

  it.scopedLive("a connection opened from a URL is closed with its scope", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const connection = yield* Effect.provideService(RedisConnection.make({ url }), Scope.Scope, scope)
      assert.isTrue(connection.isReady())
      yield* Scope.close(scope, Exit.void)
      yield* closed(connection.client)
    }))

  it.scopedLive("an application's client is used as it is, and left open when the scope closes", () =>
    Effect.gen(function*() {
      const client = new Redis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 0, commandTimeout: 500 })
      yield* Effect.addFinalizer(() => Effect.promise(() => client.quit()))
      const lines: Array<string> = []
      const scope = yield* Scope.make()
      const connection = yield* Layer.build(RedisConnection.layer({ client })).pipe(
        Effect.map(Context.get(RedisConnection.RedisConnection)),
        Effect.provideService(Scope.Scope, scope),
        Effect.provide(capturingLogs(lines))
      )
      assert.strictEqual(connection.client, client)
      assert.strictEqual(yield* connection.runScript(incr, [uniqueKey("client")], ["5"]), 5)
      yield* Scope.close(scope, Exit.void)
      assert.strictEqual(client.status, "ready")
      assert.strictEqual(yield* Effect.promise(() => client.ping()), "PONG")
      assert.isUndefined(lines.find((l) => l.includes("enableOfflineQueue")))
    }))

  it.scopedLive("a client with the offline queue on is warned about", () =>
    Effect.gen(function*() {
      const client = new Redis(url)
      yield* Effect.addFinalizer(() => Effect.promise(() => client.quit()))
      const lines: Array<string> = []
      yield* RedisConnection.make({ client }).pipe(Effect.provide(capturingLogs(lines)))
      assert.isDefined(lines.find((l) => l.startsWith("WARN") && l.includes("enableOfflineQueue")))
    }))

  it.scopedLive("Redis down: a command fails at once with RedisCommandError, and succeeds again after a restart", () =>
    Effect.gen(function*() {
      let server = yield* Effect.promise(() => startRedisServer())
      const port = server.port
      yield* Effect.addFinalizer(() => Effect.promise(() => server.stop()))
      const connection = yield* RedisConnection.make({ url: server.url, commandTimeout: "300 millis" })
      const key = uniqueKey("restart")
      assert.strictEqual(yield* connection.runScript(incr, [key], ["1"]), 1)
      yield* Effect.promise(() => server.stop())
      const error = yield* Effect.flip(connection.runScript(incr, [key], ["1"]))
      assert.strictEqual(error._tag, "RedisCommandError")
      expect(error.message).toContain("Redis script incr failed")
      server = yield* Effect.promise(() => startRedisServer(port))
      // ioredis reconnects by itself; the restarted server has no script cache (NOSCRIPT, then EVAL)
      for (let attempt = 0;; attempt++) {
        const result = yield* Effect.either(connection.runScript(incr, [key], ["1"]))
        if (Either.isRight(result)) {
          assert.strictEqual(result.right, 1)
          break
        }
        if (attempt > 100) assert.fail(`no answer after the restart: ${result.left.message}`)
        yield* Effect.sleep("50 millis")
      }
    }))

  it.scopedLive("a message published on a shard channel reaches every handler of it, until its scope closes", () =>
    Effect.gen(function*() {
      const connection = yield* RedisConnection.make({ url })
      const channel = uniqueKey("channel")
      const seen: Array<string> = []
      const scope = yield* Scope.make()
      yield* Effect.provideService(connection.subscribe(channel, (m) => seen.push(`a:${m}`)), Scope.Scope, scope)
      yield* Effect.provideService(connection.subscribe(channel, (m) => seen.push(`b:${m}`)), Scope.Scope, scope)
      yield* Effect.promise(() => connection.client.spublish(channel, "1"))
      while (seen.length < 2) yield* Effect.sleep("10 millis")
      assert.deepStrictEqual(seen.sort(), ["a:1", "b:1"])
      yield* Scope.close(scope, Exit.void)
      yield* Effect.promise(() => connection.client.spublish(channel, "2"))
      yield* Effect.sleep("100 millis")
      assert.deepStrictEqual(seen, ["a:1", "b:1"])
    }))
})

describe("options", () => {
  const defectOf = (options: RedisConnection.Options) =>
    Effect.map(Effect.exit(Effect.scoped(RedisConnection.make(options))), (exit) => {
      assert(Exit.isFailure(exit), "a defect")
      return String(exit.cause)
    })

  const configError = (entries: Record<string, string>) =>
    Effect.map(
      Effect.flip(
        Effect.scoped(Layer.build(RedisConnection.layerConfig(Config.nested(RedisConnection.config, "REDIS")))).pipe(
          Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(entries))))
        )
      ),
      String
    )

  it.effect("a missing, malformed or non-Redis URL, or one without a host, is refused naming the option and the value", () =>
    Effect.gen(function*() {
      expect(yield* defectOf({ url: "localhost:6379" })).toContain(
        `Redis connection: url must use redis:// or rediss://, got "localhost:6379"`
      )
      expect(yield* defectOf({ url: "not a url" })).toContain(
        `url must be a URL such as redis://host:6379, got "not a url"`
      )
      expect(yield* defectOf({ url: "http://user:secret@127.0.0.1:6379" })).toContain(
        `url must use redis:// or rediss://, got "http://user:***@127.0.0.1:6379/"`
      )
      const redacted = yield* defectOf({ url: Redacted.make("http//:secret@host") })
      expect(redacted).toContain("url must be a URL such as redis://host:6379, got (redacted)")
      expect(redacted).not.toContain("secret")
      const config = yield* configError({ "REDIS.URL": "https://127.0.0.1:6379" })
      expect(config).toContain("Invalid data at REDIS.URL")
      expect(config).toContain("url must use redis:// or rediss://, got (redacted)")
      // no default server: nothing, or a URL without a host, is refused rather than meaning localhost
      expect(yield* defectOf({})).toContain(
        "Redis connection: url is needed (redis://host:port), or cluster, or client"
      )
      expect(yield* defectOf({ url: "redis://" })).toContain(`url must name a host (redis://host:port), got "redis://"`)
      expect(yield* configError({})).toContain("url is needed")
      assert.deepStrictEqual(
        RedisConnection.check({ url: "rediss://h:6380/2" }),
        Either.right({ url: "rediss://h:6380/2" })
      )
    }))

  it.effect("a negative or malformed duration is refused naming it, as an option and in Config", () =>
    Effect.gen(function*() {
      expect(yield* defectOf({ url, commandTimeout: "-5 seconds" })).toContain(
        `commandTimeout must be a finite duration > 0, got "-5 seconds"`
      )
      expect(yield* defectOf({ cluster: [7000], connectTimeout: -1 })).toContain(
        "connectTimeout must be a finite duration > 0, got -1"
      )
      const config = yield* configError({ "REDIS.URL": url, "REDIS.COMMAND_TIMEOUT": "-5 seconds" })
      expect(config).toContain("Invalid data at REDIS.COMMAND_TIMEOUT")
      expect(config).toContain(`must be a finite duration > 0, got "-5 seconds"`)
      expect(yield* configError({ "REDIS.URL": url, "REDIS.CONNECT_TIMEOUT": "soon" })).toContain(
        `CONNECT_TIMEOUT must be a duration, got "soon"`
      )
    }))

  it.effect("a Cluster without nodes, or a client that is no ioredis client, is refused", () =>
    Effect.gen(function*() {
      expect(yield* defectOf({ cluster: [] })).toContain("cluster must name at least one node, got []")
      const notAClient = { client: "redis://127.0.0.1:6379" } as unknown as RedisConnection.Options
      expect(yield* defectOf(notAClient)).toContain("client must be an ioredis Redis or Cluster, got redis://")
    }))
})
