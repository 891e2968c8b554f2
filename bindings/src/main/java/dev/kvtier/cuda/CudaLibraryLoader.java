package dev.kvtier.cuda;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.UnaryOperator;

/**
 * Finds and loads a CUDA runtime library ({@code libcudart}). Places are tried in this order, the first library that
 * loads and exports {@code cudaRuntimeGetVersion} wins:
 * <ol>
 *   <li>system property {@value #LIBRARY_PROPERTY} (a file path),</li>
 *   <li>environment variable {@value #LIBRARY_ENV} (a file path),</li>
 *   <li>{@code $CUDA_HOME/lib64}, then {@code $CUDA_PATH/lib64},</li>
 *   <li>{@code /usr/local/cuda/lib64},</li>
 *   <li>the system loader's search ({@code LD_LIBRARY_PATH}, ldconfig cache) for {@code libcudart.so.13},
 *       {@code libcudart.so.12}, {@code libcudart.so}.</li>
 * </ol>
 * In a directory the names {@code libcudart.so.13}, {@code libcudart.so.12}, {@code libcudart.so} are tried in that order.
 * Every place tried is reported with why it failed, so a failure says where we looked and which property to set.
 *
 * <p>Loaded libraries are never unloaded (they live in the global arena): a CUDA runtime cannot be unloaded safely while
 * its threads and callbacks may still run. Thread-safe.
 */
@SuppressWarnings("restricted") // binding native code is this class's job; run with --enable-native-access
public final class CudaLibraryLoader {

    /** System property naming the libcudart file to use; tried first. */
    public static final String LIBRARY_PROPERTY = "kvtier.cudart";
    /** Environment variable naming the libcudart file to use; tried after {@link #LIBRARY_PROPERTY}. */
    public static final String LIBRARY_ENV = "KVTIER_CUDART";

    static final List<String> LIBRARY_NAMES = List.of("libcudart.so.13", "libcudart.so.12", "libcudart.so");
    private static final String MARKER_SYMBOL = "cudaRuntimeGetVersion";

    private static volatile Library processWide;

    private CudaLibraryLoader() {
    }

    /**
     * One place tried.
     *
     * @param source   where the place came from, e.g. {@code -Dkvtier.cudart}, {@code $CUDA_HOME}, {@code system loader}
     * @param location the path or loader name tried
     * @param failure  why it was not used, or empty when it was loaded
     */
    public record LoadAttempt(String source, String location, Optional<String> failure) {
        /**
         * Records one place tried.
         *
         * @throws IllegalArgumentException if any component is null
         */
        public LoadAttempt {
            Arguments.requireNonNull(source, "source");
            Arguments.requireNonNull(location, "location");
            Arguments.requireNonNull(failure, "failure");
        }

        @Override
        public String toString() {
            return source + ": " + location + failure.map(f -> " -> " + f).orElse(" -> loaded");
        }
    }

    /**
     * A loaded libcudart.
     *
     * @param location the file loaded (resolved through /proc/self/maps when the system loader chose it), or the name
     *                 given to the loader when the file cannot be determined
     * @param source   where the location came from (see {@link LoadAttempt#source()})
     * @param lookup   the library's symbols
     */
    public record Library(String location, String source, SymbolLookup lookup) {
        /**
         * Records a library that loaded.
         *
         * @throws IllegalArgumentException if any component is null
         */
        public Library {
            Arguments.requireNonNull(location, "location");
            Arguments.requireNonNull(source, "source");
            Arguments.requireNonNull(lookup, "lookup");
        }
    }

    /**
     * The outcome of a search: the library (when one loaded) and every place tried, in order.
     *
     * @param library  the first place that loaded and exports {@code cudaRuntimeGetVersion}, or empty when none did
     * @param attempts every place tried, in search order, up to and including the one that loaded (copied, unmodifiable)
     */
    public record LoadResult(Optional<Library> library, List<LoadAttempt> attempts) {
        /**
         * Records the outcome of a search; {@code attempts} is copied.
         *
         * @throws IllegalArgumentException if {@code library} is null
         * @throws NullPointerException     if {@code attempts} is or contains null ({@link List#copyOf})
         */
        public LoadResult {
            Arguments.requireNonNull(library, "library");
            attempts = List.copyOf(attempts);
        }

        /**
         * Every place tried with why it failed, one per line, and how to point us at a library.
         *
         * @return text starting with a line break, one indented line per attempt, then the property and environment
         *         variable that choose the library; meant to follow a sentence ending in "tried:"
         */
        public String describeAttempts() {
            var text = new StringBuilder();
            for (LoadAttempt attempt : attempts) {
                text.append("\n  ").append(attempt);
            }
            return text.append("\n  (set -D").append(LIBRARY_PROPERTY).append("=/path/to/libcudart.so.NN or ")
                    .append(LIBRARY_ENV).append(" to choose the library)").toString();
        }
    }

    /**
     * Searches the default places (see the class comment), reading system properties and the environment now.
     *
     * @return the first library that loaded, if any, and every place tried; never throws for a missing library
     */
    public static LoadResult load() {
        return load(defaultCandidates(System::getProperty, System::getenv));
    }

    /**
     * Loads exactly {@code library} (a file path), and nothing else.
     *
     * @param library the libcudart file to load, not null
     * @return the library if it loaded, and the one attempt with its failure otherwise
     * @throws IllegalArgumentException if {@code library} is null
     */
    public static LoadResult load(Path library) {
        Arguments.requireNonNull(library, "library");
        return load(List.of(new Candidate("explicit path", library.toString(), true)));
    }

    /**
     * The library {@code cudart_h} resolves its symbols in, for the whole process: the result of the default search at
     * the first call, kept for the life of the JVM (a failed search is not kept, so a later call may succeed).
     *
     * @return the symbols of the process-wide libcudart, the same lookup on every call once one has loaded
     * @throws UnsatisfiedLinkError listing every place tried when no libcudart can be loaded
     */
    public static SymbolLookup processWideLookup() {
        Library selected = processWide;
        if (selected == null) {
            synchronized (CudaLibraryLoader.class) {
                selected = processWide;
                if (selected == null) {
                    LoadResult result = load();
                    selected = result.library().orElseThrow(() -> new UnsatisfiedLinkError(
                            "no CUDA runtime library (libcudart) could be loaded; tried:" + result.describeAttempts()));
                    processWide = selected;
                }
            }
        }
        return selected.lookup();
    }

    /**
     * The library {@code cudart_h} is bound to, if its first symbol resolution has happened.
     *
     * @return the process-wide library, or empty before {@link #processWideLookup()} first succeeded; never loads one
     */
    public static Optional<Library> processWideLibrary() {

        return Optional.ofNullable(processWide);
    }

    /** A place to try; a directory or a single file or loader name. */
    record Candidate(String source, String location, boolean isPath) {
    }

    /** The default places in order, from the given property and environment readers (tests pass their own). */
    static List<Candidate> defaultCandidates(UnaryOperator<String> property, UnaryOperator<String> environment) {
        var candidates = new ArrayList<Candidate>();
        candidates.add(new Candidate("-D" + LIBRARY_PROPERTY, property.apply(LIBRARY_PROPERTY), true));
        candidates.add(new Candidate("$" + LIBRARY_ENV, environment.apply(LIBRARY_ENV), true));
        for (String home : List.of("CUDA_HOME", "CUDA_PATH")) {
            String dir = environment.apply(home);
            if (dir == null || dir.isBlank()) {
                candidates.add(new Candidate("$" + home, null, true));
            } else {
                for (String name : LIBRARY_NAMES) {
                    candidates.add(new Candidate("$" + home, Path.of(dir, "lib64", name).toString(), true));
                }
            }
        }
        for (String name : LIBRARY_NAMES) {
            candidates.add(new Candidate("/usr/local/cuda", Path.of("/usr/local/cuda/lib64", name).toString(), true));
        }
        for (String name : LIBRARY_NAMES) {
            candidates.add(new Candidate("system loader", name, false));
        }
        return candidates;
    }

    static LoadResult load(List<Candidate> candidates) {
        var attempts = new ArrayList<LoadAttempt>();
        for (Candidate candidate : candidates) {
            if (candidate.location() == null || candidate.location().isBlank()) {
                attempts.add(new LoadAttempt(candidate.source(), "(unset)", Optional.of("not set")));
                continue;
            }
            if (candidate.isPath() && !Files.isRegularFile(Path.of(candidate.location()))) {
                attempts.add(new LoadAttempt(candidate.source(), candidate.location(), Optional.of("no such file")));
                continue;
            }
            SymbolLookup lookup;
            try {
                lookup = candidate.isPath()
                        ? SymbolLookup.libraryLookup(Path.of(candidate.location()), Arena.global())
                        : SymbolLookup.libraryLookup(candidate.location(), Arena.global());
            } catch (IllegalArgumentException | IllegalCallerException e) {
                attempts.add(new LoadAttempt(candidate.source(), candidate.location(),
                        Optional.of("cannot be loaded: " + e.getMessage())));
                continue;
            }
            Optional<MemorySegment> marker = lookup.find(MARKER_SYMBOL);
            if (marker.isEmpty()) {
                attempts.add(new LoadAttempt(candidate.source(), candidate.location(),
                        Optional.of("loaded, but it is not a CUDA runtime: no symbol " + MARKER_SYMBOL)));
                continue;
            }
            attempts.add(new LoadAttempt(candidate.source(), candidate.location(), Optional.empty()));
            String location = candidate.isPath()
                    ? candidate.location()
                    : fileContaining(marker.get()).orElse(candidate.location());
            return new LoadResult(Optional.of(new Library(location, candidate.source(), lookup)), attempts);
        }
        return new LoadResult(Optional.empty(), attempts);
    }

    /** The mapped file holding {@code address}, from /proc/self/maps (Linux); empty elsewhere or when unreadable. */
    private static Optional<String> fileContaining(MemorySegment address) {
        long target = address.address();
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/maps"))) {
                // "start-end perms offset dev inode path"
                String[] fields = line.trim().split("\\s+", 6);
                if (fields.length < 6 || !fields[5].startsWith("/")) {
                    continue;
                }
                int dash = fields[0].indexOf('-');
                long start = Long.parseUnsignedLong(fields[0], 0, dash, 16);
                long end = Long.parseUnsignedLong(fields[0], dash + 1, fields[0].length(), 16);
                if (Long.compareUnsigned(target, start) >= 0 && Long.compareUnsigned(target, end) < 0) {
                    return Optional.of(fields[5]);
                }
            }
        } catch (IOException | RuntimeException e) {
            // Only a nicer description is lost: the loader name is reported instead.
        }
        return Optional.empty();
    }
}
