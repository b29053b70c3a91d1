/** The Redis Cluster launcher, shared by both Effect lines: it lives in core/testing. */
export * from "../../core/testing/cluster.js"
