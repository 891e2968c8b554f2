package dev.kvtier.sync;

/** Argument checks shared by this package; each message names the argument and the value. */
final class Checks {
    private Checks() {}

    static int requireNonNegative(String name, int value) {
        if (value < 0) {
            throw new IllegalArgumentException(name + " must be >= 0, got " + value);
        }
        return value;
    }

    static long requireNonNegative(String name, long value) {
        if (value < 0) {
            throw new IllegalArgumentException(name + " must be >= 0, got " + value);
        }
        return value;
    }

    /** Requires {@code 0 <= value < bound}; {@code boundName} says where the bound comes from. */
    static int requireIndex(String name, int value, String boundName, int bound) {
        if (value < 0 || value >= bound) {
            throw new IllegalArgumentException(
                    name + " must be in [0, " + bound + ") (" + boundName + " = " + bound + "), got " + value);
        }
        return value;
    }

    static int requireWorldSize(int worldSize) {
        if (worldSize <= 0) {
            throw new IllegalArgumentException("worldSize must be > 0, got " + worldSize);
        }
        return worldSize;
    }

    /** Prefix ids are 64-bit hashes: always printed unsigned, in hexadecimal. */
    static String prefixIdToString(long prefixId) {
        return "0x" + Long.toHexString(prefixId);
    }
}
