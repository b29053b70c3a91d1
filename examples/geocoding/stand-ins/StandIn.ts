/**
 * One stand-in provider: an HTTP server on its own loopback port that answers in the format of a
 * real provider from the gazetteer, and behaves like a real one under load: it enforces its quota
 * (a sliding log over the arrivals it accepted: at most `limit + burst` in any `window`, the bound
 * a client limiter with the same burst keeps) and its concurrency, answering 429 with
 * `Retry-After` past either; it takes time (a log-normal latency with the given median and p95);
 * and it misbehaves on demand (slow, errors, malformed bodies, slow bodies, hanging requests).
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Clock from "effect/Clock"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import * as Http from "node:http"
import * as formats from "./formats.js"
import { Gazetteer } from "./Gazetteer.js"
import * as Random from "./Random.js"

export type Format = formats.Format

/** Misbehaviour, changeable while the server runs. */
export interface Faults {
  /** Latency multiplier: 1 is normal, 10 is a provider ten times slower. */
  readonly slow?: number | undefined
  /** Share of requests answered 500. */
  readonly errorRate?: number | undefined
  /** Share of requests answered 200 with a truncated body. */
  readonly malformedRate?: number | undefined
  /** Share of requests never answered (the client's attempt timeout must end them). */
  readonly hangRate?: number | undefined
  /**
   * Milliseconds between a body's first bytes and the rest: the headers come after the latency as
   * usual, the body ends this much later (a body that streams slowly).
   */
  readonly bodyDelayMillis?: number | undefined
}

export interface Options {
  readonly format: Format
  /** 0 (default): a free port. */
  readonly port?: number | undefined
  /** The quota: `limit` arrivals per `window`, plus `burst` at the same instant. */
  readonly limit: number
  readonly window?: Duration.DurationInput | undefined
  readonly burst?: number | undefined
  /** Requests in progress at once; past it, 429. */
  readonly concurrency: number
  readonly latency: { readonly median: Duration.DurationInput; readonly p95: Duration.DurationInput }
  /** OpenCage: the requests allowed per `period` (its daily quota), then 402 until the reset. */
  readonly quota?: { readonly requests: number; readonly period: Duration.DurationInput } | undefined
  /** OpenCage: the API key the server expects (`key=`); any key when absent. */
  readonly apiKey?: string | undefined
  readonly faults?: Faults | undefined
  readonly seed?: number | undefined
}

export interface Stats {
  readonly requests: number
  readonly answered: number
  /** 429s for the quota (`rateLimited`) and for concurrency (`concurrencyLimited`). */
  readonly rateLimited: number
  readonly concurrencyLimited: number
  /** 402s once the period's quota was spent. */
  readonly quotaExhausted: number
  readonly errors: number
  /** The most arrivals accepted within one window, and the most requests in progress at once. */
  readonly peakInWindow: number
  readonly peakInFlight: number
  /** Requests arrived per `bucketMillis` from the first (429s included), for the run report; at most an hour's. */
  readonly arrivals: {
    readonly startMillis: number
    readonly bucketMillis: number
    readonly counts: ReadonlyArray<number>
  }
}

/** The arrivals' buckets: a quarter second, as the client's recording in the demo; an hour of them at most. */
const ARRIVAL_BUCKET_MILLIS = 250
const MAX_ARRIVAL_BUCKETS = 14_400

export interface StandIn {
  readonly format: Format
  readonly url: string
  readonly port: number
  readonly options: Options
  /** The process serving it, when that is not this one (the CLI's stand-ins run in a child). */
  readonly pid?: number | undefined
  /** Fails only for stand-ins in another process that did not answer (stopped, hung or gone). */
  readonly stats: Effect.Effect<Stats, NoAnswer>
  readonly setFaults: (faults: Faults) => Effect.Effect<void, NoAnswer>
}

/** The stand-ins' process did not answer a request in time, or is gone: it names the process and what was asked. */
export class NoAnswer extends Data.TaggedError("NoAnswer")<{
  readonly pid: number | undefined
  readonly request: string
  readonly reason: string
}> {
  override get message(): string {
    return `the stand-ins' process${
      this.pid === undefined ? "" : ` ${this.pid}`
    } did not answer (${this.request}): ${this.reason}`
  }
}

/** A stand-in's server could not listen (its port taken, say). */
export class ListenFailed extends Data.TaggedError("ListenFailed")<{
  readonly format: Format
  readonly port: number
  readonly reason: string
}> {
  override get message(): string {
    return `the ${this.format} stand-in could not listen on 127.0.0.1:${this.port}: ${this.reason}`
  }
}

/** The real providers' paths, so that a base URL is all that differs between a stand-in and the real one. */
export const paths: Record<Format, string> = {
  nominatim: "/search",
  photon: "/api",
  opencage: "/geocode/v1/json"
}

// The 1.645 is the standard normal's 95th percentile: it turns a p95/median ratio into sigma.
const Z95 = 1.645

/** Accepted arrivals over the last window, in a ring of `limit + burst` slots. */
const makeSlidingLog = (capacity: number, windowMillis: number) => {
  const log = new Float64Array(capacity)
  let head = 0
  let size = 0
  return {
    /** 0 when admitted, else the milliseconds until a slot frees. */
    admit: (now: number): number => {
      while (size > 0 && log[head] <= now - windowMillis) {
        head = (head + 1) % capacity
        size--
      }
      if (size >= capacity) return log[head] + windowMillis - now
      log[(head + size) % capacity] = now
      size++
      return 0
    },
    get size() {
      return size
    }
  }
}

const retryAfterSeconds = (millis: number): string => String(Math.max(1, Math.ceil(millis / 1000)))

export const make = (options: Options) =>
  Effect.gen(function*() {
    const gazetteer = yield* Gazetteer
    // Load the gazetteer before listening: decoding it blocks the event loop for a second or so,
    // and arrivals queued behind that would reach the quota's sliding log in one bunch.
    gazetteer.size()
    const server = yield* NodeHttpServer.make(() => Http.createServer(), {
      port: options.port ?? 0,
      host: "127.0.0.1"
    }).pipe(
      Effect.mapError((error) =>
        new ListenFailed({
          format: options.format,
          port: options.port ?? 0,
          reason: error.cause instanceof Error ? error.cause.message : String(error.cause)
        })
      )
    )
    const port = server.address._tag === "TcpAddress" ? server.address.port : 0
    const windowMillis = Duration.toMillis(options.window ?? "1 second")
    const burst = options.burst ?? 1
    const log = makeSlidingLog(options.limit + burst, windowMillis)
    const medianMillis = Duration.toMillis(options.latency.median)
    const sigma = Math.log(Math.max(Duration.toMillis(options.latency.p95) / medianMillis, 1)) / Z95
    const random = Random.make(options.seed ?? 7)
    const faults = yield* Ref.make<Faults>(options.faults ?? {})
    const quotaPeriodMillis = options.quota === undefined ? 0 : Duration.toMillis(options.quota.period)
    const quota = { used: 0, resetAt: (yield* Clock.currentTimeMillis) + quotaPeriodMillis }
    const stats = {
      requests: 0,
      answered: 0,
      rateLimited: 0,
      concurrencyLimited: 0,
      quotaExhausted: 0,
      errors: 0,
      peakInWindow: 0,
      peakInFlight: 0
    }
    let inFlight = 0
    const arrivals = { startMillis: Number.NaN, counts: [] as Array<number> }
    const arrived = (now: number) => {
      if (Number.isNaN(arrivals.startMillis)) arrivals.startMillis = now
      const i = Math.floor((now - arrivals.startMillis) / ARRIVAL_BUCKET_MILLIS)
      if (i >= MAX_ARRIVAL_BUCKETS) return
      while (arrivals.counts.length <= i) arrivals.counts.push(0)
      arrivals.counts[i]++
    }

    const json = (body: unknown, status: number, headers: Record<string, string> = {}) =>
      HttpServerResponse.unsafeJson(body, { status, headers })

    /** `json`, its body sent in two halves, the second `delayMillis` after the first. */
    const slowJson = (body: unknown, status: number, headers: Record<string, string>, delayMillis: number) => {
      const bytes = new TextEncoder().encode(JSON.stringify(body))
      const half = Math.floor(bytes.length / 2)
      return HttpServerResponse.stream(
        Stream.concat(
          Stream.succeed(bytes.subarray(0, half)),
          Stream.fromEffect(Effect.as(Effect.sleep(Duration.millis(delayMillis)), bytes.subarray(half)))
        ),
        { status, headers, contentType: "application/json" }
      )
    }

    const tooMany = (retryAfterMillis: number, now: number) =>
      json(formats.errorBody(options.format, 429, "Too Many Requests", now), 429, {
        "retry-after": retryAfterSeconds(retryAfterMillis)
      })

    /** The period's quota as OpenCage reports it, rolling over at the reset. */
    const quotaRate = (now: number): formats.OpenCageRate | undefined => {
      if (options.quota === undefined) return undefined
      if (now >= quota.resetAt) {
        quota.used = 0
        quota.resetAt = now + quotaPeriodMillis
      }
      return {
        limit: options.quota.requests,
        remaining: Math.max(0, options.quota.requests - quota.used),
        reset: Math.ceil(quota.resetAt / 1000)
      }
    }

    const rateHeaders = (rate: formats.OpenCageRate | undefined): Record<string, string> =>
      rate === undefined ? {} : {
        "x-ratelimit-limit": String(rate.limit),
        "x-ratelimit-remaining": String(rate.remaining),
        "x-ratelimit-reset": String(rate.reset)
      }

    const answer = (query: string, limit: number, now: number, bodyDelayMillis: number) => {
      const places = gazetteer.search(query, limit)
      const send = (body: unknown, headers: Record<string, string> = {}) =>
        bodyDelayMillis > 0 ? slowJson(body, 200, headers, bodyDelayMillis) : json(body, 200, headers)
      switch (options.format) {
        case "nominatim":
          return send(formats.nominatim(places))
        case "photon":
          return send(formats.photon(places))
        case "opencage": {
          const rate = quotaRate(now)
          return send(formats.opencage(places, rate, 200, now), rateHeaders(rate))
        }
      }
    }

    const handle = Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const now = yield* Clock.currentTimeMillis
      stats.requests++
      arrived(now)
      const url = new URL(request.url, "http://stand-in")
      if (url.pathname !== paths[options.format]) {
        return json(formats.errorBody(options.format, 404, `no endpoint ${url.pathname}`, now), 404)
      }
      const query = url.searchParams.get("q") ?? ""
      if (options.format === "nominatim" && url.searchParams.get("format") !== "jsonv2") {
        return json(formats.errorBody("nominatim", 400, "this stand-in speaks format=jsonv2 only", now), 400)
      }
      if (options.format === "opencage") {
        const key = url.searchParams.get("key")
        if (key === null || (options.apiKey !== undefined && key !== options.apiKey)) {
          return json(formats.errorBody("opencage", 401, "invalid API key", now), 401)
        }
        const rate = quotaRate(now)
        if (rate !== undefined && rate.remaining === 0) {
          stats.quotaExhausted++
          return json(formats.opencage([], rate, 402, now), 402, rateHeaders(rate))
        }
        // counted on arrival, as a real quota is: requests in flight cannot overrun it
        if (rate !== undefined) quota.used++
      }
      if (query.trim() === "") return json(formats.errorBody(options.format, 400, "missing q", now), 400)
      const wait = log.admit(now)
      if (wait > 0) {
        stats.rateLimited++
        return tooMany(wait, now)
      }
      stats.peakInWindow = Math.max(stats.peakInWindow, log.size)
      if (inFlight >= options.concurrency) {
        stats.concurrencyLimited++
        return tooMany(1000, now)
      }
      inFlight++
      stats.peakInFlight = Math.max(stats.peakInFlight, inFlight)
      return yield* Effect.gen(function*() {
        const current = yield* Ref.get(faults)
        const latency = medianMillis * Math.exp(sigma * Random.normal(random)) * (current.slow ?? 1)
        const dice = random.next()
        const hang = current.hangRate ?? 0
        const error = hang + (current.errorRate ?? 0)
        const malformed = error + (current.malformedRate ?? 0)
        if (dice < hang) return yield* Effect.never
        yield* Effect.sleep(Duration.millis(latency))
        stats.answered++
        if (dice < error) {
          stats.errors++
          return json(formats.errorBody(options.format, 500, "Internal Server Error", now), 500)
        }
        const limit = Math.min(Math.max(Number(url.searchParams.get("limit") ?? 1) || 1, 1), 40)
        const response = answer(query, limit, now, current.bodyDelayMillis ?? 0)
        if (dice < malformed) {
          return HttpServerResponse.text("{\"type\":\"FeatureCollection\",\"feat", { contentType: "application/json" })
        }
        return response
      }).pipe(Effect.ensuring(Effect.sync(() => inFlight--)))
    })

    yield* server.serve(handle)
    const self: StandIn = {
      format: options.format,
      url: `http://127.0.0.1:${port}`,
      port,
      options,
      stats: Effect.sync(() => ({
        ...stats,
        arrivals: {
          startMillis: Number.isNaN(arrivals.startMillis) ? 0 : arrivals.startMillis,
          bucketMillis: ARRIVAL_BUCKET_MILLIS,
          counts: [...arrivals.counts]
        }
      })),
      setFaults: (next) => Ref.set(faults, next)
    }
    return self
  })
