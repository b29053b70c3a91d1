// A loopback upstream for the consumer app: fast answers, slow ones, and a 429 with Retry-After the
// first time a key is asked for. It counts what it served, so the app can check what reached it.
import { Effect } from "effect"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"

export interface Upstream {
  readonly url: string
  readonly served: { ok: number; tooMany: number; slow: number }
}

export const upstream = Effect.acquireRelease(
  Effect.async<{ readonly server: Http.Server; readonly upstream: Upstream }>((resume) => {
    const served = { ok: 0, tooMany: 0, slow: 0 }
    const limitedOnce = new Set<string>()
    const server = Http.createServer((req, res) => {
      const url = new URL(req.url ?? "/", "http://127.0.0.1")
      const json = (status: number, body: unknown, headers: Record<string, string> = {}) => {
        res.writeHead(status, { "content-type": "application/json", ...headers })
        res.end(JSON.stringify(body))
      }
      const [, route, key = ""] = url.pathname.split("/")
      if (route === "fast") {
        served.ok++
        return json(200, { key })
      }
      if (route === "slow") {
        served.slow++
        const timer = setTimeout(() => json(200, { key }), Number(url.searchParams.get("ms") ?? "1000"))
        res.on("close", () => clearTimeout(timer))
        return
      }
      if (route === "limited") {
        if (!limitedOnce.has(key)) {
          limitedOnce.add(key)
          served.tooMany++
          return json(429, { error: "slow down" }, { "retry-after": "1" })
        }
        served.ok++
        return json(200, { key })
      }
      json(404, { error: `no route ${url.pathname}` })
    })
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo
      resume(Effect.succeed({ server, upstream: { url: `http://127.0.0.1:${port}`, served } }))
    })
  }),
  ({ server }) =>
    Effect.async<void>((resume) => {
      server.closeAllConnections()
      server.close(() => resume(Effect.void))
    })
).pipe(Effect.map(({ upstream }) => upstream))
