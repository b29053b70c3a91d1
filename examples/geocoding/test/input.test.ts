/**
 * JSONL rows: the fast path (`JSON.parse` and two checks) must read exactly what the schema reads,
 * and leave every other line to the schema, with its message.
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { expect, it } from "vitest"
import * as Input from "../src/Input.js"
import { tempDir } from "./utils.js"

it("reads a JSONL file as the schema does, line numbers counting blank lines", async () => {
  const lines = [
    JSON.stringify({ id: "a", query: "  Paris  " }),
    JSON.stringify({ id: 7, query: "Lyon", extra: true }),
    "",
    JSON.stringify({ id: "", query: "Lima" }),
    JSON.stringify({ id: "b", query: "   " }),
    JSON.stringify({ id: "c" }),
    JSON.stringify([1, 2]),
    "{\"id\": \"d\", \"query\": ",
    JSON.stringify({ id: true, query: "Oslo" }),
    "   ",
    JSON.stringify({ id: "e", query: "Quito" })
  ]
  const path = Path.join(tempDir(), "in.jsonl")
  Fs.writeFileSync(path, lines.join("\r\n") + "\n")
  const rows = await Stream.runCollect(Input.fromFile(path)).pipe(
    Effect.map(Chunk.toReadonlyArray),
    Effect.provide(NodeContext.layer),
    Effect.runPromise
  )
  const decode = Schema.decodeUnknownEither(Input.JsonRow)
  const expected = lines.flatMap((text, i) => {
    if (text.trim() === "") return []
    const decoded = decode(text)
    return [
      Either.isRight(decoded) ? { _tag: "Query", line: i + 1, ...decoded.right } : { _tag: "Invalid", line: i + 1 }
    ]
  })
  expect(rows.map((row) => (row._tag === "Query" ? row : { _tag: row._tag, line: row.line }))).toEqual(expected)
  expect(rows.filter((row) => row._tag === "Query").map((row) => row.id)).toEqual(["a", "7", "e"])
  const invalid = rows.filter((row) => row._tag === "Invalid")
  expect(invalid.map((row) => row.reason).every((reason) => reason.length > 0)).toBe(true)
  expect(await Input.countRows(path).pipe(Effect.provide(NodeContext.layer), Effect.runPromise)).toBe(9)
})
