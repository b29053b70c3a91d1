/**
 * What each provider answered, seen at the HTTP client: responses, 429s, and the latency of each
 * call for the report's p50 and p95, from the request to the end of its body: what a bulkhead is
 * sized by, the time the call holds a permit (to the headers too, labelled as such). The
 * provider's own stats keep the mean and p95 of each phase; a median needs samples, so the
 * `HttpClient` is wrapped once here and every response is recorded under its origin (one origin
 * per provider).
 */
import * as HttpClient from "@effect/platform/HttpClient"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"

/** The last this-many calls per origin make the percentiles: bounded memory, recent behaviour. */
const SAMPLES = 4_096

export interface OriginStats {
  readonly responses: number
  readonly tooManyRequests: number
  /** From the request to the end of its body (read or abandoned). */
  readonly p50Millis: number
  readonly p95Millis: number
  /** From the request to its response's headers. */
  readonly headersP50Millis: number
  readonly headersP95Millis: number
  /** UNIX milliseconds of the first and the last response: the span the achieved rate is over. */
  readonly firstAt: number
  readonly lastAt: number
}

interface Log {
  /** To the end of the body, and to the headers: the last `SAMPLES` of each. */
  readonly latencies: Float64Array
  readonly headers: Float64Array
  bodies: number
  responses: number
  tooManyRequests: number
  firstAt: number
  lastAt: number
}

export class Calls extends Context.Tag("@sluice/example-geocoding/Calls")<Calls, {
  /** A response's headers are in. */
  readonly record: (origin: string, status: number, startedAt: number, headersAt: number) => void
  /** Its body was read to its end, or given up. */
  readonly recordBody: (origin: string, startedAt: number, endedAt: number) => void
  readonly stats: (origin: string) => Effect.Effect<OriginStats>
}>() {}

const percentile = (sorted: Float64Array, p: number): number =>
  sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]

const summary = (samples: Float64Array, count: number) => {
  const sorted = samples.slice(0, Math.min(count, SAMPLES)).sort()
  return { p50: percentile(sorted, 0.5), p95: percentile(sorted, 0.95) }
}

export const make = Effect.sync(() => {
  const logs = new Map<string, Log>()
  const logOf = (origin: string, startedAt: number): Log => {
    let log = logs.get(origin)
    if (log === undefined) {
      log = {
        latencies: new Float64Array(SAMPLES),
        headers: new Float64Array(SAMPLES),
        bodies: 0,
        responses: 0,
        tooManyRequests: 0,
        firstAt: startedAt,
        lastAt: 0
      }
      logs.set(origin, log)
    }
    return log
  }
  return Calls.of({
    record: (origin, status, startedAt, headersAt) => {
      const log = logOf(origin, startedAt)
      log.headers[log.responses % SAMPLES] = headersAt - startedAt
      log.responses++
      if (status === 429) log.tooManyRequests++
      log.lastAt = Math.max(log.lastAt, headersAt)
    },
    recordBody: (origin, startedAt, endedAt) => {
      const log = logOf(origin, startedAt)
      log.latencies[log.bodies % SAMPLES] = endedAt - startedAt
      log.bodies++
    },
    stats: (origin) =>
      Effect.sync(() => {
        const log = logs.get(origin)
        if (log === undefined) {
          return {
            responses: 0,
            tooManyRequests: 0,
            p50Millis: 0,
            p95Millis: 0,
            headersP50Millis: 0,
            headersP95Millis: 0,
            firstAt: 0,
            lastAt: 0
          }
        }
        const call = summary(log.latencies, log.bodies)
        const headers = summary(log.headers, log.responses)
        return {
          responses: log.responses,
          tooManyRequests: log.tooManyRequests,
          p50Millis: call.p50,
          p95Millis: call.p95,
          headersP50Millis: headers.p50,
          headersP95Millis: headers.p95,
          firstAt: log.firstAt,
          lastAt: log.lastAt
        }
      })
  })
})

/**
 * The response, its body's readers timed: `done` runs once, when the first body read ends (to the
 * end of the body, or given up). Every reader the HTTP client may use is covered: the whole body
 * (`arrayBuffer`, `text`, `json`) and its stream.
 */
const timingBody = (
  response: HttpClientResponse.HttpClientResponse,
  done: Effect.Effect<void>
): HttpClientResponse.HttpClientResponse => {
  let ended = false
  const end = Effect.suspend(() => {
    if (ended) return Effect.void
    ended = true
    return done
  })
  const timed: HttpClientResponse.HttpClientResponse = Object.create(response)
  return Object.defineProperties(timed, {
    arrayBuffer: { get: () => Effect.ensuring(response.arrayBuffer, end) },
    text: { get: () => Effect.ensuring(response.text, end) },
    json: { get: () => Effect.ensuring(response.json, end) },
    stream: { get: () => Stream.ensuring(response.stream, end) }
  })
}

export const layer: Layer.Layer<Calls> = Layer.effect(Calls, make)

/** Wraps the `HttpClient` below it so that every response is recorded into `Calls`. */
export const layerHttpClient: Layer.Layer<HttpClient.HttpClient, never, HttpClient.HttpClient | Calls> = Layer.effect(
  HttpClient.HttpClient,
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    const calls = yield* Calls
    // Parsing every request's URL for its origin cost more than the rest of the recording: the
    // origin is parsed once per scheme-and-authority prefix (one per provider).
    const origins = new Map<string, string>()
    const originOf = (url: string): string => {
      const end = url.indexOf("/", url.indexOf("//") + 2)
      const prefix = end < 0 ? url : url.slice(0, end)
      let origin = origins.get(prefix)
      if (origin === undefined) {
        origin = new URL(url).origin
        origins.set(prefix, origin)
      }
      return origin
    }
    return HttpClient.transform(
      client,
      (response, request) =>
        Effect.flatMap(
          Clock.currentTimeMillis,
          (startedAt) =>
            Effect.flatMap(response, (result) =>
              Effect.map(Clock.currentTimeMillis, (headersAt) => {
                const origin = originOf(request.url)
                calls.record(origin, result.status, startedAt, headersAt)
                return timingBody(
                  result,
                  Effect.map(Clock.currentTimeMillis, (endedAt) => calls.recordBody(origin, startedAt, endedAt))
                )
              }))
        )
    )
  })
)
