/**
 * A one-second, offline tour of the sluice bulkhead (its calls end within half a second): a
 * provider that takes at most 3 calls at once, a queue of 4, a permit-wait budget of 300 ms.
 * Twelve callers arrive together; the output shows who ran, who queued (in order), who was refused
 * at once and who gave up waiting, then the bulkhead's metrics. Run it from the repository's root
 * with `bash scripts/pnpm.sh demo:bulkhead` (`pnpm demo` is the geocoding demo).
 */
import { Bulkhead } from "@sluice/bulkhead"
import { Console, Duration, Effect, Metric, MetricLabel } from "effect"

class Geocoder extends Bulkhead.Tag("geocoder")<Geocoder>() {}

const start = Date.now()
const at = () => `${String(Date.now() - start).padStart(4)} ms`

/** A stand-in for a provider call that takes `millis`. */
const lookup = (caller: number, millis: number) =>
  Effect.gen(function*() {
    yield* Console.log(`${at()}  caller ${String(caller).padStart(2)} starts its call (${millis} ms)`)
    yield* Effect.sleep(Duration.millis(millis))
    return caller
  })

const program = Effect.gen(function*() {
  const geocoder = yield* Geocoder
  yield* Console.log(`bulkhead "${geocoder.name}": 3 permits, at most 4 queued, 300 ms permit-wait budget\n`)

  const outcomes = yield* Effect.forEach(
    Array.from({ length: 12 }, (_, i) => i + 1),
    (caller) =>
      geocoder.run(lookup(caller, caller <= 3 ? 250 : 100)).pipe(
        Effect.as(`caller ${String(caller).padStart(2)} done`),
        // each refusal is its own typed error: "queued too long" is not "the call was too slow"
        Effect.catchTags({
          BulkheadFull: (e) => Effect.succeed(`caller ${String(caller).padStart(2)} refused at once: ${e.message}`),
          PermitWaitTimeout: (e) => Effect.succeed(`caller ${String(caller).padStart(2)} gave up: ${e.message}`)
        })
      ),
    { concurrency: "unbounded" }
  )
  yield* Console.log(`\n${outcomes.join("\n")}`)

  const stats = yield* geocoder.stats
  yield* Console.log(`\nstats after the batch: ${JSON.stringify(stats)}`)

  const labels = [MetricLabel.make("name", geocoder.name)]
  const wait = yield* Metric.value(Metric.taggedWithLabels(Bulkhead.permitWaitSeconds, labels))
  const full = yield* Metric.value(
    Metric.taggedWithLabels(Bulkhead.rejectedTotal, [...labels, MetricLabel.make("reason", "full")])
  )
  const timeout = yield* Metric.value(
    Metric.taggedWithLabels(Bulkhead.rejectedTotal, [...labels, MetricLabel.make("reason", "timeout")])
  )
  yield* Console.log(
    `sluice_permit_wait_seconds: ${wait.count} calls admitted, mean wait ${
      ((wait.sum / Math.max(wait.count, 1)) * 1000).toFixed(0)
    } ms, longest ${(wait.max * 1000).toFixed(0)} ms`
  )
  yield* Console.log(`sluice_bulkhead_rejected_total: full ${full.count}, timeout ${timeout.count}`)
})

Effect.runPromise(
  program.pipe(Effect.provide(Geocoder.layer({ permits: 3, maxWaiting: 4, maxWait: "300 millis" })))
).catch((error) => {
  console.error(error)
  process.exitCode = 1
})
