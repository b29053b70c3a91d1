/**
 * The command line: `llm-batch` (the batch, against a stand-in by default) and `llm-batch serve`
 * (the stand-in alone, for runs from several processes).
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import { Report as HtmlReport } from "@sluice/report"
import * as Config from "effect/Config"
import * as Console from "effect/Console"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Path from "node:path"
import type * as OpenAi from "./OpenAi.js"
import * as Report from "./Report.js"
import * as Run from "./Run.js"
import * as Child from "./stand-in/Child.js"

export class UsageError extends Data.TaggedError("UsageError")<{ readonly reason: string }> {
  override get message(): string {
    return this.reason
  }
}

/**
 * OpenAI counts per minute; the demo per 10 s with every quota divided by 6, so that a batch that
 * fills three windows takes half a minute. gpt-4o-mini at 360 RPM and 72,000 TPM: 60 requests and
 * 12,000 tokens a window.
 */
const DEFAULTS = { window: "10 seconds", standsFor: "1 minute", requests: 60, tokens: 12_000 } as const

/** A batch in which calls failed: after its report, the exit code says so, with the count. */
export class CallsFailed extends Data.TaggedError("CallsFailed")<{ readonly failed: number; readonly calls: number }> {
  override get message(): string {
    return `${this.failed} of ${this.calls} calls failed (the report above says why)`
  }
}

const quotaOptions = {
  window: Options.text("window").pipe(
    Options.withDescription("The window both quotas count over (OpenAI's minute, scaled down)"),
    Options.withDefault(DEFAULTS.window)
  ),
  standsFor: Options.text("stands-for").pipe(
    Options.withDescription("The real window --window stands for (for the printed scaling)"),
    Options.withDefault(DEFAULTS.standsFor)
  ),
  requests: Options.integer("requests").pipe(
    Options.withDescription("Requests per window"),
    Options.withDefault(DEFAULTS.requests)
  ),
  tokens: Options.integer("tokens").pipe(
    Options.withDescription("Tokens per window"),
    Options.withDefault(DEFAULTS.tokens)
  ),
  requestsBurst: Options.integer("requests-burst").pipe(
    Options.withDescription("Requests that may start at the same instant, on the client and the stand-in"),
    Options.withDefault(2)
  ),
  tokensBurst: Options.integer("tokens-burst").pipe(
    Options.withDescription("Tokens that may start at the same instant; at least one call's largest estimate"),
    Options.withDefault(1_000)
  ),
  seed: Options.integer("seed").pipe(Options.withDefault(42))
}

const runOptions = {
  ...quotaOptions,
  url: Options.text("url").pipe(
    Options.withDescription("An OpenAI-compatible endpoint up to /v1 (default: a stand-in on loopback)"),
    Options.optional
  ),
  apiKey: Options.redacted("api-key").pipe(
    Options.withDescription("The API key (or OPENAI_API_KEY)"),
    Options.withFallbackConfig(Config.redacted("OPENAI_API_KEY")),
    Options.optional
  ),
  api: Options.choice("api", ["openai", "anthropic"]).pipe(
    Options.withDescription(
      "Whose API the calls speak: OpenAI's chat completions through @effect/ai-openai, or Anthropic's messages through plain HttpClient code (the stand-in serves both)"
    ),
    Options.withDefault("openai" as const)
  ),
  model: Options.text("model").pipe(Options.withDefault("gpt-4o-mini")),
  maxTokens: Options.integer("max-tokens").pipe(
    Options.withDescription("max_tokens of every call: the longest completion"),
    Options.withDefault(256)
  ),
  expectedCompletion: Options.integer("expected-completion").pipe(
    Options.withDescription("Estimate each completion at this many tokens instead of max_tokens (can fall short)"),
    Options.optional
  ),
  margin: Options.float("margin").pipe(
    Options.withDescription("Share of each quota the client leaves unused, against arrival jitter"),
    Options.withDefault(0.02)
  ),
  permits: Options.integer("permits").pipe(
    Options.withDescription(
      "Calls in flight at once. Rate × latency is about 4 calls/s × 0.1 s against the stand-in: 2 is plenty, and more only queue reservations in the limiter, where the unused part of an estimate cannot come back"
    ),
    Options.withDefault(2)
  ),
  input: Options.file("input").pipe(
    Options.withDescription("A .jsonl of {\"id\", \"prompt\", \"system\"?}"),
    Options.optional
  ),
  prompts: Options.integer("prompts").pipe(
    Options.withDescription("Prompts of the built-in sample"),
    Options.withDefault(120)
  ),
  redis: Options.text("redis").pipe(
    Options.withDescription("Share every dimension through Redis, e.g. redis://127.0.0.1:6379"),
    Options.optional
  ),
  interactive: Options.integer("interactive").pipe(
    Options.withDescription(
      "Chat calls beside the batch, one a second, in the provider's interactive lane: they pass the batch's queue"
    ),
    Options.withDefault(0)
  ),
  noLanes: Options.boolean("no-lanes").pipe(
    Options.withDescription("With --interactive: one queue for all, to compare the chat calls' latency")
  ),
  json: Options.boolean("json").pipe(Options.withDescription("Print the figures as one JSON line")),
  report: Options.text("report").pipe(
    Options.withDescription("Also write the run report, plots per dimension, to this HTML file (self-contained)"),
    Options.optional
  ),
  noProgress: Options.boolean("no-progress")
}

type QuotaArgs = Command.Command.ParseConfig<typeof quotaOptions>
type RunArgs = Command.Command.ParseConfig<typeof runOptions>

const duration = (flag: string, raw: string) =>
  Option.match(Duration.decodeUnknown(raw), {
    onNone: () =>
      Effect.fail(new UsageError({ reason: `--${flag} ${raw}: not a duration ("10 seconds", "1 minute")` })),
    onSome: (d) =>
      Duration.toMillis(d) > 0
        ? Effect.succeed(Duration.toMillis(d))
        : Effect.fail(new UsageError({ reason: `--${flag} ${raw}: must be positive` }))
  })

const toQuotas = (args: QuotaArgs) =>
  Effect.gen(function*() {
    const windowMillis = yield* duration("window", args.window)
    const standsForMillis = yield* duration("stands-for", args.standsFor)
    for (
      const [flag, value] of [["requests", args.requests], ["tokens", args.tokens], [
        "requests-burst",
        args.requestsBurst
      ], ["tokens-burst", args.tokensBurst]] as const
    ) {
      if (!(value >= 1)) return yield* new UsageError({ reason: `--${flag} ${value}: must be at least 1` })
    }
    const quotas: OpenAi.Quotas = {
      windowMillis,
      requests: { limit: args.requests, burst: args.requestsBurst },
      tokens: { limit: args.tokens, burst: args.tokensBurst }
    }
    return { quotas, standsForMillis }
  })

const thousands = (n: number) => Math.round(n).toLocaleString("en-US")

/** The quotas, and what they stand for at the real window: the scaling the demo runs at. */
export const describeScaling = (quotas: OpenAi.Quotas, standsForMillis: number): string => {
  const factor = standsForMillis / quotas.windowMillis
  const w = Duration.format(Duration.millis(quotas.windowMillis))
  const real = Duration.format(Duration.millis(standsForMillis))
  return `quotas per ${w}, standing for ${real} (×${Number(factor.toFixed(2))}): ` +
    `${thousands(quotas.requests.limit)} requests (${thousands(quotas.requests.limit * factor)} per ${real}), ` +
    `${thousands(quotas.tokens.limit)} tokens (${thousands(quotas.tokens.limit * factor)} per ${real}); ` +
    `burst ${quotas.requests.burst} requests, ${thousands(quotas.tokens.burst)} tokens`
}

/** `--report`: the provider's recording in one page, its path printed (to stderr under `--json`). */
const writeReport = (path: string, summary: Run.Summary, figures: Report.Figures, json: boolean) =>
  Effect.gen(function*() {
    if (summary.recording === undefined) return
    const e = figures.estimate
    yield* HtmlReport.write(path, {
      title: `sluice llm-batch run: ${figures.calls} calls in ${(figures.elapsedMillis / 1000).toFixed(1)} s`,
      notes: [
        `${figures.failed} failed, ${figures.tooManyRequests} 429s received`,
        `estimates: ${e.reserved} tokens reserved for ${e.actual} used (error ${e.error >= 0 ? "+" : ""}${
          (e.error * 100).toFixed(1)
        } %); ${e.short} calls used more than reserved`,
        `binding: ${figures.binding.dimension}: ${figures.binding.reason}`
      ],
      providers: [{
        recording: summary.recording,
        // the terminal's verdict, on the table's own rates (the quota, not the client's limit)
        verdict: figures.verdict,
        lanes: summary.lanes,
        server: summary.server === undefined
          ? undefined
          : { requests: summary.server.received, rateLimited: summary.server.rateLimited }
      }]
    })
    yield* (json ? Console.error : Console.log)(`report: ${Path.resolve(path)}`)
  })

const runHandler = (args: RunArgs) =>
  Effect.gen(function*() {
    const { quotas, standsForMillis } = yield* toQuotas(args)
    if (!(args.margin >= 0 && args.margin < 1)) {
      return yield* new UsageError({ reason: `--margin ${args.margin}: must be in [0, 1)` })
    }
    if (!(args.interactive >= 0)) {
      return yield* new UsageError({ reason: `--interactive ${args.interactive}: must be 0 or more` })
    }
    const config: Run.Config = {
      url: Option.getOrUndefined(args.url),
      apiKey: Option.getOrUndefined(args.apiKey),
      model: args.model,
      api: args.api,
      quotas,
      margin: args.margin,
      permits: args.permits,
      maxTokens: args.maxTokens,
      expectedCompletion: Option.getOrUndefined(args.expectedCompletion),
      input: Option.getOrUndefined(args.input),
      samplePrompts: args.prompts,
      redis: Option.getOrUndefined(args.redis),
      seed: args.seed,
      progress: !args.noProgress && !args.json,
      interactive: args.interactive,
      lanes: !args.noLanes
    }
    if (!args.json) {
      yield* Console.log(describeScaling(quotas, standsForMillis))
      yield* Console.log(
        `${
          config.url === undefined
            ? `a stand-in ${args.api === "anthropic" ? "Anthropic" : "OpenAI"} on loopback, its own process`
            : config.url
        }; ` +
          `the client ${thousands(config.margin * 100)} % under each quota, ${config.permits} permits, ` +
          `estimates: prompt + ${config.expectedCompletion ?? `max_tokens ${config.maxTokens}`}` +
          (config.redis === undefined ? "" : `; shared through ${config.redis}`)
      )
    }
    const summary = yield* Run.run(config, Child.thisEntry())
    const figures = Report.figures(summary)
    yield* Console.log(
      args.json
        ? JSON.stringify({ figures, server: summary.server, calls: summary.calls.length })
        : `\n${Report.format(figures)}`
    )
    if (Option.isSome(args.report)) yield* writeReport(args.report.value, summary, figures, args.json)
    if (figures.failed > 0) return yield* new CallsFailed({ failed: figures.failed, calls: figures.calls })
  })

const serve = Command.make("serve", {
  ...quotaOptions,
  port: Options.integer("port").pipe(Options.withDefault(0))
}, (args) =>
  Effect.gen(function*() {
    const { quotas, standsForMillis } = yield* toQuotas(args)
    const standIn = yield* Child.start(Child.thisEntry(), {
      ...Run.standInOptions({ quotas, seed: args.seed }),
      port: args.port
    })
    yield* Console.log(
      [
        `a stand-in OpenAI at ${standIn.url}/v1, until interrupted (Ctrl-C); ${
          describeScaling(quotas, standsForMillis)
        }`,
        "run batches against it from several processes, sharing its quotas through Redis:",
        `  pnpm start --url ${standIn.url}/v1 --requests ${quotas.requests.limit} --tokens ${quotas.tokens.limit} --redis redis://127.0.0.1:6379`
      ].join("\n")
    )
    return yield* Effect.never
  }).pipe(Effect.scoped)).pipe(Command.withDescription("Serve only the stand-in, until interrupted"))

export const command = Command.make("llm-batch", runOptions, runHandler).pipe(
  Command.withDescription("A batch of chat completions within requests and tokens per window"),
  Command.withSubcommands([serve])
)

export const cli = Command.run(command, { name: "sluice llm-batch example", version: "0.1.0" })
