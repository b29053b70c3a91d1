/**
 * A loopback HTTP server that counts the requests in flight from a request's first byte to its
 * response's last byte (a raw `net` server: a handler-to-`end()` count would miss the bytes on the
 * wire). One request per connection (`Connection: close`). A path `[/<group>]/hold/<id>` is
 * answered only once `release(id)` is called, any other after 15 ms; `groups` counts the requests
 * of each first path segment (a process's label) apart.
 */
import { Effect } from "effect"
import * as net from "node:net"

export interface Counts {
  active: number
  peak: number
  total: number
}

export interface CountingServer {
  readonly port: number
  readonly counts: Counts
  /** The ids of the `/hold/<id>` requests the server holds open now. */
  readonly holding: () => ReadonlyArray<string>
  /** Answers the held request `id` (no-op when there is none). */
  readonly release: (id: string) => void
  /** The same counts per first path segment (`""` for `/` and `/hold/<id>`). */
  readonly groups: Map<string, Counts>
  /** Starts a new peak (overall and per group) from the requests in flight now. */
  readonly resetPeak: () => void
}

export const countingServer = Effect.acquireRelease(
  Effect.async<CountingServer & { readonly server: net.Server }>((resume) => {
    const counts: Counts = { active: 0, peak: 0, total: 0 }
    const held = new Map<string, () => void>()
    const groups = new Map<string, Counts>()
    const server = net.createServer((socket) => {
      let seen = ""
      let started = false
      let answered = false
      socket.on("data", (chunk: Buffer) => {
        if (!started) {
          started = true
          counts.active++
          counts.total++
          counts.peak = Math.max(counts.peak, counts.active)
        }
        seen += chunk.toString()
        if (answered || !seen.includes("\r\n\r\n")) return
        answered = true
        // the group is known once the request line is in: counted from the same first byte
        const path = seen.slice(seen.indexOf(" ") + 1, seen.indexOf(" HTTP/"))
        const segment = path.split("/")[1] ?? ""
        const name = segment === "hold" ? "" : segment
        const group = groups.get(name) ?? { active: 0, peak: 0, total: 0 }
        groups.set(name, group)
        group.active++
        group.total++
        group.peak = Math.max(group.peak, group.active)
        const answer = () =>
          socket.end("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok", () => {
            counts.active--
            group.active--
          })
        const hold = path.indexOf("/hold/")
        if (hold >= 0) held.set(path.slice(hold + "/hold/".length), answer)
        else setTimeout(answer, 15)
      })
      socket.on("error", () => {})
    })
    server.listen(0, "127.0.0.1", (): void => {
      const address = server.address()
      resume(Effect.succeed({
        port: typeof address === "object" && address !== null ? address.port : 0,
        server,
        counts,
        groups,
        holding: () => [...held.keys()],
        release: (id) => {
          const answer = held.get(id)
          held.delete(id)
          answer?.()
        },
        resetPeak: () => {
          counts.peak = counts.active
          for (const group of groups.values()) group.peak = group.active
        }
      }))
    })
  }),
  ({ release, server, holding }) =>
    Effect.async<void>((resume) => {
      for (const id of holding()) release(id)
      server.close(() => resume(Effect.void))
    })
)
