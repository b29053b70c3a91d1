/**
 * Message parity: the same options refused with the same reasons on both lines, and the same
 * `RedisCommandError` text (`message` and `String(error)`), compared byte for byte, also of
 * commands refused for want of a connection (a refused connect, a wrong password). The Effect 3
 * line runs in a child process (`parity/effect3.mjs`, with the root's tsx), as it needs its own
 * `effect`.
 */
import { assert, describe, it } from "@effect/vitest"
import { RedisConnection } from "@sluice/redis"
import { Duration, Effect, Redacted, Result } from "effect"
import { Redis } from "ioredis"
import { execFile } from "node:child_process"
import { join } from "node:path"
import { promisify } from "node:util"
import { startRedisServer } from "../../../../core/testing/redisServer.js"
import { table, type Value } from "./parity/cases.js"

interface Shown {
  readonly message: string
  readonly string: string
}

const value = (v: Value | undefined): unknown =>
  typeof v === "object" && !Array.isArray(v) && "redacted" in v
    ? Redacted.make(v.redacted)
    : typeof v === "object" && !Array.isArray(v) && "millis" in v
    ? Duration.millis(v.millis)
    : v

const checked = (options: Record<string, Value | undefined>): string | null => {
  const built = Object.fromEntries(Object.entries(options).map(([k, v]) => [k, value(v)]))
  const result = RedisConnection.check(built as unknown as RedisConnection.Options)
  return Result.isFailure(result) ? result.failure : null
}

const shown = (error: RedisConnection.RedisCommandError): Shown => ({ message: error.message, string: String(error) })

/** A script sent on a connection that cannot reach Redis: its error, as each line prints it. */
const offline = (options: Record<string, Value | undefined>): Promise<Shown> =>
  Effect.runPromise(Effect.scoped(Effect.flatMap(
    RedisConnection.make(
      Object.fromEntries(Object.entries(options).map(([k, v]) => [k, value(v)])) as RedisConnection.Options
    ),
    (connection) => Effect.flip(connection.runScript(RedisConnection.script("one", "return 1"), ["k"], []))
  ))).then(shown)

/** The client's status when the command was refused depends on when its reconnection stood. */
const withoutStatus = (text: string) => text.replace(/; (re)?connecting\)/g, "; <status>)")
const comparable = (s: Shown): Shown => ({ message: withoutStatus(s.message), string: withoutStatus(s.string) })

const effect3 = async (port: number): Promise<{
  options: Array<string | null>
  errors: Array<Shown>
  offline: Array<Shown>
}> => {
  const root = join(import.meta.dirname, "../../../..")
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [join(root, "node_modules/tsx/dist/cli.mjs"), join(import.meta.dirname, "parity/effect3.mjs"), String(port)],
    { cwd: root }
  )
  return JSON.parse(stdout)
}

describe("the Effect 3 and Effect 4 Redis connections check and print alike", () => {
  it("for every case of the table: options accepted or refused, errors built or met offline", async () => {
    const server = await startRedisServer()
    try {
      const admin = new Redis(server.url)
      await admin.config("SET", "requirepass", "right-secret")
      admin.disconnect()
      const theirs = await effect3(server.port)
      const ours = {
        options: table.options.map(checked),
        errors: table.errors.map(({ asError, cause, command }) =>
          shown(new RedisConnection.RedisCommandError({ command, cause: asError ? new Error(cause) : cause }))
        ),
        offline: await Promise.all(table.offline(server.port).map(offline))
      }
      assert.deepStrictEqual(
        { ...ours, offline: ours.offline.map(comparable) },
        { ...theirs, offline: theirs.offline.map(comparable) }
      )
      const [refused, wrongPassword] = ours.offline.map(({ string }) => string)
      assert.match(
        refused,
        /^RedisCommandError: Redis script one failed: no connection to Redis at 127\.0\.0\.1:1 \(last error: connect ECONNREFUSED 127\.0\.0\.1:1; /
      )
      assert.include(wrongPassword, `no connection to Redis at 127.0.0.1:${server.port} (last error: WRONGPASS `)
      for (const { message, string } of [...ours.offline, ...theirs.offline]) {
        assert.notInclude(`${message} ${string}`, "secret")
      }
      checkTable(ours)
    } finally {
      await server.stop()
    }
  }, 60_000)
})

/** The table holds both outcomes, and a redacted URL is never shown. */
const checkTable = (ours: { options: Array<string | null>; errors: Array<Shown> }) => {
  assert.isTrue(ours.options.includes(null))
  assert.isAbove(ours.options.filter((reason) => reason !== null).length, 10)
  for (const reason of ours.options) assert.notInclude(reason ?? "", "secret")
  for (const { string } of ours.errors) assert.match(string, /^RedisCommandError: Redis /)
}
