/**
 * Message parity: the same options refused with the same reasons on both lines, and the same
 * `RedisCommandError` text (`message` and `String(error)`), compared byte for byte. The Effect 3
 * line runs in a child process (`parity/effect3.mjs`, with the root's tsx), as it needs its own
 * `effect`.
 */
import { assert, describe, it } from "@effect/vitest"
import { RedisConnection } from "@sluice/redis"
import { Duration, Redacted, Result } from "effect"
import { execFile } from "node:child_process"
import { join } from "node:path"
import { promisify } from "node:util"
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

const effect3 = async (): Promise<{ options: Array<string | null>; errors: Array<Shown> }> => {
  const root = join(import.meta.dirname, "../../../..")
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [join(root, "node_modules/tsx/dist/cli.mjs"), join(import.meta.dirname, "parity/effect3.mjs")],
    { cwd: root }
  )
  return JSON.parse(stdout)
}

describe("the Effect 3 and Effect 4 Redis connections check and print alike", () => {
  it("for every case of the table: options accepted or refused, errors built from fields", async () => {
    const theirs = await effect3()
    const ours = {
      options: table.options.map(checked),
      errors: table.errors.map(({ asError, cause, command }) =>
        shown(new RedisConnection.RedisCommandError({ command, cause: asError ? new Error(cause) : cause }))
      )
    }
    assert.deepStrictEqual(ours, theirs)
    // the table holds both outcomes, and a redacted URL is never shown
    assert.isTrue(ours.options.includes(null))
    assert.isAbove(ours.options.filter((reason) => reason !== null).length, 10)
    for (const reason of ours.options) assert.notInclude(reason ?? "", "secret")
    for (const { string } of ours.errors) assert.match(string, /^RedisCommandError: Redis /)
  }, 60_000)
})
