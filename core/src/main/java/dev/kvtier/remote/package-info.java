/**
 * Remote block stores: the SPI through which prefix blocks' bytes are shared with caches in other processes and on
 * other hosts ({@link dev.kvtier.remote.RemoteBlockStore}, opened by URI through
 * {@link dev.kvtier.remote.RemoteBlockStoreProvider}).
 */
package dev.kvtier.remote;
