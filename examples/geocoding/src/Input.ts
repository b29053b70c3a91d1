/**
 * The batch, as a stream of rows read line by line (never the whole file in memory): a CSV with an
 * `id` and a `query` column, or a JSONL file of `{"id", "query"}`. A row that
 * does not parse is not dropped: it comes through as `Invalid`, with its line number, and is
 * written out as failed, and so is a line too long to be a row. A file that is not UTF-8 is refused,
 * naming its first line that is not.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Chunk from "effect/Chunk"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as Lines from "./Lines.js"

export type Row =
  | { readonly _tag: "Query"; readonly line: number; readonly id: string; readonly query: string }
  | { readonly _tag: "Invalid"; readonly line: number; readonly id: string; readonly reason: string }

export class InputError extends Data.TaggedError("InputError")<{ readonly path: string; readonly reason: string }> {
  override get message(): string {
    return `cannot read the input ${this.path}: ${this.reason}`
  }
}

/** A JSONL row: the id may be a number, the query must say something. */
export const JsonRow = Schema.parseJson(Schema.Struct({
  id: Schema.Union(
    Schema.String,
    Schema.Number.pipe(Schema.transform(Schema.String, {
      strict: true,
      decode: String,
      encode: Number
    }))
  ).pipe(Schema.filter((id) => id.length > 0, { message: () => "id is empty" })),
  query: Schema.Trim.pipe(Schema.nonEmptyString({ message: () => "query is empty" }))
}))

const decodeJsonRow = Schema.decodeUnknownEither(JsonRow)

/** The id of an invalid row: its own if it can be read, else its line. */
const fallbackId = (line: number) => `line-${line}`

/** One CSV line: fields separated by commas, `"…"` quoting with `""` for a quote (RFC 4180, one line per record). */
export const parseCsvLine = (line: string): Array<string> | undefined => {
  const fields: Array<string> = []
  let field = ""
  let quoted = false
  let i = 0
  while (i < line.length) {
    const c = line[i]
    if (quoted) {
      if (c === "\"" && line[i + 1] === "\"") {
        field += "\""
        i += 2
        continue
      }
      if (c === "\"") quoted = false
      else field += c
    } else if (c === "\"" && field === "") quoted = true
    else if (c === ",") {
      fields.push(field)
      field = ""
    } else field += c
    i++
  }
  if (quoted) return undefined
  fields.push(field)
  return fields
}

/**
 * The row a well-formed line holds, read without the schema (a million rows spend seconds in its
 * decoder); `undefined` for anything else, which the schema then accepts or rejects with its message.
 */
const fastJsonRow = (text: string): { readonly id: string; readonly query: string } | undefined => {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return undefined
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined
  const { id, query } = value as { readonly id?: unknown; readonly query?: unknown }
  const idText = typeof id === "string" ? id : typeof id === "number" ? String(id) : ""
  const trimmed = typeof query === "string" ? query.trim() : ""
  return idText === "" || trimmed === "" ? undefined : { id: idText, query: trimmed }
}

const jsonl = (text: string, line: number): Row => {
  const fast = fastJsonRow(text)
  if (fast !== undefined) return { _tag: "Query", line, id: fast.id, query: fast.query }
  const decoded = decodeJsonRow(text)
  if (Either.isRight(decoded)) return { _tag: "Query", line, ...decoded.right }
  const id = /"id"\s*:\s*"?([^",}]+)/.exec(text)?.[1] ?? fallbackId(line)
  return { _tag: "Invalid", line, id, reason: ParseResult.TreeFormatter.formatErrorSync(decoded.left) }
}

const csv = (columns: { readonly id: number; readonly query: number }) => (text: string, line: number): Row => {
  const fields = parseCsvLine(text)
  if (fields === undefined) return { _tag: "Invalid", line, id: fallbackId(line), reason: "unterminated quote" }
  const id = fields[columns.id]?.trim() ?? ""
  const query = fields[columns.query]?.trim() ?? ""
  if (id === "") return { _tag: "Invalid", line, id: fallbackId(line), reason: "no id" }
  if (query === "") return { _tag: "Invalid", line, id, reason: "no query" }
  return { _tag: "Query", line, id, query }
}

/** The longest input line read: a row is an id and a place query, and a longer line is reported, not held. */
export const MAX_LINE_BYTES = 64 * 1024

/** An input line over `MAX_LINE_BYTES`: a failed row with its line number, its bytes never held. */
const overlong = (line: number, bytes: number): Row => ({
  _tag: "Invalid",
  line,
  id: fallbackId(line),
  reason: `the line is ${bytes} bytes long, over the ${MAX_LINE_BYTES} bytes a row may take`
})

/**
 * The non-blank lines of a file, each turned into `A` with its line number (blank lines counted),
 * in one pass over each chunk of lines; a line over `MAX_LINE_BYTES` becomes `long`'s, and a line
 * that is not UTF-8 fails the read, naming it.
 */
const lines = <A>(
  path: string,
  f: (text: string, line: number) => A,
  long: (line: number, bytes: number) => A
): Stream.Stream<A, InputError, FileSystem.FileSystem> =>
  Lines.lines(
    Stream.unwrap(Effect.map(FileSystem.FileSystem, (fs) => fs.stream(path))).pipe(
      Stream.mapError((error) => new InputError({ path, reason: error.message }))
    ),
    MAX_LINE_BYTES
  ).pipe(
    Stream.mapError((error) => error._tag === "NotUtf8" ? new InputError({ path, reason: error.message }) : error),
    Stream.mapChunks((read) => {
      const out: Array<A> = []
      for (const line of read) {
        if (line._tag === "Overlong") out.push(long(line.number, line.bytes))
        else if (nonBlank.test(line.text)) out.push(f(line.text, line.number))
      }
      return Chunk.unsafeFromArray(out)
    })
  )

const nonBlank = /\S/

/** Rows of a `.csv` (with a header naming `id` and `query`) or a `.jsonl`/`.ndjson` file. */
export const fromFile = (path: string): Stream.Stream<Row, InputError, FileSystem.FileSystem> => {
  if (/\.(jsonl|ndjson)$/i.test(path)) return lines(path, jsonl, overlong)
  if (!/\.csv$/i.test(path)) {
    return Stream.fail(new InputError({ path, reason: "expected a .csv, .jsonl or .ndjson file" }))
  }
  return lines(
    path,
    (text, line) => ({ text: text as string | undefined, line, bytes: 0 }),
    (line, bytes) => ({ text: undefined, line, bytes })
  ).pipe(
    Stream.mapAccumEffect(
      undefined as { readonly id: number; readonly query: number } | undefined,
      (columns, { bytes, line, text }) => {
        if (columns !== undefined) {
          return Effect.succeed(
            [columns, Option.some(text === undefined ? overlong(line, bytes) : csv(columns)(text, line))] as const
          )
        }
        const header = (parseCsvLine(text ?? "") ?? []).map((name) => name.trim().toLowerCase())
        const found = { id: header.indexOf("id"), query: header.indexOf("query") }
        return found.id < 0 || found.query < 0
          ? Effect.fail(new InputError({ path, reason: `line ${line}: the header must name an id and a query column` }))
          : Effect.succeed([found, Option.none<Row>()] as const)
      }
    ),
    Stream.filterMap((row) => row)
  )
}

/** How many rows a file holds (non-empty lines, less a CSV header): the total for progress and ETA. */
export const countRows = (path: string) =>
  Stream.runCount(lines(path, () => undefined, () => undefined)).pipe(
    Effect.map((n) => (/\.csv$/i.test(path) ? Math.max(0, n - 1) : n))
  )
