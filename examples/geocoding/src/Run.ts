/**
 * One run of the geocoder: each provider at its base URL (checked for reachability, sized from its
 * rate and median latency), their layers built once on the chosen rate-limiter store, the batch
 * piped through, and the report rendered. The offline demo (harness/Offline.ts) serves the
 * providers given no URL and draws the built-in sample; it passes them in through this module.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import { RedisBulkhead } from "@sluice/bulkhead-redis"
import { HttpPool } from "@sluice/http"
import { RateLimiterStore } from "@sluice/rate-limiter"
import { RedisRateLimiterStore } from "@sluice/rate-limiter-redis"
import { RedisConnection } from "@sluice/redis"
import * as Console from "effect/Console"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Redacted from "effect/Redacted"
import type * as Stream from "effect/Stream"
import * as Net from "node:net"
import * as Calls from "./Calls.js"
import * as Input from "./Input.js"
import * as Pipeline from "./Pipeline.js"
import type { ProviderName, Settings } from "./providers/Geocoder.js"
import * as Geocoders from "./providers/Geocoders.js"
import * as Report from "./Report.js"
import * as Scenario from "./Scenario.js"

export type PerProvider<A> = Partial<Record<ProviderName, A>>

export interface Config {
  readonly providers: ReadonlyArray<ProviderName>
  /** Quotas (requests per second), median latencies (ms) and permits, by provider. */
  readonly rates: PerProvider<number>
  readonly latencies: PerProvider<number>
  readonly permits: PerProvider<number>
  /** Base URL by provider: a real service, or stand-ins served elsewhere (the demo serves the rest). */
  readonly urls: PerProvider<string>
  readonly margin: number
  /**
   * Starts allowed at the same instant, by provider (`--burst`); by default `Scenario.burstFor`:
   * 1 against a real service; against a stand-in, from the client rate (and it admits the same).
   */
  readonly bursts: PerProvider<number>
  readonly headroom: number
  readonly contact: string
  readonly apiKey: Redacted.Redacted<string> | undefined
  readonly redis: string | undefined
  readonly seed: number
}

export interface BatchConfig {
  readonly input: string | undefined
  readonly rows: number
  readonly output: string
  readonly fresh: boolean
  readonly workers: number | undefined
  readonly cache: number
  readonly progress: boolean
  readonly progressEvery: number
  /** `--report`: the HTML report's path. */
  readonly report?: string | undefined
}

/** A run ended with rows written as failed: the exit code says so, and the count. */
export class RowsFailed extends Data.TaggedError("RowsFailed")<{
  readonly failed: number
  readonly rows: number
  readonly output: string
}> {
  override get message(): string {
    return `${this.failed} of ${this.rows} rows failed (written as failed to ${this.output}); ` +
      "run the same command again to try them again"
  }
}

export class ProviderUnreachable extends Data.TaggedError("ProviderUnreachable")<{
  readonly provider: ProviderName
  readonly url: string
  readonly reason: string
}> {
  override get message(): string {
    return `provider "${this.provider}" is unreachable at ${this.url}: ${this.reason}`
  }
}

/** A TCP connect to the URL's host, within 3 s: a provider that cannot be reached fails the run by name. */
export const checkReachable = (provider: ProviderName, url: string) =>
  Effect.async<void, ProviderUnreachable>((resume) => {
    let parsed: URL
    try {
      parsed = new URL(url)
    } catch {
      resume(Effect.fail(new ProviderUnreachable({ provider, url, reason: "not a URL" })))
      return
    }
    const port = Number(parsed.port || (parsed.protocol === "https:" ? 443 : 80))
    const socket = Net.connect({ host: parsed.hostname, port })
    const done = (effect: Effect.Effect<void, ProviderUnreachable>) => {
      socket.destroy()
      resume(effect)
    }
    socket.setTimeout(3_000, () => done(Effect.fail(new ProviderUnreachable({ provider, url, reason: "timed out" }))))
    socket.once(
      "error",
      (error) => done(Effect.fail(new ProviderUnreachable({ provider, url, reason: error.message })))
    )
    socket.once("connect", () => done(Effect.void))
    return Effect.sync(() => socket.destroy())
  })

/** The layers of a run: the providers on one connection pool, the store, the call log. */
export const layer = (settings: ReadonlyArray<Settings>, redis: string | undefined) => {
  const http = Calls.layerHttpClient.pipe(
    Layer.provide(HttpPool.layerHttpClient),
    Layer.provideMerge(HttpPool.layer())
  )
  if (redis === undefined) {
    return Geocoders.layer(settings).pipe(
      Layer.provide(Layer.merge(http, RateLimiterStore.layerMemory)),
      Layer.provideMerge(Calls.layer)
    )
  }
  // with Redis, every process of the run shares each provider's permits as it shares its quota, on
  // one connection for both; while Redis is down each process keeps its own bounds, as if alone:
  // K permits ("fail-open") and the whole quota ("local" at a share of 1)
  const geocoders = Layer.unwrapScoped(
    Effect.gen(function*() {
      const connection = yield* RedisConnection.make({ url: redis })
      if (!connection.isReady()) {
        yield* Console.error(
          `warning: Redis at ${redis} does not answer: until it does, this run keeps its own bounds ` +
            "(each provider's quota and permits, as if it ran alone), shared with no other run"
        )
      }
      const store = RedisRateLimiterStore.layerFromConnection({
        prefix: "sluice:geocoding:",
        storeDown: "local",
        localShare: 1
      }).pipe(
        Layer.provide(Layer.succeed(RedisConnection.RedisConnection, connection))
      )
      return Geocoders.layer(settings, (s) =>
        RedisBulkhead.make({
          name: s.name,
          permits: s.permits,
          // the queue is the fleet's: a bound sized for one process would refuse the others'
          // callers; each wait is still bounded by maxWait, then the row tries the next provider
          maxWait: s.permitMaxWait,
          storeDown: "fail-open",
          prefix: "sluice:geocoding:bh:"
        }).pipe(
          Effect.map((bulkhead) => bulkhead.bulkhead),
          Effect.provideService(RedisConnection.RedisConnection, connection)
        )).pipe(Layer.provide(store))
    })
  )
  return geocoders.pipe(Layer.provide(http), Layer.provideMerge(Calls.layer))
}

/** How the run tunes every provider's client: `--burst`, `--margin`, `--headroom`, the User-Agent, the key. */
export const tuningOf = (config: Config) => (name: ProviderName): Scenario.Tuning => ({
  burst: config.bursts[name],
  margin: config.margin,
  headroom: config.headroom,
  userAgent: Scenario.defaultUserAgent(config.contact),
  apiKey: config.apiKey
})

/** A provider at its base URL: reachable, then sized from its rate and median latency (or the real service's). */
export const remote = (config: Config, name: ProviderName, url: string) =>
  Effect.gen(function*() {
    yield* checkReachable(name, url)
    const real = Scenario.realEndpoints[name]
    return yield* Scenario.settingsFor(
      name,
      {
        baseUrl: url,
        rate: config.rates[name] ?? real.rate,
        medianMillis: config.latencies[name] ?? real.medianMillis,
        where: "real"
      },
      tuningOf(config)(name),
      config.permits[name]
    )
  })

/** Rows drawn for a run given no input file: the demo's built-in sample (stand-ins/Sample.ts). */
export type Sample<R> = (rows: number, seed: number) => Effect.Effect<Stream.Stream<Input.Row>, never, R>

/** Pipes the batch (the input file, else the sample) through providers already prepared. */
export const batch = <R>(
  settings: ReadonlyArray<Settings>,
  config: Config,
  batchConfig: BatchConfig,
  sample: Sample<R>
) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    if (batchConfig.fresh && (yield* fs.exists(batchConfig.output))) yield* fs.remove(batchConfig.output)
    // the sample is drawn before the batch's clock starts, as a file would be opened
    const input: Stream.Stream<Input.Row, Input.InputError, FileSystem.FileSystem> = batchConfig.input === undefined
      ? yield* sample(batchConfig.rows, config.seed)
      : Input.fromFile(batchConfig.input)
    const total = batchConfig.input === undefined ? batchConfig.rows : yield* Input.countRows(batchConfig.input)
    return yield* Pipeline.run({
      input,
      total,
      output: batchConfig.output,
      workers: batchConfig.workers ?? Scenario.workersFor(settings),
      cacheCapacity: batchConfig.cache,
      progress: batchConfig.progress
        ? { tty: process.stderr.isTTY === true, every: `${batchConfig.progressEvery} seconds` }
        : false
    }).pipe(Effect.provide(layer(settings, config.redis)))
  })

export const thousands = (n: number) => n.toLocaleString("en-US")

/** The lookups over the sum of the client rates: no batch can finish sooner. */
export const physicalLimitMillis = (summary: Pipeline.Summary) =>
  (summary.lookups / summary.providers.reduce((sum, p) => sum + p.clientRate, 0)) * 1000

/** The summary of a run, its table, and `extra` lines (what the demo's stand-ins saw) before the failures. */
export const renderSummary = (summary: Pipeline.Summary, extra: ReadonlyArray<string> = []): string => {
  const seconds = summary.durationMillis / 1000
  const limit = physicalLimitMillis(summary) / 1000
  const lines = [
    `${thousands(summary.rows)} rows in ${seconds.toFixed(1)} s: ${thousands(summary.ok)} ok, ${
      thousands(summary.notFound)
    } not found, ${thousands(summary.failed)} failed${summary.invalid > 0 ? ` (${summary.invalid} invalid rows)` : ""}${
      summary.skipped > 0 ? `; ${thousands(summary.skipped)} already done (resumed)` : ""
    }`,
    `${thousands(summary.lookups)} distinct lookups sent to providers, ${
      thousands(summary.deduplicated)
    } rows answered by the dedup cache or a lookup in flight`,
    summary.lookups > 0
      ? `physical limit (lookups ÷ sum of client rates): ${limit.toFixed(1)} s; this run took ${
        (seconds / limit).toFixed(2)
      }x that`
      : "nothing to look up",
    `results: ${summary.output}`,
    "",
    Report.render(summary.providers)
  ]
  lines.push(...extra)
  if (summary.failed > 0) {
    lines.push(
      "",
      `${thousands(summary.failed)} rows failed${
        summary.invalid > 0 ? ` (${thousands(summary.invalid)} of them invalid input)` : ""
      }: every provider refused them (the reasons are under "passed on"); ` +
        "they are written as failed, and the same command run again tries them again"
    )
  }
  return lines.join("\n")
}
