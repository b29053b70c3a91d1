// The Effect 3 line's HTTP messages for the parity table, printed as JSON: parity.test.ts runs
// this with the root's tsx. Effect 3 is loaded from packages/http's own dependency.
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import {
  bodiesTooLarge,
  decodeErrors,
  poolsTooSmall,
  refusedClientOptions,
  refusedMaxResets,
  refusedPoolOptions,
  streamIdleTimeouts,
  upstreamRateLimited,
  upstreamStatus
} from "./table.ts"

const httpDir = join(dirname(fileURLToPath(import.meta.url)), "../../../../../packages/http")
const providerDir = join(httpDir, "../provider")
const effect = dirname(createRequire(join(httpDir, "package.json")).resolve("effect/package.json"))
const [{ HttpPool, ProviderHttpClient, RateLimitHeaders }, { Provider }, Duration, Effect, Exit, Cause, Option] =
  await Promise.all([
    import(pathToFileURL(join(httpDir, "src/index.ts")).href),
    import(pathToFileURL(join(providerDir, "src/index.ts")).href),
    ...["Duration", "Effect", "Exit", "Cause", "Option"].map((module) =>
      import(pathToFileURL(join(effect, `dist/esm/${module}.js`)).href)
    )
  ])

const shown = (error) => ({ message: error.message, string: String(error) })
const ms = Duration.millis
const ended = (exit) => {
  if (Exit.isSuccess(exit)) return "built"
  const failure = Cause.failureOption(exit.cause)
  if (Option.isSome(failure)) return String(failure.value)
  return `defect: ${Cause.squash(exit.cause).message}`
}

const clientRefusal = (options) =>
  Effect.gen(function*() {
    const provider = yield* Provider.make({ name: "geo", bulkhead: { permits: 1 } })
    return ended(yield* Effect.exit(ProviderHttpClient.make(provider, options)))
  }).pipe(Effect.scoped, Effect.provide(HttpPool.layerWithUnboundedHttpClient()), Effect.runPromise)

const poolRefusal = (options) =>
  Effect.runPromise(Effect.map(Effect.exit(Effect.scoped(HttpPool.make(options))), ended))

const maxResetRefusal = (bound) => {
  try {
    RateLimitHeaders.withMaxReset(RateLimitHeaders.openai, bound)
    return "accepted"
  } catch (error) {
    return error.message
  }
}

const inTurn = async (rows, f) => {
  const out = []
  for (const row of rows) out.push(await f(row))
  return out
}

process.stdout.write(JSON.stringify({
  rateLimited: upstreamRateLimited.map(({ retryAfterMillis, ...f }) =>
    shown(new ProviderHttpClient.UpstreamRateLimited({ ...f, retryAfter: ms(retryAfterMillis) }))
  ),
  status: upstreamStatus.map((f) => shown(new ProviderHttpClient.UpstreamStatus(f))),
  decode: decodeErrors.map((f) => shown(new ProviderHttpClient.DecodeError(f))),
  tooLarge: bodiesTooLarge.map((f) => shown(new ProviderHttpClient.BodyTooLarge(f))),
  idle: streamIdleTimeouts.map(({ idleTimeoutMillis, ...f }) =>
    shown(new ProviderHttpClient.StreamIdleTimeout({ ...f, idleTimeout: ms(idleTimeoutMillis) }))
  ),
  pool: poolsTooSmall.map((f) => shown(new HttpPool.PoolTooSmall(f))),
  clientOptions: await inTurn(refusedClientOptions, clientRefusal),
  poolOptions: await inTurn(refusedPoolOptions, poolRefusal),
  maxResets: refusedMaxResets.map(maxResetRefusal)
}))
