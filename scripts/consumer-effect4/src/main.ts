// The Effect 4 consumer app: what a user outside the repository writes, installed from the packed
// tarballs, compiled with a strict tsc and run with plain node. src/packages/<name>.ts holds the
// checks of @sluice/<name>; this runs those of every package named in argv (the packed ones), in
// order, and exits 1 at the first failure. A package that lands adds one file there (and
// lib/<name>.ts, a library on it whose declarations the consumer test checks).
import { Cause, Console, Effect } from "effect"
import * as fs from "node:fs"
import type { Checks } from "./check.js"

const packed = process.argv.slice(2)
const here = new URL("./packages/", import.meta.url)

const main = Effect.gen(function*() {
  const files = fs.readdirSync(here).filter((f) => f.endsWith(".js")).map((f) => f.slice(0, -".js".length))
  // a file whose package was not packed checks nothing: its package was renamed or removed
  const stale = files.filter((f) => !packed.includes(f))
  if (stale.length > 0) {
    return yield* Effect.die(new Error(`src/packages/ has files of packages that were not packed: ${stale.join(", ")}`))
  }
  let ran = 0
  for (const name of packed) {
    if (!files.includes(name)) {
      yield* Console.log(`@sluice/${name}: installed and compiled; no src/packages/${name}.ts to run yet`)
      continue
    }
    const module = yield* Effect.promise(() => import(new URL(`${name}.js`, here).href) as Promise<{ checks: Checks }>)
    yield* module.checks.pipe(
      Effect.tapCause((cause) => Console.error(`@sluice/${name}: FAILED\n${Cause.pretty(cause)}`))
    )
    yield* Console.log(`@sluice/${name}: ok`)
    ran++
  }
  yield* Console.log(`ran the checks of ${ran} of ${packed.length} packed packages`)
})

// a failure rejects: node prints it and exits 1
Effect.runPromise(main)
