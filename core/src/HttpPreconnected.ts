/**
 * Connections an HTTP pool opened ahead of its pool, per origin, oldest first, on plain values.
 * Each is read while it waits, so that a close from the server (an idle timeout, a restart) is
 * seen and the connection forgotten rather than handed to a request; anything else arriving
 * unasked closes it too. One not taken within `keepAliveTimeout` is closed, as undici closes an
 * idle connection: the binding's timer expires each waiting connection at its deadline (on the
 * clock `now` reads), in the order they were put. Both Effect lines' `HttpPool` own the timer,
 * the connector and the scope; sockets are Node's, seen through the part read here.
 *
 * @since 0.1.0
 */
import { connectFailure } from "./HttpMessages.js"

/**
 * The WHATWG `URL` class and `queueMicrotask`, global in Node and in browsers: the core's `lib`
 * declares neither, so the part used here is declared here.
 */
declare const URL: new(input: string) => {
  readonly host: string
  readonly hostname: string
  readonly port: string
  readonly protocol: string
}
declare const queueMicrotask: (callback: () => void) => void

/**
 * The events a waiting connection is watched for.
 *
 * @since 0.1.0
 * @category models
 */
export type SocketEvent = "data" | "end" | "close" | "error"

/**
 * The part of a Node `net.Socket` a waiting connection uses.
 *
 * @since 0.1.0
 * @category models
 */
export interface Socket {
  readonly destroyed: boolean
  readonly readyState: string
  once(event: SocketEvent, listener: () => void): unknown
  off(event: SocketEvent, listener: () => void): unknown
  pause(): unknown
  destroy(): unknown
}

/**
 * The part of undici's connect options a connector reads.
 *
 * @since 0.1.0
 * @category connecting
 */
export interface ConnectOptions {
  readonly protocol: string
  readonly host?: string | undefined
  readonly hostname: string
  readonly servername?: string | undefined
}

/**
 * A connector as undici calls it: `callback` gets the open socket or the error.
 *
 * @since 0.1.0
 * @category connecting
 */
export type Connect<O, S> = (opts: O, callback: (...args: [null, S] | [Error, null]) => void) => void

/**
 * A connection waiting for its pool, as the binding's timer sees it.
 *
 * @since 0.1.0
 * @category models
 */
export interface Expiry {
  /** When it is closed unless taken first, on the clock `now` reads. */
  readonly deadline: number
  /** Closes and forgets it if it is still waiting. */
  readonly expire: () => void
}

interface Waiting<S extends Socket> extends Expiry {
  readonly socket: S
  released: boolean
  readonly release: () => void
}

/**
 * The connect options of a connection to `origin`, as undici's connector takes them (an IPv6
 * host without its brackets).
 *
 * @since 0.1.0
 * @category connecting
 */
export const connectOptions = (origin: string): {
  readonly host: string
  readonly hostname: string
  readonly port: string
  readonly protocol: string
} => {
  const { host, hostname, port, protocol } = new URL(origin)
  return { host, hostname: hostname.replace(/^\[(.*)\]$/, "$1"), port, protocol }
}

/**
 * The connections waiting for their pools. `expireAt` is called with each connection put, in
 * order: every one waits the same `keepAliveTimeout`, so their deadlines come in that order too.
 *
 * @since 0.1.0
 * @category models
 */
export class Preconnected<S extends Socket> {
  private readonly byOrigin = new Map<string, Array<Waiting<S>>>()
  private closed = false

  constructor(
    private readonly keepAliveTimeout: number,
    private readonly now: () => number,
    private readonly expireAt: (expiry: Expiry) => void
  ) {}

  private forget(origin: string, waiting: Waiting<S>): void {
    const list = this.byOrigin.get(origin)
    const at = list?.indexOf(waiting) ?? -1
    if (list === undefined || at < 0) return
    list.splice(at, 1)
    if (list.length === 0) this.byOrigin.delete(origin)
  }

  /** Keeps `socket`, open to `origin`, for its pool; `false` (and closed) once the pool closed. */
  put(origin: string, socket: S): boolean {
    if (this.closed || socket.destroyed) {
      socket.destroy()
      return false
    }
    const drop = () => {
      waiting.release()
      this.forget(origin, waiting)
      socket.destroy()
    }
    const waiting: Waiting<S> = {
      socket,
      deadline: this.now() + this.keepAliveTimeout,
      released: false,
      expire: () => {
        if (!waiting.released) drop()
      },
      release: () => {
        // taken, dropped or closed: the timer passes over it at its deadline
        waiting.released = true
        // paused again, so that nothing arrives before undici listens
        socket.off("data", drop)
        socket.pause()
        socket.off("end", drop)
        socket.off("close", drop)
        socket.off("error", drop)
      }
    }
    // read while waiting, to see the end: bytes before any request answer nothing, so they close it too
    socket.once("data", drop)
    socket.once("end", drop)
    socket.once("close", drop)
    socket.once("error", drop)
    const list = this.byOrigin.get(origin)
    if (list === undefined) this.byOrigin.set(origin, [waiting])
    else list.push(waiting)
    this.expireAt(waiting)
    return true
  }

  /** The oldest connection to `origin` still open, no longer watched; closes the dead ones before it. */
  take(origin: string): S | undefined {
    const list = this.byOrigin.get(origin)
    let waiting: Waiting<S> | undefined
    while ((waiting = list?.shift()) !== undefined) {
      waiting.release()
      if (list?.length === 0) this.byOrigin.delete(origin)
      if (!waiting.socket.destroyed && waiting.socket.readyState === "open") return waiting.socket
      waiting.socket.destroy()
    }
    return undefined
  }

  /**
   * undici's connector `connectNew`, except that a connection opened ahead for the request's
   * origin goes first. One opened ahead named its host for TLS: a request that names another (its
   * own servername) gets a connection of its own.
   */
  connector<O extends ConnectOptions>(connectNew: Connect<O, S>, originOf: (url: string) => string): Connect<O, S> {
    return (opts, callback) => {
      const origin = originOf(`${opts.protocol}//${opts.host ?? opts.hostname}`)
      const socket = opts.servername == null || opts.servername === opts.hostname ? this.take(origin) : undefined
      if (socket === undefined) return connectNew(opts, callback)
      // asynchronously, as a connection that had to open: undici resumes the client after this
      queueMicrotask(() => callback(null, socket))
    }
  }

  /**
   * Opens one connection to `origin` with `connectNew` and keeps it for the pool as soon as it is
   * open; `done` is told why it did not (`undefined` when it did). Answers the interruption: a
   * connection that opens after it is closed at once, and `done` is not called.
   */
  open(
    connectNew: Connect<ReturnType<typeof connectOptions>, S>,
    origin: string,
    done: (failure: string | undefined) => void
  ): () => void {
    let interrupted = false
    connectNew(connectOptions(origin), (error, socket) => {
      if (error !== null) done(connectFailure(error))
      else if (interrupted) socket.destroy()
      else done(this.put(origin, socket) ? undefined : "the pool is closed")
    })
    return () => {
      interrupted = true
    }
  }

  /** Closes every waiting connection; any put after closes at once. */
  close(): void {
    this.closed = true
    for (const list of this.byOrigin.values()) {
      for (const waiting of list) {
        waiting.release()
        waiting.socket.destroy()
      }
    }
    this.byOrigin.clear()
  }

  /** The connections waiting for `origin`'s pool. */
  count(origin: string): number {
    return this.byOrigin.get(origin)?.length ?? 0
  }

  /** The origins with connections waiting. */
  origins(): ReadonlyArray<string> {
    return [...this.byOrigin.keys()]
  }
}
