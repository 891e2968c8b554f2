package dev.kvtier.cuda;

/**
 * The argument checks of the bindings, with the convention the whole project follows: a null
 * argument is an {@link IllegalArgumentException} naming it ({@code "stream must not be null"}), as in
 * kvtier's public API, not a {@link NullPointerException}.
 */
final class Arguments {
    private Arguments() {
    }

    /** @throws IllegalArgumentException {@code "<name> must not be null"} if {@code value} is null */
    static void requireNonNull(Object value, String name) {
        if (value == null) {
            throw new IllegalArgumentException(name + " must not be null");
        }
    }
}
