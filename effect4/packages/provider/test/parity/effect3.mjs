// The Effect 3 line's provider messages for the parity table, printed as JSON: parity.test.ts runs
// this with the root's tsx. Effect 3 is loaded from packages/provider's own dependency.
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import {
  budgetsExhausted,
  callRows,
  callTimeouts,
  circuitOpens,
  providersClosed,
  refusedOptions,
  sizings,
  totalTimeouts,
  unionRefusal
} from "./table.ts"

const providerDir = join(dirname(fileURLToPath(import.meta.url)), "../../../../../packages/provider")
const effect = dirname(createRequire(join(providerDir, "package.json")).resolve("effect/package.json"))
const [{ Provider, Sizing }, Duration, Effect, Exit, Cause, Fiber, Option, Either, TestContext, TestClock] =
  await Promise.all([
    import(pathToFileURL(join(providerDir, "src/index.ts")).href),
    ...["Duration", "Effect", "Exit", "Cause", "Fiber", "Option", "Either", "TestContext", "TestClock"].map((module) =>
      import(pathToFileURL(join(effect, `dist/esm/${module}.js`)).href)
    )
  ])

const shown = (error) => ({ message: error.message, string: String(error) })
const ms = Duration.millis
const ended = (exit) => {
  if (Exit.isSuccess(exit)) return `ok: ${exit.value}`
  const failure = Cause.failureOption(exit.cause)
  if (Option.isSome(failure)) return String(failure.value)
  return `defect: ${Cause.squash(exit.cause).message}`
}
const down = { _tag: "Down", [Provider.RetryableTypeId]: true, toString: () => "Down" }
const callOf = (call) => call === "never" ? Effect.never : call === "fail" ? Effect.fail(down) : Effect.succeed("done")
const turns = Effect.repeatN(Effect.yieldNow(), 20)
const test = (effect) => effect.pipe(Effect.scoped, Effect.provide(TestContext.TestContext), Effect.runPromise)

const run = (row) =>
  test(Effect.gen(function*() {
    const provider = yield* Provider.make({ name: "run", bulkhead: { permits: 1 }, gracePeriod: 0, ...row.options })
    const fiber = yield* Effect.fork(provider.call(callOf(row.call)))
    yield* turns
    yield* TestClock.adjust(row.adjustMillis)
    yield* turns
    const polled = yield* Fiber.poll(fiber)
    const first = Option.isSome(polled) ? ended(polled.value) : "waiting"
    yield* Fiber.interrupt(fiber)
    const second = ended(yield* Effect.exit(provider.call(Effect.succeed("next"))))
    return [first, second]
  }))

const refused = (options) =>
  test(Effect.map(
    Effect.exit(Provider.make({ name: "bad", bulkhead: { permits: 1 }, ...options }).pipe(Effect.scoped)),
    ended
  ))

const sized = (input) => {
  const result = Sizing.permits(input)
  return Either.isRight(result) ? result.right.derivation : `${result.left._tag}: ${result.left.message}`
}

process.stdout.write(JSON.stringify({
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
  refused: await Promise.all(refusedOptions.map(refused)),
  unionRefusal: await refused(unionRefusal.options),
  calls: await Promise.all(callRows.map(run)),
  sizings: sizings.map(sized)
}))
