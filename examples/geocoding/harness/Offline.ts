/**
 * The offline demo's side of a run, as the CLI's `run`, `serve` and `tune` use it: a stand-in
 * started for each provider given no URL (in a child process, see stand-ins/Child.ts), the built-in
 * sample when no input file is given, and what the stand-ins saw at the end. The geocoder itself
 * (src/Run.ts) takes a base URL per provider; this is where the demo gives it one.
 */
import * as Console from "effect/Console"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as HtmlReport from "../src/HtmlReport.js"
import type { ProviderName, Settings } from "../src/providers/Geocoder.js"
import * as Run from "../src/Run.js"
import * as Scenario from "../src/Scenario.js"
import * as Child from "../stand-ins/Child.js"
import { Gazetteer } from "../stand-ins/Gazetteer.js"
import * as Sample from "../stand-ins/Sample.js"
import * as StandIn from "../stand-ins/StandIn.js"
import * as StandIns from "../stand-ins/StandIns.js"

export interface Config extends Run.Config {
  /** Stand-ins only: misbehaviour, and a quota per period (OpenCage's daily quota). */
  readonly faults: Run.PerProvider<StandIn.Faults>
  readonly periodQuotas: Run.PerProvider<number>
  readonly quotaPeriod: Duration.DurationInput
  /** Stand-ins: fixed ports (default: free ports), and the concurrency they accept. */
  readonly ports?: Run.PerProvider<number> | undefined
  readonly standInConcurrency?: number | undefined
  /**
   * The CLI's entry: when set, the stand-ins run in a child process started from it, out of this
   * process's event loop (see stand-ins/Child.ts); when absent, in this process.
   */
  readonly standInsEntry?: Child.Entry | undefined
}

/** The built-in sample, drawn from the gazetteer (loaded, ~0.5 s, when this runs). */
export const sample: Run.Sample<Gazetteer> = (rows, seed) =>
  Sample.sample({ rows, seed, places: Sample.SAMPLE_PLACES, skew: Sample.SAMPLE_SKEW })

/** The stand-in profile of a provider, as the run would use it. */
export const profileOf = (name: ProviderName) => StandIns.profiles[name]

/** Stand-ins accept twice the client's permits: the client's bulkhead, not the server, is what binds. */
const STAND_IN_CONCURRENCY_FACTOR = 2

/** Settings for every provider of the run, starting a stand-in for each one without a URL: the seam. */
export const prepare = (config: Config) =>
  Effect.gen(function*() {
    const tuning = Run.tuningOf(config)
    const settings: Array<Settings> = []
    // the providers served by stand-ins: their index in `settings`, and their servers' options
    const served: Array<{ readonly index: number; readonly options: StandIn.Options }> = []
    for (const name of config.providers) {
      const url = config.urls[name]
      if (url !== undefined) {
        settings.push(yield* Run.remote(config, name, url))
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

/** What the stand-ins saw, for the end of the report; or that their process did not answer. */
const serverLines = (
  servers: ReadonlyArray<{ readonly name: string; readonly limit: number; readonly burst: number } & StandIn.Stats>,
  silent: string | undefined
): ReadonlyArray<string> => {
  const lines: Array<string> = []
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
  return lines
}

/**
 * `run`: prepare, pipe, report. Returns what a test or a benchmark reads; `quiet` prints nothing
 * (the caller reads the result instead).
 */
export const run = (
  config: Config,
  batchConfig: Run.BatchConfig,
  options: { readonly json: boolean; readonly quiet?: boolean | undefined }
) =>
  Effect.scoped(Effect.gen(function*() {
    const { settings, standIns } = yield* prepare(config)
    if (!options.json && options.quiet !== true) {
      yield* Console.log(
        [
          `sluice geocoding example: geocodes ${
            batchConfig.input === undefined
              ? `a built-in sample of ${Run.thousands(batchConfig.rows)} real place queries (with duplicates)`
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
    const summary = yield* Run.batch(settings, config, batchConfig, sample)
    // the stand-ins' figures, if their process answers (a stopped or hung one is reported, not waited for)
    const figures = yield* Effect.either(StandIns.statsOf(standIns))
    const servers = Either.getOrElse(figures, () => [])
    const silent = Either.isLeft(figures) ? figures.left.message : undefined
    if (options.quiet !== true) {
      yield* Console.log(
        options.json
          ? JSON.stringify({ summary, servers, ...(silent === undefined ? {} : { silent }) })
          : `\n${Run.renderSummary(summary, serverLines(servers, silent))}`
      )
    }
    if (batchConfig.report !== undefined) {
      const notes = [
        "against stand-ins on loopback: local HTTP servers speaking each provider's format, enforcing its quota (429 past it)",
        ...(silent === undefined ? [] : [`what the stand-ins saw: unknown, ${silent}`])
      ]
      yield* HtmlReport.write(batchConfig.report, summary, servers, notes, options.json)
    }
    return { summary, servers, silent } as const
  })).pipe(Effect.provide(Gazetteer.Default))
