/**
 * A real HTTP server on 127.0.0.1 for the tests: each route is a handler with full control over
 * timing, and the server counts concurrency from a request's first byte to its response's last.
 */
import { Effect } from "effect"
import * as http from "node:http"
import type { AddressInfo, Socket } from "node:net"

export interface Counters {
  /** Requests between their arrival and their response's last byte (or the socket's close). */
  active: number
  peak: number
  requests: number
  /** Requests whose connection closed before the response finished: aborted by the client. */
  aborted: number
  byStatus: Map<number, number>
  /** Connections accepted, and those still open. */
  connections: number
  open: number
}

export type Handler = (req: http.IncomingMessage, res: http.ServerResponse, counters: Counters) => void

export interface TestServer {
  readonly url: string
  readonly counters: Counters
  /** Resolves once every request in flight has ended (finished or aborted). */
  readonly idle: Effect.Effect<void>
  /** Closes every open connection from the server's side, as an idle timeout does. */
  readonly closeConnections: Effect.Effect<void>
}

/** Starts a server for the scope; `routes` maps a path (without query) to its handler. */
export const testServer = (routes: Record<string, Handler>) =>
  Effect.acquireRelease(
    Effect.callback<{ server: http.Server; counters: Counters; url: string; sockets: Set<Socket> }>(
      (resume) => {
        const counters: Counters = {
          active: 0,
          peak: 0,
          requests: 0,
          aborted: 0,
          byStatus: new Map(),
          connections: 0,
          open: 0
        }
        const sockets = new Set<Socket>()
        const server = http.createServer((req, res) => {
          counters.requests++
          counters.active++
          counters.peak = Math.max(counters.peak, counters.active)
          let ended = false
          const end = (aborted: boolean) => {
            if (ended) return
            ended = true
            counters.active--
            if (aborted) counters.aborted++
            counters.byStatus.set(res.statusCode, (counters.byStatus.get(res.statusCode) ?? 0) + 1)
          }
          res.on("finish", () => end(false))
          res.on("close", () => end(!res.writableFinished))
          const path = (req.url ?? "/").split("?")[0]
          const route = routes[path]
          if (route === undefined) {
            res.statusCode = 404
            res.end("no such route")
            return
          }
          route(req, res, counters)
        })
        server.on("connection", (socket) => {
          counters.connections++
          counters.open++
          sockets.add(socket)
          socket.on("close", () => {
            counters.open--
            sockets.delete(socket)
          })
        })
        server.listen(0, "127.0.0.1", () => {
          const { port } = server.address() as AddressInfo
          resume(Effect.succeed({ server, counters, url: `http://127.0.0.1:${port}`, sockets }))
        })
      }
    ),
    ({ server, sockets }) =>
      Effect.callback<void>((resume) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resume(Effect.void))
      })
  ).pipe(
    Effect.map(({ counters, sockets, url }): TestServer => ({
      url,
      counters,
      closeConnections: Effect.sync(() => {
        for (const socket of sockets) socket.end()
      }),
      idle: Effect.repeat(Effect.sleep("5 millis"), { until: () => counters.active === 0 }).pipe(
        Effect.timeoutOrElse({ duration: "5 seconds", orElse: () => Effect.die(new Error("server never went idle")) })
      )
    }))
  )

/** A JSON array body (`[`, spaces, `]`) written in `chunks` pieces of `size` bytes, `every` ms apart. */
export const slowBody = (chunks: number, size: number, every: number, status = 200): Handler => (_req, res) => {
  res.statusCode = status
  res.setHeader("content-type", "application/json")
  res.write("[")
  let sent = 0
  const tick = () => {
    if (res.destroyed) return
    if (sent === chunks) {
      res.end("]")
      return
    }
    sent++
    res.write(" ".repeat(size))
    setTimeout(tick, every)
  }
  tick()
}

/** Starts a body, then breaks the connection in the middle of it. */
export const failMidBody = (after: number): Handler => (_req, res) => {
  res.statusCode = 200
  res.setHeader("content-type", "application/json")
  res.write("[1,2,3")
  setTimeout(() => res.destroy(), after)
}

/** Answers `body` as JSON at once. */
export const json = (body: unknown, status = 200, headers: Record<string, string> = {}): Handler => (_req, res) => {
  res.statusCode = status
  res.setHeader("content-type", "application/json")
  for (const [k, v] of Object.entries(headers)) res.setHeader(k, v)
  res.end(JSON.stringify(body))
}
