import * as Effect from "effect/Effect"
import type * as HttpClientError from "effect/http/HttpClientError"
import type * as HttpClientRequest from "effect/http/HttpClientRequest"
import type * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as Stream from "effect/Stream"
import * as errors from "./errors.js"

/** What an error keeps of an error body, for its message and logs. */
const EXCERPT_BYTES = 512

const concat = (chunks: ReadonlyArray<Uint8Array>, size: number): Uint8Array => {
  const out = new Uint8Array(size)
  let offset = 0
  for (const chunk of chunks) {
    out.set(chunk, offset)
    offset += chunk.length
  }
  return out
}

/** An error body as far as it was read. */
export interface DrainedBody {
  readonly bytes: Uint8Array
  /** Whether `bytes` is the whole body (it ended within the limit). */
  readonly complete: boolean
  readonly excerpt: string
}

interface BodyAccumulator {
  readonly chunks: Array<Uint8Array>
  size: number
}

/**
 * The body readers of one client: `drain` for error bodies, `readText` for `text` and `json`.
 *
 * @internal
 */
export const make = (context: {
  readonly provider: string
  readonly maxBodySize: number
  readonly errorBodyLimit: number
  readonly urlOf: (request: HttpClientRequest.HttpClientRequest) => string
}) => {
  // one for the client: a decode without `stream` keeps no state between calls
  const utf8 = new TextDecoder()

  /**
   * Reads at most `errorBodyLimit` of an error body: what was read (the whole body when it ended
   * within the limit, `complete`), and its start as text for the error message.
   */
  const drainKeeping = (response: HttpClientResponse.HttpClientResponse): Effect.Effect<DrainedBody> =>
    Effect.suspend(() => {
      let seen = 0
      return response.stream.pipe(
        // the chunk that reaches the limit is the last one read
        Stream.takeUntil((chunk) => (seen += chunk.length) >= context.errorBodyLimit),
        Stream.runFold(
          () => ({ chunks: [] as Array<Uint8Array>, size: 0 }),
          (state, chunk) => {
            state.chunks.push(chunk)
            state.size += chunk.length
            return state
          }
        )
      )
    }).pipe(
      Effect.map((state): DrainedBody => {
        const bytes = concat(state.chunks, state.size)
        return {
          bytes,
          complete: state.size < context.errorBodyLimit,
          excerpt: utf8.decode(bytes.subarray(0, EXCERPT_BYTES))
        }
      }),
      Effect.orElseSucceed((): DrainedBody => ({ bytes: new Uint8Array(0), complete: false, excerpt: "" }))
    )

  /** Reads at most `errorBodyLimit` of an error body, keeping its start for the error message. */
  const drain = (response: HttpClientResponse.HttpClientResponse): Effect.Effect<string> =>
    Effect.map(drainKeeping(response), (drained) => drained.excerpt)

  const tooLarge = (request: HttpClientRequest.HttpClientRequest, received: number) =>
    new errors.BodyTooLarge({
      provider: context.provider,
      url: context.urlOf(request),
      limit: context.maxBodySize,
      received
    })

  const readChunked = (
    request: HttpClientRequest.HttpClientRequest,
    response: HttpClientResponse.HttpClientResponse
  ): Effect.Effect<Uint8Array, errors.BodyTooLarge | HttpClientError.HttpClientError> =>
    Effect.map(
      Stream.runFoldEffect(
        response.stream,
        (): BodyAccumulator => ({ chunks: [], size: 0 }),
        (state, chunk): Effect.Effect<BodyAccumulator, errors.BodyTooLarge> => {
          state.size += chunk.length
          if (state.size > context.maxBodySize) return Effect.fail(tooLarge(request, state.size))
          state.chunks.push(chunk)
          return Effect.succeed(state)
        }
      ),
      (state) => concat(state.chunks, state.size)
    )

  /**
   * The whole body, failing as soon as it passes `maxBodySize`. A body with a Content-Length is
   * checked against the header before a byte is read, then read in one piece (undici fails a body
   * that does not match its Content-Length); a chunked body is counted chunk by chunk as it
   * arrives, and the request is aborted at the first chunk past the limit.
   */
  const readBytes = (
    request: HttpClientRequest.HttpClientRequest,
    response: HttpClientResponse.HttpClientResponse
  ): Effect.Effect<Uint8Array, errors.BodyTooLarge | HttpClientError.HttpClientError> => {
    const declared = response.headers["content-length"]
    if (declared !== undefined && /^\d+$/.test(declared)) {
      const length = Number(declared)
      // refused unread: the attempt's scope aborts the exchange as the refusal leaves it
      if (length > context.maxBodySize) return Effect.fail(tooLarge(request, length))
      // arrayBuffer rather than the response's text, which the client memoises (Effect.cached)
      // at a cost per request that this one-shot read has no use for
      return Effect.map(response.arrayBuffer, (buffer) => new Uint8Array(buffer))
    }
    return readChunked(request, response)
  }

  /** The whole body as text (UTF-8), bounded as `readBytes` is. */
  const readText = (
    request: HttpClientRequest.HttpClientRequest,
    response: HttpClientResponse.HttpClientResponse
  ): Effect.Effect<string, errors.BodyTooLarge | HttpClientError.HttpClientError> =>
    Effect.map(readBytes(request, response), (bytes) => utf8.decode(bytes))

  return { drain, drainKeeping, readBytes, readText } as const
}
