/**
 * One redis-server for the whole run of this package's tests, on a free loopback port: its URL
 * reaches them through `inject("redisUrl")`. The launcher is core/testing's, which the Effect 3
 * line's setup (`@sluice/test-utils/redisGlobalSetup`) starts too.
 */
import type { TestProject } from "vitest/node"
import { startRedisServer } from "../../../../core/testing/redisServer.js"

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
