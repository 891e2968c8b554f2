package dev.kvtier.exec;

import java.time.Duration;

/**
 * A copy did not complete within the transfer timeout (a wedged device, a host function that never
 * ran, a mapping on storage that stopped answering). The copy may still be running: the executor
 * quarantines the memory it writes to (never reused or freed while the process lives) instead of
 * freeing it under the device.
 */
public final class TransferTimeoutException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** @param what what timed out, e.g. {@code "a copy of 65536 bytes"} */
    public TransferTimeoutException(String what, Duration timeout) {
        super(what + " did not complete within " + timeout.toMillis() + " ms (KvTierConfig.transferTimeout)");
    }
}
