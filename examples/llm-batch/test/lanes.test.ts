/**
 * Chat calls beside the batch, end to end on loopback: with lanes they pass the batch's queue in
 * the provider's bulkhead, without them they wait in it. Both runs share the stand-in's quotas
 * (the tokens quota saturated by the batch) and are compared with each other, in ratios.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type * as Lanes from "../src/Lanes.js"
import * as Run from "../src/Run.js"
import * as Child from "../src/stand-in/Child.js"
import { jsonOf, quotaArgs, QUOTAS, runCli, testEntry } from "./utils.js"

const laneOf = (lanes: ReadonlyArray<Lanes.LaneFigures> | undefined, name: string) => {
  const lane = lanes?.find((entry) => entry.lane === name)
  if (lane === undefined) throw new Error(`no lane ${name} in ${JSON.stringify(lanes)}`)
  return lane
}

describe("an interactive lane beside the batch", () => {
  it.live(
    "with lanes the chat calls answer in a fraction of the batch's latency; in one queue, in about the same",
    () =>
      Effect.gen(function*() {
        const standIn = yield* Child.start(testEntry, Run.standInOptions({ quotas: QUOTAS, seed: 7 }))
        const batch = (...extra: ReadonlyArray<string>) =>
          Effect.promise(async () => {
            const ran = await runCli([
              "--url",
              `${standIn.url}/v1`,
              ...quotaArgs(),
              "--prompts",
              "40",
              "--interactive",
              "5",
              ...extra,
              "--json"
            ])
            expect(ran.code, ran.stderr).toBe(0)
            return jsonOf(ran).figures
          })
        const on = yield* batch()
        const off = yield* batch("--no-lanes")
        for (const figures of [on, off]) {
          expect(figures.failed).toBe(0)
          expect(figures.tooManyRequests).toBe(0)
          expect(figures.calls).toBe(45)
          // the batch kept the tokens quota busy: the chat calls met a saturated quota
          expect(figures.binding.dimension).toBe("tokens")
        }
        expect(on.lanes?.on).toBe(true)
        expect(off.lanes?.on).toBe(false)
        const chat = laneOf(on.lanes?.lanes, "interactive")
        const rows = laneOf(on.lanes?.lanes, "batch")
        expect([chat.calls, rows.calls]).toEqual([5, 40])
        // every chat call waited at most a permit's hold, not the batch's queue
        expect(chat.p95Millis, JSON.stringify(on.lanes)).toBeLessThan(rows.p50Millis / 2)
        expect(chat.share).toBeGreaterThan(0)
        expect((chat.share ?? 0) + (rows.share ?? 0)).toBeCloseTo(1, 6)
        // one queue: the chat calls waited behind the batch's
        const chatOff = laneOf(off.lanes?.lanes, "interactive")
        const rowsOff = laneOf(off.lanes?.lanes, "batch")
        expect(chatOff.p50Millis, JSON.stringify(off.lanes)).toBeGreaterThan(rowsOff.p50Millis / 2)
        expect(chatOff.share).toBeUndefined()
      }).pipe(Effect.scoped),
    240_000
  )
})
