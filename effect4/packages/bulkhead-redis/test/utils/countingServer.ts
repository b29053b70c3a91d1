/**
 * A loopback HTTP server that counts the requests in flight from a request's first byte to its
 * response's last byte (a raw `net` server: a handler-to-`end()` count would miss the bytes on the
 * wire). One request per connection (`Connection: close`). A path `[/<group>]/hold/<id>` is
 * answered only once `release(id)` is called, any other after 15 ms (or `answerAfterMillis`); `groups` counts the requests
 * of each first path segment (a process's label) apart. `countingServerExcusing(rule)` leaves out of
 * `counts` (but counts in `excused`) each request that `rule` excuses when its request line is in.
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
  /** From now on, `fresh` counts only the requests (not excused) whose first byte comes after this call. */
  readonly mark: () => void
  readonly fresh: Counts
}

export const countingServerExcusing = (excuse: (path: string) => boolean, answerAfterMillis = 15) =>
  Effect.acquireRelease(
    Effect.callback<CountingServer & { readonly server: net.Server; readonly excused: Counts }>((resume) => {
      const counts: Counts = { active: 0, peak: 0, total: 0 }
      const excused: Counts = { active: 0, peak: 0, total: 0 }
      const fresh: Counts = { active: 0, peak: 0, total: 0 }
      let marks = 0
      const held = new Map<string, () => void>()
      const groups = new Map<string, Counts>()
      const server = net.createServer((socket) => {
        let seen = ""
        let started = false
        let answered = false
        // the overall count this request is in: moved to `excused` if the rule excuses it
        let total = counts
        let mark = -1
        socket.on("data", (chunk: Buffer) => {
          if (!started) {
            started = true
            counts.active++
            counts.total++
            counts.peak = Math.max(counts.peak, counts.active)
            mark = marks
            fresh.active++
            fresh.total++
            fresh.peak = Math.max(fresh.peak, fresh.active)
          }
          seen += chunk.toString()
          if (answered || !seen.includes("\r\n\r\n")) return
          answered = true
          // the group is known once the request line is in: counted from the same first byte
          const path = seen.slice(seen.indexOf(" ") + 1, seen.indexOf(" HTTP/"))
          if (excuse(path)) {
            counts.active--
            counts.total--
            total = excused
            if (mark === marks) fresh.active--
            mark = -1
            excused.active++
            excused.total++
            excused.peak = Math.max(excused.peak, excused.active)
          }
          const segment = path.split("/")[1] ?? ""
          const name = segment === "hold" ? "" : segment
          const group = groups.get(name) ?? { active: 0, peak: 0, total: 0 }
          groups.set(name, group)
          group.active++
          group.total++
          group.peak = Math.max(group.peak, group.active)
          const answer = () =>
            socket.end("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok", () => {
              total.active--
              if (mark === marks) fresh.active--
              group.active--
            })
          const hold = path.indexOf("/hold/")
          if (hold >= 0) held.set(path.slice(hold + "/hold/".length), answer)
          else setTimeout(answer, answerAfterMillis)
        })
        socket.on("error", () => {})
      })
      server.listen(0, "127.0.0.1", (): void => {
        const address = server.address()
        resume(Effect.succeed({
          port: typeof address === "object" && address !== null ? address.port : 0,
          server,
          counts,
          excused,
          groups,
          holding: () => [...held.keys()],
          release: (id) => {
            const answer = held.get(id)
            held.delete(id)
            answer?.()
          },
          fresh,
          mark: () => {
            marks++
            fresh.active = 0
            fresh.peak = 0
            fresh.total = 0
          },
          resetPeak: () => {
            counts.peak = counts.active
            for (const group of groups.values()) group.peak = group.active
          }
        }))
      })
    }),
    ({ release, server, holding }) =>
      Effect.callback<void>((resume) => {
        for (const id of holding()) release(id)
        server.close(() => resume(Effect.void))
      })
  )

export const countingServer = countingServerExcusing(() => false)
