// The consumer app: what a user outside the repository writes, installed from the packed tarballs,
// compiled with a strict tsc and run with plain node. Each step checks its outcome; the first
// check that fails ends the run with exit code 1.
import { HttpClientRequest } from "@effect/platform"
import { NodeRuntime } from "@effect/platform-node"
import { BulkheadLanes } from "@sluice/bulkhead"
import { HttpPool, ProviderHttpClient } from "@sluice/http"
import { Provider } from "@sluice/provider"
import { RateLimiterStore } from "@sluice/rate-limiter"
import { RedisRateLimiterStore } from "@sluice/rate-limiter-redis"
import { RedisConnection } from "@sluice/redis"
import { Report } from "@sluice/report"
import {
  Config,
  ConfigProvider,
  Console,
  Data,
  Deferred,
  Duration,
  Effect,
  Fiber,
  Layer,
  Schedule,
  Schema
} from "effect"
import { Redis } from "ioredis"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { upstream } from "./upstream.js"

// Two providers, each declared once with the tag factory, and an HTTP client for each.
class Alpha extends Provider.Tag("alpha")<Alpha>() {}
class Beta extends Provider.Tag("beta")<Beta>() {}
class AlphaHttp extends ProviderHttpClient.Tag("alpha")<AlphaHttp>() {}
class BetaHttp extends ProviderHttpClient.Tag("beta")<BetaHttp>() {}

// The HTTP client's own upstream failures (429s, 5xx) count in the provider's verdict.
const providerConfig = (prefix: string) =>
  Config.nested(Provider.config, prefix).pipe(Config.map(ProviderHttpClient.withUpstreamErrors))

// The client from Config too: BASE_URL and USER_AGENT under the provider's prefix.
const httpLayer = <Self, P>(
  tag: ProviderHttpClient.TagClass<Self, string>,
  provider: Provider.TagClass<P, string>,
  prefix: string
) => tag.layerConfig(provider, Config.nested(ProviderHttpClient.config, prefix))

const ProvidersLive = Layer.mergeAll(
  Alpha.layerConfig(providerConfig("ALPHA")).pipe(Layer.provide(RateLimiterStore.layerMemory)),
  Beta.layerConfig(providerConfig("BETA")).pipe(
    Layer.provide(RedisRateLimiterStore.layerConfig(Config.nested(RedisRateLimiterStore.config, "REDIS")))
  )
)

// provideMerge: the clients run over the very providers the app reads its stats from (one each).
const Live = Layer.mergeAll(httpLayer(AlphaHttp, Alpha, "ALPHA"), httpLayer(BetaHttp, Beta, "BETA")).pipe(
  Layer.provideMerge(ProvidersLive),
  Layer.provide(HttpPool.layerWithUnboundedHttpClient())
)

const configFor = (baseUrl: string, redisUrl: string) =>
  ConfigProvider.fromMap(
    new Map([
      ["ALPHA_BASE_URL", baseUrl],
      ["ALPHA_USER_AGENT", "sluice-consumer-test/1.0"],
      ["ALPHA_BULKHEAD_PERMITS", "2"],
      ["ALPHA_BULKHEAD_MAX_WAITING", "16"],
      ["ALPHA_BULKHEAD_MAX_WAIT", "100 millis"],
      ["ALPHA_RATE_LIMIT_LIMIT", "50"],
      ["ALPHA_RATE_LIMIT_WINDOW", "1 second"],
      ["ALPHA_RATE_LIMIT_MAX_WAIT", "1 second"],
      ["ALPHA_ATTEMPT_TIMEOUT", "500 millis"],
      ["ALPHA_TOTAL_TIMEOUT", "10 seconds"],
      ["ALPHA_MAX_ATTEMPTS", "2"],
      ["BETA_BASE_URL", baseUrl],
      ["BETA_USER_AGENT", "sluice-consumer-test/1.0"],
      ["BETA_BULKHEAD_PERMITS", "4"],
      ["BETA_BULKHEAD_MAX_WAIT", "10 seconds"],
      ["BETA_RATE_LIMIT_LIMIT", "5"],
      ["BETA_RATE_LIMIT_WINDOW", "1 second"],
      ["BETA_RATE_LIMIT_MAX_WAIT", "5 seconds"],
      ["BETA_ATTEMPT_TIMEOUT", "2 seconds"],
      ["BETA_TOTAL_TIMEOUT", "20 seconds"],
      ["BETA_MAX_ATTEMPTS", "3"],
      ["REDIS_URL", redisUrl],
      ["REDIS_PREFIX", "sluice-consumer:"]
    ]),
    { pathDelim: "_" }
  )

class CheckFailed extends Data.TaggedError("CheckFailed")<{ readonly message: string }> {}

let passed = 0
const check = (ok: boolean, what: string): Effect.Effect<void, CheckFailed> =>
  ok
    ? Effect.zipRight(Effect.sync(() => passed++), Console.log(`  ok ${what}`))
    : Effect.fail(new CheckFailed({ message: `consumer app: check failed: ${what}` }))

const Key = Schema.Struct({ key: Schema.String })
const get = (path: string) => HttpClientRequest.get(path)

const formatStats = (stats: Provider.Stats): string => {
  const outcomes = Object.entries(stats.outcomes).filter(([, n]) => n > 0).map(([k, n]) => `${k} ${n}`).join(", ")
  const ms = (summary: Provider.PhaseSummary) => `${summary.meanMillis.toFixed(1)} ms`
  return `${stats.provider}: ${stats.calls} calls, ${stats.attempts} attempts (${outcomes}), ` +
    `${stats.upstreamErrors} upstream errors, mean permit wait ${ms(stats.permitWait)}, ` +
    `limiter wait ${ms(stats.limiterWait)}, call ${ms(stats.callTime)}; verdict ${stats.verdict.binding}: ` +
    stats.verdict.reason
}

const scenarios = (served: { readonly tooMany: number }, redisUrl: string) =>
  Effect.gen(function*() {
    const alpha = yield* AlphaHttp
    const beta = yield* BetaHttp

    yield* Console.log("alpha (memory store): fast calls, a full bulkhead, a slow upstream")
    const fast = yield* Effect.forEach([1, 2, 3, 4, 5], (i) => alpha.json(get(`/fast/a${i}`), Key))
    yield* check(fast.map((r) => r.key).join() === "a1,a2,a3,a4,a5", "5 JSON answers decoded with their schema")

    // 2 permits, 3 calls of 250 ms at once: the third waits past the 100 ms budget.
    const crowded = yield* Effect.forEach(
      [1, 2, 3],
      (i) =>
        alpha.json(get(`/slow/p${i}?ms=250`), Key).pipe(
          Effect.as("served"),
          Effect.catchTag("PermitWaitTimeout", (e) => Effect.succeed(`PermitWaitTimeout ${e.bulkhead}`))
        ),
      { concurrency: "unbounded" }
    )
    yield* check(
      crowded.filter((r) => r === "served").length === 2 && crowded.includes("PermitWaitTimeout alpha"),
      `2 calls served, 1 PermitWaitTimeout caught by its tag (${crowded.join(", ")})`
    )

    // 2 s to answer against a 500 ms attempt budget, and no retry for this call.
    const slow = yield* alpha.json(get("/slow/c?ms=2000"), Key, { retry: false }).pipe(
      Effect.as("served"),
      Effect.catchTag("CallTimeout", (e) => Effect.succeed(`CallTimeout ${Duration.format(e.timeout)}`))
    )
    yield* check(slow === "CallTimeout 500ms", `the slow call ended as ${slow}`)

    yield* Console.log("beta (Redis store): a 429 with Retry-After, then a quota")
    const [waited, limited] = yield* Effect.timed(beta.json(get("/limited/r"), Key))
    yield* check(
      limited.key === "r" && served.tooMany === 1 && Duration.toMillis(waited) >= 900,
      `the 429 was retried after its Retry-After: 1 (answered in ${Duration.format(waited)})`
    )
    const refused = yield* beta.json(get("/limited/s"), Key, { retry: false }).pipe(
      Effect.as("served"),
      Effect.catchTag("UpstreamRateLimited", (e) => Effect.succeed(`UpstreamRateLimited ${e.status}`))
    )
    yield* check(refused === "UpstreamRateLimited 429", `a call without retries ended as ${refused}`)

    // 5 starts per second shared through Redis, and the pause of the last 429 stored there too.
    const burst = yield* Effect.forEach([1, 2, 3, 4, 5, 6, 7, 8], (i) => beta.json(get(`/fast/b${i}`), Key), {
      concurrency: "unbounded"
    })
    yield* check(burst.length === 8, "8 calls through the Redis-backed limiter served")
    // @sluice/redis's connection over an ioredis client of the app's own, which it leaves open
    const client = new Redis(redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 0, commandTimeout: 500 })
    const keys = yield* Effect.scoped(
      Effect.flatMap(RedisConnection.make({ client }), (connection) =>
        Effect.promise(() => connection.client.keys("sluice-consumer:*")))
    )
    yield* check(keys.length > 0, `the limiter's state is in Redis (${keys.join(", ")})`)
    yield* check(client.status === "ready", "the app's own ioredis client is left open by RedisConnection")
    yield* Effect.promise(() =>
      client.quit()
    )

    yield* Console.log("stats")
    const alphaStats = yield* alpha.provider.stats
    const betaStats = yield* Effect.flatMap(Beta, (provider) => provider.stats)
    yield* Console.log(`  ${formatStats(alphaStats)}`)
    yield* Console.log(`  ${formatStats(betaStats)}`)
    yield* check(alpha.provider === (yield* Alpha), "the client runs over the provider the app holds (one per tag)")
    yield* check(
      alphaStats.outcomes.success === 7 && alphaStats.outcomes.permit_wait_timeout === 1 &&
        alphaStats.outcomes.call_timeout === 1,
      "alpha's stats count 7 successes, 1 permit-wait timeout, 1 call timeout"
    )
    yield* check(
      betaStats.outcomes.success === 9 && betaStats.upstreamErrors === 2 && betaStats.limiterWait.count >= 10 &&
        betaStats.limiterWait.meanMillis > 0,
      "beta's stats count 9 successes, 2 upstream errors and the limiter's waits"
    )
    yield* check(alphaStats.verdict.reason.length > 0 && betaStats.verdict.reason.length > 0, "both have a verdict")

    yield* Console.log("lanes: a chat call passes the batch's queue on one permit")
    const shared = yield* Provider.make({
      name: "lanes",
      recording: true,
      bulkhead: { permits: 1, lanes: BulkheadLanes.priority({ interactive: {}, batch: { yieldFor: "1 minute" } }) }
    })
    const until = (what: (stats: Provider.Stats) => boolean) =>
      Effect.repeat(shared.stats, { schedule: Schedule.spaced("1 millis"), until: what })
    const order: Array<string> = []
    const gate = yield* Deferred.make<void>()
    const holder = yield* Effect.fork(shared.call(Deferred.await(gate)))
    yield* until((stats) => stats.inFlight === 1 && stats.bulkhead.inFlight === 1)
    const rows = yield* Effect.forEach(
      ["b1", "b2", "b3"],
      (id) => Effect.fork(shared.call(Effect.sync(() => order.push(id)))),
      { concurrency: "unbounded" }
    )
    yield* until((stats) => stats.bulkhead.waiting === 3)
    const chat = yield* Effect.fork(
      shared.call(Effect.sync(() => order.push("chat"))).pipe(Provider.withLane("interactive"))
    )
    yield* until((stats) => stats.bulkhead.waiting === 4)
    yield* Deferred.succeed(gate, undefined)
    yield* Fiber.join(holder)
    yield* Fiber.join(chat)
    yield* Effect.forEach(rows, Fiber.join, { discard: true })
    yield* check(order.join() === "chat,b1,b2,b3", `the chat call went first (${order.join()})`)
    const lanes = (yield* shared.stats).lanes ?? []
    yield* Console.log(lanes.map((lane) => `  ${lane.reason}`).join("\n"))
    yield* check(
      lanes.map((lane) => `${lane.lane} ${lane.attempts}`).join() === "interactive 1,batch 4",
      "stats.lanes counts each lane's attempts"
    )

    yield* Console.log("the run report, uPlot inlined from the installed package")
    const recording = yield* shared.recording
    const page = path.join(os.tmpdir(), `sluice-consumer-report-${process.pid}.html`)
    if (recording !== undefined) {
      yield* Report.write(page, { title: "consumer", providers: [{ recording, lanes }] })
    }
    const html = fs.existsSync(page) ? fs.readFileSync(page, "utf8") : ""
    fs.rmSync(page, { force: true })
    yield* check(
      html.includes("uPlot") && html.includes("1 attempt, 20 % of the permits") &&
        !/(src|href)=["']?https?:/.test(html),
      `a self-contained report of ${html.length} bytes, with the lanes`
    )
  })

const main = Effect.gen(function*() {
  const redisUrl = process.env["REDIS_URL"]
  if (redisUrl === undefined) return yield* new CheckFailed({ message: "consumer app: REDIS_URL is not set" })
  const server = yield* upstream
  yield* scenarios(server.served, redisUrl).pipe(
    Effect.provide(Live),
    Effect.withConfigProvider(configFor(server.url, redisUrl))
  )
  yield* Console.log(`consumer app: ${passed} checks passed`)
}).pipe(Effect.scoped)

NodeRuntime.runMain(main)
