package dev.kvtier.bench.sim;

/** Which copy backend the simulator asks the cache for ({@code --backend}). */
public enum BackendChoice {
    /** CUDA when a device is usable, otherwise the host backend. */
    AUTO("auto"),
    /** CUDA or fail. */
    CUDA("cuda"),
    /** Device memory emulated in host memory. */
    HOST("host");

    private final String optionValue;

    BackendChoice(String optionValue) {
        this.optionValue = optionValue;
    }

    /** The spelling on the command line. */
    public String optionValue() {
        return optionValue;
    }
}
