/**
 * The command line: `run` (the default), `serve` (only the stand-ins, for runs across processes)
 * and `tune` (the tuning loop).
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Config from "effect/Config"
import * as Console from "effect/Console"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Equivalence from "effect/Equivalence"
import * as HashMap from "effect/HashMap"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as Path from "node:path"
import * as Offline from "../harness/Offline.js"
import * as Tune from "../harness/Tune.js"
import * as Child from "../stand-ins/Child.js"
import { Gazetteer } from "../stand-ins/Gazetteer.js"
import type * as StandIn from "../stand-ins/StandIn.js"
import { type ProviderName, providerNames } from "./providers/Geocoder.js"
import * as Run from "./Run.js"

export class UsageError extends Data.TaggedError("UsageError")<{ readonly reason: string }> {
  override get message(): string {
    return this.reason
  }
}

const isProvider = (name: string): name is ProviderName => (providerNames as ReadonlyArray<string>).includes(name)

/** `--flag name=value ...` into a record by provider, each value parsed. */
const perProvider = <A>(
  flag: string,
  values: Option.Option<HashMap.HashMap<string, string>>,
  parse: (value: string) => A | undefined
): Effect.Effect<Run.PerProvider<A>, UsageError> =>
  Effect.gen(function*() {
    const out: Run.PerProvider<A> = {}
    for (const [name, raw] of Option.match(values, { onNone: () => [], onSome: HashMap.toEntries })) {
      if (!isProvider(name)) {
        return yield* new UsageError({
          reason: `--${flag} ${name}=${raw}: no provider "${name}" (${providerNames.join(", ")})`
        })
      }
      const value = parse(raw)
      if (value === undefined) return yield* new UsageError({ reason: `--${flag} ${name}=${raw}: not a valid value` })
      out[name] = value
    }
    return out
  })

const positive = (raw: string) => {
  const n = Number(raw)
  return Number.isFinite(n) && n > 0 ? n : undefined
}
const share = (raw: string) => {
  const n = Number(raw)
  return Number.isFinite(n) && n >= 0 && n <= 1 ? n : undefined
}
const integer = (raw: string) => {
  const n = Number(raw)
  return Number.isSafeInteger(n) && n > 0 ? n : undefined
}

/** `--burst N` (every provider) or `--burst name=N`, repeated; a later value wins. */
const bursts = (values: ReadonlyArray<string>): Effect.Effect<Run.PerProvider<number>, UsageError> =>
  Effect.gen(function*() {
    const out: Run.PerProvider<number> = {}
    for (const raw of values) {
      const [name, value] = raw.includes("=") ? raw.split("=", 2) : [undefined, raw]
      const burst = integer(value)
      if (burst === undefined) return yield* new UsageError({ reason: `--burst ${raw}: must be an integer ≥ 1` })
      if (name === undefined) {
        for (const provider of providerNames) out[provider] = burst
      } else if (isProvider(name)) {
        out[name] = burst
      } else {
        return yield* new UsageError({ reason: `--burst ${raw}: no provider "${name}" (${providerNames.join(", ")})` })
      }
    }
    return out
  })

/** "N unit", as Effect's `Duration` reads it: its decoder alone reads "-5 seconds" as 0 and fails on nothing else. */
const DURATION = /^\d+(\.\d+)? (nanos?|micros?|millis?|seconds?|minutes?|hours?|days?|weeks?)$/

/** A duration longer than zero, from its text ("1 day"); anything else is refused, the flag and the value named. */
export const positiveDuration = (flag: string) =>
  Schema.transformOrFail(Schema.String, Schema.DurationFromSelf, {
    strict: true,
    decode: (input, _, ast) => {
      const duration = DURATION.test(input.trim()) ? Duration.decodeUnknown(input.trim()) : Option.none()
      return Option.isSome(duration) && Duration.greaterThan(duration.value, Duration.zero)
        ? ParseResult.succeed(duration.value)
        : ParseResult.fail(
          new ParseResult.Type(
            ast,
            input,
            `${flag} must be a positive duration such as "1 day" or "30 minutes", got ${JSON.stringify(input)}`
          )
        )
    },
    encode: (duration) => ParseResult.succeed(Duration.format(duration))
  })

const keyValues = (name: string, description: string) =>
  Options.keyValueMap(name).pipe(Options.withDescription(description), Options.optional)

// ---------------------------------------------------------------------------------------------
// options shared by the commands
// ---------------------------------------------------------------------------------------------

const providerOptions = {
  providers: Options.text("providers").pipe(
    Options.withDescription(`Providers to use, in order of preference (default: ${providerNames.join(",")})`),
    Options.optional
  ),
  rate: keyValues("rate", "Quota per provider, requests per second: --rate opencage=200 photon=100"),
  latency: keyValues("latency", "Median latency per provider in ms (sizing, and the stand-in's latency)"),
  permits: keyValues("permits", "Bulkhead permits per provider (default: rate × median latency × headroom)"),
  url: keyValues("url", "Base URL per provider: a real service or stand-ins served elsewhere"),
  slow: keyValues("slow", "Stand-ins: latency multiplier per provider, e.g. photon=10"),
  errorRate: keyValues("error-rate", "Stand-ins: share of requests answered 500"),
  malformed: keyValues("malformed", "Stand-ins: share of bodies truncated"),
  hang: keyValues("hang", "Stand-ins: share of requests never answered"),
  periodQuota: keyValues("period-quota", "Stand-ins: requests per --quota-period, then 402 (OpenCage's daily quota)"),
  quotaPeriod: Options.text("quota-period").pipe(
    Options.withDescription("The period of --period-quota, a positive duration: \"1 day\", \"30 minutes\""),
    Options.withSchema(positiveDuration("--quota-period")),
    Options.withDefault(Duration.days(1))
  ),
  margin: Options.float("margin").pipe(
    Options.withDescription("Share of each quota the client leaves unused, against arrival jitter"),
    Options.withDefault(0.02)
  ),
  burst: Options.text("burst").pipe(
    Options.withDescription(
      "Starts allowed at the same instant, client and stand-ins: N for every provider, or name=N (repeat the " +
        "flag). Default: against a stand-in, max(3, client rate × 20 ms), which its quota admits; 1 against a " +
        "real service, whose published limit does not"
    ),
    Options.repeated
  ),
  headroom: Options.float("headroom").pipe(Options.withDefault(2)),
  contact: Options.text("contact").pipe(
    Options.withDescription("Your contact (an e-mail) for the User-Agent: Nominatim's usage policy requires one"),
    Options.withDefault("contact: set --contact")
  ),
  opencageKey: Options.redacted("opencage-key").pipe(
    Options.withDescription("OpenCage API key (or OPENCAGE_API_KEY)"),
    Options.withFallbackConfig(Config.redacted("OPENCAGE_API_KEY")),
    Options.optional
  ),
  redis: Options.text("redis").pipe(
    Options.withDescription("Share quotas through Redis, e.g. redis://127.0.0.1:6379"),
    Options.optional
  ),
  seed: Options.integer("seed").pipe(Options.withDefault(42))
}

const batchOptions = {
  input: Options.file("input").pipe(Options.withDescription("A .csv (id,query) or .jsonl file"), Options.optional),
  rows: Options.integer("rows").pipe(
    Options.withDescription("Rows of the built-in sample"),
    Options.withDefault(5_000)
  ),
  output: Options.text("output").pipe(
    Options.withDescription("JSONL results, resumed if present"),
    Options.withDefault("geocoded.jsonl")
  ),
  fresh: Options.boolean("fresh").pipe(Options.withDescription("Start over: delete the output first")),
  workers: Options.integer("workers").pipe(Options.optional),
  cache: Options.integer("cache").pipe(
    Options.withDescription("Answers kept by the dedup cache"),
    Options.withDefault(10_000)
  ),
  json: Options.boolean("json").pipe(Options.withDescription("Print the summary as JSON")),
  noProgress: Options.boolean("no-progress"),
  progressEvery: Options.integer("progress-every").pipe(
    Options.withDescription("Seconds between progress lines when stderr is not a terminal"),
    Options.withDefault(5)
  )
}

type ProviderArgs = Command.Command.ParseConfig<typeof providerOptions>
type BatchArgs = Command.Command.ParseConfig<typeof batchOptions>

export const toConfig = (args: ProviderArgs) =>
  Effect.gen(function*() {
    const providers: ReadonlyArray<string> = Option.match(args.providers, {
      onNone: () => [...providerNames],
      onSome: (list) => list.split(",").map((name) => name.trim()).filter((name) => name !== "")
    })
    const known = providers.filter(isProvider)
    const unknown = providers.filter((name) => !isProvider(name))
    if (unknown.length > 0 || providers.length === 0) {
      return yield* new UsageError({
        reason: `--providers: unknown ${unknown.join(", ")} (${providerNames.join(", ")})`
      })
    }
    if (!(args.margin >= 0 && args.margin < 1)) return yield* new UsageError({ reason: "--margin must be in [0, 1)" })
    if (!(args.headroom >= 1)) return yield* new UsageError({ reason: "--headroom must be ≥ 1" })
    const slow = yield* perProvider("slow", args.slow, positive)
    const errorRate = yield* perProvider("error-rate", args.errorRate, share)
    const malformed = yield* perProvider("malformed", args.malformed, share)
    const hang = yield* perProvider("hang", args.hang, share)
    const faults: Run.PerProvider<StandIn.Faults> = {}
    for (const name of providerNames) {
      if (slow[name] ?? errorRate[name] ?? malformed[name] ?? hang[name]) {
        faults[name] = {
          slow: slow[name],
          errorRate: errorRate[name],
          malformedRate: malformed[name],
          hangRate: hang[name]
        }
      }
    }
    const config: Offline.Config = {
      providers: known,
      rates: yield* perProvider("rate", args.rate, positive),
      latencies: yield* perProvider("latency", args.latency, positive),
      permits: yield* perProvider("permits", args.permits, integer),
      urls: yield* perProvider("url", args.url, (raw) => raw),
      faults,
      periodQuotas: yield* perProvider("period-quota", args.periodQuota, integer),
      quotaPeriod: args.quotaPeriod,
      margin: args.margin,
      bursts: yield* bursts(args.burst),
      headroom: args.headroom,
      contact: args.contact,
      apiKey: Option.getOrUndefined(args.opencageKey),
      redis: Option.getOrUndefined(args.redis),
      seed: args.seed
    }
    return config
  })

const toBatch = (args: BatchArgs): Run.BatchConfig => ({
  input: Option.getOrUndefined(args.input),
  rows: args.rows,
  output: args.output,
  fresh: args.fresh,
  workers: Option.getOrUndefined(args.workers),
  cache: args.cache,
  progress: !args.noProgress && !args.json,
  progressEvery: args.progressEvery
})

/**
 * `run` and `tune` serve their stand-ins from a child process started from this CLI's own entry
 * (see stand-ins/Child.ts and main.ts): a server sharing the client's event loop would count its
 * arrivals bunched by the client's stalls.
 */
const withStandInsApart = (config: Offline.Config): Offline.Config => ({ ...config, standInsEntry: Child.thisEntry() })

/** Whether two paths name one file: the same path, or (both existing) the same device and inode. */
const sameFile = (a: string, b: string) =>
  Effect.gen(function*() {
    if (Path.resolve(a) === Path.resolve(b)) return true
    const fs = yield* FileSystem.FileSystem
    const [x, y] = yield* Effect.all([Effect.option(fs.stat(a)), Effect.option(fs.stat(b))])
    return Option.isSome(x) && Option.isSome(y) && Option.isSome(x.value.ino) &&
      Option.getEquivalence(Equivalence.number)(x.value.ino, y.value.ino) && x.value.dev === y.value.dev
  })

/** The batch; rows written as failed end it with `RowsFailed` (a non-zero exit), after its report. */
const runHandler = (args: ProviderArgs & BatchArgs) =>
  Effect.gen(function*() {
    const input = Option.getOrUndefined(args.input)
    // the output is appended to, and deleted by --fresh: it must not be the input
    if (input !== undefined && (yield* sameFile(input, args.output))) {
      return yield* new UsageError({
        reason: `--output ${args.output} is the input file: the results would overwrite it; write them elsewhere`
      })
    }
    const config = yield* toConfig(args)
    const { summary } = yield* Offline.run(withStandInsApart(config), toBatch(args), { json: args.json })
    if (summary.failed > 0) {
      return yield* new Run.RowsFailed({ failed: summary.failed, rows: summary.rows, output: summary.output })
    }
  })

const run = Command.make("run", { ...providerOptions, ...batchOptions }, runHandler).pipe(
  Command.withDescription("Geocode a batch (the built-in sample by default) across the providers")
)

const serve = Command.make("serve", {
  ...providerOptions,
  port: keyValues("port", "Port per stand-in (default: free ports)")
}, (args) =>
  Effect.gen(function*() {
    const config = yield* toConfig(args)
    const ports = yield* perProvider("port", args.port, integer)
    const { settings, standIns } = yield* Offline.prepare({ ...config, urls: {}, ports })
    yield* Console.log(
      [
        "stand-in providers, until interrupted (Ctrl-C):",
        Offline.describeProviders(settings, standIns),
        "",
        "geocode against them from other processes, sharing the quotas through Redis:",
        `  pnpm start run ${settings.map((s) => `--url ${s.name}=${s.baseUrl}`).join(" ")} ${
          settings.map((s) => `--rate ${s.name}=${s.rate}`).join(" ")
        } ${
          settings.map((s) => `--burst ${s.name}=${s.burst}`).join(" ")
        } --redis redis://127.0.0.1:6379 --output a.jsonl`
      ].join("\n")
    )
    return yield* Effect.never
  }).pipe(Effect.scoped, Effect.provide(Gazetteer.Default))).pipe(
    Command.withDescription("Serve only the stand-in providers, until interrupted (for runs across processes)")
  )

const tune = Command.make("tune", {
  ...providerOptions,
  provider: Options.choice("provider", providerNames).pipe(Options.withDefault("photon" as ProviderName)),
  chunk: Options.integer("chunk").pipe(
    Options.withDescription(
      "Rows of the built-in sample per step (each step a fresh sample: no answer is cached across steps)"
    ),
    Options.withDefault(600)
  ),
  maxSteps: Options.integer("max-steps").pipe(Options.withDefault(5))
}, (args) => Effect.flatMap(toConfig(args), (config) => Tune.run(withStandInsApart(config), args)))
  .pipe(
    Command.withDescription("The tuning loop: start from rate × median latency, double while it helps")
  )

export const command = Command.make("geocode", { ...providerOptions, ...batchOptions }, runHandler).pipe(
  Command.withDescription("A batch geocoder across several providers, every sluice layer at work"),
  Command.withSubcommands([run, serve, tune])
)

export const cli = Command.run(command, { name: "sluice geocoding example", version: "0.1.0" })
