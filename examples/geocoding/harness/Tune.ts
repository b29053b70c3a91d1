/**
 * `tune`: the tuning loop of the seeds, on one provider. Start from the required figure (rate ×
 * median latency, Little's law), run a chunk of the batch, double the permits, run again; compare
 * the throughput and the two waits. While doubling helps materially, the bulkhead was binding;
 * once it does not, the limiter binds and the permits are large enough. Prints the value with its
 * derivation, the recorded numbers that justify it.
 */
import { Sizing } from "@sluice/provider"
import * as Console from "effect/Console"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Os from "node:os"
import * as Path from "node:path"
import { clientRate, type ProviderName } from "../src/providers/Geocoder.js"
import { table } from "../src/Report.js"
import * as Run from "../src/Run.js"
import * as Scenario from "../src/Scenario.js"
import { Gazetteer } from "../stand-ins/Gazetteer.js"
import * as Offline from "./Offline.js"

export interface Options {
  readonly provider: ProviderName
  /** Rows of sample per step. */
  readonly chunk: number
  readonly maxSteps: number
}

/** Less than this gain from doubling is no gain: the noise of one chunk is about this large. */
const MATERIAL_GAIN = 0.1

export interface Step {
  readonly permits: number
  readonly seconds: number
  readonly lookups: number
  readonly throughput: number
  readonly permitWaitMillis: number
  readonly limiterWaitMillis: number
  readonly binding: string
}

export const run = (config: Offline.Config, options: Options) =>
  Effect.scoped(Effect.gen(function*() {
    // the stand-in must not be the bound being measured: it accepts whatever the loop tries
    const only: Offline.Config = { ...config, providers: [options.provider], standInConcurrency: 10_000 }
    const { settings: [base] } = yield* Offline.prepare(only)
    const rate = clientRate(base)
    const median = config.latencies[options.provider] ??
      (config.urls[options.provider] === undefined
        ? (yield* Effect.sync(() => Offline.profileOf(options.provider))).medianMillis
        : Scenario.realEndpoints[options.provider].medianMillis)
    const sizing = yield* Sizing.permits({ rate, medianLatency: Duration.millis(median), headroom: 1 })
    yield* Console.log(
      `tuning ${options.provider} (${base.baseUrl}, burst ${base.burst}: ${base.burstReason}): start from ${sizing.derivation}; ${options.chunk} rows per step`
    )
    const steps: Array<Step> = []
    let permits = sizing.required
    for (let i = 0; i < options.maxSteps; i++) {
      const output = Path.join(Os.tmpdir(), `sluice-tune-${process.pid}-${i}.jsonl`)
      const summary = yield* Run.batch(
        [{ ...base, permits, maxWaiting: permits, permitsReason: `tuning step ${i + 1}` }],
        { ...only, seed: config.seed + i },
        {
          input: undefined,
          rows: options.chunk,
          output,
          fresh: true,
          workers: permits * 2,
          cache: options.chunk,
          progress: false,
          progressEvery: 5
        },
        Offline.sample
      )
      const report = summary.providers[0]
      const seconds = summary.durationMillis / 1000
      const step: Step = {
        permits,
        seconds,
        lookups: summary.lookups,
        throughput: summary.lookups / seconds,
        permitWaitMillis: report.permitWaitMillis,
        limiterWaitMillis: report.limiterWaitMillis,
        binding: report.verdict.binding
      }
      steps.push(step)
      yield* Console.log(
        `  step ${i + 1}: permits ${permits}: ${step.lookups} lookups in ${seconds.toFixed(2)} s = ${
          step.throughput.toFixed(1)
        }/s, permit wait ${step.permitWaitMillis.toFixed(1)} ms, limiter wait ${
          step.limiterWaitMillis.toFixed(1)
        } ms (${step.binding})`
      )
      const previous = steps[steps.length - 2]
      if (previous !== undefined && step.throughput < previous.throughput * (1 + MATERIAL_GAIN)) break
      permits *= 2
    }
    // The recommendation: the fewest permits within the material gain of the best throughput.
    const best = Math.max(...steps.map((s) => s.throughput))
    const chosen = steps.find((s) => s.throughput >= best * (1 - MATERIAL_GAIN)) ?? steps[steps.length - 1]
    const last = steps[steps.length - 1]
    yield* Console.log(
      [
        "",
        table(
          ["permits", "seconds", "lookups/s", "permit wait", "limiter wait", "binding"],
          steps.map((s) => [
            String(s.permits),
            s.seconds.toFixed(2),
            s.throughput.toFixed(1),
            `${s.permitWaitMillis.toFixed(1)} ms`,
            `${s.limiterWaitMillis.toFixed(1)} ms`,
            s.binding
          ])
        ),
        "",
        `recommended: --permits ${options.provider}=${chosen.permits}`,
        `  derivation: ${sizing.derivation}; ${
          steps.length > 1
            ? `doubling to ${last.permits} changed throughput ${
              ((last.throughput / steps[steps.length - 2].throughput - 1) * 100).toFixed(0)
            } % (under ${MATERIAL_GAIN * 100} % is no gain): the ${
              last.binding === "limiter" ? "limiter (the quota)" : last.binding
            } binds, not the bulkhead`
            : "one step only"
        }; ${chosen.permits} reached ${chosen.throughput.toFixed(1)}/s of the ${rate.toFixed(1)}/s client rate`
      ].join("\n")
    )
    return { steps, recommended: chosen.permits, derivation: sizing.derivation } as const
  })).pipe(Effect.provide(Gazetteer.Default))
