/**
 * `tune` on one stand-in, in a child process as a user runs it: the steps it prints start from
 * rate × median latency and double; it went on only after a material gain and stopped after the
 * first step without one (or at --max-steps); the recommendation is the fewest permits within the
 * material gain of the best throughput, and its derivation quotes the steps it printed.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { runCliScoped } from "./utils.js"

const MAX_STEPS = 4
/** Tune's MATERIAL_GAIN; the printed throughputs are rounded to 0.1/s, hence the tolerance. */
const GAIN = 0.1
const ROUNDING = 0.15

const number = (text: string | undefined) => Number(text)

describe("tune", () => {
  it.live(
    "prints steps that double from rate × latency, stops when doubling stops helping, recommends from them",
    () =>
      Effect.gen(function*() {
        const result = yield* runCliScoped([
          "tune",
          "--provider",
          "photon",
          "--rate",
          "photon=100",
          "--chunk",
          "200",
          "--max-steps",
          String(MAX_STEPS)
        ])
        expect(result.code, result.stderr).toBe(0)
        const out = result.stdout

        // the start: rate 98/s (100/s less the default 2 % margin) × median 60 ms, no headroom
        const start = /start from (rate 98\/s × median 60 ms = [\d.]+(?:, rounded up to \d+)?, ×1 headroom = (\d+))/
          .exec(out)
        expect(start, out).not.toBeNull()
        const derivation = start![1]
        const required = number(start![2])
        expect(required).toBe(6)

        const steps = [
          ...out.matchAll(
            /step (\d+): permits (\d+): (\d+) lookups in ([\d.]+) s = ([\d.]+)\/s, permit wait ([\d.]+) ms, limiter wait ([\d.]+) ms \((\w+)\)/g
          )
        ].map((m) => ({
          index: number(m[1]),
          permits: number(m[2]),
          lookups: number(m[3]),
          seconds: number(m[4]),
          throughput: number(m[5]),
          binding: m[8]
        }))
        expect(steps.length, out).toBeGreaterThanOrEqual(2)
        expect(steps.length).toBeLessThanOrEqual(MAX_STEPS)
        steps.forEach((step, i) => {
          expect(step.index).toBe(i + 1)
          // doubling from the required figure
          expect(step.permits).toBe(required * 2 ** i)
          expect(step.lookups).toBeGreaterThan(0)
          expect(Math.abs(step.lookups / step.seconds - step.throughput)).toBeLessThan(step.throughput * 0.01 + 0.1)
          expect(["limiter", "bulkhead", "upstream", "none"]).toContain(step.binding)
        })
        // it went on only after a material gain...
        for (let i = 1; i < steps.length - 1; i++) {
          expect(steps[i].throughput).toBeGreaterThanOrEqual(steps[i - 1].throughput * (1 + GAIN) - ROUNDING)
        }
        // ...and stopped after the first step without one, or at --max-steps
        const last = steps[steps.length - 1]
        const previous = steps[steps.length - 2]
        if (steps.length < MAX_STEPS) {
          expect(last.throughput).toBeLessThan(previous.throughput * (1 + GAIN) + ROUNDING)
        }
        // one table row per step
        const rows = out.split("\n").filter((line) =>
          /^\d+\s+[\d.]+\s+[\d.]+\s+[\d.]+ ms\s+[\d.]+ ms\s+\w+$/.test(line.trim())
        )
        expect(rows.length).toBe(steps.length)

        // the recommendation: the fewest permits within the material gain of the best throughput
        const recommended = /recommended: --permits photon=(\d+)/.exec(out)
        expect(recommended, out).not.toBeNull()
        const best = Math.max(...steps.map((s) => s.throughput))
        const chosen = steps.find((s) => s.permits === number(recommended![1]))
        expect(chosen).toBeDefined()
        expect(chosen!.throughput).toBeGreaterThanOrEqual(best * (1 - GAIN) - ROUNDING)
        for (const fewer of steps.filter((s) => s.permits < chosen!.permits)) {
          expect(fewer.throughput).toBeLessThan(best * (1 - GAIN) + ROUNDING)
        }

        // its derivation quotes the start, the last doubling and the chosen step's figures
        const line = /derivation: (.*)$/m.exec(out)?.[1] ?? ""
        expect(line.startsWith(`${derivation}; doubling to ${last.permits} changed throughput `), line).toBe(true)
        const change = number(/changed throughput (-?\d+) %/.exec(line)?.[1])
        expect(Math.abs(change - (last.throughput / previous.throughput - 1) * 100)).toBeLessThanOrEqual(1)
        expect(line).toContain(`(under ${GAIN * 100} % is no gain)`)
        expect(line).toContain(
          `${chosen!.permits} reached ${chosen!.throughput.toFixed(1)}/s of the 98.0/s client rate`
        )
      }).pipe(Effect.scoped),
    120_000
  )
})
