// The Effect 3 line's limiter messages for the parity table, printed as JSON: parity.test.ts runs
// this with the root's tsx. Effect 3 is loaded from packages/rate-limiter's own dependency.
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { capacityRows, exceededRows, takeRows } from "../../../../../core/testing/limiterMessages.ts"

const limiterDir = join(dirname(fileURLToPath(import.meta.url)), "../../../../../packages/rate-limiter")
const effect = dirname(createRequire(join(limiterDir, "package.json")).resolve("effect/package.json"))
const [{ RateLimiter, RateLimiterStore }, Duration, Effect, Exit, Cause, Fiber, Option, TestContext] = await Promise
  .all([
    import(pathToFileURL(join(limiterDir, "src/index.ts")).href),
    ...["Duration", "Effect", "Exit", "Cause", "Fiber", "Option", "TestContext"].map((module) =>
      import(pathToFileURL(join(effect, `dist/esm/${module}.js`)).href)
    )
  ])

const shown = (error) => ({ message: error.message, string: String(error) })
const limit = ({ windowMillis, ...rest }) => ({ ...rest, window: Duration.millis(windowMillis) })
const ended = (exit) =>
  Exit.isSuccess(exit)
    ? "started"
    : Cause.isFailType(exit.cause)
    ? String(exit.cause.error)
    : `defect: ${Cause.squash(exit.cause).message}`

// each take forked in turn and given turns to decide; one still asleep reads "waiting"
const takes = (row) =>
  Effect.gen(function*() {
    const store = yield* RateLimiterStore.makeMemory
    const made = yield* Effect.exit(RateLimiter.make({ ...row.options, store }))
    if (!Exit.isSuccess(made)) return [ended(made)]
    const fibers = []
    for (const take of row.takes) {
      fibers.push(yield* Effect.fork(made.value.take(take)))
      yield* Effect.repeatN(Effect.yieldNow(), 5)
    }
    const out = []
    for (const fiber of fibers) {
      const exit = yield* Fiber.poll(fiber)
      out.push(Option.isSome(exit) ? ended(exit.value) : "waiting")
    }
    yield* Effect.forEach(fibers, Fiber.interrupt)
    return out
  }).pipe(Effect.provide(TestContext.TestContext), Effect.runPromise)

process.stdout.write(JSON.stringify({
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
  takes: await Promise.all(takeRows.map(takes))
}))
