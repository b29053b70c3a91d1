/**
 * The results file: JSON lines appended as results complete (out of order), whole lines per write.
 * After a crash (even `kill -9`) the same path resumes the batch: a half-written last line is cut
 * off (the file is truncated after its last newline), the ids already written are read back, and
 * the pipeline skips them: nothing is lost (what was not written whole is done again) and nothing
 * is written twice (what was written whole is skipped).
 */
import type { PlatformError } from "@effect/platform/Error"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"

export type Status = "ok" | "not_found" | "failed"

export interface Record {
  readonly id: string
  readonly query: string
  readonly provider: string | null
  readonly lat: number | null
  readonly lon: number | null
  readonly display_name: string | null
  readonly status: Status
  /** Why it failed: the row's line and parse error, or each provider's refusal. */
  readonly error?: string | undefined
}

export class OutputError extends Data.TaggedError("OutputError")<{
  readonly path: string
  /** Reading back what an earlier run wrote (`resume`), or writing (`write`). */
  readonly operation: "resume" | "write"
  readonly reason: string
}> {
  override get message(): string {
    return `cannot ${this.operation === "resume" ? "resume from" : "write"} the output ${this.path}: ${this.reason}`
  }
}

export interface Output {
  readonly path: string
  /** Ids already in the file when it was opened. */
  readonly done: ReadonlySet<string>
  /** Lines cut off the end: 1 after a crash mid-write, else 0. */
  readonly truncated: number
  /** Rows an earlier run wrote as failed: taken out of the file, to be tried again. */
  readonly retried: number
  /** Appends whole lines, in one write. */
  readonly append: (records: ReadonlyArray<Record>) => Effect.Effect<void, OutputError>
}

const NEWLINE = 0x0a
/** Read back from the end in pieces of this size to find the last newline. */
const TAIL_CHUNK = 64 * 1024

const idOf = /^\{"id":("(?:[^"\\]|\\.)*")/
/**
 * A failed record. Inside a JSON string a quote is escaped, so these bare quotes can only be the
 * record's own `status` field.
 */
const FAILED = "\"status\":\"failed\""

/** What went wrong, in words: a system error's own description (`ENOSPC: no space left on device, write`). */
const reasonOf = (error: PlatformError | { readonly message: string }): string =>
  "_tag" in error && error._tag === "SystemError" && error.description !== undefined ? error.description : error.message

export const open = (path: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const failAs = (operation: OutputError["operation"]) => (error: PlatformError | { readonly message: string }) =>
      new OutputError({ path, operation, reason: reasonOf(error) })
    const fail = failAs("resume")
    const done = new Set<string>()
    let truncated = 0
    let retried = 0
    const info = yield* fs.stat(path).pipe(Effect.option)
    if (Option.isSome(info) && info.value.type === "Directory") {
      return yield* new OutputError({ path, operation: "write", reason: "is a directory" })
    }
    // Only a regular file keeps what was written: a device or a pipe (`/dev/full`, `/dev/null`)
    // has nothing to resume from, and reading one back may never end.
    if (Option.isSome(info) && info.value.type === "File") {
      const size = Number(info.value.size)
      // Find the end of the last whole line, reading back from the end of the file.
      const keep = yield* Effect.scoped(Effect.gen(function*() {
        const file = yield* fs.open(path, { flag: "r" })
        let end = size
        while (end > 0) {
          const start = Math.max(0, end - TAIL_CHUNK)
          yield* file.seek(start, "start")
          const chunk = new Uint8Array(end - start)
          yield* file.read(chunk)
          const at = chunk.lastIndexOf(NEWLINE)
          if (at >= 0) return start + at + 1
          end = start
        }
        return 0
      })).pipe(Effect.mapError(fail))
      if (keep < size) {
        truncated = 1
        yield* Effect.mapError(fs.truncate(path, keep), fail)
      }
      let line = 0
      yield* fs.stream(path).pipe(
        Stream.decodeText(),
        Stream.splitLines,
        Stream.runForEach((text) =>
          Effect.try({
            try: () => {
              line++
              // The writer puts `id` first, so the common case needs no full parse.
              const match = idOf.exec(text)
              const id: unknown = match !== null ? JSON.parse(match[1]) : (JSON.parse(text) as { id?: unknown }).id
              if (text.includes(FAILED)) retried++
              else if (typeof id === "string") done.add(id)
            },
            catch: (error) => ({
              message: `line ${line} is not a result record (${error instanceof Error ? error.message : String(error)})`
            })
          })
        ),
        Effect.mapError(fail)
      )
      // the failed rows' lines out, through a copy renamed over the file: a crash meanwhile leaves
      // the file as it was, and a failed row is then read as failed again
      if (retried > 0) {
        const copy = `${path}.resume`
        yield* fs.stream(path).pipe(
          Stream.decodeText(),
          Stream.splitLines,
          Stream.filter((text) => text !== "" && !text.includes(FAILED)),
          Stream.map((text) => `${text}\n`),
          Stream.encodeText,
          Stream.run(fs.sink(copy)),
          Effect.zipRight(fs.rename(copy, path)),
          Effect.mapError(fail)
        )
      }
    }
    const file = yield* Effect.mapError(fs.open(path, { flag: "a" }), failAs("write"))
    const encoder = new TextEncoder()
    const self: Output = {
      path,
      done,
      truncated,
      retried,
      append: (records) =>
        records.length === 0 ? Effect.void : file.writeAll(
          encoder.encode(records.map((record) => JSON.stringify(record)).join("\n") + "\n")
        ).pipe(Effect.mapError(failAs("write")))
    }
    return self
  })
