package dev.kvtier;

/**
 * Why a value fetched from the remote block store was not served (each is a miss, counted in
 * {@link RemoteStoreStats#rejections(RemoteRejection)} and logged once per cause and cache). The checks run in this
 * order, and the first that fails names the value's rejection.
 */
public enum RemoteRejection {
    /** Longer than the configured maximum value size ({@code kvtier.remote.max.value.bytes}). */
    TOO_LARGE,
    /** Shorter than its fixed header and signature, or than the lengths its header claims. */
    TRUNCATED,
    /** Not a kvtier block value, or one of a format version this build does not read. */
    FORMAT,
    /** A header length that is negative, or larger than any value may be. */
    HOSTILE_LENGTH,
    /** Written under another namespace (another model, tenant or deployment). */
    NAMESPACE,
    /** The value of another block (its header names another block hash or parent). */
    BLOCK,
    /** Written by a cache of another block layout (bytes or tokens per block, layers, layer order). */
    LAYOUT,
    /** The payload's CRC32C does not match: corrupted. */
    CHECKSUM,
    /** The HMAC-SHA256 does not match: tampered with, or written without this deployment's key. */
    SIGNATURE
}
