/**
 * How kvtier waits and owns threads, in one place: {@link dev.kvtier.concurrent.Backoff} for every
 * wait-and-retry (spin, yield, park) and {@link dev.kvtier.concurrent.KvTierThreads} for every
 * thread kvtier starts. Internal: not part of the public API.
 */
package dev.kvtier.concurrent;
