/**
 * The offline demo's command line: the geocoder's (src/Cli.ts) with the stand-ins' flags, and
 * `run` (the default: a stand-in for each provider given no `--url`, the built-in sample given no
 * `--input`), `serve` (only the stand-ins, for runs across processes) and `tune` (the tuning loop).
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Console from "effect/Console"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as Cli from "../src/Cli.js"
import { type ProviderName, providerNames } from "../src/providers/Geocoder.js"
import type * as Run from "../src/Run.js"
import * as Child from "../stand-ins/Child.js"
import { Gazetteer } from "../stand-ins/Gazetteer.js"
import type * as StandIn from "../stand-ins/StandIn.js"
import * as Offline from "./Offline.js"
import * as Tune from "./Tune.js"

const share = (raw: string) => {
  const n = Number(raw)
  return Number.isFinite(n) && n >= 0 && n <= 1 ? n : undefined
}

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

// ---------------------------------------------------------------------------------------------
// options shared by the commands: the geocoder's, and the stand-ins'
// ---------------------------------------------------------------------------------------------

const providerOptions = {
  ...Cli.providerOptions,
  slow: Cli.keyValues("slow", "Stand-ins: latency multiplier per provider, e.g. photon=10"),
  errorRate: Cli.keyValues("error-rate", "Stand-ins: share of requests answered 500"),
  malformed: Cli.keyValues("malformed", "Stand-ins: share of bodies truncated"),
  hang: Cli.keyValues("hang", "Stand-ins: share of requests never answered"),
  periodQuota: Cli.keyValues(
    "period-quota",
    "Stand-ins: requests per --quota-period, then 402 (OpenCage's daily quota)"
  ),
  quotaPeriod: Options.text("quota-period").pipe(
    Options.withDescription("The period of --period-quota, a positive duration: \"1 day\", \"30 minutes\""),
    Options.withSchema(positiveDuration("--quota-period")),
    Options.withDefault(Duration.days(1))
  )
}

const batchOptions = {
  ...Cli.batchOptions,
  rows: Options.integer("rows").pipe(
    Options.withDescription("Rows of the built-in sample"),
    Options.withDefault(5_000)
  )
}

type ProviderArgs = Command.Command.ParseConfig<typeof providerOptions>
type BatchArgs = Command.Command.ParseConfig<typeof batchOptions>

export const toConfig = (args: ProviderArgs) =>
  Effect.gen(function*() {
    const run = yield* Cli.toConfig(args)
    const slow = yield* Cli.perProvider("slow", args.slow, Cli.positive)
    const errorRate = yield* Cli.perProvider("error-rate", args.errorRate, share)
    const malformed = yield* Cli.perProvider("malformed", args.malformed, share)
    const hang = yield* Cli.perProvider("hang", args.hang, share)
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
      ...run,
      faults,
      periodQuotas: yield* Cli.perProvider("period-quota", args.periodQuota, Cli.integer),
      quotaPeriod: args.quotaPeriod
    }
    return config
  })

/**
 * `run` and `tune` serve their stand-ins from a child process started from this CLI's own entry
 * (see stand-ins/Child.ts and main.ts): a server sharing the client's event loop would count its
 * arrivals bunched by the client's stalls.
 */
const withStandInsApart = (config: Offline.Config): Offline.Config => ({ ...config, standInsEntry: Child.thisEntry() })

/** The batch; rows written as failed end it with `RowsFailed` (a non-zero exit), after its report. */
const runHandler = (args: ProviderArgs & BatchArgs) =>
  Effect.gen(function*() {
    yield* Cli.checkOutput(args)
    const config = yield* toConfig(args)
    const { summary } = yield* Offline.run(withStandInsApart(config), Cli.toBatch(args, args.rows), {
      json: args.json
    })
    yield* Cli.failOnFailedRows(summary)
  })

const run = Command.make("run", { ...providerOptions, ...batchOptions }, runHandler).pipe(
  Command.withDescription("Geocode a batch (the built-in sample by default) across the providers")
)

const serve = Command.make("serve", {
  ...providerOptions,
  port: Cli.keyValues("port", "Port per stand-in (default: free ports)")
}, (args) =>
  Effect.gen(function*() {
    const config = yield* toConfig(args)
    const ports = yield* Cli.perProvider("port", args.port, Cli.integer)
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
