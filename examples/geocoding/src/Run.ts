/**
 * One run of the geocoder, as the CLI's `run` (and `tune`, chunk by chunk) does it: the providers
 * are prepared (a stand-in started for each one without a URL, a URL checked for reachability),
 * their layers built once on the chosen rate-limiter store, the batch piped through, and the
 * report printed.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import { RedisBulkhead } from "@sluice/bulkhead-redis"
import { HttpPool } from "@sluice/http"
import { RateLimiterStore } from "@sluice/rate-limiter"
import { RedisRateLimiterStore } from "@sluice/rate-limiter-redis"
import { RedisConnection } from "@sluice/redis"
import * as Console from "effect/Console"
import * as Data from "effect/Data"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import type * as Redacted from "effect/Redacted"
import type * as Stream from "effect/Stream"
import * as Net from "node:net"
import * as Child from "../stand-ins/Child.js"
import { Gazetteer } from "../stand-ins/Gazetteer.js"
import * as Sample from "../stand-ins/Sample.js"
import * as StandIn from "../stand-ins/StandIn.js"
import * as StandIns from "../stand-ins/StandIns.js"
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
  /** Providers reached at a URL (a real service, or stand-ins served elsewhere); the rest are started here. */
  readonly urls: PerProvider<string>
  /** Stand-ins only: misbehaviour, and a quota per period (OpenCage's daily quota). */
  readonly faults: PerProvider<StandIn.Faults>
  readonly periodQuotas: PerProvider<number>
  readonly quotaPeriod: Duration.DurationInput
  readonly margin: number
  /**
   * Starts allowed at the same instant, by provider (`--burst`); by default `Scenario.burstFor`:
   * against a stand-in, from the client rate (and the stand-in admits the same), 1 against a real service.
   */
  readonly bursts: PerProvider<number>
  readonly headroom: number
  readonly contact: string
  readonly apiKey: Redacted.Redacted<string> | undefined
  readonly redis: string | undefined
  readonly seed: number
  /** Stand-ins: fixed ports (default: free ports), and the concurrency they accept. */
  readonly ports?: PerProvider<number> | undefined
  readonly standInConcurrency?: number | undefined
  /**
   * The CLI's entry: when set, the stand-ins run in a child process started from it, out of this
   * process's event loop (see stand-ins/Child.ts); when absent, in this process.
   */
  readonly standInsEntry?: Child.Entry | undefined
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
const checkReachable = (provider: ProviderName, url: string) =>
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

/** The stand-in profile of a provider, as the run would use it. */
export const profileOf = (name: ProviderName) => StandIns.profiles[name]
export const realMedian = (name: ProviderName) => Scenario.realEndpoints[name].medianMillis

/** Stand-ins accept twice the client's permits: the client's bulkhead, not the server, is what binds. */
const STAND_IN_CONCURRENCY_FACTOR = 2

/** Settings for every provider of the run, starting a stand-in for each one without a URL. */
export const prepare = (config: Config) =>
  Effect.gen(function*() {
    const tuning = (name: ProviderName): Scenario.Tuning => ({
      burst: config.bursts[name],
      margin: config.margin,
      headroom: config.headroom,
      userAgent: Scenario.defaultUserAgent(config.contact),
      apiKey: config.apiKey
    })
    const settings: Array<Settings> = []
    // the providers served by stand-ins: their index in `settings`, and their servers' options
    const served: Array<{ readonly index: number; readonly options: StandIn.Options }> = []
    for (const name of config.providers) {
      const url = config.urls[name]
      if (url !== undefined) {
        yield* checkReachable(name, url)
        const real = Scenario.realEndpoints[name]
        settings.push(
          yield* Scenario.settingsFor(
            name,
            {
              baseUrl: url,
              rate: config.rates[name] ?? real.rate,
              medianMillis: config.latencies[name] ?? real.medianMillis,
              where: "real"
            },
            tuning(name),
            config.permits[name]
          )
        )
        continue
      }
      const profile = {
        ...StandIns.profiles[name],
        ...(config.rates[name] === undefined ? {} : { rate: config.rates[name] }),
        ...(config.latencies[name] === undefined ? {} : { medianMillis: config.latencies[name] })
      }
      const sized = yield* Scenario.settingsFor(
        name,
        { baseUrl: "", where: "stand-in", ...profile },
        tuning(name),
        config.permits[name]
      )
      const quota = config.periodQuotas[name]
      served.push({
        index: settings.length,
        options: StandIns.optionsFor(name, {
          profile,
          // the client's own: the quota arithmetic (client rate + burst ≤ limit + burst) holds as is
          burst: sized.burst,
          concurrency: config.standInConcurrency ?? sized.permits * STAND_IN_CONCURRENCY_FACTOR,
          port: config.ports?.[name],
          faults: config.faults[name],
          quota: quota === undefined ? undefined : { requests: quota, period: config.quotaPeriod },
          seed: config.seed + settings.length
        })
      })
      settings.push(sized)
    }
    const options = served.map((s) => s.options)
    const standIns = served.length === 0
      ? []
      : config.standInsEntry === undefined
      ? yield* Effect.forEach(options, (o) => StandIn.make(o))
      : yield* Child.start(config.standInsEntry, options)
    served.forEach(({ index }, i) => {
      settings[index] = { ...settings[index], baseUrl: standIns[i].url }
    })
    return { settings, standIns } as const
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

/** Pipes the batch through providers already prepared. */
export const batch = (settings: ReadonlyArray<Settings>, config: Config, batchConfig: BatchConfig) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    if (batchConfig.fresh && (yield* fs.exists(batchConfig.output))) yield* fs.remove(batchConfig.output)
    // The built-in sample is drawn from the gazetteer: it is loaded (~0.5 s) before the batch's
    // clock starts, as a file would be opened, not while the providers wait for their first rows.
    const input: Stream.Stream<Input.Row, Input.InputError, FileSystem.FileSystem> = batchConfig.input === undefined
      ? yield* Sample.sample({
        rows: batchConfig.rows,
        seed: config.seed,
        places: Sample.SAMPLE_PLACES,
        skew: Sample.SAMPLE_SKEW
      })
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

const thousands = (n: number) => n.toLocaleString("en-US")

/** The lookups over the sum of the client rates: no batch can finish sooner. */
export const physicalLimitMillis = (summary: Pipeline.Summary) =>
  (summary.lookups / summary.providers.reduce((sum, p) => sum + p.clientRate, 0)) * 1000

export const describeProviders = (settings: ReadonlyArray<Settings>, standIns: ReadonlyArray<StandIn.StandIn>) =>
  settings.map((s) => {
    const standIn = standIns.find((standIn) => standIn.url === s.baseUrl)
    const where = standIn === undefined
      ? "remote"
      : standIn.pid === undefined
      ? "stand-in"
      : `stand-in (process ${standIn.pid})`
    return `  ${s.name.padEnd(9)} ${where} ${s.baseUrl}  quota ${s.rate}/s, client keeps ${
      Math.round(s.margin * 100)
    } % under it; burst ${s.burst} (${s.burstReason}); permits ${s.permits} (${s.permitsReason})`
  }).join("\n")

export const renderSummary = (
  summary: Pipeline.Summary,
  servers: ReadonlyArray<{ readonly name: string; readonly limit: number; readonly burst: number } & StandIn.Stats>,
  /** What did not answer at the end of the run (the stand-ins' process), if anything. */
  silent?: string | undefined
): string => {
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
  if (servers.length > 0) {
    lines.push(
      "",
      "what the stand-ins saw (server side):",
      ...servers.map((s) =>
        `  ${s.name.padEnd(9)} ${s.requests} requests, ${s.rateLimited + s.concurrencyLimited} answered 429, ${
          s.quotaExhausted > 0 ? `${s.quotaExhausted} answered 402, ` : ""
        }peak ${s.peakInWindow} arrivals in one window (it admits limit ${s.limit} + burst ${s.burst} = ${
          s.limit + s.burst
        }), peak ${s.peakInFlight} in progress`
      )
    )
  }
  if (silent !== undefined) lines.push("", `what the stand-ins saw: unknown, ${silent}`)
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

/**
 * `run`: prepare, pipe, report. Returns what a test or a benchmark reads; `quiet` prints nothing
 * (the caller reads the result instead).
 */
export const run = (
  config: Config,
  batchConfig: BatchConfig,
  options: { readonly json: boolean; readonly quiet?: boolean | undefined }
) =>
  Effect.scoped(Effect.gen(function*() {
    const { settings, standIns } = yield* prepare(config)
    if (!options.json && options.quiet !== true) {
      yield* Console.log(
        [
          `sluice geocoding example: geocodes ${
            batchConfig.input === undefined
              ? `a built-in sample of ${thousands(batchConfig.rows)} real place queries (with duplicates)`
              : batchConfig.input
          } across ${settings.length} providers.`,
          "Every call goes bulkhead → rate limiter → timeout → HTTP; a refusal sends the row to the next provider;",
          "at the end, a table says which bound held each provider back.",
          standIns.length > 0
            ? "The stand-ins are local HTTP servers speaking each provider's real format, enforcing their quotas (429 past them)" +
              (standIns[0].pid === undefined ? "." : ", in a process of their own.")
            : "",
          describeProviders(settings, standIns),
          ""
        ].filter((line) => line !== "").join("\n")
      )
    }
    const summary = yield* batch(settings, config, batchConfig)
    // the stand-ins' figures, if their process answers (a stopped or hung one is reported, not waited for)
    const figures = yield* Effect.either(StandIns.statsOf(standIns))
    const servers = Either.getOrElse(figures, () => [])
    const silent = Either.isLeft(figures) ? figures.left.message : undefined
    if (options.quiet !== true) {
      yield* Console.log(
        options.json
          ? JSON.stringify({ summary, servers, ...(silent === undefined ? {} : { silent }) })
          : `\n${renderSummary(summary, servers, silent)}`
      )
    }
    return { summary, servers, silent } as const
  })).pipe(Effect.provide(Gazetteer.Default))
