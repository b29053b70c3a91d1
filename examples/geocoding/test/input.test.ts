/**
 * JSONL rows: the fast path (`JSON.parse` and two checks) must read exactly what the schema reads,
 * and leave every other line to the schema, with its message. A line over the bound is a failed
 * row with its number, and a file that is not UTF-8 is refused, naming the line.
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

const readAll = (path: string) =>
  Stream.runCollect(Input.fromFile(path)).pipe(
    Effect.map(Chunk.toReadonlyArray),
    Effect.either,
    Effect.provide(NodeContext.layer),
    Effect.runPromise
  )

it("reports a line over the bound as a failed row with its number, without holding it", async () => {
  const path = Path.join(tempDir(), "in.jsonl")
  const long = JSON.stringify({ id: "long", query: "x".repeat(3 * Input.MAX_LINE_BYTES) })
  const lines = [
    JSON.stringify({ id: "a", query: "Paris" }),
    long,
    JSON.stringify({ id: "b", query: "Lyon" }),
    // the bound exactly, then one byte over it
    JSON.stringify({ id: "c", query: "y".repeat(Input.MAX_LINE_BYTES - 21) }),
    JSON.stringify({ id: "d", query: "y".repeat(Input.MAX_LINE_BYTES - 20) })
  ]
  expect(Buffer.byteLength(lines[3])).toBe(Input.MAX_LINE_BYTES)
  Fs.writeFileSync(path, lines.join("\n"))
  const rows = await readAll(path)
  expect(Either.isRight(rows)).toBe(true)
  if (Either.isLeft(rows)) return
  expect(rows.right.map((row) => [row._tag, row.line, row.id])).toEqual([
    ["Query", 1, "a"],
    ["Invalid", 2, "line-2"],
    ["Query", 3, "b"],
    ["Query", 4, "c"],
    ["Invalid", 5, "line-5"]
  ])
  const invalid = rows.right[1]
  expect(invalid._tag === "Invalid" && invalid.reason).toMatch(/^the line is \d+ bytes long, over the 65536 bytes/)
  expect(await Input.countRows(path).pipe(Effect.provide(NodeContext.layer), Effect.runPromise)).toBe(5)
})

it("refuses a file that is not UTF-8, naming its first such line (both formats)", async () => {
  const dir = tempDir()
  const jsonl = Path.join(dir, "in.jsonl")
  // "Zürich" in Latin-1: 0xFC is no UTF-8 sequence
  Fs.writeFileSync(
    jsonl,
    Buffer.concat([
      Buffer.from(JSON.stringify({ id: "a", query: "Paris" }) + "\n\n"),
      Buffer.from("{\"id\":\"b\",\"query\":\"Z\xfcrich\"}\n", "latin1")
    ])
  )
  const csv = Path.join(dir, "in.csv")
  Fs.writeFileSync(csv, Buffer.from("id,query\na,Paris\nb,Z\xfcrich\n", "latin1"))
  for (const [path, line] of [[jsonl, 3], [csv, 3]] as const) {
    const read = await readAll(path)
    expect(Either.isLeft(read) && read.left.message).toBe(
      `cannot read the input ${path}: line ${line} is not valid UTF-8 (a Latin-1 file? convert it first, e.g. iconv -f latin1 -t utf-8)`
    )
    const counted = await Input.countRows(path).pipe(
      Effect.either,
      Effect.provide(NodeContext.layer),
      Effect.runPromise
    )
    expect(Either.isLeft(counted)).toBe(true)
  }
})
