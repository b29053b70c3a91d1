/**
 * The command line: `run` (the default) geocodes an input file across the providers, each at its
 * `--url`, else at the real service. The offline demo (harness/Cli.ts) builds its own `run`,
 * `serve` and `tune` from the options and steps exported here.
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Config from "effect/Config"
import * as Console from "effect/Console"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Equivalence from "effect/Equivalence"
import * as HashMap from "effect/HashMap"
import * as Option from "effect/Option"
import * as Path from "node:path"
import * as HtmlReport from "./HtmlReport.js"
import type * as Pipeline from "./Pipeline.js"
import { type ProviderName, providerNames } from "./providers/Geocoder.js"
import * as Run from "./Run.js"
import * as Scenario from "./Scenario.js"

export class UsageError extends Data.TaggedError("UsageError")<{ readonly reason: string }> {
  override get message(): string {
    return this.reason
  }
}

const isProvider = (name: string): name is ProviderName => (providerNames as ReadonlyArray<string>).includes(name)

/** `--flag name=value ...` into a record by provider, each value parsed. */
export const perProvider = <A>(
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

export const positive = (raw: string) => {
  const n = Number(raw)
  return Number.isFinite(n) && n > 0 ? n : undefined
}
export const integer = (raw: string) => {
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

export const keyValues = (name: string, description: string) =>
  Options.keyValueMap(name).pipe(Options.withDescription(description), Options.optional)

// ---------------------------------------------------------------------------------------------
// options
// ---------------------------------------------------------------------------------------------

export const providerOptions = {
  providers: Options.text("providers").pipe(
    Options.withDescription(`Providers to use, in order of preference (default: ${providerNames.join(",")})`),
    Options.optional
  ),
  rate: keyValues("rate", "Quota per provider, requests per second: --rate opencage=200 photon=100"),
  latency: keyValues("latency", "Median latency per provider in ms (sizing, and the stand-in's latency)"),
  permits: keyValues("permits", "Bulkhead permits per provider (default: rate × median latency × headroom)"),
  url: keyValues("url", "Base URL per provider: a real service or stand-ins served elsewhere"),
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

export const batchOptions = {
  input: Options.file("input").pipe(Options.withDescription("A .csv (id,query) or .jsonl file"), Options.optional),
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
  report: Options.text("report").pipe(
    Options.withDescription("Also write the run report, plots per provider, to this HTML file (self-contained)"),
    Options.optional
  ),
  noProgress: Options.boolean("no-progress"),
  progressEvery: Options.integer("progress-every").pipe(
    Options.withDescription("Seconds between progress lines when stderr is not a terminal"),
    Options.withDefault(5)
  )
}

export type ProviderArgs = Command.Command.ParseConfig<typeof providerOptions>
export type BatchArgs = Command.Command.ParseConfig<typeof batchOptions>

export const toConfig = (args: ProviderArgs): Effect.Effect<Run.Config, UsageError> =>
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
    const config: Run.Config = {
      providers: known,
      rates: yield* perProvider("rate", args.rate, positive),
      latencies: yield* perProvider("latency", args.latency, positive),
      permits: yield* perProvider("permits", args.permits, integer),
      urls: yield* perProvider("url", args.url, (raw) => raw),
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

/** The batch's settings; `rows` is the size of a sample, for a run given no input file. */
export const toBatch = (args: BatchArgs, rows = 0): Run.BatchConfig => ({
  input: Option.getOrUndefined(args.input),
  rows,
  output: args.output,
  fresh: args.fresh,
  workers: Option.getOrUndefined(args.workers),
  cache: args.cache,
  progress: !args.noProgress && !args.json,
  progressEvery: args.progressEvery,
  report: Option.getOrUndefined(args.report)
})

/** Whether two paths name one file: the same path, or (both existing) the same device and inode. */
const sameFile = (a: string, b: string) =>
  Effect.gen(function*() {
    if (Path.resolve(a) === Path.resolve(b)) return true
    const fs = yield* FileSystem.FileSystem
    const [x, y] = yield* Effect.all([Effect.option(fs.stat(a)), Effect.option(fs.stat(b))])
    return Option.isSome(x) && Option.isSome(y) && Option.isSome(x.value.ino) &&
      Option.getEquivalence(Equivalence.number)(x.value.ino, y.value.ino) && x.value.dev === y.value.dev
  })

/** The output is appended to, and deleted by --fresh: it must not be the input. */
export const checkOutput = (args: BatchArgs) =>
  Effect.gen(function*() {
    const input = Option.getOrUndefined(args.input)
    if (input !== undefined && (yield* sameFile(input, args.output))) {
      return yield* new UsageError({
        reason: `--output ${args.output} is the input file: the results would overwrite it; write them elsewhere`
      })
    }
  })

/** Rows written as failed end the run with `RowsFailed` (a non-zero exit), after its report. */
export const failOnFailedRows = (summary: Pipeline.Summary) =>
  summary.failed > 0
    ? Effect.fail(new Run.RowsFailed({ failed: summary.failed, rows: summary.rows, output: summary.output }))
    : Effect.void

/** A run given no input file: the geocoder has no rows of its own (the demo draws a sample). */
const noSample: Run.Sample<never> = () => Effect.dieMessage("no input file: the run checks for one first")

/** The batch in the input file, each provider at its `--url`, else at the real service. */
const runHandler = (args: ProviderArgs & BatchArgs) =>
  Effect.gen(function*() {
    yield* checkOutput(args)
    if (Option.isNone(args.input)) {
      return yield* new UsageError({ reason: "--input is required: a .csv (id,query) or .jsonl file of queries" })
    }
    const config = yield* toConfig(args)
    const settings = yield* Effect.forEach(
      config.providers,
      (name) => Run.remote(config, name, config.urls[name] ?? Scenario.realEndpoints[name].baseUrl)
    )
    const batch = toBatch(args)
    const summary = yield* Run.batch(settings, config, batch, noSample)
    yield* Console.log(args.json ? JSON.stringify({ summary }) : `\n${Run.renderSummary(summary)}`)
    if (batch.report !== undefined) yield* HtmlReport.write(batch.report, summary, [], [], args.json)
    yield* failOnFailedRows(summary)
  })

const run = Command.make("run", { ...providerOptions, ...batchOptions }, runHandler).pipe(
  Command.withDescription("Geocode a batch across the providers")
)

export const command = Command.make("geocode", { ...providerOptions, ...batchOptions }, runHandler).pipe(
  Command.withDescription("A batch geocoder across several providers, every sluice layer at work"),
  Command.withSubcommands([run])
)

export const cli = Command.run(command, { name: "sluice geocoding example", version: "0.1.0" })
