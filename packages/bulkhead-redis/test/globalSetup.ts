/**
 * One redis-server for the whole test run, on a free loopback port, started by the Redis limiter
 * store's own helper: its URL reaches the tests through `inject("redisUrl")`.
 */
import type { TestProject } from "vitest/node"
import { startRedisServer } from "../../rate-limiter-redis/test/utils/redisServer.js"

declare module "vitest" {
  export interface ProvidedContext {
    redisUrl: string
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const server = await startRedisServer()
  project.provide("redisUrl", server.url)
  return () => server.stop()
}
