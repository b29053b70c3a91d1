/**
 * Message parity: the limiter's refusals on both lines, `message` and `String(error)` compared
 * byte for byte, from the table in `core/testing/limiterMessages.ts`. The Effect 3 line runs in a
 * child process (`parity/effect3.mjs`, with the root's tsx), as it needs its own `effect`.
 */
import { assert, describe, it } from "@effect/vitest"
import { RateLimiter, RateLimiterStore } from "@sluice/rate-limiter"
import { Cause, Duration, Effect, Exit, Fiber } from "effect"
import { execFile } from "node:child_process"
import { join } from "node:path"
import { promisify } from "node:util"
import {
  capacityRows,
  exceededRows,
  type RowLimit,
  type TakeRow,
  takeRows
} from "../../../../core/testing/limiterMessages.js"

interface Shown {
  readonly message: string
  readonly string: string
}

interface Printed {
  readonly exceeded: ReadonlyArray<Shown>
  readonly capacity: ReadonlyArray<Shown>
  readonly takes: ReadonlyArray<ReadonlyArray<string>>
}

const shown = (error: RateLimiter.RateLimiterError): Shown => ({ message: error.message, string: String(error) })

const limit = ({ windowMillis, ...rest }: RowLimit): RateLimiter.ResolvedLimit => ({
  ...rest,
  window: Duration.millis(windowMillis)
})

const ended = (exit: Exit.Exit<unknown, unknown>): string => {
  if (Exit.isSuccess(exit)) return "started"
  const failure = exit.cause.reasons.find(Cause.isFailReason)
  if (failure !== undefined) return String(failure.error)
  return `defect: ${(Cause.squash(exit.cause) as Error).message}`
}

/** Each take forked in turn and given turns to decide; one still asleep reads "waiting". */
const takes = (row: TakeRow) =>
  Effect.gen(function*() {
    const store = yield* RateLimiterStore.makeMemory
    const made = yield* Effect.exit(
      RateLimiter.make({ ...row.options, store } as unknown as RateLimiter.Options & { store: typeof store })
    )
    if (!Exit.isSuccess(made)) return [ended(made)]
    const fibers = []
    for (const take of row.takes) {
      fibers.push(yield* Effect.forkChild(made.value.take(take as RateLimiter.TakeOptions)))
      yield* Effect.repeat(Effect.yieldNow, { times: 5 })
    }
    const out = fibers.map((fiber) => {
      const exit = fiber.pollUnsafe()
      return exit === undefined ? "waiting" : ended(exit)
    })
    yield* Effect.forEach(fibers, Fiber.interrupt)
    return out
  })

const effect3 = async (): Promise<Printed> => {
  const root = join(import.meta.dirname, "../../../..")
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [join(root, "node_modules/tsx/dist/cli.mjs"), join(import.meta.dirname, "parity/effect3.mjs")],
    { cwd: root }
  )
  return JSON.parse(stdout)
}

describe("the Effect 3 and Effect 4 limiters print the same refusals", () => {
  it.effect(
    "for every row of the table: errors built from fields, options refused, takes ended",
    () =>
      Effect.gen(function*() {
        const theirs = yield* Effect.promise(effect3)
        const ours: Printed = {
          exceeded: exceededRows.map(({ fields }) =>
            shown(
              new RateLimiter.RateLimitExceeded({
                limiter: fields.limiter,
                reason: fields.limit === undefined ? "paused" : "quota",
                retryAfter: Duration.millis(fields.retryAfterMillis),
                limit: fields.limit === undefined ? undefined : limit(fields.limit),
                cost: fields.cost,
                maxWait: Duration.millis(fields.maxWaitMillis)
              })
            )
          ),
          capacity: capacityRows.map(({ fields }) =>
            shown(new RateLimiter.CostExceedsCapacity({ ...fields, limit: limit(fields.limit) }))
          ),
          takes: yield* Effect.forEach(takeRows, takes)
        }
        assert.deepStrictEqual(ours, theirs)
        // and the table's own sentences, which the core's test checks against its builders
        assert.deepStrictEqual(ours.exceeded.map((s) => s.message), exceededRows.map((row) => row.message))
        assert.deepStrictEqual(ours.capacity.map((s) => s.message), capacityRows.map((row) => row.message))
        for (const { string } of [...ours.exceeded, ...ours.capacity]) {
          assert.match(string, /^(RateLimitExceeded|CostExceedsCapacity): rate limiter "/)
        }
      }),
    60_000
  )
})
