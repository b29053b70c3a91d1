/**
 * Message parity: the HTTP package's refusals on both lines, `message` and `String(error)`
 * compared byte for byte, from the table in `parity/table.ts`: errors built from fields, client
 * and pool options refused, header-profile bounds refused. The Effect 3 line runs in a child
 * process (`parity/effect3.mjs`, with the root's tsx), as it needs its own `effect`.
 */
import { assert, describe, it } from "@effect/vitest"
import { HttpPool, ProviderHttpClient, RateLimitHeaders } from "@sluice/http"
import { Provider } from "@sluice/provider"
import { Cause, Duration, Effect, Exit } from "effect"
import { execFile } from "node:child_process"
import { join } from "node:path"
import { promisify } from "node:util"
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
} from "./parity/table.js"

interface Shown {
  readonly message: string
  readonly string: string
}

interface Printed {
  readonly rateLimited: ReadonlyArray<Shown>
  readonly status: ReadonlyArray<Shown>
  readonly decode: ReadonlyArray<Shown>
  readonly tooLarge: ReadonlyArray<Shown>
  readonly idle: ReadonlyArray<Shown>
  readonly pool: ReadonlyArray<Shown>
  readonly clientOptions: ReadonlyArray<string>
  readonly poolOptions: ReadonlyArray<string>
  readonly maxResets: ReadonlyArray<string>
}

const shown = (error: Error): Shown => ({ message: error.message, string: String(error) })
const ms = Duration.millis

const ended = (exit: Exit.Exit<unknown, unknown>): string => {
  if (Exit.isSuccess(exit)) return "built"
  const failure = exit.cause.reasons.find(Cause.isFailReason)
  if (failure !== undefined) return String(failure.error)
  return `defect: ${(Cause.squash(exit.cause) as Error).message}`
}

/** How building a client with `options` ends: the defect that names what is wrong. */
const clientRefusal = (options: Record<string, unknown>) =>
  Effect.gen(function*() {
    const provider = yield* Provider.make({ name: "geo", bulkhead: { permits: 1 } })
    return ended(yield* Effect.exit(ProviderHttpClient.make(provider, options as never)))
  }).pipe(Effect.scoped, Effect.provide(HttpPool.layerWithUnboundedHttpClient()))

const poolRefusal = (options: Record<string, unknown>) =>
  Effect.map(Effect.exit(Effect.scoped(HttpPool.make(options as HttpPool.Options))), ended)

const maxResetRefusal = (bound: unknown): string => {
  try {
    RateLimitHeaders.withMaxReset(RateLimitHeaders.openai, bound as Duration.Input)
    return "accepted"
  } catch (error) {
    return (error as Error).message
  }
}

const effect3 = async (): Promise<Printed> => {
  const root = join(import.meta.dirname, "../../../..")
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [join(root, "node_modules/tsx/dist/cli.mjs"), join(import.meta.dirname, "parity/effect3.mjs")],
    { cwd: root }
  )
  return JSON.parse(stdout)
}

describe("the Effect 3 and Effect 4 HTTP packages print the same refusals", () => {
  it.effect(
    "for every row of the table: errors built from fields, client and pool options refused",
    () =>
      Effect.gen(function*() {
        const theirs = yield* Effect.promise(effect3)
        const ours: Printed = {
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
          clientOptions: yield* Effect.forEach(refusedClientOptions, clientRefusal),
          poolOptions: yield* Effect.forEach(refusedPoolOptions, poolRefusal),
          maxResets: refusedMaxResets.map(maxResetRefusal)
        }
        assert.deepStrictEqual(ours, theirs)
        for (const { string } of [...ours.rateLimited, ...ours.status, ...ours.tooLarge, ...ours.idle, ...ours.pool]) {
          assert.match(string, /^(UpstreamRateLimited|UpstreamStatus|BodyTooLarge|StreamIdleTimeout|PoolTooSmall): /)
        }
        // every refused option is a defect, none slipped through
        for (const line of [...ours.clientOptions, ...ours.poolOptions]) assert.match(line, /^defect: /)
        assert.isFalse(ours.maxResets.includes("accepted"))
      }),
    60_000
  )
})
