package dev.kvtier.bench.sim;

/**
 * A command line the simulator cannot run: the message names the option and the value and says what
 * was expected. {@link Simulate} prints it with the usage and exits with status 2.
 */
public final class UsageException extends Exception {
    private static final long serialVersionUID = 1L;

    public UsageException(String message) {
        super(message);
    }
}
