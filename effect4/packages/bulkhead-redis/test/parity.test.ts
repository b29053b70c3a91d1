/**
 * Message parity: the same options resolved alike or refused with the same reasons on both
 * lines, and the same `BulkheadStoreError` text (`message` and `String(error)`), compared byte for
 * byte. The Effect 3 line runs in a child process (`parity/effect3.mjs`, with the root's tsx), as
 * it needs its own `effect`.
 */
import { assert, describe, it } from "@effect/vitest"
import { Duration } from "effect"
import { execFile } from "node:child_process"
import { join } from "node:path"
import { promisify } from "node:util"
import { RedisBulkhead } from "../src/index.js"
import { resolve } from "../src/internal/settings.js"
import { table, type Value } from "./parity/cases.js"

const value = (v: Value | undefined): unknown =>
  typeof v === "object" && v !== null && "millis" in v ? Duration.millis(v.millis) : v

const resolved = (options: Record<string, Value | undefined>) => {
  try {
    const built = Object.fromEntries(Object.entries(options).map(([k, v]) => [k, value(v)]))
    const s = resolve(built as unknown as RedisBulkhead.Options)
    return {
      permits: s.permits,
      maxPermits: s.maxPermits,
      maxWaiting: String(s.maxWaiting),
      maxWaitMillis: String(Duration.toMillis(s.maxWait)),
      leaseTtlMillis: s.leaseTtlMillis,
      onLeaseLost: s.onLeaseLost,
      storeDown: s.storeDown,
      localShare: s.localShare,
      prefix: s.prefix
    }
  } catch (error) {
    return { refused: String((error as Error).message) }
  }
}

const effect3 = async (): Promise<unknown> => {
  const root = join(import.meta.dirname, "../../../..")
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [join(root, "node_modules/tsx/dist/cli.mjs"), join(import.meta.dirname, "parity/effect3.mjs")],
    { cwd: root }
  )
  return JSON.parse(stdout)
}

describe("the Effect 3 and Effect 4 fleet bulkheads resolve and print alike", () => {
  it("for every case of the table: options resolved or refused, store errors built from fields", async () => {
    const theirs = await effect3()
    const ours = {
      options: table.options.map(resolved),
      errors: table.errors.map(({ asError, cause, operation, policy }) => {
        const error = new RedisBulkhead.BulkheadStoreError({
          bulkhead: "geo",
          operation,
          cause: asError ? new Error(cause) : cause,
          policy: policy as RedisBulkhead.StoreDownPolicy
        })
        return { message: error.message, string: String(error) }
      })
    }
    assert.deepStrictEqual(ours, theirs)
    // the table holds both outcomes, and every refusal names the bulkhead or the rule
    const refusals = ours.options.filter((o) => "refused" in o)
    assert.isAtLeast(refusals.length, 15)
    assert.isAtLeast(ours.options.length - refusals.length, 6)
    for (const { string } of ours.errors) assert.match(string, /^BulkheadStoreError: bulkhead "geo": Redis /)
  }, 60_000)
})
