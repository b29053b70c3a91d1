/**
 * The connection on one redis-server: a script survives a flushed script cache (NOSCRIPT), a
 * connection it opened is closed with its scope while an application's client is left open, a
 * client that would queue commands while Redis is down is warned about, nothing hangs while Redis
 * is down, and invalid options are refused naming the option and the value.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import { RedisConnection } from "@sluice/redis"
import {
  Cause,
  Config,
  ConfigProvider,
  Context,
  Duration,
  Effect,
  Exit,
  Layer,
  Logger,
  Redacted,
  Result,
  Scope
} from "effect"
import { Redis } from "ioredis"
import { inject } from "vitest"
import { startRedisServer } from "../../../../core/testing/redisServer.js"
import { closed, inspector } from "./utils.js"

const url = inject("redisUrl")

/** INCRBY on one key, answering the new value: a script whose effect can be counted. */
const incr = RedisConnection.script("incr", "return redis.call('INCRBY', KEYS[1], ARGV[1])")

const uniqueKey = (label: string) => `t-${label}-${globalThis.crypto.randomUUID().slice(0, 8)}`

const capturingLogs = (lines: Array<string>) =>
  Logger.layer([
    Logger.make(({ logLevel, message }) => {
      lines.push(`${logLevel.toUpperCase()} ${Array.isArray(message) ? message.join(" ") : String(message)}`)
    })
  ])

const ownServer = Effect.acquireRelease(
  Effect.promise(() => startRedisServer()),
  (server) => Effect.promise(() => server.stop())
)

describe("RedisConnection", () => {
  it.live("a command refused for want of a connection names the address (a Cluster: its first nodes) and the refused connect", () =>
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

  it.live("a refused password is the last error a command names, and the password is never shown", () =>
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

  it.live("NOSCRIPT (a restarted or failed-over node) is answered by EVAL, once, and cached again", () =>
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
      assert.strictEqual(yield* Effect.promise(() => connection.runScriptUnsafe(incr, 1, [key, "1"])), 3)
      // ran once per call: the NOSCRIPT reply means the script never ran
      assert.strictEqual(yield* Effect.promise(() => redis.get(key)), "3")
      const stats = yield* Effect.promise(() => redis.info("commandstats"))
      expect(stats).toMatch(/cmdstat_evalsha:calls=2,/)
      expect(stats).toMatch(/cmdstat_eval:calls=1,/)
      assert.deepStrictEqual(yield* Effect.promise(() => redis.script("EXISTS", incr.sha)), [1])
    }))

  it.live("the ioredis options given reach the client: one socket write per turn with auto-pipelining", () =>
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

  it.live("a connection opened from a URL is closed with its scope", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const connection = yield* Effect.provideService(RedisConnection.make({ url }), Scope.Scope, scope)
      assert.isTrue(connection.isReady())
      yield* Scope.close(scope, Exit.void)
      yield* closed(connection.client)
    }))

  it.live("an application's client is used as it is, and left open when the scope closes", () =>
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

  it.live("a client with the offline queue on is warned about", () =>
    Effect.gen(function*() {
      const client = new Redis(url)
      yield* Effect.addFinalizer(() => Effect.promise(() => client.quit()))
      const lines: Array<string> = []
      yield* RedisConnection.make({ client }).pipe(Effect.provide(capturingLogs(lines)))
      assert.isDefined(lines.find((l) => l.startsWith("WARN") && l.includes("enableOfflineQueue")))
    }))

  it.live("Redis down: a command fails at once with RedisCommandError, and succeeds again after a restart", () =>
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
      expect(error.message).toMatch(/^Redis script incr failed: /)
      expect(String(error)).toMatch(/^RedisCommandError: Redis script incr failed: /)
      server = yield* Effect.promise(() => startRedisServer(port))
      // ioredis reconnects by itself; the restarted server has no script cache (NOSCRIPT, then EVAL)
      for (let attempt = 0;; attempt++) {
        const result = yield* Effect.result(connection.runScript(incr, [key], ["1"]))
        if (Result.isSuccess(result)) {
          assert.strictEqual(result.success, 1)
          break
        }
        if (attempt > 100) assert.fail(`no answer after the restart: ${result.failure.message}`)
        yield* Effect.sleep("50 millis")
      }
    }))

  it.live("a message published on a shard channel reaches every handler of it, until its scope closes", () =>
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
  /** The defect's message: an `IllegalArgumentError` naming the option and the value. */
  const defectOf = (options: RedisConnection.Options) =>
    Effect.map(Effect.exit(Effect.scoped(RedisConnection.make(options))), (exit) => {
      assert(Exit.isFailure(exit), "a defect")
      const defect = Cause.squash(exit.cause)
      assert(Cause.isIllegalArgumentError(defect), "an IllegalArgumentError")
      return defect.message
    })

  /** The ConfigError of the section REDIS holding `entries`, as `String` prints it. */
  const configError = (entries: Record<string, string>) =>
    Effect.map(
      Effect.flip(
        Effect.scoped(Layer.build(RedisConnection.layerConfig(Config.nested(RedisConnection.config, "REDIS")))).pipe(
          Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromUnknown({ REDIS: entries }))
        )
      ),
      String
    )

  /** `String` of a ConfigError refusing the key `key` of the section REDIS. */
  const atKey = (key: string, message: string) => `ConfigError(SchemaError(${message}\n  at ["REDIS"]["${key}"]))`

  it.effect("a missing, malformed or non-Redis URL, or one without a host, is refused naming the option and the value", () =>
    Effect.gen(function*() {
      assert.strictEqual(
        yield* defectOf({ url: "localhost:6379" }),
        `Redis connection: url must use redis:// or rediss://, got "localhost:6379"`
      )
      assert.strictEqual(
        yield* defectOf({ url: "not a url" }),
        `Redis connection: url must be a URL such as redis://host:6379, got "not a url"`
      )
      assert.strictEqual(
        yield* defectOf({ url: "http://user:secret@127.0.0.1:6379" }),
        `Redis connection: url must use redis:// or rediss://, got "http://user:***@127.0.0.1:6379/"`
      )
      const redacted = yield* defectOf({ url: Redacted.make("http//:secret@host") })
      assert.strictEqual(redacted, "Redis connection: url must be a URL such as redis://host:6379, got (redacted)")
      const config = yield* configError({ URL: "https://user:secret@127.0.0.1:6379" })
      assert.strictEqual(config, atKey("URL", "url must use redis:// or rediss://, got (redacted)"))
      expect(config).not.toContain("secret")
      // no default server: nothing, or a URL without a host, is refused rather than meaning localhost
      assert.strictEqual(
        yield* defectOf({}),
        "Redis connection: url is needed (redis://host:port), or cluster, or client"
      )
      assert.strictEqual(
        yield* defectOf({ url: "redis://" }),
        `Redis connection: url must name a host (redis://host:port), got "redis://"`
      )
      assert.strictEqual(
        yield* configError({}),
        atKey("URL", "url is needed (redis://host:port), or cluster, or client")
      )
      assert.deepStrictEqual(
        RedisConnection.check({ url: "rediss://h:6380/2" }),
        Result.succeed({ url: "rediss://h:6380/2" })
      )
    }))

  it.effect("a section read from Config gives the URL as Redacted and the timeouts as durations", () =>
    Effect.gen(function*() {
      const read = yield* RedisConnection.config.pipe(
        Config.nested("REDIS"),
        (config) =>
          config.parse(
            ConfigProvider.fromUnknown({
              REDIS: { URL: "redis://127.0.0.1:6379/2", COMMAND_TIMEOUT: "300 millis", CONNECT_TIMEOUT: "3 seconds" }
            })
          )
      )
      assert.isTrue(Redacted.isRedacted(read.url))
      assert.strictEqual(Redacted.value(read.url as Redacted.Redacted<string>), "redis://127.0.0.1:6379/2")
      assert.strictEqual(Duration.toMillis(read.commandTimeout as Duration.Duration), 300)
      assert.strictEqual(Duration.toMillis(read.connectTimeout as Duration.Duration), 3000)
    }))

  it.effect("a negative or malformed duration is refused naming it, as an option and in Config", () =>
    Effect.gen(function*() {
      assert.strictEqual(
        yield* defectOf({ url, commandTimeout: "-5 seconds" }),
        `Redis connection: commandTimeout must be a finite duration > 0, got "-5 seconds"`
      )
      assert.strictEqual(
        yield* defectOf({ cluster: [7000], connectTimeout: -1 }),
        "Redis connection: connectTimeout must be a finite duration > 0, got -1"
      )
      assert.strictEqual(
        yield* defectOf({ url, commandTimeout: Duration.zero }),
        "Redis connection: commandTimeout must be a finite duration > 0, got 0"
      )
      assert.strictEqual(
        yield* configError({ URL: url, COMMAND_TIMEOUT: "-5 seconds" }),
        atKey("COMMAND_TIMEOUT", `COMMAND_TIMEOUT must be a finite duration > 0, got "-5 seconds"`)
      )
      assert.strictEqual(
        yield* configError({ URL: url, CONNECT_TIMEOUT: "soon" }),
        atKey("CONNECT_TIMEOUT", `CONNECT_TIMEOUT must be a duration, got "soon"`)
      )
    }))

  it.effect("a Cluster without nodes, or a client that is no ioredis client, is refused", () =>
    Effect.gen(function*() {
      assert.strictEqual(
        yield* defectOf({ cluster: [] }),
        "Redis connection: cluster must name at least one node, got []"
      )
      const notAClient = { client: "redis://127.0.0.1:6379" } as unknown as RedisConnection.Options
      assert.strictEqual(
        yield* defectOf(notAClient),
        "Redis connection: client must be an ioredis Redis or Cluster, got redis://127.0.0.1:6379"
      )
    }))
})
