/**
 * A file's bytes as lines, each decoded as UTF-8 on its own, with its number. A line longer than a
 * bound is not kept: its bytes are dropped as they are read (memory stays flat whatever the file
 * holds) and it comes through as `overlong`, its number intact. A line that is not valid UTF-8 (a
 * Latin-1 file, say) fails the stream naming it, instead of being read as replacement characters.
 */
import * as Chunk from "effect/Chunk"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"

export type Line =
  | { readonly _tag: "Text"; readonly number: number; readonly text: string }
  | { readonly _tag: "Overlong"; readonly number: number; readonly bytes: number }

export class NotUtf8 extends Data.TaggedError("NotUtf8")<{ readonly line: number }> {
  override get message(): string {
    return `line ${this.line} is not valid UTF-8 (a Latin-1 file? convert it first, e.g. iconv -f latin1 -t utf-8)`
  }
}

const NEWLINE = 0x0a
const CR = 0x0d

export const lines = <E, R>(
  bytes: Stream.Stream<Uint8Array, E, R>,
  maxBytes: number
): Stream.Stream<Line, E | NotUtf8, R> =>
  Stream.suspend(() => {
    const decoder = new TextDecoder("utf-8", { fatal: true })
    let number = 0
    // the pieces of the line read so far, while it is within the bound; its length either way
    let pieces: Array<Uint8Array> = []
    let length = 0

    /** The line read so far ends: into `out`, or its error if it is not UTF-8. */
    const end = (out: Array<Line>): NotUtf8 | undefined => {
      number++
      const kept = length
      const parts = pieces
      pieces = []
      length = 0
      if (kept > maxBytes) {
        out.push({ _tag: "Overlong", number, bytes: kept })
        return undefined
      }
      let whole = parts.length === 1 ? parts[0] : concat(parts, kept)
      if (whole.length > 0 && whole[whole.length - 1] === CR) whole = whole.subarray(0, whole.length - 1)
      try {
        out.push({ _tag: "Text", number, text: decoder.decode(whole) })
        return undefined
      } catch {
        return new NotUtf8({ line: number })
      }
    }
    const add = (piece: Uint8Array) => {
      length += piece.length
      // past the bound the line's bytes are only counted
      if (length <= maxBytes) pieces.push(piece)
      else pieces = []
    }

    const body = Stream.mapChunksEffect(bytes, (chunk) =>
      Effect.suspend(() => {
        const out: Array<Line> = []
        for (const buffer of chunk) {
          let start = 0
          let at = buffer.indexOf(NEWLINE, start)
          while (at >= 0) {
            add(buffer.subarray(start, at))
            const error = end(out)
            if (error !== undefined) return Effect.fail(error)
            start = at + 1
            at = buffer.indexOf(NEWLINE, start)
          }
          // a copy: what is kept past this chunk must not share the reader's buffer
          if (start < buffer.length) add(buffer.slice(start))
        }
        return Effect.succeed(Chunk.unsafeFromArray(out))
      }))
    // the last line, if the file does not end with a newline
    const last = Stream.suspend(() => {
      if (length === 0) return Stream.empty
      const out: Array<Line> = []
      const error = end(out)
      return error === undefined ? Stream.fromIterable(out) : Stream.fail(error)
    })
    return Stream.concat(body, last)
  })

const concat = (parts: ReadonlyArray<Uint8Array>, length: number): Uint8Array => {
  const whole = new Uint8Array(length)
  let offset = 0
  for (const part of parts) {
    whole.set(part, offset)
    offset += part.length
  }
  return whole
}
