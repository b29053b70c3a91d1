/**
 * What each provider answered, seen at the HTTP client: responses, 429s, and the latency of each
 * call (to its headers) for the report's p50 and p95. The provider's own stats keep the mean and
 * p95 of each phase; a median needs samples, so the `HttpClient` is wrapped once here and every
 * response is recorded under its origin (one origin per provider).
 */
import * as HttpClient from "@effect/platform/HttpClient"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/** The last this-many calls per origin make the percentiles: bounded memory, recent behaviour. */
const SAMPLES = 4_096

export interface OriginStats {
  readonly responses: number
  readonly tooManyRequests: number
  readonly p50Millis: number
  readonly p95Millis: number
  /** UNIX milliseconds of the first and the last response: the span the achieved rate is over. */
  readonly firstAt: number
  readonly lastAt: number
}

interface Log {
  readonly latencies: Float64Array
  responses: number
  tooManyRequests: number
  firstAt: number
  lastAt: number
}

export class Calls extends Context.Tag("@sluice/example-geocoding/Calls")<Calls, {
  readonly record: (origin: string, status: number, startedAt: number, endedAt: number) => void
  readonly stats: (origin: string) => Effect.Effect<OriginStats>
}>() {}

const percentile = (sorted: Float64Array, p: number): number =>
  sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]

export const make = Effect.sync(() => {
  const logs = new Map<string, Log>()
  return Calls.of({
    record: (origin, status, startedAt, endedAt) => {
      let log = logs.get(origin)
      if (log === undefined) {
        log = { latencies: new Float64Array(SAMPLES), responses: 0, tooManyRequests: 0, firstAt: startedAt, lastAt: 0 }
        logs.set(origin, log)
      }
      log.latencies[log.responses % SAMPLES] = endedAt - startedAt
      log.responses++
      if (status === 429) log.tooManyRequests++
      log.lastAt = Math.max(log.lastAt, endedAt)
    },
    stats: (origin) =>
      Effect.sync(() => {
        const log = logs.get(origin)
        if (log === undefined) {
          return { responses: 0, tooManyRequests: 0, p50Millis: 0, p95Millis: 0, firstAt: 0, lastAt: 0 }
        }
        const sorted = log.latencies.slice(0, Math.min(log.responses, SAMPLES)).sort()
        return {
          responses: log.responses,
          tooManyRequests: log.tooManyRequests,
          p50Millis: percentile(sorted, 0.5),
          p95Millis: percentile(sorted, 0.95),
          firstAt: log.firstAt,
          lastAt: log.lastAt
        }
      })
  })
})

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
              Effect.map(Clock.currentTimeMillis, (endedAt) => {
                calls.record(originOf(request.url), result.status, startedAt, endedAt)
                return result
              }))
        )
    )
  })
)
