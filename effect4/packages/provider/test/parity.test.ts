/**
 * Message parity: the provider's refusals on both lines, `message` and `String(error)` compared
 * byte for byte, from the table in `parity/table.ts`: errors built from fields, options refused,
 * calls run on the TestClock, and sizings. The Effect 3 line runs in a child process
 * (`parity/effect3.mjs`, with the root's tsx), as it needs its own `effect`.
 */
import { assert, describe, it } from "@effect/vitest"
import { Provider, Sizing } from "@sluice/provider"
import { RateLimiterStore } from "@sluice/rate-limiter"
import { Cause, Duration, Effect, Exit, Fiber, Result } from "effect"
import { TestClock } from "effect/testing"
import { execFile } from "node:child_process"
import { join } from "node:path"
import { promisify } from "node:util"
import {
  budgetsExhausted,
  type CallRow,
  callRows,
  callTimeouts,
  circuitOpens,
  providersClosed,
  refusedOptions,
  sizings,
  totalTimeouts,
  unionRefusal
} from "./parity/table.js"
import { yieldTurns } from "./utils.js"

interface Shown {
  readonly message: string
  readonly string: string
}

const shown = (error: Error): Shown => ({ message: error.message, string: String(error) })
const ms = Duration.millis

const ended = (exit: Exit.Exit<unknown, unknown>): string => {
  if (Exit.isSuccess(exit)) return `ok: ${String(exit.value)}`
  const failure = exit.cause.reasons.find(Cause.isFailReason)
  if (failure !== undefined) return String(failure.error)
  return `defect: ${(Cause.squash(exit.cause) as Error).message}`
}

const down = { _tag: "Down", [Provider.RetryableTypeId]: true, toString: () => "Down" }

const callOf = (call: CallRow["call"]): Effect.Effect<string, typeof down> =>
  call === "never" ? Effect.never : call === "fail" ? Effect.fail(down) : Effect.succeed("done")

/** The call, then a second one once the clock has moved: how each ended, or "waiting". */
const run = (row: CallRow) =>
  Effect.gen(function*() {
    const provider = yield* Provider.make({
      name: "run",
      bulkhead: { permits: 1 },
      gracePeriod: 0,
      ...row.options
    } as Provider.Options)
    const fiber = yield* Effect.forkChild(provider.call(callOf(row.call)))
    yield* yieldTurns()
    yield* TestClock.adjust(row.adjustMillis)
    yield* yieldTurns()
    const polled = fiber.pollUnsafe()
    const first = polled === undefined ? "waiting" : ended(polled)
    yield* Fiber.interrupt(fiber)
    const second = ended(yield* Effect.exit(provider.call(Effect.succeed("next"))))
    return [first, second]
  }).pipe(Effect.scoped, Effect.provide(RateLimiterStore.layerMemory))

const refused = (options: Record<string, unknown>) =>
  Effect.map(
    Effect.exit(
      Provider.make({ name: "bad", bulkhead: { permits: 1 }, ...options } as Provider.Options).pipe(
        Effect.scoped,
        Effect.provide(RateLimiterStore.layerMemory)
      )
    ),
    ended
  )

const sized = (input: Record<string, unknown>): string => {
  const result = Sizing.permits(input as unknown as Sizing.Options)
  return Result.isSuccess(result)
    ? result.success.derivation
    : `${result.failure._tag}: ${result.failure.message}`
}

const effect3 = async (): Promise<unknown> => {
  const root = join(import.meta.dirname, "../../../..")
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [join(root, "node_modules/tsx/dist/cli.mjs"), join(import.meta.dirname, "parity/effect3.mjs")],
    { cwd: root }
  )
  return JSON.parse(stdout)
}

describe("the Effect 3 and Effect 4 providers print the same refusals", () => {
  it.effect(
    "for every row of the table: errors built from fields, options refused, calls ended, sizings",
    () =>
      Effect.gen(function*() {
        const { unionRefusal: theirUnion, ...theirs } = (yield* Effect.promise(effect3)) as Record<string, unknown>
        const ours = {
          callTimeouts: callTimeouts.map(({ timeoutMillis, ...f }) =>
            shown(new Provider.CallTimeout({ ...f, timeout: ms(timeoutMillis) }))
          ),
          totalTimeouts: totalTimeouts.map(({ elapsedMillis, timeoutMillis, ...f }) =>
            shown(new Provider.TotalTimeout({ ...f, timeout: ms(timeoutMillis), elapsed: ms(elapsedMillis) }))
          ),
          circuitOpens: circuitOpens.map(({ openedForMillis, retryAfterMillis, ...f }) =>
            shown(new Provider.CircuitOpen({ ...f, openedFor: ms(openedForMillis), retryAfter: ms(retryAfterMillis) }))
          ),
          budgetsExhausted: budgetsExhausted.map(({ windowMillis, ...f }) =>
            shown(new Provider.RetryBudgetExhausted({ ...f, window: ms(windowMillis) }))
          ),
          providersClosed: providersClosed.map(({ gracePeriodMillis, ...f }) =>
            shown(new Provider.ProviderClosed({ ...f, gracePeriod: ms(gracePeriodMillis) }))
          ),
          refused: yield* Effect.forEach(refusedOptions, refused),
          calls: yield* Effect.forEach(callRows, run),
          sizings: sizings.map(sized)
        }
        assert.deepStrictEqual(ours, theirs)
        // the one divergence, pinned on both lines
        assert.strictEqual(theirUnion, unionRefusal.effect3)
        assert.strictEqual(yield* refused(unionRefusal.options), unionRefusal.effect4)
        for (const { string } of [...ours.callTimeouts, ...ours.totalTimeouts, ...ours.circuitOpens]) {
          assert.match(string, /^(CallTimeout|TotalTimeout|CircuitOpen): /)
        }
      }),
    60_000
  )
})
