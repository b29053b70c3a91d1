/**
 * Message parity: the same refusals on both lines, `message` and `String(error)` compared byte for
 * byte. The Effect 3 line runs in a child process (`parity/effect3.mjs`, with the root's tsx), as
 * it needs its own `effect`.
 */
import { assert, describe, it } from "@effect/vitest"
import { Bulkhead } from "@sluice/bulkhead"
import * as Duration from "effect/Duration"
import { execFile } from "node:child_process"
import { join } from "node:path"
import { promisify } from "node:util"
import { table } from "./parity/cases.js"

interface Shown {
  readonly message: string
  readonly string: string
}

const shown = (error: Bulkhead.BulkheadError): Shown => ({ message: error.message, string: String(error) })

const refusal = (options: Record<string, unknown>): string | null => {
  try {
    Bulkhead.makeUnsafe(options as unknown as Bulkhead.Options)
    return null
  } catch (defect) {
    return (defect as Error).message
  }
}

const effect3 = async (): Promise<{ full: Array<Shown>; timeout: Array<Shown>; refused: Array<string | null> }> => {
  const root = join(import.meta.dirname, "../../../..")
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [join(root, "node_modules/tsx/dist/cli.mjs"), join(import.meta.dirname, "parity/effect3.mjs")],
    { cwd: root }
  )
  return JSON.parse(stdout)
}

describe("the Effect 3 and Effect 4 bulkheads print the same refusals", () => {
  it("for every case of the table: errors built from fields, and options refused", async () => {
    const theirs = await effect3()
    const ours = {
      full: table.full.map((fields) => shown(new Bulkhead.BulkheadFull(fields))),
      timeout: table.timeout.map(({ waitedMillis, ...fields }) =>
        shown(new Bulkhead.PermitWaitTimeout({ ...fields, waited: Duration.millis(waitedMillis) }))
      ),
      refused: table.refused.map(refusal)
    }
    assert.deepStrictEqual(ours, theirs)
    for (const { string } of [...ours.full, ...ours.timeout]) assert.match(string, /^(BulkheadFull|PermitWaitTimeout)/)
    for (const message of ours.refused) assert.isString(message)
  }, 60_000)
})
