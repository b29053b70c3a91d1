/**
 * The default User-Agent carries the version in this package's package.json, so a version bump
 * that leaves the constant behind fails here.
 */
import { assert, describe, it } from "@effect/vitest"
import { Middleware } from "@sluice/http"
import { Provider } from "@sluice/provider"
import { Effect } from "effect"
import { readFileSync } from "node:fs"
import { DEFAULT_USER_AGENT } from "../src/internal/clientSettings.js"
import { run, uniqueName } from "./utils/run.js"
import { testServer } from "./utils/server.js"

const { version } = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as {
  readonly version: string
}

describe("the default User-Agent", () => {
  it("is sluice-http/ and the package's version", () => {
    assert.match(version, /^\d+\.\d+\.\d+/)
    assert.strictEqual(DEFAULT_USER_AGENT, `sluice-http/${version}`)
  })

  it.live("is what a client without a userAgent sends", () =>
    run(Effect.gen(function*() {
      const server = yield* testServer({ "/echo": (req, res) => res.end(JSON.stringify(req.headers)) })
      const provider = yield* Provider.make({ name: uniqueName("ua-default"), bulkhead: { permits: 1 } })
      const client = yield* Middleware.make(provider, { baseUrl: server.url })
      const echoed = (yield* client.get("/echo").pipe(Effect.flatMap((response) => response.json))) as Record<
        string,
        string
      >
      assert.strictEqual(echoed["user-agent"], `sluice-http/${version}`)
    })))
})
