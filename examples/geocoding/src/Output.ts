/**
 * The results file: JSON lines appended as results complete (out of order), whole lines per write.
 * After a crash (even `kill -9`) the same path resumes the batch: a half-written last line is cut
 * off (the file is truncated after its last newline), the ids already written are read back, and
 * the pipeline skips them: nothing is lost (what was not written whole is done again) and nothing
 * is written twice (what was written whole is skipped).
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
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

export class OutputError extends Data.TaggedError("OutputError")<{ readonly path: string; readonly reason: string }> {
  override get message(): string {
    return `cannot write the output ${this.path}: ${this.reason}`
  }
}

export interface Output {
  readonly path: string
  /** Ids already in the file when it was opened. */
  readonly done: ReadonlySet<string>
  /** Lines cut off the end: 1 after a crash mid-write, else 0. */
  readonly truncated: number
  /** Appends whole lines, in one write. */
  readonly append: (records: ReadonlyArray<Record>) => Effect.Effect<void, OutputError>
}

const NEWLINE = 0x0a
/** Read back from the end in pieces of this size to find the last newline. */
const TAIL_CHUNK = 64 * 1024

const idOf = /^\{"id":("(?:[^"\\]|\\.)*")/

export const open = (path: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const fail = (error: { readonly message: string }) => new OutputError({ path, reason: error.message })
    const done = new Set<string>()
    let truncated = 0
    if (yield* Effect.mapError(fs.exists(path), fail)) {
      const size = Number((yield* Effect.mapError(fs.stat(path), fail)).size)
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
      yield* fs.stream(path).pipe(
        Stream.decodeText(),
        Stream.splitLines,
        Stream.runForEach((line) =>
          Effect.sync(() => {
            // The writer puts `id` first, so the common case needs no full parse.
            const match = idOf.exec(line)
            const id = match !== null ? JSON.parse(match[1]) as string : (JSON.parse(line) as { id?: string }).id
            if (typeof id === "string") done.add(id)
          })
        ),
        Effect.mapError(fail)
      )
    }
    const file = yield* Effect.mapError(fs.open(path, { flag: "a" }), fail)
    const encoder = new TextEncoder()
    const self: Output = {
      path,
      done,
      truncated,
      append: (records) =>
        records.length === 0 ? Effect.void : file.writeAll(
          encoder.encode(records.map((record) => JSON.stringify(record)).join("\n") + "\n")
        ).pipe(Effect.mapError(fail))
    }
    return self
  })
