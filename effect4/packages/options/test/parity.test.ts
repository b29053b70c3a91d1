/**
 * Message parity: the same table of inputs decoded by both lines, every message compared byte for
 * byte. The Effect 3 line runs in a child process (`parity/effect3.mjs`, with the root's tsx), as
 * it needs its own `effect`.
 */
import { assert, describe, it } from "@effect/vitest"
import { OptionSchema } from "@sluice/options"
import * as Config from "effect/Config"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"
import { execFile } from "node:child_process"
import { join } from "node:path"
import { promisify } from "node:util"
import { cases, configCases, type Line, settings } from "./parity/cases.js"

const refuse: Line["refuse"] = (schema, who, input) => {
  const result = OptionSchema.decodeResult(schema, who)(input)
  return Result.isFailure(result) ? result.failure : undefined
}
const line: Line = { OptionSchema, Schema, Duration, refuse }

const section = Config.nested(OptionSchema.config(settings(line), "a bulkhead"), "GEO")
const read = (entries: Readonly<Record<string, string>>): string | null => {
  const provider = ConfigProvider.fromUnknown({ GEO: entries }, { preserveEmptyStrings: true })
  const result = Effect.runSync(Effect.result(Config.option(section).parse(provider)))
  if (Result.isSuccess(result)) return null
  const cause = result.failure.cause
  // the sentence, without the path Effect 4 writes under it
  return cause._tag === "SchemaError"
    ? SchemaIssue.makeFormatterStandardSchemaV1()(cause.issue).issues[0].message
    : String(cause)
}

const effect3 = async (): Promise<{ schemas: Array<string | null>; config: Array<string | null> }> => {
  const root = join(import.meta.dirname, "../../../..")
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [join(root, "node_modules/tsx/dist/cli.mjs"), join(import.meta.dirname, "parity/effect3.mjs")],
    { cwd: root }
  )
  return JSON.parse(stdout)
}

describe("the Effect 3 and Effect 4 lines print the same messages", () => {
  it("for every case of the table, in code and from Config", async () => {
    const table = cases(line)
    const theirs = await effect3()
    assert.strictEqual(theirs.schemas.length, table.length)
    table.forEach(([label, schema, input], i) => {
      const ours = refuse(schema, `thing "t"`, input) ?? null
      assert.isNotNull(ours, `${label}: ${OptionSchema.show(input)} was accepted`)
      assert.strictEqual(ours, theirs.schemas[i], `${label}: ${OptionSchema.show(input)}`)
    })
    configCases.forEach((entries, i) => {
      const ours = read(entries)
      assert.isNotNull(ours, `${JSON.stringify(entries)} was accepted`)
      assert.strictEqual(ours, theirs.config[i], JSON.stringify(entries))
    })
  }, 60_000)
})
