/**
 * The middleware with `HttpClient.currentTracerPropagation` set around each request by a
 * save-and-restore written by hand, as it was before `Effect.locally` replaced it (issue 31, item
 * 6), so that `bench http` measures both in one process. bench/src/lib/httpRounds.ts is bundled a
 * second time with `sending` in packages/http/src/internal/setup.ts substituted; both copies share
 * `effect` and `@effect/platform` from node_modules, so they set the same FiberRef.
 */
import { build } from "esbuild"
import { readFile } from "node:fs/promises"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import type * as HttpRounds from "./httpRounds.js"

const asBuilt =
  /sending: <A, E, R>\(send: Effect\.Effect<A, E, R>\) =>\s*Effect\.locally\(send, HttpClient\.currentTracerPropagation, tracePropagation\),/

// the hand-written version: a few steps where `Effect.locally` (acquireUseRelease) takes some twenty
const byHand = `sending: <A, E, R>(send: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
        Effect.withFiberRuntime((fiber) => {
          const before = fiber.getFiberRef(HttpClient.currentTracerPropagation)
          if (before === tracePropagation) return send
          const back = FiberRef.set(HttpClient.currentTracerPropagation, before)
          return Effect.zipRight(
            FiberRef.set(HttpClient.currentTracerPropagation, tracePropagation),
            Effect.matchCauseEffect(send, {
              onSuccess: (value) => Effect.as(back, value),
              onFailure: (cause) => Effect.zipRight(back, Effect.failCause(cause))
            })
          )
        }),`

/** bench/src/lib/httpRounds.ts with the hand-written `sending`, bundled into `outDir` and imported. */
export const loadByHand = async (srcDir: string, outDir: string): Promise<typeof HttpRounds> => {
  const outfile = join(outDir, "httpRounds-by-hand.mjs")
  await build({
    entryPoints: [join(srcDir, "lib", "httpRounds.ts")],
    outfile,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    logLevel: "warning",
    plugins: [{
      name: "sending-by-hand",
      setup(b) {
        // workspace packages from source, everything else from node_modules (as scripts/bench.mjs does)
        b.onResolve(
          { filter: /^[^./]/ },
          (args) => (args.path.startsWith("@sluice/") ? undefined : { path: args.path, external: true })
        )
        b.onLoad({ filter: /packages[\\/]http[\\/]src[\\/]internal[\\/]setup\.ts$/ }, async (args) => {
          const source = await readFile(args.path, "utf8")
          // a substitution that missed would measure the same code twice
          if (!asBuilt.test(source)) throw new Error(`${args.path}: \`sending\` is not the Effect.locally one`)
          return {
            contents: `import * as FiberRef from "effect/FiberRef"\n${source.replace(asBuilt, byHand)}`,
            loader: "ts"
          }
        })
      }
    }]
  })
  return import(pathToFileURL(outfile).href) as Promise<typeof HttpRounds>
}
